"""One helper for hand-built test graphs: edges written as ``"src.port>dst.port"`` words."""

from __future__ import annotations

from ir import GraphBuilder

__all__ = ["wire", "matrix_writers"]


def wire(g: GraphBuilder, edges: str) -> None:
    """Add every edge of ``edges``, white-space separated ``src.port>dst.port`` words."""
    for word in edges.split():
        src, dst = word.split(">")
        g.edge(src, dst)


def matrix_writers(g: GraphBuilder, tensor: str = "X") -> None:
    """The writers of an output matrix: level writers ``<T>i``, ``<T>j`` and value
    writer ``<T>v``."""
    g.node(f"{tensor}i", "level_writer", tensor=tensor, level=0)
    g.node(f"{tensor}j", "level_writer", tensor=tensor, level=1)
    g.node(f"{tensor}v", "value_writer", tensor=tensor)
