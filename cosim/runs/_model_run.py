"""Run a :class:`compiler.CompiledModel` region by region on any backend.

Memory holds every tensor as a fiber tree in its memory format (the program's declared
format or the schedule's override). Each kernel of a region binds its inputs from memory
(``bind_inputs`` re-lays a tensor out when the graph wants a permuted copy), runs on the
chosen :class:`Backend`, and its output is stored back in memory format so later regions
can read it. Cycles add up over kernels and regions (they run one after the other).

Bytes moved through memory: every tensor a kernel reads, as bound, plus the tensor it
writes, as written, at 4 bytes per stored ``seg``, ``crd`` and value entry (dense levels
store nothing but their size). A tensor read by two kernels counts twice; a materialised
intermediate (on chip, docs/fusion.md) counts nowhere. On a hardware
with memory (``hw``) the backends also report what DRAM moved, in whole lines, with the
requests and stall cycles it cost (docs/timing.md, "Memory"); each region sums its
kernels'.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from compiler import CompiledModel
from ir import CompressedLevel, FiberTree, Format, Hardware, load_hw, to_blocks
from sim_models.python import InputError, NodeStats, SimResult, bind_inputs

from ..backends._backend import get_backend
from ._files import safe_join, write_tensor

__all__ = ["ModelRun", "RegionRun", "RegionProgress", "run_model", "region_weights",
           "check_lanes_used", "compare_outputs", "compile_for_run", "bundled_model",
           "storage_bytes", "kernel_values", "BYTES_PER_ENTRY"]

#: bytes per stored seg, crd or value entry (32-bit words, as in the hardware)
BYTES_PER_ENTRY = 4


def storage_bytes(tree: FiberTree) -> int:
    """Bytes a fiber tree occupies in memory: 4 per seg, crd and value entry."""
    entries = tree.vals.size  # a blocked tree stores every element of its blocks
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

    def _node_sum(self, name: str) -> int:
        return sum(getattr(s, name) for r in self.results.values() for s in r.nodes.values())

    @property
    def dram_read_bytes(self) -> int:
        return self._node_sum("dram_read_bytes")

    @property
    def dram_write_bytes(self) -> int:
        return self._node_sum("dram_write_bytes")

    @property
    def mem_requests(self) -> int:
        return self._node_sum("mem_requests")

    @property
    def stall_mem(self) -> int:
        return self._node_sum("stall_mem")

    def achieved_gbps(self, hw: Hardware) -> float:
        """DRAM bytes per second over the region's cycles at the hardware's clock."""
        if not self.cycles:
            return 0.0
        return (self.dram_read_bytes + self.dram_write_bytes) / hw.seconds(self.cycles) / 1e9


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
    #: the simulated hardware (``ideal``: no memory system)
    hw: Hardware = field(default_factory=Hardware)

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

    @property
    def dram_read_bytes(self) -> int:
        return sum(r.dram_read_bytes for r in self.regions)

    @property
    def dram_write_bytes(self) -> int:
        return sum(r.dram_write_bytes for r in self.regions)

    @property
    def mem_requests(self) -> int:
        return sum(r.mem_requests for r in self.regions)

    def __str__(self) -> str:
        mem = self.hw.memory
        head = f"{'region':<16}{'kernels':>8}{'cycles':>10}{'read B':>10}{'write B':>10}"
        if mem:
            head += f"{'DRAM rd B':>11}{'DRAM wr B':>11}{'requests':>10}{'stall_mem':>10}" \
                f"{'GB/s':>8}"
        lines = [f"{self.program} / {self.schedule} on {self.backend}"
                 + (f", hw {self.hw.name}" if mem else ""), head]
        for r in [*self.regions, self._total()]:
            row = f"{r.name:<16}{len(r.results):>8}{r.cycles:>10}" \
                f"{sum(r.bytes_read.values()):>10}{sum(r.bytes_written.values()):>10}"
            if mem:
                row += f"{r.dram_read_bytes:>11}{r.dram_write_bytes:>11}" \
                    f"{r.mem_requests:>10}{r.stall_mem:>10}{r.achieved_gbps(self.hw):>8.2f}"
            lines.append(row)
        return "\n".join(lines)

    def _total(self) -> RegionRun:
        """All regions as one (kernels keyed ``region/tensor``): the table's last row."""
        total = RegionRun("total", {}, {}, {})
        for r in self.regions:
            total.results.update({f"{r.name}/{t}": res for t, res in r.results.items()})
            for mine, theirs in ((total.bytes_read, r.bytes_read),
                                 (total.bytes_written, r.bytes_written)):
                for t, b in theirs.items():
                    mine[f"{r.name}/{t}"] = b
        return total


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


def bundled_model(name: str, config: str, seed: int, gold: bool = True
                  ) -> tuple[Any, dict[str, Any], dict[str, np.ndarray], float]:
    """A bundled model exported for a run: its program, bound weights and inputs, the
    gold output by name (eager PyTorch; ``{}`` unless ``gold``) and the export's
    seconds."""
    import torch

    from compiler import from_torch, torch_inputs, torch_weights
    from compiler.models import MODELS

    model = MODELS[name].from_config(config, seed=seed).eval()
    example = model.example_inputs(seed=seed)
    t0 = time.perf_counter()
    program = from_torch(model, example, formats=model.sparse_formats)
    export_s = time.perf_counter() - t0
    binds = {**torch_weights(model, program), **torch_inputs(program, example)}
    if not gold:
        return program, binds, {}, export_s
    with torch.no_grad():
        want = model(*example)
    gold = want.to_dense().numpy() if want.is_sparse else want.numpy()
    return program, binds, {program.outputs[0]: gold}, export_s


def kernel_values(compiled: CompiledModel, binds: Mapping[str, Any], *,
                  stored: bool = False) -> dict[str, Any]:
    """What the heuristic prices a compiled model's kernels on: every tensor a kernel
    reads, by program name, bound (``binds``) or evaluated (``compiler.evaluate`` of
    the compiled, maybe re-associated, program). Intermediates no kernel reads are not
    kept (full fusion reads none: OGB-MAG's are 1 GB each). ``stored``: each as a run
    holds it, a tree in its memory format (converted one at a time, so the arrays and
    the trees are never all held at once)."""
    from compiler import evaluate

    read = {k.source(t) for reg in compiled.regions for k in reg.kernels for t in k.inputs}
    defined = {st.target for st in compiled.program.statements}
    values = {**{n: v for n, v in binds.items() if n in read},
              **evaluate(compiled.program, binds, keep=read & defined)}
    if not stored:
        return values
    for name in list(values):
        value = values.pop(name)
        if name in compiled.formats:
            values[name] = FiberTree.from_any(value, _memory_format(compiled, name),
                                              dtype=compiled.program.tensors[name].dtype)
    return values


def compile_for_run(program: Any, schedule: Any, hw: Hardware, buffer: Any,
                    binds: Mapping[str, Any], depth: int | None = 2) -> CompiledModel:
    """``compile_model`` as a model run needs it (``samfuse model`` and study workloads
    alike): candidates priced on the run's data whenever a choice depends on it (lanes,
    blocks, association, a memory system), and on the run's memory system with the
    run's ``buffer`` choice, so the orders are the ones that machine favours. Block
    schedules are priced on ideal memory: the memory-aware cost does not model their
    line traffic yet (on ``hbm2-u280`` it picked BigBird's ``i,k,j`` projections at
    block 32, 7.7x slower per projection than the ``i,j,k`` ideal memory picks)."""
    from compiler import compile_model

    priced = schedule.has_lanes or schedule.block or schedule.prices_assoc or hw.memory
    return compile_model(program, schedule, depth=depth, stats=binds if priced else None,
                         hw=hw if hw.memory and not schedule.block else None,
                         buffer=buffer)


def compare_outputs(outputs: Mapping[str, np.ndarray], gold: Mapping[str, np.ndarray]
                    ) -> tuple[float, bool]:
    """Every result against its gold (a function may return several): the largest
    absolute error, and whether all are close (rtol 1e-4, atol 1e-5)."""
    err, ok = 0.0, True
    for name, want in gold.items():
        got = outputs[name]
        if got.size:
            err = max(err, float(np.max(np.abs(got - want))))
        ok = ok and bool(np.allclose(got, want, rtol=1e-4, atol=1e-5))
    return err, ok


def check_lanes_used(compiled: CompiledModel, par: Mapping[str, int],
                     label: str = "the model") -> None:
    """Refuse lanes on an index no kernel outputs: the run would go on one lane, silently
    (``--par q=4`` on a model without ``q``)."""
    kernels = [k for reg in compiled.regions for k in reg.kernels]
    used = {i for k in kernels for i in k.graph.meta.get("parallel", {}).get("par", {})}
    unused = [i for i, n in par.items() if n > 1 and i not in used]
    if unused:
        from compiler import CompileError

        # the index names of each kernel's output, from its statement's left-hand side
        outputs = {i.strip() for k in kernels
                   for i in k.text.split("=", 1)[0].partition("(")[2].rstrip(") ").split(",")
                   if i.strip()}
        raise CompileError(f"par {unused[0]}={par[unused[0]]}: no kernel of {label} has "
                           f"an output index {unused[0]!r}, so nothing would run on those "
                           f"lanes (its kernels' output indices: "
                           f"{', '.join(sorted(outputs)) or 'none'})")


def region_weights(compiled: CompiledModel, known: Mapping[str, Any]) -> list[float]:
    """Expected work of each region: the tokens ``compiler.estimate`` expects on its
    kernels' edges, from the statistics of the tensors in ``known`` (intermediates not yet
    computed count as dense). Only the ratios matter (they split the time left)."""
    from compiler import estimate

    weights = []
    for reg in compiled.regions:
        work = 0.0
        for k in reg.kernels:
            stats = {t: known.get(k.source(t), 1.0) for t in k.inputs}
            try:
                work += sum(estimate(k.graph, stats).tokens.values())
            except (ValueError, KeyError, ZeroDivisionError):  # no estimate: count it as 1
                work += 1.0
        weights.append(max(work, 1.0))
    return weights


def run_model(compiled: CompiledModel, inputs: Mapping[str, Any], backend: str = "python",
              depth: int | None | str = "graph",
              progress: Callable[[RegionProgress], None] | None = None,
              hw: Hardware | str | None = None,
              mem_trace: str | Path | None = None, trace: bool = False,
              inputs_dir: str | Path | None = None, vcd: str | Path | None = None
              ) -> ModelRun:
    """Run every region in order on ``backend``; ``depth`` overrides every FIFO depth
    (``None`` = unbounded) unless it is ``"graph"`` (the depth compiled in).
    ``progress`` is called after each region (``samfuse model`` prints it on stderr).
    ``hw`` is the simulated hardware (a preset name, a file or a ``Hardware``; ``None`` =
    ``ideal``). ``samfuse model`` passes ``ir.DEFAULT_HW`` (``hbm2-u280``) instead: the
    library keeps ``ideal`` as its default, like ``simulate`` and every backend, so a
    caller's cycle counts are those of the timing contract unless it names a memory system
    (the one rule of ``ir.load_hw``); give ``hw=DEFAULT_HW`` for the command's numbers.
    ``mem_trace``, a folder, receives each kernel's memory requests as a
    Ramulator trace ``REGION.TENSOR.trace`` (``cosim.runs._memtrace``); ``trace`` keeps every
    kernel's stream trace in its result (what RTL and HLS C-simulation count work from).
    ``inputs_dir``, a
    folder, receives each kernel's inputs as it read them, ``REGION.TENSOR.INPUT.npy`` or
    ``.mtx`` (``cosim.runs._files.write_tensor``), so ``samfuse sim`` can re-run one kernel
    alone; ``vcd``, a folder, each kernel's waveform ``REGION.TENSOR.BACKEND.vcd`` (or
    ``.fst``) from a backend that dumps them."""
    program = compiled.program
    memory = _load_inputs(compiled, inputs)
    runner = get_backend(backend)
    machine = load_hw(hw)
    run = ModelRun(program.name, compiled.schedule.name, backend, {}, hw=machine)
    weights = region_weights(compiled, memory) if progress else []
    start = time.perf_counter()
    for n, reg in enumerate(compiled.regions):
        reg_start = time.perf_counter()
        rr = RegionRun(reg.name, {}, {}, {})
        for k in reg.kernels:
            bound = bind_inputs(k.graph, {t: memory[k.source(t)] for t in k.inputs})
            for t, tree in bound.items():
                if not k.graph.tensors[t].onchip:  # a materialised tensor stays on chip
                    rr.bytes_read[t] = rr.bytes_read.get(t, 0) + storage_bytes(tree)
                if inputs_dir is not None:
                    write_tensor(tree, inputs_dir, f"{reg.name}.{k.target}.{t}")
            kernel_runner = runner if vcd is None else \
                get_backend(backend, safe_join(vcd, f"{reg.name}.{k.target}.{backend}"))
            res = kernel_runner.run(k.graph, bound, trace=trace, depth=depth, hw=machine,
                                    mem_trace=mem_trace is not None)
            written = res.outputs[k.target]
            if mem_trace is not None:
                _write_kernel_trace(Path(mem_trace), reg.name, k, machine, res, bound)
            if not k.graph.tensors[k.target].onchip:
                rr.bytes_written[k.target] = storage_bytes(written)
            memory[k.target] = _to_memory(written, _memory_format(compiled, k.target),
                                          k.graph.dtype)
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


def _to_memory(written: FiberTree, fmt: Format, dtype: str) -> FiberTree:
    """A kernel's output as the next regions read it: in its memory format, and kept in
    blocks when it was written in blocks (docs/blocks.md)."""
    if written.block is None:
        return FiberTree.from_any(written, fmt, dtype=dtype)
    return written if written.format == fmt else to_blocks(written.to_dense(), fmt,
                                                          written.block)


def _write_kernel_trace(folder: Path, region: str, kernel: Any, hw: Hardware,
                        res: SimResult, bound: Mapping[str, FiberTree]) -> None:
    from ._memtrace import write_mem_trace

    write_mem_trace(safe_join(folder, f"{region}.{kernel.target}.trace"), kernel.graph, hw,
                    res.mem_requests, {**bound, **res.outputs})


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
