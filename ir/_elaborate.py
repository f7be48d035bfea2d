"""Elaboration: a graph on a hardware description → every node's derived parameters, once.

The backends render what this computes instead of each deriving it (docs/primitives.md,
"Elaboration"): elements per value token of every ``val`` edge, each compute node's cycles
per value-consuming firing (docs/blocks.md), its parsed block operator, each sparse
accumulator's coordinate bounds, the parameters the catalogue passes as given (lane
ranges), the graph's memory ports and on-chip buffers, and the graph at the FIFO
depth the run uses (:func:`~ir.run_depth`). The Python model reads it, the SystemC plan,
the RTL netlist and the HLS generator render it. The end-of-run cycle rule
(:func:`run_cycles`) lives here too, so every backend reports cycles the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._blocks import BlockOp, block_elems, firing_cycles, value_elems
from ._formats import Format
from ._graph import Graph, Node
from ._hw import Hardware, at_run_depth
from ._memory import BufferSpec, MemPortSpec, check_buffers_fit, memory_ports, onchip_buffers
from ._timing import DEFAULT_NODE_TIMING, EdgeTiming, NodeTiming, edge_timing, node_timing

__all__ = ["Elaboration", "NodeElab", "elaborate", "crd_bound", "level_sizes", "max_dim",
           "run_cycles", "AS_GIVEN"]

#: ``elaborate``'s depth that keeps the graph's edge depths as they are (a renderer given
#: a graph already at the run's depths)
AS_GIVEN = "as given"


@dataclass(frozen=True)
class NodeElab:
    """What every backend needs to know about one node beyond its own parameters."""

    #: elements per value on its widest value input and on its value output (1 = scalar)
    elems_in: int
    elems_out: int
    #: cycles one value-consuming firing occupies (1 unless a compute node on blocks)
    cycles: int
    #: its block operator (``block`` parameter) parsed with the primitive's arity, or None
    block_op: BlockOp | None
    #: a sparse accumulator's crd bound per kept level, outermost first (its dense
    #: capacity in the RTL and HLS); empty for other nodes
    acc_bounds: tuple[int, ...]
    #: its memory ports (empty without a memory system)
    mem_ports: tuple[MemPortSpec, ...]
    #: loads it keeps in flight (``dram.load_queue`` for a value array with a memory
    #: port, else 1: docs/timing.md, "Loads in flight")
    load_queue: int = 1
    #: its latency, II and start-up (docs/timing.md, "Latency, II and start-up")
    timing: NodeTiming = DEFAULT_NODE_TIMING
    #: its ``passed`` parameters (the catalogue's schema) as (name, value), in order: a
    #: lane split's lanes, lane and range, a position split's window
    given: tuple[tuple[str, Any], ...] = ()

    @property
    def elems(self) -> int:
        """Elements of the widest value it handles (a value primitive's ``E``)."""
        return max(self.elems_in, self.elems_out)


@dataclass(frozen=True)
class Elaboration:
    """A graph elaborated on ``hw``: ``graph`` is at the run's FIFO depths."""

    graph: Graph
    hw: Hardware | None
    #: elements per value token of every ``val`` edge (``ir.value_elems``)
    widths: Mapping[str, int]
    nodes: Mapping[str, NodeElab]
    #: the memory ports in priority order (``ir.memory_ports``; empty without memory)
    mem_ports: tuple[MemPortSpec, ...]
    #: every edge's FIFO read latency, capacity and visibility delay (docs/timing.md)
    edges: Mapping[str, EdgeTiming]
    #: the on-chip buffers (``ir.onchip_buffers``; their ports name them)
    buffers: tuple[BufferSpec, ...] = ()

    @property
    def cycles(self) -> dict[str, int]:
        """Compute nodes whose firings take more than one cycle (``ir.block_cycles``)."""
        return {nid: n.cycles for nid, n in self.nodes.items() if n.cycles > 1}

    def knobs_used(self) -> set[str]:
        """The knobs (``ir.TIMING_KNOBS``) this elaboration sets off their defaults."""
        used = {k for n in self.nodes.values() for k in ("latency", "ii", "startup")
                if getattr(n.timing, k) != getattr(DEFAULT_NODE_TIMING, k)}
        if any(e.read_latency != 1 for e in self.edges.values()):
            used.add("fifo.latency")
        return used

    def end_cycle(self, node_id: str, done_cycle: int) -> int:
        """The cycle a writer's result is committed after consuming ``D`` at
        ``done_cycle`` (docs/timing.md, end of run: its latency - 1 later)."""
        return done_cycle + self.nodes[node_id].timing.latency - 1

    def edge_elems(self, edge_name: str) -> int:
        return self.widths.get(edge_name, 1)


def elaborate(graph: Graph, hw: Hardware | None = None, depth: int | None | str = AS_GIVEN
              ) -> Elaboration:
    """Elaborate ``graph`` on ``hw`` (None = unbounded compute, no memory system) at the
    run's FIFO ``depth`` (``ir.run_depth``: an int, None = unbounded, ``"graph"`` = the
    hardware's ``fifo.depth`` or the compiled one); :data:`AS_GIVEN` keeps the graph's."""
    if depth != AS_GIVEN:
        graph = at_run_depth(graph, depth, hw)
    widths = value_elems(graph)
    ports = tuple(memory_ports(graph, hw)) if hw is not None else ()
    buffers = tuple(onchip_buffers(graph, hw, list(ports))) if hw is not None else ()
    if hw is not None:
        check_buffers_fit(graph, hw, list(buffers))
    timing = hw.timing if hw is not None else None
    nodes = {nid: _node(graph, graph.nodes[nid], widths, hw,
                        tuple(p for p in ports if p.node == nid),
                        node_timing(graph.nodes[nid].op, graph.nodes[nid].params, timing))
             for nid in graph.topological_order()}
    fifo_latency = hw.fifo.latency if hw is not None else 1
    edges = {e.name: edge_timing(e.depth, fifo_latency, nodes[e.src_node].timing.latency)
             for e in graph.edges}
    return Elaboration(graph, hw, widths, nodes, ports, edges, buffers)


def _node(graph: Graph, node: Node, widths: Mapping[str, int], hw: Hardware | None,
          ports: tuple[MemPortSpec, ...], timing: NodeTiming) -> NodeElab:
    prim = node.primitive
    e_in = max((widths.get(e.name, 1) for e in graph.in_edges[node.id].values()
                if e.kind == "val"), default=1)
    spec = node.params.get("block", "")
    bop = BlockOp.parse(spec, prim.block_arity, f"node {node.id!r}: block") if spec else None
    outs = [widths.get(e.name, 1) for es in graph.out_edges[node.id].values() for e in es
            if e.kind == "val"]
    if outs:
        e_out = outs[0]
    elif bop is not None:
        e_out = bop.out_elems
    elif prim.reads_values:
        e_out = block_elems(graph.tensors[node.params["tensor"]].block)
    else:
        e_out = e_in
    cycles = firing_cycles(node, hw, e_in)
    bounds: tuple[int, ...] = ()
    if prim.acc_levels == 1:
        bounds = (max_dim(graph),)
    elif prim.acc_levels:
        bounds = tuple(crd_bound(graph, node.id, f"crd{m}")
                       for m in reversed(range(prim.acc_levels)))
    given = tuple((p.name, node.params[p.name]) for p in prim.passed_params)
    return NodeElab(e_in, e_out, cycles, bop, bounds, ports, load_queue(node, hw, ports),
                    timing, given)


def load_queue(node: Node, hw: Hardware | None, ports: tuple[MemPortSpec, ...]) -> int:
    """Loads ``node`` keeps in flight: ``dram.load_queue`` for a value array that reads
    memory, 1 for every other node (and on ideal memory, where a read costs nothing)."""
    if hw is None or not node.primitive.reads_values or not ports:
        return 1
    return hw.dram.load_queue


def level_sizes(graph: Graph, tensor: str) -> list[int]:
    """The dimension each level of ``tensor`` iterates, outermost first (of the block grid
    for a blocked tensor, docs/blocks.md)."""
    spec = graph.tensors[tensor]
    fmt = Format.parse(spec.format, len(spec.shape))
    block = spec.block or (1,) * len(spec.shape)
    return [spec.shape[m] // block[m] for m in fmt.mode_order]


def max_dim(graph: Graph) -> int:
    """The largest coordinate bound of the graph: a tensor dimension, of the block grid
    for a blocked tensor (a ``spacc``'s capacity)."""
    return max([1, *(n // (t.block[m] if t.block else 1) for t in graph.tensors.values()
                     for m, n in enumerate(t.shape))])


def crd_bound(graph: Graph, node_id: str, port: str) -> int:
    """Bound on the crds of output ``port``: the size of the output level it is written to.

    A matrix (order-3) accumulator's storage is the product of two (three) such bounds,
    so the largest dimension (what ``spacc`` uses) squared (cubed) would waste most of
    it. Followed through crd-forwarding primitives (``forwards_crds``); the largest
    dimension (:func:`max_dim`) if no level writer is reached.
    """
    todo = [(node_id, port)]
    while todo:
        nid, out = todo.pop()
        for e in graph.out_edges[nid].get(out, []):
            dst = graph.nodes[e.dst_node]
            if dst.primitive.writes_level:
                return max(1, level_sizes(graph, dst.params["tensor"])[dst.params["level"]])
            in_port = e.dst.rsplit(".", 1)[1]
            if dst.primitive.forwards_crds and in_port.endswith("_in"):
                todo.append((dst.id, in_port[:-3]))
    return max_dim(graph)


def run_cycles(writer_done: list[int], memory_end: int = 0) -> int:
    """The run's cycle count (docs/timing.md): the cycle in which the last writer consumed
    ``D``, plus one, or the cycle the memory system finished its last access if later."""
    return max(max(writer_done, default=-1) + 1, memory_end)
