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

from ir import Graph, Hardware, examples

from ..backends._backend import Backend, get_backend

__all__ = ["Kernel", "Knobs", "Fit", "bundled_suite", "rtl_cycles", "model_cycles", "fit",
           "FIFO_CHOICES", "suite_primitives", "error_stats"]

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


def rtl_cycles(suite: Sequence[Kernel], hw: Hardware, simulator: str = "icarus",
               progress: Callable[[str], None] | None = None) -> list[int]:
    """Cycles of the reference RTL under ``hw`` (its knobs rendered) on every kernel."""
    from ..backends._rtl import RtlBackend

    return _cycles(RtlBackend(simulator), suite, hw, progress)


def model_cycles(suite: Sequence[Kernel], hw: Hardware) -> list[int]:
    """Cycles of the Python model under ``hw`` on every kernel."""
    return _cycles(get_backend("python"), suite, hw)


def _cost(model: Sequence[int], rtl: Sequence[int]) -> tuple[float, int]:
    """(sum of relative errors, sum of absolute errors): what the fit minimises."""
    return (sum(abs(m - r) / max(r, 1) for m, r in zip(model, rtl, strict=True)),
            sum(abs(m - r) for m, r in zip(model, rtl, strict=True)))


@dataclass
class Fit:
    """The fit's result: the knobs, the model's cycles under them, and how many model
    evaluations (one suite run each) it took."""

    knobs: Knobs
    cycles: list[int]
    evaluations: int


def fit(suite: Sequence[Kernel], target: Sequence[int], base: Hardware,
        seed: Knobs | None = None, max_latency: int = 6, max_ii: int = 3, rounds: int = 4,
        progress: Callable[[str], None] | None = None) -> Fit:
    """Coordinate descent on the knobs from ``seed`` (default: the defaults): in each
    round, ``fifo.latency``, then per primitive kind its latency (1..``max_latency``) and
    II (1..``max_ii``), each set to the value with the lowest cost with the others held;
    stops at a round that changes nothing or at zero error."""
    prims = suite_primitives(suite)
    memo: dict[tuple, list[int]] = {}

    def evaluate(k: Knobs) -> list[int]:
        if k.key() not in memo:
            memo[k.key()] = model_cycles(suite, base.with_overrides(k.overrides()))
        return memo[k.key()]

    best = seed or Knobs()
    best_cost = _cost(evaluate(best), target)
    axes: list[tuple[str, str, Sequence[int | str]]] = [("fifo", "", FIFO_CHOICES)]
    axes += [(what, p, range(1, (max_latency if what == "latency" else max_ii) + 1))
             for p in prims for what in ("latency", "ii")]
    for r in range(rounds):
        changed = False
        for what, prim, values in axes:
            for v in values:
                cand = best.with_knob(what, prim, v)
                c = _cost(evaluate(cand), target)
                if c < best_cost:
                    best, best_cost, changed = cand, c, True
            if best_cost[1] == 0:
                break
        if progress is not None:
            progress(f"round {r + 1}: {len(memo)} evaluations, sum |error| "
                     f"{best_cost[1]} cycles")
        if not changed or best_cost[1] == 0:
            break
    return Fit(best, evaluate(best), len(memo))


def error_stats(model: Sequence[int], rtl: Sequence[int]) -> dict[str, float]:
    """R² of the model's cycles against the RTL's, and mean / max |relative error| (%)."""
    m, r = np.asarray(model, float), np.asarray(rtl, float)
    rel = np.abs(m - r) / np.maximum(r, 1) * 100
    ss_tot = float(((r - r.mean()) ** 2).sum())
    r2 = 1.0 - float(((m - r) ** 2).sum()) / ss_tot if ss_tot else math.nan
    return {"r2": r2, "mean_abs_error_pct": float(rel.mean()) if len(rel) else 0.0,
            "max_abs_error_pct": float(rel.max()) if len(rel) else 0.0}
