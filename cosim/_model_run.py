"""Run a :class:`compiler.CompiledModel` region by region on any backend.

Memory holds every tensor as a fiber tree in its memory format (the program's declared
format or the schedule's override). Each kernel of a region binds its inputs from memory
(``bind_inputs`` re-lays a tensor out when the graph wants a permuted copy), runs on the
chosen :class:`Backend`, and its output is stored back in memory format so later regions
can read it. Cycles add up over kernels and regions (they run one after the other).

Bytes moved through memory: every tensor a kernel reads, as bound, plus the tensor it
writes, as written, at 4 bytes per stored ``seg``, ``crd`` and value entry (dense levels
store nothing but their size). A tensor read by two kernels counts twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from compiler import CompiledModel
from ir import CompressedLevel, FiberTree, Format
from sim_models.python import InputError, NodeStats, SimResult, bind_inputs

from ._backend import get_backend

__all__ = ["ModelRun", "RegionRun", "RegionProgress", "run_model", "region_weights",
           "storage_bytes", "BYTES_PER_ENTRY"]

#: bytes per stored seg, crd or value entry (32-bit words, as in the hardware)
BYTES_PER_ENTRY = 4


def storage_bytes(tree: FiberTree) -> int:
    """Bytes a fiber tree occupies in memory: 4 per seg, crd and value entry."""
    entries = len(tree.vals)
    for lvl in tree.levels:
        if isinstance(lvl, CompressedLevel):
            entries += len(lvl.seg) + len(lvl.crd)
    return BYTES_PER_ENTRY * entries


@dataclass
class RegionRun:
    """One region's run: its kernels' results, cycles and memory traffic."""

    name: str
    results: dict[str, SimResult]  # exported tensor -> its kernel's result
    bytes_read: dict[str, int]  # tensor -> bytes read (summed over kernels)
    bytes_written: dict[str, int]

    @property
    def cycles(self) -> int:
        return sum(r.cycles or 0 for r in self.results.values())

    @property
    def bytes_moved(self) -> int:
        return sum(self.bytes_read.values()) + sum(self.bytes_written.values())

    @property
    def nodes(self) -> dict[str, dict[str, NodeStats]]:
        return {t: r.nodes for t, r in self.results.items()}


@dataclass
class ModelRun:
    """Outputs (dense numpy), per-region runs; totals are sums over regions."""

    program: str
    schedule: str
    backend: str
    outputs: dict[str, np.ndarray]
    regions: list[RegionRun] = field(default_factory=list)
    #: every tensor in memory at the end (inputs, weights, materialised results), so a
    #: single kernel can be re-run or co-simulated on exactly what it read
    memory: dict[str, FiberTree] = field(default_factory=dict)

    @property
    def cycles(self) -> int:
        return sum(r.cycles for r in self.regions)

    @property
    def bytes_moved(self) -> int:
        return sum(r.bytes_moved for r in self.regions)

    @property
    def nodes(self) -> dict[str, dict[str, NodeStats]]:
        """``"region/tensor"`` -> per-node statistics of that kernel."""
        return {f"{r.name}/{t}": stats for r in self.regions for t, stats in r.nodes.items()}

    def __str__(self) -> str:
        head = f"{'region':<16}{'kernels':>8}{'cycles':>10}{'read B':>10}{'write B':>10}"
        lines = [f"{self.program} / {self.schedule} on {self.backend}", head]
        for r in self.regions:
            lines.append(f"{r.name:<16}{len(r.results):>8}{r.cycles:>10}"
                         f"{sum(r.bytes_read.values()):>10}"
                         f"{sum(r.bytes_written.values()):>10}")
        reads = sum(sum(r.bytes_read.values()) for r in self.regions)
        writes = sum(sum(r.bytes_written.values()) for r in self.regions)
        lines.append(f"{'total':<16}{sum(len(r.results) for r in self.regions):>8}"
                     f"{self.cycles:>10}{reads:>10}{writes:>10}")
        return "\n".join(lines)


@dataclass(frozen=True)
class RegionProgress:
    """A region just finished: how long it took, the run so far, and the time left as
    estimated from the cost heuristic's work of the regions still to run."""

    index: int  # 1-based
    count: int
    region: str
    backend: str
    seconds: float
    elapsed: float
    remaining: float | None

    def __str__(self) -> str:
        left = "" if self.remaining is None else f", ~{self.remaining:.1f} s left"
        return (f"region {self.index}/{self.count} {self.region} on {self.backend}: "
                f"{self.seconds:.2f} s (elapsed {self.elapsed:.1f} s{left})")


def region_weights(compiled: CompiledModel, known: Mapping[str, Any]) -> list[float]:
    """Expected work of each region: the tokens ``compiler.estimate`` expects on its
    kernels' edges, from the statistics of the tensors in ``known`` (intermediates not yet
    computed count as dense). Only the ratios matter (they split the time left)."""
    from compiler import estimate

    weights = []
    for reg in compiled.regions:
        work = 0.0
        for k in reg.kernels:
            stats = {t: known.get(t, 1.0) for t in k.inputs}
            try:
                work += sum(estimate(k.graph, stats).tokens.values())
            except (ValueError, KeyError, ZeroDivisionError):  # no estimate: count it as 1
                work += 1.0
        weights.append(max(work, 1.0))
    return weights


def run_model(compiled: CompiledModel, inputs: Mapping[str, Any], backend: str = "python",
              depth: int | None | str = "graph",
              progress: Callable[[RegionProgress], None] | None = None) -> ModelRun:
    """Run every region in order on ``backend``; ``depth`` overrides every FIFO depth
    (``None`` = unbounded) unless it is ``"graph"`` (the depth compiled in).
    ``progress`` is called after each region (``samfuse model`` prints it on stderr)."""
    program = compiled.program
    memory = _load_inputs(compiled, inputs)
    runner = get_backend(backend)
    run = ModelRun(program.name, compiled.schedule.name, backend, {})
    weights = region_weights(compiled, memory) if progress else []
    start = time.perf_counter()
    for n, reg in enumerate(compiled.regions):
        reg_start = time.perf_counter()
        rr = RegionRun(reg.name, {}, {}, {})
        for k in reg.kernels:
            bound = bind_inputs(k.graph, {t: memory[t] for t in k.inputs})
            for t, tree in bound.items():
                rr.bytes_read[t] = rr.bytes_read.get(t, 0) + storage_bytes(tree)
            res = runner.run(k.graph, bound, depth=depth)
            written = res.outputs[k.target]
            rr.bytes_written[k.target] = storage_bytes(written)
            memory[k.target] = FiberTree.from_any(written, _memory_format(compiled, k.target),
                                                  dtype=k.graph.dtype)
            rr.results[k.target] = res
        run.regions.append(rr)
        if progress is not None:
            now = time.perf_counter()
            done, left = sum(weights[:n + 1]), sum(weights[n + 1:])
            progress(RegionProgress(n + 1, len(compiled.regions), reg.name, backend,
                                    now - reg_start, now - start,
                                    (now - start) * left / done if done else None))
    run.outputs = {name: memory[name].to_dense() for name in program.outputs}
    run.memory = memory
    return run


def _memory_format(compiled: CompiledModel, name: str) -> Format:
    return Format.parse(compiled.formats[name], len(compiled.program.tensors[name].shape))


def _load_inputs(compiled: CompiledModel, inputs: Mapping[str, Any]) -> dict[str, FiberTree]:
    program = compiled.program
    missing = [n for n in program.inputs if n not in inputs]
    extra = sorted(set(inputs) - set(program.inputs))
    if missing:
        raise InputError(f"program {program.name!r} needs input tensor(s) {missing}; got "
                         f"{sorted(inputs)}")
    if extra:
        raise InputError(f"program {program.name!r} has no input tensor(s) {extra}; its "
                         f"inputs are {program.inputs}")
    memory = {}
    for name in program.inputs:
        decl = program.tensors[name]
        tree = FiberTree.from_any(inputs[name], _memory_format(compiled, name),
                                  dtype=decl.dtype)
        if tuple(tree.shape) != decl.shape:
            raise InputError(f"input {name!r}: shape {tuple(tree.shape)}, but the program "
                             f"declares {decl.shape}")
        memory[name] = tree
    return memory
