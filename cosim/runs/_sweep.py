"""The hand-built example kernels as sweepable workloads, each with its numpy reference.

A study's ``kernel`` workload (and the nightly regression) picks one of these by name
and runs it at a size, density, FIFO depth and dtype; the reference computes the same
product from the dense inputs with numpy alone, so a run is checked against something
that shares no code with the graph or the simulator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ir import Graph, examples

__all__ = ["SweepKernel", "SWEEP_KERNELS", "kernel_graph"]

Arrays = dict[str, np.ndarray]


@dataclass(frozen=True)
class SweepKernel:
    """A graph factory ``(size, depth, dtype) -> Graph`` and its numpy reference."""

    build: Callable[[int, int | None, str], Graph]
    reference: Callable[[Arrays], np.ndarray]


SWEEP_KERNELS: dict[str, SweepKernel] = {
    "spmv": SweepKernel(lambda s, d, t: examples.spmv(s, s, "dc", d, t),
                        lambda a: a["B"] @ a["c"]),
    "spmm_ijk": SweepKernel(lambda s, d, t: examples.spmm_ijk(s, s, 8, "dc", d, t),
                            lambda a: a["B"] @ a["C"]),
    "spmm_ikj": SweepKernel(lambda s, d, t: examples.spmm_ikj(s, s, 8, "dc", "dc", d, t),
                            lambda a: a["B"] @ a["C"]),
    "spmm_kij": SweepKernel(lambda s, d, t: examples.spmm_kij(s, s, 8, d, t),
                            lambda a: a["B"] @ a["C"]),
    "sddmm": SweepKernel(lambda s, d, t: examples.sddmm(s, s, 8, "dc", d, t),
                         lambda a: a["B"] * (a["C"] @ a["D"])),
    "add": SweepKernel(lambda s, d, t: examples.elementwise(s, s, "add", depth=d, dtype=t),
                       lambda a: a["A"] + a["B"]),
    "mul": SweepKernel(lambda s, d, t: examples.elementwise(s, s, "mul", out_fmt="cc",
                                                            depth=d, dtype=t),
                       lambda a: a["A"] * a["B"]),
    "ttv": SweepKernel(lambda s, d, t: examples.ttv(s, s, 6, "dcc", d, t),
                       lambda a: np.einsum("ijk,k->ij", a["B"], a["c"])),
}


def kernel_graph(kernel: str, size: int, density: float, depth: int | None, dtype: str,
                 seed: int) -> tuple[Graph, Arrays]:
    """The kernel's graph and seeded random inputs: small non-zero integers (exact in
    float32 and int32), compressed operands at ``density``, dense ones full."""
    graph = SWEEP_KERNELS[kernel].build(size, depth, dtype)
    rng = np.random.default_rng(seed)
    inputs = {}
    for t in graph.tensors.values():
        if t.role != "input":
            continue
        vals = rng.integers(1, 8, size=t.shape) * rng.choice([-1, 1], size=t.shape)
        keep = density if "c" in t.format.split(":")[0] else 1.0
        vals = vals * (rng.random(t.shape) < keep)
        inputs[t.name] = vals.astype(np.float32 if dtype == "float32" else np.int32)
    return graph, inputs
