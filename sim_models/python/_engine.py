"""Build → validate → run → result, for the Python reference cycle model.

The engine keeps a work list of actors that may be able to fire. An actor runs until it
blocks on a channel; the channel wakes it when the missing token is written or the
missing read happens. Idle actors cost nothing, and each actor advances in batches.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from ir import (
    CATALOGUE,
    ENTRY_BYTES,
    LANE_MERGES,
    Block,
    EdgeTrace,
    Elaboration,
    FiberTree,
    Format,
    Graph,
    Hardware,
    Trace,
    counted_edges,
    elaborate,
    onchip_buffers,
    run_cycles,
    to_blocks,
    written_buffers,
)

# the families of actors: each class with an ``op`` implements that primitive (ACTORS)
from . import _compute, _crd, _join, _lanes, _locate, _scan  # noqa: F401
from ._actor import Actor, StreamError
from ._channel import Channel, CountingChannel, Fanout, NullChannel, WorkList
from ._memory import BufferPort, MemorySystem, ReadPort, WritePort
from ._results import (
    DeadlockError,
    FifoStats,
    InputError,
    NodeStats,
    SimResult,
    SimulationError,
    deadlock_error,
    outputs_from_writers,
)
from ._timing import time_actor, time_channel
from ._writers import LevelWriter, ValueWriter

__all__ = ["ACTORS", "simulate", "bind_inputs"]  # results and errors: see _results

def _actors() -> dict[str, type[Actor]]:
    """Every actor class by the primitive it implements: each subclass of :class:`Actor`
    that names an ``op`` (docs/primitives.md, "Adding a primitive")."""
    found: dict[str, type[Actor]] = {}
    todo = [Actor]
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if cls.op:
            assert found.setdefault(cls.op, cls) is cls, f"two actors implement {cls.op!r}"
    return found


ACTORS = _actors()


class _Context:
    """What actors may ask about the bound input tensors."""

    def __init__(self, graph: Graph, tensors: Mapping[str, FiberTree],
                 elab: Elaboration | None = None, ports: Mapping[str, int] | None = None
                 ) -> None:
        self.dtype = graph.dtype
        self.tensors = tensors
        self.memory: MemorySystem | None = None
        self.graph = graph
        #: elements per token of every val edge, and each compute node's firing cycles
        #: (``ir.elaborate``); a one-primitive harness gives its ports' elements instead
        self.ports = ports
        self.widths = elab.widths if elab is not None else {}
        self.cycles = elab.cycles if elab is not None else {}
        #: value arrays that keep more than one load in flight (docs/timing.md)
        self.load_queues = {nid: n.load_queue for nid, n in elab.nodes.items()
                            if n.load_queue > 1} if elab is not None else {}

    def elems_in(self, node, port: str) -> int:
        """Elements per value token on ``node``'s input ``port`` (1 = scalar)."""
        if self.ports is not None:
            return self.ports.get(port, 1)
        e = self.graph.in_edges[node.id].get(port)
        return self.widths.get(e.name, 1) if e is not None else 1

    def elems_out(self, node, port: str = "val") -> int:
        if self.ports is not None:
            return self.ports.get(port, 1)
        es = self.graph.out_edges[node.id].get(port)
        return self.widths.get(es[0].name, 1) if es else 1

    def mem_port(self, actor: Actor, array: str):
        """The actor's memory port on ``array``, or None (ideal memory, dense level)."""
        if self.memory is None:
            return None
        port = self.memory.port(actor.id, array)
        if port is not None:
            port.actor = actor
        return port

    def level(self, node):
        tree = self.tensors[node.params["tensor"]]
        lvl = node.params["level"]
        if lvl >= len(tree.levels):
            raise InputError(f"node {node.id!r} scans level {lvl} of tensor "
                             f"{node.params['tensor']!r}, which has {len(tree.levels)} levels")
        return tree.levels[lvl]

    def fibers(self, node) -> int:
        """Fibers of the level ``node`` scans (the positions of the level above it)."""
        return self.tensors[node.params["tensor"]].num_fibers(node.params["level"])

    def values(self, node):
        tree = self.tensors[node.params["tensor"]]
        if tree.block is not None:
            return [Block(row) for row in tree.vals]
        return tree.vals.tolist()


def bind_inputs(graph: Graph, inputs: Mapping[str, Any]) -> dict[str, FiberTree]:
    """Convert user tensors to fiber trees in the graph's formats, checking names/shapes."""
    wanted = {n: t for n, t in graph.tensors.items() if t.role == "input"}
    missing = sorted(set(wanted) - set(inputs))
    extra = sorted(set(inputs) - set(wanted))
    if missing:
        raise InputError(f"graph {graph.name!r} needs input tensor(s) {missing}; got "
                         f"{sorted(inputs)}")
    if extra:
        raise InputError(f"graph {graph.name!r} has no input tensor(s) {extra}; it reads "
                         f"{sorted(wanted)}")
    bound = {}
    for name, spec in wanted.items():
        fmt = Format.parse(spec.format, len(spec.shape))
        obj = inputs[name]
        if spec.block is not None:
            bound[name] = _bind_blocked(name, spec, fmt, obj)
            continue
        tree = obj if isinstance(obj, FiberTree) else FiberTree.from_any(obj, fmt,
                                                                         dtype=graph.dtype)
        if tuple(tree.shape) != tuple(spec.shape):
            raise InputError(f"tensor {name!r}: shape {tuple(tree.shape)} but the graph "
                             f"expects {tuple(spec.shape)}")
        if tree.format != fmt:
            tree = FiberTree.from_coo(*tree.to_coo(), tree.shape, fmt, dtype=graph.dtype)
        bound[name] = tree
    return bound


def _bind_blocked(name: str, spec, fmt: Format, obj: Any) -> FiberTree:
    """A blocked input: an already blocked tree of the right block and shape, or any
    tensor of the full shape, cut into the graph's blocks."""
    if isinstance(obj, FiberTree) and obj.block is not None:
        if tuple(obj.block) != tuple(spec.block) or obj.full_shape != tuple(spec.shape):
            raise InputError(f"tensor {name!r}: blocks {obj.block} of shape "
                             f"{obj.full_shape}, but the graph expects blocks "
                             f"{tuple(spec.block)} of shape {tuple(spec.shape)}")
        if obj.format == fmt:
            return obj
    dense = obj.to_dense() if isinstance(obj, FiberTree) else \
        FiberTree.from_any(obj, None).to_dense()
    if tuple(dense.shape) != tuple(spec.shape):
        raise InputError(f"tensor {name!r}: shape {tuple(dense.shape)} but the graph "
                         f"expects {tuple(spec.shape)}")
    return to_blocks(dense.astype("float32"), fmt, spec.block)


def _collect_outputs(graph: Graph, actors: dict[str, Actor]) -> dict[str, FiberTree]:
    levels = {a.id: (a.crd, a.stops) for a in actors.values() if isinstance(a, LevelWriter)}
    values = {a.id: a.vals for a in actors.values() if isinstance(a, ValueWriter)}
    return outputs_from_writers(graph, levels, values)


def simulate(graph: Graph, inputs: Mapping[str, Any], *, trace: bool = False,
             stats: bool = True, functional: bool = False,
             depth: int | None | str = "graph", hw: Hardware | None = None,
             mem_trace: bool = False) -> SimResult:
    """Run ``graph`` on ``inputs`` under the timing contract (see docs/timing.md).

    ``depth`` overrides every FIFO depth (``None`` = unbounded); ``"graph"`` defers to
    ``hw``'s ``fifo.depth`` (``ir.at_run_depth``). ``functional=True`` skips timing
    (unbounded FIFOs, producers first) and returns the same outputs faster.
    ``hw`` adds the memory system (``None`` = ideal); ``mem_trace`` logs every burst.
    """
    start = time.perf_counter()
    elab = elaborate(graph, hw, depth)
    graph = elab.graph
    tensors = bind_inputs(graph, inputs)
    ctx = _Context(graph, tensors, elab)
    work = WorkList()
    wake = work.wake
    memory = None
    if hw is not None and hw.memory and not functional:
        memory = ctx.memory = MemorySystem(graph, hw, tensors, wake, log=mem_trace)

    channels: dict[str, Channel] = {}
    counted = counted_edges(graph)
    for e in graph.edges:
        d = None if functional else e.depth
        numeric = "float" if e.kind == "val" and graph.dtype == "float32" else "int"
        kind = CountingChannel if e.name in counted else Channel
        channels[e.name] = kind(e.name, e.kind, d, work, trace=trace and not functional,
                                stats=stats and not functional, numeric=numeric)
        if not functional:
            time_channel(channels[e.name], elab.edges[e.name])
    actors: dict[str, Actor] = {}
    for nid in graph.topological_order():
        node = graph.nodes[nid]
        ins = {p: channels[e.name] for p, e in graph.in_edges[nid].items()}
        outs: dict[str, Any] = {}
        for port in node.primitive.outputs:
            es = graph.out_edges[nid].get(port.name, [])
            outs[port.name] = (NullChannel() if not es else channels[es[0].name]
                               if len(es) == 1 else Fanout([channels[e.name] for e in es]))
        actors[nid] = ACTORS[node.op](node, ins, outs, ctx)
        if not functional:
            time_actor(actors[nid], elab.nodes[nid].timing)
        wake(actors[nid])

    try:
        drain(work)
        while memory is not None and memory.pending():
            memory.advance()
            drain(work)
    except StreamError as exc:
        raise SimulationError(f"graph {graph.name!r}: {exc}") from None

    unfinished = [a for a in actors.values() if not a.finished]
    if unfinished:
        raise _deadlock(actors, unfinished)
    if hw is not None:
        check_onchip(graph, actors.values(), hw)
    writers = [a for a in actors.values() if a.node.primitive.writes_tensor]
    cycles = None if functional else run_cycles(
        [elab.end_cycle(a.id, a.done_cycle) for a in writers],
        memory.finish() if memory is not None else 0)
    result = SimResult(graph.name, _collect_outputs(graph, actors), cycles)
    result.data_tokens = {name: channels[name].data for name in counted}
    if hw is not None:
        result.hw, result.clock_mhz = hw.name, hw.clock_mhz
    if stats and not functional:
        for ch in channels.values():
            ch.finish_stats()
        traffic = memory.node_bytes() if memory is not None else {}
        result.nodes = {a.id: NodeStats(a.op, a.fires, a.stall_in, a.stall_out, a.done_cycle,
                                        a.stall_mem, *traffic.get(a.id, (0, 0, 0)))
                        for a in actors.values()}
        result.max_occupancy = {name: ch.max_occ for name, ch in channels.items()}
        result.fifos = {name: FifoStats(*ch.fifo_report(cycles))
                        for name, ch in channels.items()}
    else:
        result.nodes = {a.id: NodeStats(a.op, a.fires, 0, 0, -1) for a in actors.values()}
    if memory is not None:
        result.channel_bytes = [ch.bytes for ch in memory.channels]
        result.mem_requests = memory.log
        result.buffers = memory.buffer_stats()
    if trace and not functional:
        result.trace = Trace(graph.name, {
            name: EdgeTrace(name, ch.kind, ch.numeric, ch.trace_toks, ch.trace_cycles,
                            ch.trace_reads)
            for name, ch in channels.items()})
    result.wall_seconds = result.sim_seconds = time.perf_counter() - start
    return result


def drain(work: WorkList) -> None:
    """Run actors from the work list until none can make progress.

    An actor returns the channel whose check failed just before, and only it ran since,
    so that channel cannot have changed: the flag set here is all the waking needs.
    """
    popleft = work.popleft
    while work:
        actor = popleft()
        actor.queued = False
        ch = actor.run()
        if ch is None:
            continue
        cls = ch.__class__
        if cls is Fanout:
            ch = ch.blocking
        actor.blocked = ch
        if cls is ReadPort or cls is WritePort or cls is BufferPort:  # woken when granted
            ch.waiting = True
        elif ch.reader is actor:
            ch.reader_waiting = True
        else:
            ch.writer_waiting = True


#: bytes of a buffered stream token (a 32-bit crd, ref or value)
TOKEN_BYTES = 4


def lane_buffers(graph: Graph) -> list[tuple[str, int]]:
    """The lanes' output buffers: every bounded FIFO into a lane merge, with its bytes
    (docs/parallel.md, "Lane buffers")."""
    return [(e.name, e.depth * TOKEN_BYTES) for e in graph.edges
            if e.depth is not None and graph.nodes[e.dst_node].op in LANE_MERGES]


def check_onchip(graph: Graph, actors, hw: Hardware) -> None:
    """The sparse accumulators' largest contents, the lanes' output buffers and the
    on-chip buffers (docs/timing.md) must fit ``onchip.bytes``."""
    held = [(a.id, a.op, a.peak * ENTRY_BYTES[a.op]) for a in actors if a.op in ENTRY_BYTES]
    lanes = lane_buffers(graph)
    buffers = [(b.name, b.bytes) for b in onchip_buffers(graph, hw)] + \
        written_buffers(graph, hw) if hw.memory else []
    total = sum(b for _, _, b in held) + sum(b for _, b in lanes) + sum(b for _, b in buffers)
    if total > hw.onchip.bytes:
        parts = ", ".join(f"{nid} ({op}) {b} bytes" for nid, op, b in held if b)
        if lanes:
            parts = ", ".join(p for p in (parts, f"{len(lanes)} lane buffers "
                                          f"{sum(b for _, b in lanes)} bytes") if p)
        parts = ", ".join([p for p in (parts,) if p] +
                          [f"buffer {name} {b} bytes" for name, b in buffers])
        raise SimulationError(
            f"graph {graph.name!r}: the sparse accumulators, lane buffers and on-chip "
            f"buffers need {total} "
            f"bytes on chip ({parts}) but the buffer holds {hw.onchip.bytes} (onchip.bytes "
            f"of {hw.name!r}); raise it with --hw-set onchip.bytes=N or choose a schedule "
            "or order with smaller accumulators, fewer lanes or a smaller lane_buffer")


def _deadlock(actors: dict[str, Actor], unfinished: list[Actor]) -> DeadlockError:
    blocked = []
    waits_on: dict[str, str] = {}
    for a in unfinished:
        ch = a.blocked
        if ch is None:
            continue
        if ch.reader is a:
            why = "input empty" + ("; its producer has finished" if ch.writer.finished else "")
            other = ch.writer
        else:
            why = f"output full ({ch.unread()}/{ch.depth} tokens unread)"
            other = ch.reader
        blocked.append((a.id, ch.name, why))
        waits_on[a.id] = other.id
    return deadlock_error(max(a.t for a in actors.values()), blocked, waits_on)


assert set(ACTORS) == set(CATALOGUE), "every catalogue primitive needs a Python actor"
