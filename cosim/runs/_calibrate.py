"""Calibration: fit the timing knobs so the Python model reproduces an RTL's cycles.

Takes a kernel suite (:func:`bundled_suite`, or graphs with their inputs), the cycles an
RTL takes on each kernel (:func:`rtl_cycles`: the reference RTL under a hardware
description, the stand-in for a Vitis export), and a base hardware description; returns
the knobs (``timing.<primitive>.latency|ii`` per primitive kind, ``fifo.latency``) under
which the Python model's cycle count is closest to the RTL's (:func:`fit`: coordinate
descent, seeded by the defaults or a Vitis synthesis report, :mod:`._csynth`). The knobs
are those of docs/timing.md, "Latency, II and start-up"; ``startup`` is not fitted (a
process's start-up adds to one kernel's cycles only once, and a Vitis export's start
propagation is what the ``latency`` of the first process already absorbs).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ir import Graph, Hardware, at_run_depth, examples
from sim_models.python import SimResult

from ..backends._backend import Backend, get_backend

__all__ = ["Kernel", "Knobs", "Fit", "bundled_suite", "rtl_cycles", "model_cycles", "fit",
           "FIFO_CHOICES", "suite_primitives", "error_stats", "rtl_runs", "seed_from_traces"]

#: ``fifo.latency`` values the fit tries (docs/timing.md)
FIFO_CHOICES: tuple[int | str, ...] = (1, 2, "vitis")


@dataclass(frozen=True)
class Kernel:
    """One calibration kernel: a graph and its inputs (numpy arrays by tensor name)."""

    name: str
    graph: Graph
    inputs: Mapping[str, Any]


@dataclass(frozen=True)
class Knobs:
    """The fitted knobs: per primitive kind its latency and II, and ``fifo.latency``."""

    latency: Mapping[str, int] = field(default_factory=dict)
    ii: Mapping[str, int] = field(default_factory=dict)
    fifo: int | str = 1

    def overrides(self) -> dict[str, Any]:
        """The knobs as hardware overrides (``ir.Hardware.with_overrides``); defaults
        (latency 1, ii 1) are left out."""
        out: dict[str, Any] = {"fifo.latency": self.fifo}
        out |= {f"timing.{p}.latency": v for p, v in sorted(self.latency.items()) if v != 1}
        out |= {f"timing.{p}.ii": v for p, v in sorted(self.ii.items()) if v != 1}
        return out

    def key(self) -> tuple:
        return (tuple(sorted((p, v) for p, v in self.latency.items() if v != 1)),
                tuple(sorted((p, v) for p, v in self.ii.items() if v != 1)), str(self.fifo))

    def with_knob(self, what: str, prim: str, value: int | str) -> Knobs:
        if what == "fifo":
            return Knobs(self.latency, self.ii, value)
        table = dict(getattr(self, what))
        table[prim] = int(value)
        return Knobs(**{**self.__dict__, what: table})


def _operand(rng: np.random.Generator, shape: tuple[int, ...], sparse: bool, dtype: str
             ) -> np.ndarray:
    """Small nonzero values (no cancellation to zero), 40 % dense if ``sparse``."""
    vals = rng.integers(1, 5, shape) * rng.choice([-1, 1], shape)
    keep = rng.random(shape) < (0.4 if sparse else 1.0)
    return (vals * keep).astype(np.int32 if dtype == "int32" else np.float32)


def inputs_for(graph: Graph, seed: int) -> dict[str, np.ndarray]:
    """Seeded random inputs for every input tensor of ``graph``: sparse where its format
    has a compressed level, dense otherwise."""
    rng = np.random.default_rng(seed)
    return {t.name: _operand(rng, t.shape, "c" in t.format, graph.dtype)
            for t in graph.tensors.values() if t.role == "input"}


def _example_graphs(n: int) -> list[Graph]:
    """The hand-built example kernels at size ``n``."""
    e = examples
    return [e.spmv(n, n + 1), e.spmv(n, n + 1, b_fmt="dd"), e.spmm_ijk(n, n, n - 1),
            e.spmm_ikj(n, n, n - 1), e.spmm_kij(n, n, n - 1), e.sddmm(n, n + 1, 3),
            e.elementwise(n, n + 1, "add"), e.elementwise(n, n + 1, "mul"),
            e.elementwise(n, n + 1, "max"), e.row_reduce(n, n + 1, "sum", "exp"),
            e.row_reduce(n, n + 1, "max", ""), e.ttv(n - 1, n, 3), e.row_scale(n, n + 1),
            e.masked_dense(n, n + 1), e.spmv(n, n + 1, dtype="int32")]


#: fused regions as the compiler builds them (expression, formats, order): a GCN layer's
#: A·(H·W), attention's masked scores, a factored row scale, chained products
_FUSED = [
    ("X(i,j) = A(i,k) * H(k,l) * W(l,j)", {"A": "csr", "X": "dc"}, "i,k,l,j"),
    ("X(i,j) = M(i,j) * Q(i,k) * K(j,k)", {"M": "csr", "X": "dc"}, None),
    ("X(i,j) = A(i,j) * sum(k) B(i,k) * c(k)", {"A": "csr", "B": "csr", "X": "dc"},
     "i,k,j"),
    ("x(i) = A(i,j) * B(j,k) * c(k)", {"A": "csr", "B": "csr"}, None),
    ("X(i,j) = A(i,j) + B(i,k) * C(k,j)", {"A": "csr", "B": "csr", "C": "csr", "X": "dc"},
     "i,k,j"),
    ("X(i,j) = relu(A(i,k) * B(k,j))", {"A": "csr", "B": "csr", "X": "dc"}, "i,k,j"),
]


def _fused_graphs(n: int) -> list[Graph]:
    from compiler import compile_expression

    out = []
    dims = {"i": n, "j": n + 1, "k": n - 1, "l": 3}
    for k, (expr, fmts, order) in enumerate(_FUSED):
        sizes = {i: d for i, d in dims.items() if f"{i})" in expr or f"{i}," in expr}
        out.append(compile_expression(expr, fmts, sizes=sizes, order=order,
                                      name=f"fused{k}"))
    return out


def bundled_suite(size: str = "nightly", seed: int = 0) -> list[Kernel]:
    """The bundled calibration suite: 15 example kernels and 6 fused regions (21), at
    ``size`` ``nightly`` (6-ish dimensions) or ``small`` (4-ish, for tests)."""
    if size not in ("nightly", "small"):
        raise ValueError(f"suite size {size!r}: expected 'nightly' or 'small'")
    n = 6 if size == "nightly" else 4
    graphs = _example_graphs(n) + _fused_graphs(n)
    out, seen = [], {}
    for k, g in enumerate(graphs):
        seen[g.name] = seen.get(g.name, 0) + 1
        name = g.name if seen[g.name] == 1 else f"{g.name}_{seen[g.name]}"
        out.append(Kernel(name, g, inputs_for(g, seed + k)))
    return out


def suite_primitives(suite: Iterable[Kernel]) -> list[str]:
    """The primitive kinds the suite's graphs use (the knobs worth fitting), sorted."""
    return sorted({n.op for k in suite for n in k.graph.nodes.values()})


def _cycles(be: Backend, suite: Sequence[Kernel], hw: Hardware,
            progress: Callable[[str], None] | None = None) -> list[int]:
    out = []
    for k in suite:
        if progress is not None:
            progress(k.name)
        out.append(be.run(k.graph, k.inputs, hw=hw).cycles)
    return out


def rtl_runs(suite: Sequence[Kernel], hw: Hardware, simulator: str = "icarus",
             progress: Callable[[str], None] | None = None) -> list[SimResult]:
    """Traced runs of the reference RTL under ``hw`` (its knobs rendered) on every kernel:
    its cycles, and every edge's write and read cycles as its FIFOs recorded them."""
    from ..backends._rtl import RtlBackend

    be = RtlBackend(simulator)
    out = []
    for k in suite:
        if progress is not None:
            progress(k.name)
        out.append(be.run(k.graph, k.inputs, hw=hw, trace=True))
    return out


def rtl_cycles(suite: Sequence[Kernel], hw: Hardware, simulator: str = "icarus",
               progress: Callable[[str], None] | None = None) -> list[int]:
    """Cycles of the reference RTL under ``hw`` (its knobs rendered) on every kernel."""
    return [r.cycles for r in rtl_runs(suite, hw, simulator, progress)]


def seed_from_traces(suite: Sequence[Kernel], runs: Sequence[SimResult], fifo: int | str,
                     hw: Hardware) -> Knobs:
    """Knobs read off the RTL's FIFO recordings, assuming ``fifo.latency`` = ``fifo``
    (docs/timing.md: a token is readable from ``w + L - 1 + F``, a node fires at most
    every ``ii`` cycles): per primitive kind, ``L`` = the smallest write-to-read gap on
    its output edges minus ``F - 1``, and ``ii`` = the smallest gap between two cycles
    in which one of its nodes pushed. Lower bounds met whenever a consumer waited on a
    token or a node ran at full rate, which a suite of kernels shows for most kinds;
    :func:`fit` refines the rest."""
    lat: dict[str, int] = {}
    ii: dict[str, int] = {}
    for k, run in zip(suite, runs, strict=True):
        g, trace = k.graph, run.trace
        assert trace is not None
        depth = {e.name: e.depth for e in at_run_depth(g, "graph", hw).edges}
        pushes: dict[str, set[int]] = {}
        for e in g.edges:
            et = trace.edges[e.name]
            op = g.nodes[e.src_node].op
            pushes.setdefault(e.src_node, set()).update(c for c in et.cycles if c is not None)
            gaps = [r - w for w, r in zip(et.cycles, et.read_cycles or [], strict=False)
                    if w is not None]
            if gaps:
                f = _read_latency(fifo, depth[e.name])
                lat[op] = max(1, min(lat.get(op, 1 << 30), min(gaps) - f + 1))
        for nid, cycles in pushes.items():
            order = sorted(cycles)
            if len(order) > 1:
                op = g.nodes[nid].op
                ii[op] = min(ii.get(op, 1 << 30), min(b - a for a, b in zip(order, order[1:],
                                                                           strict=False)))
    return Knobs(lat, ii, fifo)


def _read_latency(fifo: int | str, depth: int | None) -> int:
    """An edge's read latency F under ``fifo.latency`` (docs/timing.md's table)."""
    if fifo == "vitis":
        return 2 if depth is not None and depth > 2 else 1
    return int(fifo)


def model_cycles(suite: Sequence[Kernel], hw: Hardware) -> list[int]:
    """Cycles of the Python model under ``hw`` on every kernel."""
    return _cycles(get_backend("python"), suite, hw)


def _cost(model: Sequence[int], rtl: Sequence[int]) -> tuple[float, int]:
    """(sum of relative errors, sum of absolute errors): what the fit minimises."""
    return (sum(abs(m - r) / max(r, 1) for m, r in zip(model, rtl, strict=True)),
            sum(abs(m - r) for m, r in zip(model, rtl, strict=True)))


@dataclass
class Fit:
    """The fit's result: the knobs, the model's cycles under them, and how many kernel
    simulations it took."""

    knobs: Knobs
    cycles: list[int]
    evaluations: int


class _Evaluator:
    """The model's cycles per kernel under some knobs, each kernel simulated once per
    setting of the knobs it can see (those of its own primitive kinds, and fifo.latency)."""

    def __init__(self, suite: Sequence[Kernel], base: Hardware) -> None:
        self.suite, self.base = suite, base
        self.prims = [frozenset(n.op for n in k.graph.nodes.values()) for k in suite]
        self.memo: dict[tuple, int] = {}

    def __call__(self, knobs: Knobs) -> list[int]:
        out = []
        for i, kernel in enumerate(self.suite):
            mine = Knobs({p: v for p, v in knobs.latency.items() if p in self.prims[i]},
                         {p: v for p, v in knobs.ii.items() if p in self.prims[i]},
                         knobs.fifo)
            key = (i, mine.key())
            if key not in self.memo:
                hw = self.base.with_overrides(mine.overrides())
                self.memo[key] = model_cycles([kernel], hw)[0]
            out.append(self.memo[key])
        return out


def fit(suite: Sequence[Kernel], target: Sequence[int], base: Hardware,
        seeds: Sequence[Knobs] = (), max_latency: int = 6, max_ii: int = 3, rounds: int = 6,
        progress: Callable[[str], None] | None = None) -> Fit:
    """Coordinate descent on the knobs from each of ``seeds`` (default: the defaults at
    every ``fifo.latency`` choice): in each round, per primitive kind, its (latency, II)
    pair over 1..``max_latency`` × 1..``max_ii`` with the others held, then
    ``fifo.latency``; a start ends at a round that changes nothing or at zero error. The
    best start wins; starts are tried closest first, and a zero error ends the fit."""
    prims = suite_primitives(suite)
    evaluate = _Evaluator(suite, base)
    starts = list(seeds) or [Knobs(fifo=f) for f in FIFO_CHOICES]
    starts.sort(key=lambda k: _cost(evaluate(k), target))  # the closest start first
    best: tuple[tuple[float, int], Knobs] | None = None
    for start in starts:
        knobs, fifo = start, start.fifo
        cost = _cost(evaluate(knobs), target)
        for r in range(rounds if cost[1] else 0):
            changed = False
            for prim in prims:
                for lat in range(1, max_latency + 1):
                    for ii in range(1, max_ii + 1):
                        cand = knobs.with_knob("latency", prim, lat).with_knob("ii", prim, ii)
                        c = _cost(evaluate(cand), target)
                        if c < cost:
                            knobs, cost, changed = cand, c, True
            for f in FIFO_CHOICES:
                c = _cost(evaluate(knobs.with_knob("fifo", "", f)), target)
                if c < cost:
                    knobs, cost, changed = knobs.with_knob("fifo", "", f), c, True
            if progress is not None:
                progress(f"start fifo.latency={fifo}, round {r + 1}: "
                         f"{len(evaluate.memo)} kernel runs, sum |error| {cost[1]} cycles")
            if not changed or cost[1] == 0:
                break
        if best is None or cost < best[0]:
            best = (cost, knobs)
        if cost[1] == 0:
            break
    assert best is not None
    return Fit(best[1], evaluate(best[1]), len(evaluate.memo))


def error_stats(model: Sequence[int], rtl: Sequence[int]) -> dict[str, float]:
    """R² of the model's cycles against the RTL's, and mean / max |relative error| (%)."""
    m, r = np.asarray(model, float), np.asarray(rtl, float)
    rel = np.abs(m - r) / np.maximum(r, 1) * 100
    ss_tot = float(((r - r.mean()) ** 2).sum())
    r2 = 1.0 - float(((m - r) ** 2).sum()) / ss_tot if ss_tot else math.nan
    return {"r2": r2, "mean_abs_error_pct": float(rel.mean()) if len(rel) else 0.0,
            "max_abs_error_pct": float(rel.max()) if len(rel) else 0.0}
