"""SAMML graphs: nodes (a primitive plus parameters), edges (FIFOs) and tensors.

A graph is plain data, validated once when built or loaded, so every backend can trust
it. JSON is the interchange format (``schema`` versioned); :func:`render` draws it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from ._graph_check import GraphChecks
from ._graph_items import (
    DEFAULT_DEPTH,
    MAX_DEPTH,
    NAME_PATTERN,
    SCHEMA,
    Edge,
    GraphError,
    Node,
    TensorSpec,
    check_name,
)
from ._graph_json import GraphJson

__all__ = ["GraphError", "GraphBuilder", "Node", "Edge", "TensorSpec", "Graph", "SCHEMA",
           "DEFAULT_DEPTH", "MAX_DEPTH", "NAME_PATTERN", "check_name"]


class Graph(GraphChecks, GraphJson):
    """A validated SAMML graph. Build with :meth:`build`, load with :meth:`from_json`."""

    def __init__(self, name: str, nodes: Iterable[Node], edges: Iterable[Edge],
                 tensors: Iterable[TensorSpec] = (), dtype: str = "float32",
                 meta: dict[str, Any] | None = None) -> None:
        self.name = check_name("graph", name)
        self.dtype = dtype
        self.nodes: dict[str, Node] = {}
        for node in nodes:
            check_name("node", node.id)
            if node.id in self.nodes:
                raise GraphError(f"duplicate node id {node.id!r}")
            self.nodes[node.id] = node
        self.tensors: dict[str, TensorSpec] = {}
        for t in tensors:
            self._check_tensor(t)
            self.tensors[t.name] = t
        if not isinstance(meta, dict | None):
            raise GraphError(f"graph meta {meta!r:.60} must be a dict")
        self.meta = dict(meta or {})
        self.edges: list[Edge] = []
        self._validate_nodes()
        self.edges = self._validate_edges(list(edges))
        self._validate_tensor_refs()
        self.in_edges: dict[str, dict[str, Edge]] = {n: {} for n in self.nodes}
        #: an output port may feed several edges (a fork: one FIFO per reader)
        self.out_edges: dict[str, dict[str, list[Edge]]] = {n: {} for n in self.nodes}
        for e in self.edges:
            src, _, src_port = e.src.rpartition(".")
            dst, _, dst_port = e.dst.rpartition(".")
            self.out_edges[src].setdefault(src_port, []).append(e)
            self.in_edges[dst][dst_port] = e
        self._validate_chains()
        self._validate_lane_splits()
        # a cycle is a load error, not a surprise at run time; the order is kept, as the
        # graph is never changed once built (every backend and the cost model ask for it)
        self._topological = self._sort()
        self._validate_blocks()
        self._validate_output_sizes()

    # -- queries ------------------------------------------------------------------------
    def topological_order(self) -> list[str]:
        """Node ids producers-first (a cycle is refused when the graph is built)."""
        return list(self._topological)

    def _sort(self) -> list[str]:
        """Node ids producers-first; raises GraphError on a cycle."""
        indeg = {n: len(self.in_edges[n]) for n in self.nodes}
        readers = {n: [e.dst.rpartition(".")[0] for es in outs.values() for e in es]
                   for n, outs in self.out_edges.items()}
        ready = [n for n, d in indeg.items() if d == 0]
        order: list[str] = []
        while ready:
            n = ready.pop()
            order.append(n)
            for dst in readers[n]:
                indeg[dst] -= 1
                if indeg[dst] == 0:
                    ready.append(dst)
        if len(order) != len(self.nodes):
            stuck = sorted(n for n, d in indeg.items() if d > 0)
            raise GraphError(f"graph has a cycle through {stuck}")
        return order

    def with_depth(self, depth: int | None) -> Graph:
        """A copy with every FIFO at ``depth`` (for what-if studies), but a pinned one
        never shallower than the graph needs (:meth:`Edge.at_depth`)."""
        edges = [Edge(e.src, e.dst, e.at_depth(depth), e.kind, e.pinned) for e in self.edges]
        return Graph(self.name, self.nodes.values(), edges, self.tensors.values(),
                     self.dtype, self.meta)

    def with_buffers(self, buffers: dict[str, bool | tuple[str, ...]]) -> Graph:
        """A copy whose tensors named in ``buffers`` have that ``buffer`` field (docs/
        timing.md, "On-chip buffers"); the others keep theirs."""
        tensors = [replace(t, buffer=buffers[t.name]) if t.name in buffers else t
                   for t in self.tensors.values()]
        return Graph(self.name, self.nodes.values(), self.edges, tensors, self.dtype,
                     self.meta)

    def with_onchip(self, names: set[str] | frozenset[str]) -> Graph:
        """A copy whose tensors in ``names`` are materialised on chip (``TensorSpec.onchip``:
        written there by an earlier kernel of the region, docs/timing.md)."""
        tensors = [replace(t, onchip=True) if t.name in names else t
                   for t in self.tensors.values()]
        return Graph(self.name, self.nodes.values(), self.edges, tensors, self.dtype,
                     self.meta)

    def __repr__(self) -> str:
        return f"<Graph {self.name!r}: {len(self.nodes)} nodes, {len(self.edges)} edges>"


class GraphBuilder:
    """Incremental construction used by tests and the compiler: ``b.node(...)``, ``b.edge``."""

    def __init__(self, name: str, dtype: str = "float32", depth: int | None = DEFAULT_DEPTH):
        self.name, self.dtype, self.depth = name, dtype, depth
        self.nodes: list[Node] = []
        self.edges: list[Edge] = []
        self.tensors: list[TensorSpec] = []
        self._ids: set[str] = set()
        self._suffix: dict[str, int] = {}  # base id -> last suffix tried (no rescans)

    def tensor(self, name: str, shape: tuple[int, ...], fmt: str, role: str = "input",
               block: tuple[int, ...] | None = None,
               buffer: bool | tuple[str, ...] = False) -> str:
        self.tensors.append(TensorSpec(name, tuple(shape), fmt, role,
                                       tuple(block) if block else None, buffer))
        return name

    def node(self, node_id: str, primitive: str, /, **params: Any) -> str:
        base, k = node_id, self._suffix.get(node_id, 1)
        while node_id in self._ids:
            k += 1
            node_id = f"{base}_{k}"
        self._suffix[base] = k
        self._ids.add(node_id)
        self.nodes.append(Node(node_id, primitive, params))
        return node_id

    def edge(self, src: str, dst: str, depth: int | None | str = "default") -> None:
        self.edges.append(Edge(src, dst, self.depth if depth == "default" else depth))

    def take(self) -> tuple[list[Node], list[Edge]]:
        """Remove every node and edge (to be rebuilt, e.g. copied per parallel lane)."""
        nodes, edges = self.nodes, self.edges
        self.nodes, self.edges = [], []
        self._ids.clear()
        self._suffix.clear()
        return nodes, edges

    def build(self, **meta: Any) -> Graph:
        return Graph(self.name, self.nodes, self.edges, self.tensors, self.dtype, meta)
