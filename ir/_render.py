"""Graphviz rendering of SAMML graphs (SVG/PNG) with readable labels."""

from __future__ import annotations

from pathlib import Path

from ._graph import Graph

__all__ = ["to_dot", "render", "RENDER_FORMATS"]

#: file suffixes :func:`render` writes
RENDER_FORMATS = ("svg", "png", "pdf", "dot")

_COLOURS = {"crd": "#1f77b4", "ref": "#2ca02c", "val": "#d62728", "repsig": "#9467bd"}
_SHAPES = {"root": "circle", "level_writer": "house", "value_writer": "house",
           "array": "box3d"}


def _q(text: object) -> str:
    """A DOT double-quoted string: backslashes and quotes escaped, line breaks as ``\\n``
    (any text may come from a hand-written graph's ids and parameters)."""
    body = str(text).replace("\\", "\\\\").replace('"', '\\"')
    return '"' + body.replace("\r", "").replace("\n", "\\n") + '"'


def _label(node_id: str, op: str, params: dict) -> str:
    shown = {k: v for k, v in params.items() if v not in (None, "", 0.0) or k == "level"}
    detail = " ".join(f"{k}={v}" for k, v in shown.items())
    return _q(f"{node_id}\n[{op}]" + (f"\n{detail}" if detail else ""))


def to_dot(graph: Graph) -> str:
    """DOT source: nodes labelled id/primitive/parameters, edges coloured by stream kind."""
    lines = [f"digraph {_q(graph.name)} {{", "  rankdir=TB;",
             '  node [shape=box, style="rounded,filled", fillcolor="#f7f7f7", '
             'fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=8];']
    for n in graph.nodes.values():
        shape = _SHAPES.get(n.op, "box")
        lines.append(f"  {_q(n.id)} [label={_label(n.id, n.op, n.params)}, shape={shape}];")
    for e in graph.edges:
        sp, dp = e.src.rsplit(".", 1)[1], e.dst.rsplit(".", 1)[1]
        depth = "∞" if e.depth is None else e.depth
        label = _q(f"{sp}→{dp} ({depth})")
        lines.append(f"  {_q(e.src_node)} -> {_q(e.dst_node)} [label={label}, "
                     f'color="{_COLOURS.get(e.kind, "black")}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(graph: Graph, path: str | Path) -> Path:
    """Write ``path`` (.svg, .png, .pdf or .dot) with Graphviz's ``dot``."""
    import graphviz  # local: only rendering needs it

    path = Path(path)
    fmt = path.suffix.lstrip(".").lower() or "svg"
    if fmt not in RENDER_FORMATS:
        raise ValueError(f"cannot render {str(path)!r}: unsupported format {fmt!r}; use "
                         f"{', '.join('.' + f for f in RENDER_FORMATS)}")
    if fmt == "dot":
        path.write_text(to_dot(graph))
        return path
    src = graphviz.Source(to_dot(graph))
    try:
        data = src.pipe(format=fmt)
    except graphviz.ExecutableNotFound:
        raise RuntimeError("Graphviz's 'dot' program is not installed (Debian package "
                           "'graphviz'); cannot render " + str(path)) from None
    path.write_bytes(data)
    return path
