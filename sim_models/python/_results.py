"""What a run produces, in one form for every backend: the result, its statistics, the
errors, and the decoding of writer recordings into output tensors.

Every backend (this model, SystemC, RTL, HLS C-simulation) ends with the same writer
recordings (level writers: crds and stops; value writers: values) and, when stuck, the
same facts (which node waits on which edge, and why). Turning those into tensors and
reports happens here once, so the backends cannot disagree on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ir import (
    FiberTree,
    Format,
    Graph,
    StorageError,
    Trace,
    Work,
    check_fits,
    is_data,
    work_from_tokens,
    written_blocks,
)

__all__ = ["SimResult", "NodeStats", "SimulationError", "DeadlockError", "InputError",
           "deadlock_error", "decode_levels", "outputs_from_writers", "LevelRecord",
           "MemRequest", "FifoStats", "BufferStats"]

#: a level writer's recording: its crds, and for every stop (crds so far, stop level)
LevelRecord = tuple[list[int], list[tuple[int, int]]]


class SimulationError(RuntimeError):
    """The graph ran but broke a stream rule; the message names node and cycle."""


class InputError(ValueError):
    """Input tensors that do not match the graph (missing, extra, wrong shape)."""


class DeadlockError(SimulationError):
    """No node can fire and not every writer is done."""

    def __init__(self, cycle: int, blocked: list[tuple[str, str, str]],
                 wait_cycle: list[str]) -> None:
        self.cycle, self.blocked, self.wait_cycle = cycle, blocked, wait_cycle
        lines = [f"deadlock at cycle {cycle}: {len(blocked)} node(s) blocked"]
        if wait_cycle:
            lines.append("  wait cycle: " + " -> ".join(wait_cycle))
        lines += [f"  {node} waits on {edge} ({why})" for node, edge, why in blocked]
        super().__init__("\n".join(lines))


def deadlock_error(cycle: int, blocked: list[tuple[str, str, str]],
                   waits_on: Mapping[str, str]) -> DeadlockError:
    """The deadlock report: ``blocked`` (node, edge, why) and the wait-for cycle found by
    following ``waits_on`` (node → the node it waits for) until a node repeats."""
    wait_cycle: list[str] = []
    for start in waits_on:
        seen: list[str] = []
        n = start
        while n in waits_on and n not in seen:
            seen.append(n)
            n = waits_on[n]
        if n in seen:
            wait_cycle = seen[seen.index(n):] + [n]
            break
    return DeadlockError(cycle, blocked, wait_cycle)


@dataclass
class NodeStats:
    op: str
    fires: int
    stall_in: int
    stall_out: int
    done_cycle: int
    #: memory (docs/timing.md, "Memory"); all zero on ideal hardware
    stall_mem: int = 0
    dram_read_bytes: int = 0
    dram_write_bytes: int = 0
    mem_requests: int = 0


@dataclass(frozen=True)
class FifoStats:
    """One edge's FIFO report (docs/timing.md, "FIFO report"): its peak occupancy and the
    cycles that started with it full (at capacity) or empty."""

    peak: int
    full_cycles: int
    empty_cycles: int


@dataclass(frozen=True)
class MemRequest:
    """One burst as the channel saw it: for ``--mem-trace`` and the memory parity tests."""

    cycle: int      # issue cycle
    port: int       # ir.memory_ports number
    line: int       # first line (index into the port's array, in lines)
    lines: int      # burst length in lines
    write: bool


@dataclass(frozen=True)
class BufferStats:
    """One on-chip buffer's run (docs/timing.md, "On-chip buffers")."""

    fill_bytes: int     # DRAM bytes its fill moved
    filled: int         # cycle its last line was usable
    reads: int          # accesses it served
    conflict_cycles: int  # sum over accesses of (served - issued)


@dataclass
class SimResult:
    """What a run produced: outputs, cycle count, statistics and (optionally) traces.

    Every backend fills every field it can: ``cycles`` is None only where the backend
    has no clock (HLS C-simulation); ``nodes`` and ``max_occupancy`` are empty there too.
    ``wall_seconds`` is the whole run, ``sim_seconds`` the simulator alone (without
    building or loading it), for simulation-speed figures.
    """

    graph: str
    outputs: dict[str, FiberTree]
    cycles: int | None
    nodes: dict[str, NodeStats] = field(default_factory=dict)
    max_occupancy: dict[str, int] = field(default_factory=dict)
    trace: Trace | None = None
    wall_seconds: float = 0.0
    sim_seconds: float = 0.0
    backend: str = "python"
    #: the hardware it ran on (``ir.Hardware.name``) and, with memory, the bytes each
    #: channel moved and (when asked for) every burst in issue order
    hw: str = "ideal"
    clock_mhz: float = 1000.0
    channel_bytes: list[int] = field(default_factory=list)
    mem_requests: list[MemRequest] | None = None
    #: data (non-control) tokens written on each edge the work counters read
    #: (``ir.counted_edges``; the Python and SystemC models count them on every run)
    data_tokens: dict[str, int] = field(default_factory=dict)
    #: every edge's FIFO report (the Python and SystemC models, with statistics)
    fifos: dict[str, FifoStats] = field(default_factory=dict)
    #: every on-chip buffer's statistics by its name (``tensor.array``), with memory
    buffers: dict[str, BufferStats] = field(default_factory=dict)

    def work(self, graph: Graph) -> Work:
        """FLOPs and memory accesses of this run of ``graph`` (``ir.work_from_tokens``),
        from the backend's counters or, for a backend without them (RTL, HLS
        C-simulation), from its trace."""
        tokens = self.data_tokens
        if not tokens:
            if self.trace is None:
                raise ValueError(f"graph {graph.name!r}: backend {self.backend!r} counts no "
                                 "data tokens; run it traced to count its work")
            tokens = {name: sum(1 for t in et.tokens if is_data(t))
                      for name, et in self.trace.edges.items()}
        return work_from_tokens(graph, tokens, self.outputs)

    @property
    def firings(self) -> int:
        return sum(s.fires for s in self.nodes.values())

    @property
    def dram_read_bytes(self) -> int:
        return sum(s.dram_read_bytes for s in self.nodes.values())

    @property
    def dram_write_bytes(self) -> int:
        return sum(s.dram_write_bytes for s in self.nodes.values())

    def achieved_gbps(self) -> float:
        """Off-chip bytes moved per second at the hardware's clock (0 without cycles)."""
        if not self.cycles:
            return 0.0
        seconds = self.cycles / (self.clock_mhz * 1e6)
        return (self.dram_read_bytes + self.dram_write_bytes) / seconds / 1e9

    def dense(self, name: str | None = None) -> Any:
        """An output as a numpy array (the only output if ``name`` is omitted)."""
        if name is None:
            (name,) = self.outputs
        return self.outputs[name].to_dense()


def decode_levels(writers: list[LevelRecord]) -> list[tuple[list[int], list[int]]]:
    """(seg, crd) per level from each level writer's crds and recorded stops.

    Level i's stream has one stop event per level-(i-1) crd (closing its fiber) plus one
    per *empty* level-(i-1) fiber (closing no fiber). Walking the parent's fiber sizes
    tells which is which, so empty parents and empty children decode unambiguously.
    """
    out: list[tuple[list[int], list[int]]] = []
    parent_sizes = [1]  # the root has one child fiber: level 0's
    for crd, stops in writers:
        seg, k = [0], 0
        for n in parent_sizes:
            take = n if n else 1
            events = stops[k:k + take]
            if len(events) < take:
                raise SimulationError(f"level writer recorded {len(stops)} stops, fewer than "
                                      "the parent level's fibers need")
            k += take
            if n:
                seg.extend(pos for pos, _ in events)
        out.append((seg, crd))
        parent_sizes = [seg[i + 1] - seg[i] for i in range(len(seg) - 1)]
    return out


def outputs_from_writers(graph: Graph, levels: Mapping[str, LevelRecord],
                         values: Mapping[str, list[Any]]) -> dict[str, FiberTree]:
    """Output tensors from the writers' recordings, by writer node id (values already
    decoded to numbers, e.g. with ``ir.values_from_bits``)."""
    outs: dict[str, FiberTree] = {}
    for name, spec in graph.tensors.items():
        if spec.role != "output":
            continue
        lv: dict[int, LevelRecord] = {}
        vals = None
        for node in graph.nodes.values():
            if node.params.get("tensor") != name:
                continue
            if node.op == "level_writer" and node.id in levels:
                lv[node.params["level"]] = levels[node.id]
            elif node.op == "value_writer" and node.id in values:
                vals = values[node.id]
        ndim = len(spec.shape)
        if vals is None or sorted(lv) != list(range(ndim)):
            raise SimulationError(f"output {name!r} needs a value writer and level writers "
                                  f"for levels 0..{ndim - 1}; found levels {sorted(lv)}")
        segs = decode_levels([lv[i] for i in range(ndim)])
        fmt = Format.parse(spec.format, ndim)
        if spec.block is not None:
            outs[name] = written_blocks(spec.shape, spec.block, fmt, segs, vals)
            continue
        check_fits(f"output {name!r}", spec.shape, fmt, graph.dtype, len(vals))
        try:
            outs[name] = FiberTree.from_written(spec.shape, fmt, segs, vals,
                                                dtype=graph.dtype)
        except MemoryError:  # fits the machine, not what is free of it now
            raise StorageError(f"output {name!r}: out of memory storing "
                               f"{'x'.join(map(str, spec.shape))} as {fmt.letters}") from None
    return outs
