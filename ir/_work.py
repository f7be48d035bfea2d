"""The work a run did, counted from its streams: FLOPs and memory accesses.

FuseFlow's simulator counts, per kernel, the values its reducers and ALUs operate on
(FLOPs) and the words its scanners, arrays and writers touch (memory accesses: crd and
seg reads, value reads, writes); Figure 14 compares schedules by them. samfuse counts the
same from the number of data tokens on a few edges, which every backend agrees on (the
streams are equal by contract), so one rule here serves every backend and the
heuristic's checks (``cosim.runs._counts``). The rules (``docs/cost.md``):

- **FLOPs**: one per data value consumed by a compute node: ``alu`` and ``unary`` (their
  ``a`` input; ``alu`` inputs are aligned), ``reduce``, ``spacc``, ``spacc2``, ``spacc3``
  (their ``val_in``).
- **Words read**: a ``scan_compressed`` reads ``seg[r]`` and ``seg[r+1]`` per data
  reference and one ``crd`` word per coordinate it emits; an ``array`` one value per data
  reference; ``scan_dense`` and ``locate`` nothing.
- **Words written**: a ``value_writer`` one word per value; a ``level_writer`` of a
  compressed output level its ``crd`` and ``seg`` arrays; dense levels nothing.

FuseFlow's artifact sums fewer counters than its paper names: Comal (``fuseflow-authors/
comal`` @ 0edc9aa) prints value reads (``array``: "Num reads"), value writes and crd/seg
writes, but its compressed scanner prints no read count and its dense scanner's line
("Uncompressed Crd read count") is not one the artifact's parser
(``scripts/process_figure14_metrics.py``) matches. :attr:`Work.fuseflow_mem_accesses` is
that count: every word above except the ``crd``/``seg`` reads of compressed scanners.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ._catalogue import CATALOGUE
from ._graph import Graph
from ._storage import CompressedLevel, FiberTree

__all__ = ["FLOP_PORTS", "Work", "counted_edges", "work_from_tokens"]

#: primitives whose consumed data values are FLOPs, with the counted input port
#: (the compute primitives' first value input)
FLOP_PORTS: Mapping[str, str] = {
    p.name: next(port.name for port in p.inputs if port.kind == "val")
    for p in CATALOGUE.values() if p.compute}

#: the one input port whose data tokens a reading or writing primitive is counted by
#: (its first input: every primitive with memory arrays but the level writer, whose
#: arrays are counted as written)
_ACCESS_PORTS: Mapping[str, str] = {p.name: p.inputs[0].name for p in CATALOGUE.values()
                                    if p.mem_arrays and not p.writes_level}


@dataclass(frozen=True)
class Work:
    """FLOPs per compute node and words read / written per tensor of one run."""

    flops_by_node: dict[str, int] = field(default_factory=dict)
    words_read: dict[str, int] = field(default_factory=dict)
    words_written: dict[str, int] = field(default_factory=dict)
    #: the part of ``words_read`` that compressed scanners read (crd and seg words)
    level_words_read: dict[str, int] = field(default_factory=dict)

    @property
    def flops(self) -> int:
        return sum(self.flops_by_node.values())

    @property
    def mem_accesses(self) -> int:
        """Words read plus words written: FuseFlow's memory accesses."""
        return sum(self.words_read.values()) + sum(self.words_written.values())

    @property
    def fuseflow_mem_accesses(self) -> int:
        """Memory accesses as FuseFlow's artifact sums Comal's counters for Figure 14:
        without the crd/seg reads of compressed scanners (module docstring)."""
        return self.mem_accesses - sum(self.level_words_read.values())


def _emitted_edge(graph: Graph, nid: str) -> str:
    """The edge a scanner's coordinates are counted on: its ``crd`` output, or its
    ``ref`` output when no edge takes the crds (one token per coordinate on either)."""
    for port in ("crd", "ref"):
        edges = graph.out_edges[nid].get(port)
        if edges:
            return edges[0].name
    raise ValueError(f"node {nid!r}: neither output of the scanner is connected, so the "
                     "coordinates it reads cannot be counted")


def counted_edges(graph: Graph) -> set[str]:
    """The edges whose data tokens :func:`work_from_tokens` reads."""
    out = set()
    for nid, node in graph.nodes.items():
        port = FLOP_PORTS.get(node.op) or _ACCESS_PORTS.get(node.op)
        if port is not None:
            out.add(graph.in_edges[nid][port].name)
        if node.primitive.reads_compressed:
            out.add(_emitted_edge(graph, nid))
    return out


def work_from_tokens(graph: Graph, data_tokens: Mapping[str, int],
                     outputs: Mapping[str, FiberTree]) -> Work:
    """The run's work from the data tokens on :func:`counted_edges` and the written
    ``outputs`` (a compressed level writes its arrays as stored)."""
    flops: dict[str, int] = {}
    read: dict[str, int] = {}
    level_read: dict[str, int] = {}
    written: dict[str, int] = {}

    def tokens_in(nid: str, port: str) -> int:
        return data_tokens[graph.in_edges[nid][port].name]

    for nid, node in graph.nodes.items():
        prim, tensor = node.primitive, node.params.get("tensor")
        if prim.compute:
            flops[nid] = tokens_in(nid, FLOP_PORTS[node.op])
        elif prim.reads_compressed:
            words = 2 * tokens_in(nid, "ref_in") + data_tokens[_emitted_edge(graph, nid)]
            read[tensor] = read.get(tensor, 0) + words
            level_read[tensor] = level_read.get(tensor, 0) + words
        elif prim.reads_values:
            read[tensor] = read.get(tensor, 0) + tokens_in(nid, "ref")
        elif prim.writes_tensor and not prim.writes_level:
            written[tensor] = written.get(tensor, 0) + tokens_in(nid, "val")
        elif prim.writes_level:
            level = outputs[tensor].levels[node.params["level"]]
            if isinstance(level, CompressedLevel):
                written[tensor] = written.get(tensor, 0) + len(level.seg) + len(level.crd)
    return Work(flops, read, written, level_read)
