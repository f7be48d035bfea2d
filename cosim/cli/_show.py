"""``samfuse show``: a graph JSON rendered with Graphviz (SVG, PNG, PDF or DOT)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ir import RENDER_FORMATS, Graph
from ir import render as render_graph

from ..runs._files import atomic_path, path_arg, writable_dir
from ._args import CliError, load_graph, say

__all__ = ["add_show_parser", "cmd_show", "render_file"]


def cmd_show(args: argparse.Namespace) -> int:
    out = Path(args.output) if args.output else Path(args.graph).with_suffix(".svg")
    fmt = out.suffix.lstrip(".").lower()
    if fmt not in RENDER_FORMATS:
        raise CliError(f"-o {str(out)!r}: unsupported format {fmt or 'without suffix'!r}; "
                       f"use {', '.join('.' + f for f in RENDER_FORMATS)}")
    writable_dir(out.parent, "-o")
    graph = load_graph(args.graph)
    render_file(graph, out)
    ops: dict[str, int] = {}
    for n in graph.nodes.values():
        ops[n.op] = ops.get(n.op, 0) + 1
    say(f"wrote {out}: {len(graph.nodes)} nodes, {len(graph.edges)} edges",
         "primitives " + ", ".join(f"{op}×{k}" for op, k in sorted(ops.items())))
    return 0


def render_file(graph: Graph, path: Path) -> None:
    try:
        with atomic_path(path) as tmp:
            render_graph(graph, tmp)
    except RuntimeError as exc:  # Graphviz's dot is missing
        raise CliError(str(exc)) from None




def add_show_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``show``."""
    w = sub.add_parser("show", help="render a graph to SVG/PNG/PDF/DOT with Graphviz")
    w.add_argument("graph")
    w.add_argument("-o", "--output", type=path_arg, help="output file (default: GRAPH with .svg)")
    w.set_defaults(func=cmd_show)
