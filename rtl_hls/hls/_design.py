"""What :func:`rtl_hls.hls.generate` produces and the graph facts both kinds of top share.

A design's top takes its tensors either as *recording* arrays (no memory system: one array
per input level and per writer output, today's csim contract) or, when the hardware has
off-chip memory, as one ``m_axi`` pointer per ``ir.memory_ports`` port (:class:`MemArg`),
and a materialised intermediate's arrays as on-chip array arguments (:class:`ChipArg`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ir import Edge, Elaboration, Graph, Hardware, MemPortSpec, block_elems, level_sizes

__all__ = ["ArrayArg", "MemArg", "ChipArg", "WriterArgs", "HlsDesign", "ident", "level_size",
           "writer_nodes"]


@dataclass(frozen=True)
class ArrayArg:
    """One input array argument of the top: ``what`` is ``seg``, ``crd`` or ``vals``."""

    name: str
    tensor: str
    what: str
    level: int | None = None


@dataclass(frozen=True)
class MemArg:
    """One off-chip array pointer of a top with memory: one port of ``ir.memory_ports``,
    on the ``m_axi`` bundle of its channel (ports sharing a channel share a bundle)."""

    name: str
    port: MemPortSpec

    @property
    def bundle(self) -> str:
        return f"gmem{self.port.channel}"

    @property
    def ctype(self) -> str:
        """``uint32_t``, not ``ap_uint<32>``: Vitis widens bursts only of standard C types."""
        return "uint32_t*" if self.port.write else "const uint32_t*"


@dataclass(frozen=True)
class ChipArg:
    """One on-chip array argument of a top with memory: an array of a materialised
    intermediate (docs/fusion.md), in the block RAM the kernels of its region share. The
    producer's writer stores into it; a consumer's process reads it in place of a memory
    port (one argument per port, as ``m_axi`` pointers), with no fill."""

    name: str
    node: str
    tensor: str
    array: str          # "seg", "crd" or "vals"
    level: int | None   # None for "vals"
    #: capacity in words (``ir.array_capacity``): the interface's depth
    words: int
    write: bool

    @property
    def param(self) -> str:
        """The C parameter: a sized array, as Vitis needs of a RAM interface."""
        const = "" if self.write else "const "
        return f"{const}uint32_t {self.name}[{max(1, self.words)}]"


@dataclass(frozen=True)
class WriterArgs:
    """A writer node's output arrays; the testbench writes them to ``writer<index>.txt``."""

    node: str
    op: str
    index: int
    arrays: tuple[str, ...]   # C names: (crd, stop_pos, stop_lvl, counts) or (vals, counts);
    #                           with memory: its m_axi ports, (crd, seg) or (vals)
    #: with memory: the scalar outputs reporting (crds, stops) or (values)
    counts: tuple[str, ...] = ()
    #: with memory, a writer of a dense level: the level's size (it stores nothing)
    dense: int | None = None


@dataclass
class HlsDesign:
    """Generated sources of one graph; ``files`` maps file name to text."""

    graph: Graph
    top: str
    edges: list[Edge]                 # sorted by name; the index is the trace id
    inputs: list[ArrayArg]
    writers: list[WriterArgs]
    files: dict[str, str] = field(default_factory=dict)
    hw: Hardware | None = None
    mem: list[MemArg] = field(default_factory=list)   # empty without memory
    #: with memory: the materialised intermediates' on-chip arrays (``onchip`` tensors)
    chip: list[ChipArg] = field(default_factory=list)
    #: elements per value token of every ``val`` edge (``ir.value_elems``; 1 = scalar)
    elems: dict[str, int] = field(default_factory=dict)
    #: firing interval of each block operator that takes more than one cycle
    #: (``ir.block_cycles`` on the hardware passed to ``generate``)
    cycles: dict[str, int] = field(default_factory=dict)
    #: every node's derived parameters (``ir.elaborate`` on that hardware)
    elab: Elaboration | None = None

    @property
    def memory(self) -> bool:
        """Whether the top's tensors are off-chip ``m_axi`` ports (hardware with memory)."""
        return self.hw is not None and self.hw.memory

    @property
    def top_source(self) -> str:
        return f"{self.top}.cpp"

    @property
    def testbench(self) -> str:
        return f"{self.top}_tb.cpp"

    def writer(self, node: str) -> WriterArgs | None:
        return next((w for w in self.writers if w.node == node), None)

    def elems_of_tensor(self, tensor: str) -> int:
        """Elements per stored value of ``tensor`` (its block's, 1 if scalar)."""
        return block_elems(self.graph.tensors[tensor].block)

    def edge_elems(self, edge: Edge) -> int:
        return self.elems.get(edge.name, 1) if edge.kind == "val" else 1

    def stream_type(self, edge: Edge) -> str:
        """The C type of an edge's tokens: the scalar word, or a block of E elements."""
        e = self.edge_elems(edge)
        return "samfuse::tok_t" if e == 1 else f"samfuse::block_tok<{e}>"


def ident(text: str) -> str:
    """``text`` as a C identifier."""
    s = re.sub(r"\W", "_", text)
    return s if s and not s[0].isdigit() else f"_{s}"


def level_size(graph: Graph, tensor: str, level: int) -> int:
    """The dimension a level of ``tensor`` iterates (in its format's mode order; of the
    block grid for a blocked tensor, docs/blocks.md)."""
    return level_sizes(graph, tensor)[level]


def writer_nodes(graph: Graph) -> list[str]:
    """Writer node ids in name order: writer *k* writes ``writer<k>.txt``."""
    return [n for n in sorted(graph.nodes) if graph.nodes[n].primitive.writes_tensor]
