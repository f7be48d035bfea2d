"""Calibration: fit the timing knobs so the Python model reproduces an RTL's cycles.

Takes a kernel suite (:func:`bundled_suite`, or graphs with their inputs), the cycles an
RTL takes on each kernel (:func:`rtl_cycles`: the reference RTL under a hardware
description, the stand-in for a Vitis export), and a base hardware description; returns
the knobs (``timing.<primitive>.latency|ii|startup`` per primitive kind, ``fifo.latency``)
under which the Python model's cycle count is closest to the RTL's (:func:`fit`:
coordinate descent, seeded by the defaults or a Vitis synthesis report, :mod:`._csynth`).
The knobs are those of docs/timing.md, "Latency, II and start-up". A start-up only shows
where a node would otherwise fire before it (an early scanner, not a deep ALU), so the
fit recovers it where the suite can see it and leaves it at 0 elsewhere.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ir import Graph, Hardware, at_run_depth, examples
from sim_models.python import SimResult

from ..backends._backend import Backend, get_backend

__all__ = ["Kernel", "Knobs", "Fit", "bundled_suite", "rtl_cycles", "model_cycles", "fit",
           "FIFO_CHOICES", "suite_primitives", "error_stats", "rtl_runs", "seed_from_traces",
           "export_rtl_dir", "dir_runs", "RtlDirError", "TOP_PORTS", "systemc_cycles"]

#: ``fifo.latency`` values the fit tries (docs/timing.md)
FIFO_CHOICES: tuple[int | str, ...] = (1, 2, "vitis")


@dataclass(frozen=True)
class Kernel:
    """One calibration kernel: a graph and its inputs (numpy arrays by tensor name)."""

    name: str
    graph: Graph
    inputs: Mapping[str, Any]


#: each per-kind knob's default (docs/timing.md): left out of overrides and keys
_KNOB_DEFAULTS = {"latency": 1, "ii": 1, "startup": 0}


@dataclass(frozen=True)
class Knobs:
    """The fitted knobs: per primitive kind its latency, II and start-up, and
    ``fifo.latency``."""

    latency: Mapping[str, int] = field(default_factory=dict)
    ii: Mapping[str, int] = field(default_factory=dict)
    fifo: int | str = 1
    startup: Mapping[str, int] = field(default_factory=dict)

    def _set(self) -> list[tuple[str, str, int]]:
        """(knob, primitive, value) of every per-kind knob off its default, sorted."""
        return [(k, p, v) for k, d in _KNOB_DEFAULTS.items()
                for p, v in sorted(getattr(self, k).items()) if v != d]

    def overrides(self) -> dict[str, Any]:
        """The knobs as hardware overrides (``ir.Hardware.with_overrides``); defaults
        (latency 1, ii 1, startup 0) are left out."""
        out: dict[str, Any] = {"fifo.latency": self.fifo}
        return out | {f"timing.{p}.{k}": v for k, p, v in self._set()}

    def key(self) -> tuple:
        return (*self._set(), str(self.fifo))

    def only(self, prims: frozenset[str]) -> Knobs:
        """The knobs of these primitive kinds (and ``fifo.latency``)."""
        return Knobs(**{k: {p: v for p, v in getattr(self, k).items() if p in prims}
                        for k in _KNOB_DEFAULTS}, fifo=self.fifo)

    def with_knob(self, what: str, prim: str, value: int | str) -> Knobs:
        if what == "fifo":
            return Knobs(self.latency, self.ii, value, self.startup)
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


#: the ports every kernel's top keeps (docs/rtl.md): clock, reset, end of run, cycle count
TOP_PORTS = ("ap_clk", "ap_rst", "ap_done", "cycles")


class RtlDirError(ValueError):
    """An ``--rtl-dir`` folder that does not follow the convention (one line says what)."""


def export_rtl_dir(suite: Sequence[Kernel], hw: Hardware, folder: Path) -> list[Path]:
    """The reference RTL under ``hw`` (its knobs rendered) in the ``--rtl-dir`` convention
    (docs/calibrate.md): ``folder/<kernel>/<kernel>_top.sv`` plus the library modules it
    instantiates, one self-contained folder per kernel, as a user exports Vitis RTL."""
    import shutil

    from rtl_hls.rtl import generate
    from rtl_hls.rtl.netlist import rtl_sources

    out = []
    for k in suite:
        d = Path(folder) / k.name
        d.mkdir(parents=True, exist_ok=True)
        net = generate(at_run_depth(k.graph, "graph", hw), top=f"{k.name}_top", hw=hw)
        (d / f"{net.top}.sv").write_text(net.text)
        for src in rtl_sources():
            shutil.copyfile(src, d / src.name)
        out.append(d)
    return out


def _top_sources(folder: Path, kernel: str) -> tuple[tuple[Path, ...], str]:
    """The Verilog/SystemVerilog files of ``folder/<kernel>/`` and its top's name, or
    :class:`RtlDirError` naming the missing folder, top module or port."""
    import re

    d = Path(folder) / kernel
    top = f"{kernel}_top"
    where = f"--rtl-dir {str(folder)!r}"
    if not d.is_dir():
        raise RtlDirError(f"{where}: no folder {kernel}/ for kernel {kernel!r} (expected "
                          f"{d}/ holding the Verilog of module {top}; docs/calibrate.md)")
    # SystemVerilog packages compile first (the reference library's samfuse_pkg.sv)
    files = tuple(sorted((f for f in d.iterdir() if f.suffix in (".v", ".sv")),
                         key=lambda f: (not re.search(r"^\s*package\b", f.read_text(
                             errors="replace"), re.M), f.name)))
    header = None
    for f in files:
        m = re.search(rf"\bmodule\s+{top}\b(.*?)\)\s*;", f.read_text(errors="replace"),
                      re.S)
        if m:
            header = m.group(1)
            break
    if header is None:
        raise RtlDirError(f"{where}: no module {top} in {d}/*.v, *.sv (the top of kernel "
                          f"{kernel!r}; docs/calibrate.md)")
    missing = [p for p in TOP_PORTS if not re.search(rf"\b{p}\b", header)]
    if missing:
        raise RtlDirError(f"{where}: module {top} has no port {', '.join(missing)} (a top "
                          f"keeps {', '.join(TOP_PORTS)}: docs/rtl.md)")
    return files, top


def dir_runs(suite: Sequence[Kernel], folder: Path, hw: Hardware, simulator: str = "icarus",
             progress: Callable[[str], None] | None = None) -> list[SimResult]:
    """Traced runs of a user's RTL in ``folder`` (``folder/<kernel>/``, docs/calibrate.md)
    on every kernel, by the reference RTL's benches: cycles, and each edge's write and read
    cycles where its FIFOs record them (the reference library's FIFOs do). Every folder
    is checked before the first run."""
    from rtl_hls.rtl.bench import ExternalRtl

    from ..backends._rtl import RtlBackend

    tops = [_top_sources(folder, k.name) for k in suite]
    out = []
    for k, (files, top) in zip(suite, tops, strict=True):
        if progress is not None:
            progress(k.name)
        be = RtlBackend(simulator, external=ExternalRtl(files, top))
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
    its output edges minus ``F - 1``, ``ii`` = the smallest gap between two cycles in
    which one of its nodes pushed, and ``startup`` = the first cycle one of its nodes
    fired (popped or pushed: a node held back by its start-up fires first at it). Lower
    bounds met
    whenever a consumer waited on a token or a node ran at full rate, which a suite of
    kernels shows for most kinds (a start-up is an upper bound, exact where it held a
    node back, invisible elsewhere); :func:`fit` refines the rest and resets start-ups
    the suite cannot see."""
    lat: dict[str, int] = {}
    ii: dict[str, int] = {}
    startup: dict[str, int] = {}
    for k, run in zip(suite, runs, strict=True):
        g, trace = k.graph, run.trace
        assert trace is not None
        depth = {e.name: e.depth for e in at_run_depth(g, "graph", hw).edges}
        pushes: dict[str, set[int]] = {}
        first: dict[str, int] = {}  # each node's first firing: its first pop or push
        for e in g.edges:
            et = trace.edges[e.name]
            op = g.nodes[e.src_node].op
            pushes.setdefault(e.src_node, set()).update(c for c in et.cycles if c is not None)
            for nid, cycles in ((e.src_node, et.cycles), (e.dst_node, et.read_cycles or [])):
                seen = [c for c in cycles if c is not None]
                if seen:
                    first[nid] = min(first.get(nid, seen[0]), min(seen))
            gaps = [r - w for w, r in zip(et.cycles, et.read_cycles or [], strict=False)
                    if w is not None]
            if gaps:
                f = _read_latency(fifo, depth[e.name])
                lat[op] = max(1, min(lat.get(op, 1 << 30), min(gaps) - f + 1))
        for nid, cycle in first.items():
            op = g.nodes[nid].op
            startup[op] = min(startup.get(op, cycle), cycle)
        for nid, cycles in pushes.items():
            order = sorted(cycles)
            op = g.nodes[nid].op
            if len(order) > 1:
                ii[op] = min(ii.get(op, 1 << 30), min(b - a for a, b in zip(order, order[1:],
                                                                           strict=False)))
    return Knobs(lat, ii, fifo, startup)


def _read_latency(fifo: int | str, depth: int | None) -> int:
    """An edge's read latency F under ``fifo.latency`` (docs/timing.md's table)."""
    if fifo == "vitis":
        return 2 if depth is not None and depth > 2 else 1
    return int(fifo)


def model_cycles(suite: Sequence[Kernel], hw: Hardware) -> list[int]:
    """Cycles of the Python model under ``hw`` on every kernel."""
    return _cycles(get_backend("python"), suite, hw)


def systemc_cycles(suite: Sequence[Kernel], hw: Hardware) -> list[int | None] | str:
    """Cycles of SystemC under ``hw`` on every kernel (one batch; ``None`` where a run
    failed), or why SystemC cannot run here."""
    from ..backends._systemc import SystemCBackend, SystemCRun

    reason = SystemCBackend.unavailable()
    if reason:
        return reason
    runs = SystemCBackend().run_batch([SystemCRun(k.graph, k.inputs, hw=hw) for k in suite])
    return [None if isinstance(r, Exception) else r.cycles for r in runs]


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
            mine = knobs.only(self.prims[i])
            key = (i, mine.key())
            if key not in self.memo:
                hw = self.base.with_overrides(mine.overrides())
                self.memo[key] = model_cycles([kernel], hw)[0]
            out.append(self.memo[key])
        return out


def fit(suite: Sequence[Kernel], target: Sequence[int], base: Hardware,
        seeds: Sequence[Knobs] = (), max_latency: int = 6, max_ii: int = 3, rounds: int = 6,
        progress: Callable[[str], None] | None = None, max_startup: int = 0) -> Fit:
    """Coordinate descent on the knobs from each of ``seeds`` (default: the defaults at
    every ``fifo.latency`` choice): in each round, per primitive kind, its (latency, II)
    pair over 1..``max_latency`` × 1..``max_ii`` with the others held, then its start-up
    over 0..``max_startup``, then ``fifo.latency``; a start ends at a round that changes
    nothing or at zero error. The best start wins; starts are tried closest first, and a
    zero error ends the fit."""
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
                for start in range(max_startup + 1):
                    cand = knobs.with_knob("startup", prim, start)
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
        knobs = _unseen_startups_reset(knobs, cost, evaluate, target)
        if best is None or cost < best[0]:
            best = (cost, knobs)
        if cost[1] == 0:
            break
    assert best is not None
    return Fit(best[1], evaluate(best[1]), len(evaluate.memo))


def _unseen_startups_reset(knobs: Knobs, cost: tuple[float, int], evaluate: _Evaluator,
                           target: Sequence[int]) -> Knobs:
    """``knobs`` with every start-up the suite cannot see (its cost no worse at 0) back
    at 0: a seed's start-up of a kind that was never held back is no finding."""
    for prim, value in sorted(knobs.startup.items()):
        cand = knobs.with_knob("startup", prim, 0)
        if value and _cost(evaluate(cand), target) <= cost:
            knobs = cand
    return knobs


def error_stats(model: Sequence[int], rtl: Sequence[int]) -> dict[str, float]:
    """R² of the model's cycles against the RTL's, and mean / max |relative error| (%)."""
    m, r = np.asarray(model, float), np.asarray(rtl, float)
    rel = np.abs(m - r) / np.maximum(r, 1) * 100
    ss_tot = float(((r - r.mean()) ** 2).sum())
    r2 = 1.0 - float(((m - r) ** 2).sum()) / ss_tot if ss_tot else math.nan
    return {"r2": r2, "mean_abs_error_pct": float(rel.mean()) if len(rel) else 0.0,
            "max_abs_error_pct": float(rel.max()) if len(rel) else 0.0}
