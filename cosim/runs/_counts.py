"""Measured work of a simulated graph: FLOPs and memory bytes, and the heuristic's error.

The cost heuristic (:func:`compiler.estimate`) predicts these numbers from shapes and
densities; this module measures them on a real run so the two can be compared. The
counting rules are ``ir.work_from_tokens``'s (``docs/cost.md``), read from a run's data
token counters (``SimResult.work``): the Python and SystemC models count on every run,
RTL and HLS C-simulation through their traces.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from compiler import CompiledModel, Estimate, compile_expression, estimate
from ir import FLOP_PORTS, WORD_BYTES, Graph
from sim_models.python import SimResult, simulate

from ._model_run import run_model

__all__ = ["Counts", "measured_counts", "measure", "WORD_BYTES", "FLOP_OPS",
           "relative_errors", "KERNEL_CASES", "KernelCase", "kernel_case_inputs",
           "heuristic_error_table", "format_error_table", "KernelCounts", "model_counts"]

#: primitives whose consumed data values are counted as FLOPs, with the counted port
FLOP_OPS: Mapping[str, str] = FLOP_PORTS


@dataclass(frozen=True)
class Counts:
    """FLOPs and bytes of one run, with the breakdown the totals come from."""

    flops: int
    bytes_read: int
    bytes_written: int
    flops_by_node: dict[str, int] = field(default_factory=dict)
    words_read: dict[str, int] = field(default_factory=dict)     # per input tensor
    words_written: dict[str, int] = field(default_factory=dict)  # per output tensor

    @property
    def bytes(self) -> int:
        return self.bytes_read + self.bytes_written


def measured_counts(graph: Graph, result: SimResult) -> Counts:
    """Count FLOPs and bytes of ``result``, a run of ``graph`` (``SimResult.work``)."""
    work = result.work(graph)
    return Counts(work.flops, WORD_BYTES * sum(work.words_read.values()),
                  WORD_BYTES * sum(work.words_written.values()), work.flops_by_node,
                  work.words_read, work.words_written)


def measure(graph: Graph, inputs: Mapping[str, Any], **simulate_args: Any
            ) -> tuple[Counts, SimResult]:
    """Simulate ``graph`` (traced, for callers that inspect its streams) and count its
    work."""
    result = simulate(graph, inputs, trace=True, **simulate_args)
    return measured_counts(graph, result), result


def relative_errors(estimate: Any, measured: Counts) -> dict[str, float]:
    """|estimate − measured| / measured for flops, bytes_read, bytes_written and bytes
    (0 when both are 0; ``estimate`` is anything with those attributes, e.g. a
    :class:`compiler.Estimate`)."""
    out = {}
    for key in ("flops", "bytes_read", "bytes_written", "bytes"):
        e, m = float(getattr(estimate, key)), float(getattr(measured, key))
        out[key] = 0.0 if e == m else abs(e - m) / m if m else float("inf")
    return out


@dataclass(frozen=True)
class KernelCase:
    """A kernel for checking the heuristic: expression, formats, order and base shapes;
    ``sparse`` names the operands drawn at the case's density (the others are dense)."""

    expr: str
    formats: dict[str, str]
    shapes: dict[str, tuple[int, ...]]
    sparse: tuple[str, ...]
    order: str | None = None


KERNEL_CASES: dict[str, KernelCase] = {
    "spmv": KernelCase("x(i) = B(i,j) * c(j)", {"B": "csr"}, {"B": (48, 40), "c": (40,)},
                       ("B",)),
    "spmm_ikj": KernelCase("X(i,j) = B(i,k) * C(k,j)", {"B": "csr", "C": "csr", "X": "dc"},
                           {"B": (40, 32), "C": (32, 24)}, ("B", "C"), "ikj"),
    "spmm_ijk": KernelCase("X(i,j) = B(i,k) * C(k,j)", {"B": "csr", "C": "csc"},
                           {"B": (40, 32), "C": (32, 24)}, ("B", "C"), "ijk"),
    "spmm_ijk_transposed": KernelCase("X(i,j) = B(i,k) * C(k,j)",
                                      {"B": "csr", "C": "csr"},
                                      {"B": (40, 32), "C": (32, 24)}, ("B", "C"), "ijk"),
    "spmm_kij": KernelCase("X(i,j) = B(i,k) * C(k,j)", {"B": "csc", "C": "csr", "X": "dc"},
                           {"B": (40, 32), "C": (32, 24)}, ("B", "C"), "kij"),
    "spmm_jki": KernelCase("X(i,j) = B(i,k) * C(k,j)", {"B": "csc", "C": "csc",
                                                         "X": "dc:1,0"},
                           {"B": (40, 32), "C": (32, 24)}, ("B", "C"), "jki"),
    "sddmm": KernelCase("X(i,j) = B(i,j) * C(i,k) * D(k,j)", {"B": "csr", "X": "dc"},
                        {"B": (40, 32), "C": (40, 8), "D": (8, 32)}, ("B",)),
    "add": KernelCase("X(i,j) = B(i,j) + C(i,j)", {"B": "csr", "C": "csr", "X": "dc"},
                      {"B": (48, 40), "C": (48, 40)}, ("B", "C")),
    "add_dcsr": KernelCase("X(i,j) = B(i,j) + C(i,j)", {"B": "dcsr", "C": "dcsr",
                                                         "X": "dcsr"},
                           {"B": (48, 40), "C": (48, 40)}, ("B", "C")),
    "mul": KernelCase("X(i,j) = B(i,j) * C(i,j)", {"B": "csr", "C": "csr", "X": "dc"},
                      {"B": (48, 40), "C": (48, 40)}, ("B", "C")),
    "ttv": KernelCase("X(i,j) = B(i,j,k) * c(k)", {"B": "dcc", "X": "dc"},
                      {"B": (16, 12, 20), "c": (20,)}, ("B",)),
}


def kernel_case_inputs(case: KernelCase, density: float, seed: int = 0, scale: float = 1.0
                       ) -> dict[str, np.ndarray]:
    """Inputs of ``case`` with every shape multiplied by ``scale``: the ``sparse``
    operands i.i.d. non-zero with probability ``density``, values in [0.5, 1.5)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in case.shapes.items():
        shape = tuple(max(1, round(s * scale)) for s in shape)
        vals = rng.uniform(0.5, 1.5, shape).astype(np.float32)
        if name in case.sparse:
            vals[rng.random(shape) >= density] = 0.0
        out[name] = vals
    return out


def heuristic_error_table(density: float = 0.1, seed: int = 0, scale: float = 1.0,
                          kernels: list[str] | None = None) -> list[dict[str, Any]]:
    """Measured vs estimated FLOPs/bytes for each kernel of :data:`KERNEL_CASES`.

    Two estimates per kernel: from the inputs' measured per-level statistics
    (``tensor``) and from their overall density only (``density``).
    """
    rows = []
    for name in kernels or list(KERNEL_CASES):
        case = KERNEL_CASES[name]
        inputs = kernel_case_inputs(case, density, seed, scale)
        graph = compile_expression(case.expr, case.formats,
                                   {k: v.shape for k, v in inputs.items()}, order=case.order)
        counts, result = measure(graph, inputs)
        from_tensor = estimate(graph, inputs)
        dens = {k: float(np.count_nonzero(v)) / max(1, math.prod(v.shape))
                for k, v in inputs.items()}
        from_density = estimate(graph, dens)
        rows.append({"kernel": name, "order": "".join(graph.meta.get("order", [])),
                     "cycles": result.cycles, "measured": counts,
                     "estimate_tensor": from_tensor, "estimate_density": from_density,
                     "error_tensor": relative_errors(from_tensor, counts),
                     "error_density": relative_errors(from_density, counts)})
    return rows


def format_error_table(rows: list[dict[str, Any]]) -> str:
    """A Markdown table of :func:`heuristic_error_table` rows (errors in %)."""
    lines = ["| kernel | order | FLOPs meas. | FLOPs est. | err % | bytes meas. | bytes est. "
             "| err % | FLOPs err % (density only) | bytes err % (density only) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        m, e = r["measured"], r["estimate_tensor"]
        et, ed = r["error_tensor"], r["error_density"]
        lines.append(f"| {r['kernel']} | {r['order']} | {m.flops} | {e.flops:.0f} | "
                     f"{100 * et['flops']:.1f} | {m.bytes} | {e.bytes:.0f} | "
                     f"{100 * et['bytes']:.1f} | {100 * ed['flops']:.1f} | "
                     f"{100 * ed['bytes']:.1f} |")
    return "\n".join(lines)



@dataclass(frozen=True)
class KernelCounts:
    """Measured and estimated work of one kernel of a compiled model."""

    region: str
    target: str
    measured: Counts
    estimate: Estimate

    @property
    def errors(self) -> dict[str, float]:
        return relative_errors(self.estimate, self.measured)


def model_counts(compiled: CompiledModel, inputs: Mapping[str, Any]) -> list[KernelCounts]:
    """Per kernel of ``compiled``: measured counts and the heuristic's estimate.

    Runs the model once (:func:`cosim.run_model`, Python backend), which counts every
    kernel's work as it runs and materialises every intermediate. The estimate of a
    kernel is given the measured statistics of its actual inputs (intermediates
    included), so it checks the per-graph heuristic, not a prediction of intermediate
    densities.
    """
    run = run_model(compiled, inputs)
    memory = dict(inputs)
    for reg in run.regions:
        for target, res in reg.results.items():
            memory[target] = res.outputs[target]
    rows = []
    for reg, done in zip(compiled.regions, run.regions, strict=True):
        for k in reg.kernels:
            ins = {t: memory[k.source(t)] for t in k.inputs}
            rows.append(KernelCounts(reg.name, k.target,
                                     measured_counts(k.graph, done.results[k.target]),
                                     estimate(k.graph, ins)))
    return rows
