"""Whether a compiled graph needs FIFOs deeper than compiled: a static check, and the
depths that make such a graph run.

An accumulator (a primitive that ``drains_fiber`` in the catalogue: ``reduce``, ``spacc``,
``spacc2``, ``spacc3``) consumes a whole fiber of its loop before it emits. A stream
forked *inside* that loop (its node sits at a later index of the dataflow order than the
accumulated one) that reaches a join downstream of the accumulator without passing
through it must hold every token the fork emits until the accumulator drains: as many as
the fiber has points, not the compiled depth. At depth 2 such a graph deadlocks as soon
as a fiber has more points than the bypass has slots (and a stream repeated over the
wrong coordinates shows the same shape). The deep-epilogue order search
(``compiler._compile._search``, ``compiler._model``) rejects an order whose graph has such
a bypass beside orders that lower without deep epilogues; when only deep orders lower it
prefers one without, and else pins the bypass's FIFOs at a depth that holds a whole
fiber (:func:`deepen_fifos`; docs/compiler.md, rule 5).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from ir import MAX_DEPTH, Edge, Graph

from ._errors import LoweringError

__all__ = ["Bypass", "bypasses", "check_fifos", "deepen_fifos", "fifo_hazard", "runnable"]


@dataclass(frozen=True)
class Bypass:
    """A stream forked inside the loop an accumulator drains that meets its result."""

    fork: str
    accumulator: str
    join: str
    #: the position in the dataflow order of the loop the accumulator drains
    loop: int
    #: the FIFOs from the fork to the join that do not pass the accumulator
    edges: tuple[Edge, ...]

    def __str__(self) -> str:
        return (f"{self.fork} (inside the loop {self.accumulator} accumulates) reaches "
                f"{self.join} past {self.accumulator}: that branch must buffer a whole fiber")

    @property
    def safe(self) -> bool:
        """Every FIFO of the branch is unbounded or pinned to hold a fiber."""
        return all(e.depth is None or e.pinned for e in self.edges)


def fifo_hazard(graph: Graph) -> str | None:
    """None if no accumulator of ``graph`` is bypassed from inside its loop (or every such
    bypass's FIFOs are unbounded or pinned by :func:`deepen_fifos`), else one line naming
    the fork, the accumulator and the join."""
    return next((str(b) for b in bypasses(graph) if not b.safe), None)


def bypasses(graph: Graph) -> Iterator[Bypass]:
    """Every stream of ``graph`` forked inside an accumulator's loop that reaches a node
    downstream of the accumulator without passing through it (none if every FIFO is
    unbounded)."""
    if all(e.depth is None for e in graph.edges):
        return
    succ: dict[str, set[str]] = {n: set() for n in graph.nodes}
    pred: dict[str, set[str]] = {n: set() for n in graph.nodes}
    for e in graph.edges:
        succ[e.src_node].add(e.dst_node)
        pred[e.dst_node].add(e.src_node)
    loops = _loops(graph)
    pos = _fired(graph, loops)
    for acc, loop in loops.items():
        if loop is None:
            continue
        down = _reach(succ[acc], succ)
        # the streams it counts fibers of: its ancestors up to the nearest accumulators
        for fork in sorted(_reach(pred[acc], pred, stop=set(loops))):
            if pos.get(fork, -1) <= loop:
                continue  # the fork fires at most once per fiber of the accumulator
            branch = _reach(succ[fork] - {acc}, succ, avoid=acc)
            joins = branch & down
            if joins:
                # the branch's nodes upstream of a join, and the FIFOs between them
                feeds = _reach((p for j in joins for p in pred[j]), pred, avoid=acc) \
                    & (branch - down) | {fork}
                edges = tuple(e for e in graph.edges if e.src_node in feeds
                              and (e.dst_node in feeds or e.dst_node in joins))
                yield Bypass(fork, acc, min(joins), loop, edges)


def check_fifos(graph: Graph) -> Graph:
    """``graph``, or a ``LoweringError`` naming the FIFO it would need deeper than
    compiled (:func:`fifo_hazard`): the deep-epilogue search rejects such an order
    beside orders that lower without deep epilogues."""
    hazard = fifo_hazard(graph)
    if hazard is not None:
        order = ",".join(graph.meta.get("order", []))
        raise LoweringError(f"dataflow order {order}: at the compiled FIFO depths {hazard}")
    return graph


def runnable(graph: Graph, sizes: Sequence[int], deepen: bool) -> tuple[Graph, bool]:
    """``graph`` and False if it runs at its compiled depths (:func:`fifo_hazard`); else
    with ``deepen`` the graph with its bypasses' FIFOs pinned (:func:`deepen_fifos`) and
    True, without it a ``LoweringError`` (:func:`check_fifos`)."""
    if fifo_hazard(graph) is None:
        return graph, False
    if not deepen:
        check_fifos(graph)
    return deepen_fifos(graph, sizes), True


def deepen_fifos(graph: Graph, sizes: Sequence[int]) -> Graph:
    """``graph`` with the FIFOs of every hazardous bypass (:func:`bypasses`) pinned at a
    depth that holds a whole fiber of the accumulated loop, so it runs at any run depth
    (``ir.Edge.pinned``); ``sizes`` are the index sizes in dataflow order.

    A FIFO leaving a node made at loop *r* carries, per fiber of the accumulated loop
    *L*, at most the points and stops of the loops *L..r* — ``prod(size + 1)`` tokens —
    and then ``D``; it gets that plus one. ``LoweringError`` naming the fork, the
    accumulator and the join if that exceeds :data:`ir.MAX_DEPTH`."""
    rows = _fired(graph, _loops(graph))
    need: dict[str, int] = {}
    for bypass in bypasses(graph):
        if bypass.safe:
            continue
        for e in bypass.edges:
            last = min(max(math.ceil(rows.get(e.src_node, len(sizes))), bypass.loop),
                       len(sizes) - 1)
            tokens = math.prod(s + 1 for s in sizes[bypass.loop:last + 1]) + 2
            if tokens > MAX_DEPTH:
                order = ",".join(graph.meta.get("order", []))
                raise LoweringError(
                    f"dataflow order {order}: {bypass}, up to {tokens:,} tokens, more than "
                    f"a FIFO holds ({MAX_DEPTH:,})")
            need[e.name] = max(need.get(e.name, 0), tokens)
    if not need:
        return graph
    edges = [Edge(e.src, e.dst, max(e.depth, need[e.name]), e.kind, True)
             if e.name in need and e.depth is not None else e for e in graph.edges]
    return Graph(graph.name, graph.nodes.values(), edges, graph.tensors.values(),
                 graph.dtype, graph.meta)


def _loops(graph: Graph) -> dict[str, int | None]:
    """Each accumulator of ``graph``: the position of the loop it drains (None: unknown)."""
    order = list(graph.meta.get("order", []))
    lanes = _lane_suffix(graph)
    return {n: _accumulated(lanes.sub("", n), node.op, order)
            for n, node in graph.nodes.items() if node.primitive.drains_fiber}


def _lane_suffix(graph: Graph) -> re.Pattern[str]:
    """What a parallel graph appends to a node's id in each lane (``_li0``, ``_li1_lj0``:
    ``docs/parallel.md``)."""
    par = graph.meta.get("parallel", {}).get("par", {})
    names = "|".join(re.escape(n) for n in sorted(par, key=len, reverse=True))
    return re.compile(rf"(_l(?:{names})\d+)+$" if names else r"(?!)")


def _fired(graph: Graph, loops: Mapping[str, int | None]) -> dict[str, float]:
    """Each node's loop (:func:`_positions`); an accumulator fires once per row it
    drains: at the innermost loop whose crds it keeps (a reducer: just outside its own
    loop)."""
    pos: dict[str, float] = dict(_positions(graph))
    for n, loop in loops.items():
        kept = [pos.get(e.src_node, -1) for e in graph.edges if e.dst.startswith(f"{n}.crd")]
        pos[n] = max(kept) if kept else (loop - 0.5 if loop is not None else -1)
    return pos


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
    the dataflow order (the value row after every index); in a parallel graph, a
    lane's node where its one-lane original is, a lane split or merge where its inputs
    are."""
    table = graph.meta.get("fusion_table")
    if not isinstance(table, Mapping):
        return {}
    rows = list(table.get("rows", []))
    pos: dict[str, int] = {}
    for row, _col, entries in table.get("cells", []):
        for nid, _prim, ref in entries:
            if not ref:
                pos.setdefault(nid, row if isinstance(row, int) else rows.index(row))
    lanes = _lane_suffix(graph)  # a lane's copy sits where its one-lane node does
    out = {n: pos[lanes.sub("", n)] for n in graph.nodes if lanes.sub("", n) in pos}
    if graph.meta.get("parallel", {}).get("par"):  # lane splits, merges: at their inputs
        pred: dict[str, list[str]] = {n: [] for n in graph.nodes}
        for e in graph.edges:
            pred[e.dst_node].append(e.src_node)
        for n in graph.topological_order():
            if n not in out and pred[n]:
                out[n] = max(out.get(m, -1) for m in pred[n])
    return out


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
