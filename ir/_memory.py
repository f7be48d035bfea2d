"""A graph's memory ports and on-chip buffers: which node reads or writes which stored
array, on which channel, and which reads an on-chip buffer serves instead.

Every backend builds the same port list from the graph alone (docs/timing.md, "Memory"),
so port numbers, channel assignment and arbitration priority agree without the backends
talking to each other. Each port is one sequential-access stream of 4-byte words into one
array (``seg``, ``crd`` of a compressed level, or ``vals``) of one off-chip tensor. A
*buffer* is one array of an input the graph marks ``buffer`` (docs/timing.md, "On-chip
buffers"): loaded once at cycle 0 by one burst, then read by all its ports on chip. An
input marked ``onchip`` (a *materialised intermediate*, written on chip by an earlier
kernel of its region) is buffered whole and needs no fill; an output marked ``onchip`` has
no write ports: its writers write the on-chip buffer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ._formats import Format
from ._graph import Graph
from ._graph_items import GraphError, buffered_arrays, stored_arrays
from ._hw import WORD_BYTES, Hardware

__all__ = ["MemPortSpec", "BufferSpec", "memory_ports", "onchip_buffers", "array_name",
           "array_capacity", "check_buffers_fit", "written_buffers"]


@dataclass(frozen=True)
class MemPortSpec:
    #: port number: position in the graph's port order, also its arbitration priority
    #: (lower wins among requests issued in the same cycle on one channel)
    no: int
    node: str
    array: str          # "seg", "crd" or "vals"
    tensor: str
    level: int | None   # None for "vals"
    write: bool
    channel: int
    #: the on-chip buffer serving this port's reads (index in ``onchip_buffers``), or
    #: None: the port reads DRAM
    buffer: int | None = None

    @property
    def array_name(self) -> str:
        """The array as ``buffer`` names it: ``vals``, ``seg<level>``, ``crd<level>``."""
        return array_name(self.array, self.level)


@dataclass(frozen=True)
class BufferSpec:
    """One on-chip buffer: an array of an input tensor, shared by every port reading it."""

    no: int
    tensor: str
    array: str          # "seg", "crd" or "vals"
    level: int | None
    #: capacity in words: the longest the array can be for the tensor's shape (its
    #: dense size; exact for a dense operand), what the hardware allocates
    words: int
    #: the lowest-numbered port reading it: its fill's issuer, priority and channel
    fill_port: int
    channel: int
    #: every port it serves, in port order
    readers: tuple[int, ...]
    #: reads served per cycle and cycles from service to use (``onchip.*``)
    ports: int
    latency: int
    #: where its contents come from: ``"dram"`` (the fill) or ``"onchip"`` (written by an
    #: earlier kernel of the region: no fill, ``filled`` = 0)
    source: str = "dram"

    @property
    def fills(self) -> bool:
        """Whether the buffer loads its array from DRAM (its fill port's burst)."""
        return self.source == "dram"

    @property
    def name(self) -> str:
        return f"{self.tensor}.{array_name(self.array, self.level)}"

    @property
    def bytes(self) -> int:
        return self.words * WORD_BYTES


def array_name(array: str, level: int | None) -> str:
    return array if level is None else f"{array}{level}"


def memory_ports(graph: Graph, hw: Hardware) -> list[MemPortSpec]:
    """The graph's memory ports in priority order (empty when memory is ideal).

    Order: nodes in ``graph.topological_order()``, then the primitive's arrays in catalogue
    order (``mem_reads`` then ``mem_writes``). A level of a dense format stores no arrays,
    so a writer of a dense level has no port. Port *k* uses channel *k* mod ``channels``.
    A read of a buffered array names its buffer (:func:`onchip_buffers`' order: by first
    reading port).
    """
    if not hw.memory:
        return []
    ports: list[MemPortSpec] = []
    buffers: dict[tuple[str, str], int] = {}
    for nid in graph.topological_order():
        node = graph.nodes[nid]
        prim = node.primitive
        arrays = [(a, False) for a in prim.mem_reads] + [(a, True) for a in prim.mem_writes]
        if not arrays:
            continue
        tensor = node.params["tensor"]
        level = node.params.get("level")
        spec = graph.tensors[tensor]
        if level is not None and Format.parse(spec.format, len(spec.shape)).is_dense(level):
            continue
        on_chip = buffered_arrays(spec)
        if spec.onchip and prim.mem_writes:
            continue  # a materialised output: its writers write the on-chip buffer
        for array, write in arrays:
            no = len(ports)
            lvl = None if array == "vals" else level
            name = array_name(array, lvl)
            buf = None
            if not write and name in on_chip:
                buf = buffers.setdefault((tensor, name), len(buffers))
            ports.append(MemPortSpec(no, nid, array, tensor, lvl, write,
                                     no % hw.dram.channels, buf))
    return ports


def onchip_buffers(graph: Graph, hw: Hardware,
                   ports: list[MemPortSpec] | None = None) -> list[BufferSpec]:
    """The graph's on-chip buffers in order of their first reading port (empty on ideal
    memory, and for a buffered array no node reads). ``ports``: ``memory_ports``' list,
    when the caller has it."""
    if ports is None:
        ports = memory_ports(graph, hw)
    readers: dict[int, list[MemPortSpec]] = {}
    for p in ports:
        if p.buffer is not None:
            readers.setdefault(p.buffer, []).append(p)
    out = []
    for no in sorted(readers):
        first = readers[no][0]
        out.append(BufferSpec(no, first.tensor, first.array, first.level,
                              array_capacity(graph, first.tensor, first.array, first.level),
                              first.no, first.channel, tuple(p.no for p in readers[no]),
                              hw.onchip.ports, hw.onchip.latency,
                              "onchip" if graph.tensors[first.tensor].onchip else "dram"))
    return out


def written_buffers(graph: Graph, hw: Hardware) -> list[tuple[str, int]]:
    """The on-chip buffers a graph's materialised outputs write (``onchip`` outputs), as
    (``tensor.array``, bytes at capacity): on chip as the graph runs, so they count
    towards ``onchip.bytes`` like the buffers it reads (none on ideal memory)."""
    if not hw.memory:
        return []
    return [(f"{t.name}.{a}", WORD_BYTES * array_capacity(graph, t.name, *_parse_array(a)))
            for t in graph.tensors.values() if t.onchip and t.role == "output"
            for a in stored_arrays(t)]


def _parse_array(name: str) -> tuple[str, int | None]:
    """(array, level) of an array name (:func:`array_name`'s inverse)."""
    return ("vals", None) if name == "vals" else (name[:3], int(name[3:]))


def array_capacity(graph: Graph, tensor: str, array: str, level: int | None) -> int:
    """Words an array of ``tensor`` holds at most: ``seg`` of level *k* one more than the
    fibers of the levels above (the product of their sizes), ``crd`` the product of the
    sizes down to *k*, ``vals`` every element (blocks: each block's elements)."""
    spec = graph.tensors[tensor]
    fmt = Format.parse(spec.format, len(spec.shape))
    block = spec.block or (1,) * len(spec.shape)
    sizes = [spec.shape[m] // block[m] for m in fmt.mode_order]
    if array == "vals":
        return math.prod(sizes) * math.prod(block)
    assert level is not None
    if array == "seg":
        return math.prod(sizes[:level]) + 1
    return math.prod(sizes[:level + 1])


def check_buffers_fit(graph: Graph, hw: Hardware, buffers: list[BufferSpec]) -> None:
    """The buffers alone (those read and those a materialised output writes) must fit
    ``onchip.bytes`` (what else is on chip is checked with them after a run, by the
    backends' on-chip check): one error naming each buffer."""
    named = [(b.name, b.bytes) for b in buffers] + written_buffers(graph, hw)
    total = sum(n for _, n in named)
    if total > hw.onchip.bytes:
        parts = ", ".join(f"{name} {n} bytes" for name, n in named)
        raise GraphError(f"graph {graph.name!r}: its on-chip buffers need {total} bytes "
                         f"({parts}) but onchip.bytes of {hw.name!r} is {hw.onchip.bytes}; "
                         "buffer fewer arrays (buffer: in the graph or schedule) or raise "
                         "it with --hw-set onchip.bytes=N")
