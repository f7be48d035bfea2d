"""A graph's memory ports: which node reads or writes which stored array, on which channel.

Every backend builds the same port list from the graph alone (docs/timing.md, "Memory"),
so port numbers, channel assignment and arbitration priority agree without the backends
talking to each other. Each port is one sequential-access stream of 4-byte words into one
array (``seg``, ``crd`` of a compressed level, or ``vals``) of one off-chip tensor.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._formats import Format
from ._graph import Graph
from ._hw import Hardware

__all__ = ["MemPortSpec", "memory_ports"]


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


def memory_ports(graph: Graph, hw: Hardware) -> list[MemPortSpec]:
    """The graph's memory ports in priority order (empty when memory is ideal).

    Order: nodes in ``graph.topological_order()``, then the primitive's arrays in catalogue
    order (``mem_reads`` then ``mem_writes``). A level of a dense format stores no arrays,
    so a writer of a dense level has no port. Port *k* uses channel *k* mod ``channels``.
    """
    if not hw.memory:
        return []
    ports: list[MemPortSpec] = []
    for nid in graph.topological_order():
        node = graph.nodes[nid]
        prim = node.primitive
        arrays = [(a, False) for a in prim.mem_reads] + [(a, True) for a in prim.mem_writes]
        if not arrays:
            continue
        tensor = node.params["tensor"]
        level = node.params.get("level")
        if level is not None:
            spec = graph.tensors[tensor]
            if Format.parse(spec.format, len(spec.shape)).is_dense(level):
                continue
        for array, write in arrays:
            no = len(ports)
            ports.append(MemPortSpec(no, nid, array, tensor,
                                     None if array == "vals" else level, write,
                                     no % hw.dram.channels))
    return ports
