"""Whether a compiled graph needs FIFOs deeper than compiled: a static check.

An accumulator (``reduce``, ``spacc``, ``spacc2``, ``spacc3``) consumes a whole fiber of
its loop before it emits. A stream forked *inside* that loop (its node sits at a later
index of the dataflow order than the accumulated one) that reaches a join downstream of
the accumulator without passing through it must hold every token the fork emits until
the accumulator drains: as many as the fiber has points, not the compiled depth. At
depth 2 such a graph deadlocks as soon as a fiber has more points than the bypass has
slots (and a stream repeated over the wrong coordinates shows the same shape). The
deep-epilogue order search (``compiler._compile._search``, ``compiler._model``) rejects
an order whose graph has such a bypass (docs/compiler.md, rule 5).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ir import Graph

from ._errors import LoweringError

__all__ = ["check_fifos", "fifo_hazard"]

#: primitives that consume a whole fiber of their loop before emitting
ACCUMULATORS = frozenset({"reduce", "spacc", "spacc2", "spacc3"})


def fifo_hazard(graph: Graph) -> str | None:
    """None if no accumulator of ``graph`` is bypassed from inside its loop, else one
    line naming the fork, the accumulator and the join. Unbounded FIFOs hold any
    fiber: a graph whose edges are all unbounded has no hazard."""
    if all(e.depth is None for e in graph.edges):
        return None
    succ: dict[str, set[str]] = {n: set() for n in graph.nodes}
    pred: dict[str, set[str]] = {n: set() for n in graph.nodes}
    for e in graph.edges:
        a, b = e.src.split(".")[0], e.dst.split(".")[0]
        succ[a].add(b)
        pred[b].add(a)
    order = list(graph.meta.get("order", []))
    loops = {n: _accumulated(n, node.op, order) for n, node in graph.nodes.items()
             if node.op in ACCUMULATORS}
    pos: dict[str, float] = dict(_positions(graph))
    for n, loop in loops.items():  # an accumulator fires once per row it drains
        kept = [pos.get(e.src.split(".")[0], -1) for e in graph.edges
                if e.dst.startswith(f"{n}.crd")]
        pos[n] = max(kept) if kept else (loop - 0.5 if loop is not None else -1)
    for acc, loop in loops.items():
        if loop is None:
            continue
        down = _reach(succ[acc], succ)
        # the streams it counts fibers of: its ancestors up to the nearest accumulators
        for fork in sorted(_reach(pred[acc], pred, stop=set(loops))):
            if pos.get(fork, -1) <= loop:
                continue  # the fork fires at most once per fiber of the accumulator
            bypass = _reach(succ[fork] - {acc}, succ, avoid=acc) & down
            if bypass:
                return (f"{fork} (inside the loop {acc} accumulates) reaches "
                        f"{min(bypass)} past {acc}: that branch must buffer a whole fiber")
    return None


def check_fifos(graph: Graph) -> Graph:
    """``graph``, or a ``LoweringError`` naming the FIFO it would need deeper than
    compiled (:func:`fifo_hazard`): the deep-epilogue search rejects such an order."""
    hazard = fifo_hazard(graph)
    if hazard is not None:
        order = ",".join(graph.meta.get("order", []))
        raise LoweringError(f"dataflow order {order}: at the compiled FIFO depths {hazard}")
    return graph


def _accumulated(node_id: str, op: str, order: list[str]) -> int | None:
    """The position in ``order`` of the loop an accumulator sums over: the lowering names
    it ``red_<index>`` or ``<prim>_<index>`` (``_2``… when repeated)."""
    stem = "red" if op == "reduce" else op
    for n, index in enumerate(order):
        if re.fullmatch(rf"{re.escape(stem)}_{re.escape(index)}(_\d+)?", node_id):
            return n
    return None


def _positions(graph: Graph) -> dict[str, int]:
    """Each node's loop: the row of the fusion table it was made in, as a position of
    the dataflow order (the value row after every index). An accumulator is placed
    instead at the innermost loop whose crds it drains (a reducer: just outside its own
    loop)."""
    table = graph.meta.get("fusion_table")
    if not isinstance(table, Mapping):
        return {}
    rows = list(table.get("rows", []))
    pos: dict[str, int] = {}
    for row, _col, entries in table.get("cells", []):
        for nid, _prim, ref in entries:
            if not ref:
                pos.setdefault(nid, row if isinstance(row, int) else rows.index(row))
    return pos


def _reach(start: Iterable[str], step: Mapping[str, set[str]], avoid: str | None = None,
           stop: frozenset[str] | set[str] = frozenset()) -> set[str]:
    """The nodes reachable from ``start`` (included) along ``step``, never through
    ``avoid``, and not beyond a node of ``stop`` (which is included)."""
    seen: set[str] = set()
    todo = [n for n in start if n != avoid]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if n not in stop:
            todo.extend(m for m in step[n] if m != avoid and m not in seen)
    return seen
