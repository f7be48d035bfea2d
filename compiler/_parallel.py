"""Parallel lanes: replicate a lowered graph per lane and merge the lanes' outputs.

A schedule parallelises an output index ``v`` by ``N``: the graph built so far (before
its writers) is copied ``N`` times; in copy ``ℓ`` a ``lane_split`` on every stream the
join at ``v`` produced keeps lane ``ℓ``'s share of ``v``'s coordinates, so the lane
computes only the output entries under them. Each lane iterates the levels above ``v``
itself (a private copy: no lane waits for another's stream), and the lanes' outputs at
``v`` and below are merged back in coordinate order by a binary tree of ``lane_merge``
(one output level) or ``lane_merge2`` (two) nodes. Nested parallelism applies this
innermost index first: the outer copies then hold the inner lanes and their merge tree.
A position partition (``LaneSplit.windows``) also cuts the level below ``v`` by position:
a ``position_split`` on every stream of that level's join keeps the lane's window of the
key operand's positions, so one heavy fiber spans lanes; lanes then share boundary
coordinates of ``v`` and are combined by ``lane_combine``/``lane_combine2``, which add
the partials. ``docs/parallel.md`` states the rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ir import Edge, GraphBuilder, Node

__all__ = ["LaneSplit", "Replicated", "replicate", "lane_cut", "DEFAULT_LANE_BUFFER"]

#: tokens of output buffer per lane in front of the merges: a lane that finishes its
#: coordinates before an earlier lane keeps computing until this fills
DEFAULT_LANE_BUFFER = 1024

#: depth of the FIFOs after a position lane's splits: a split drops the other lanes'
#: positions of a fiber it shares at one a cycle, and runs this far ahead of the lane's
#: compute meanwhile (at the default depth the two alternate)
WINDOW_FIFO = 32

#: merge primitive (and its per-lane input ports, outputs) by the number of output levels
_MERGES = {
    1: ("lane_merge", (("crd_a", "val_a"), ("crd_b", "val_b")), ("crd", "val")),
    2: ("lane_merge2", (("crd1_a", "crd0_a", "val_a"), ("crd1_b", "crd0_b", "val_b")),
        ("crd1", "crd0", "val")),
}
#: the lane reductions that replace them when lanes share coordinates (same ports)
_COMBINES = {1: "lane_combine", 2: "lane_combine2"}


@dataclass(frozen=True)
class LaneSplit:
    """Lane ``ℓ``'s ``lane_split`` parameters."""

    lanes: int
    lane: int
    lo: int
    hi: int
    #: position partition: the lane's windows [lo, hi) of the key operand's positions at
    #: the level below the parallel index, ascending (empty: coordinate splits only)
    windows: tuple[tuple[int, int], ...] = ()
    #: internal index of that level and the key operand (its access id)
    at: str = ""
    key: str = ""
    #: interleaved windows: the lane's coordinate ranges of the parallel index, one per
    #: window, kept by a ``position_split`` on the coordinates (empty: ``lo``, ``hi``)
    ranges: tuple[tuple[int, int], ...] = ()
    #: the ``ranges`` are windows of the key's positions at the index's own level (a
    #: nested position lane: one fiber of the index spans lanes), so lanes share its
    #: coordinates and their outputs are added by lane reductions
    shares: bool = False


def lane_cut(splits: Sequence[LaneSplit]) -> str:
    """What an index's lanes cut (``graph.meta["parallel"]["cut"]``): ``positions``
    (windows of a key's positions, here or at the level below), ``rows`` (interleaved
    coordinate ranges) or ``coordinates`` (a ``lane_split`` each)."""
    if any(x.windows or x.shares for x in splits):
        return "positions"
    return "rows" if any(x.ranges for x in splits) else "coordinates"


@dataclass
class Replicated:
    """What one replication leaves for the next: ports renamed per copy."""

    #: every port of the graph before replication -> its copies (lane order)
    aliases: dict[str, list[str]] = field(default_factory=dict)
    #: the merged output ports (levels at and below the index, then the values)
    merged: list[str] = field(default_factory=list)
    #: node ids of each lane (its copy of every node, its splits)
    lanes: list[list[str]] = field(default_factory=list)
    #: copied node id -> the node it copies
    origin: dict[str, str] = field(default_factory=dict)


def replicate(b: GraphBuilder, tag: str,
              cuts: Sequence[tuple[str, Sequence[str], str | None]],
              outputs: Sequence[str], splits: Sequence[LaneSplit],
              buffer: int, windows: Sequence[tuple[str, Sequence[str], str]] = ()
              ) -> Replicated:
    """Copy every node and edge of ``b`` once per lane (``splits``), split the ``cuts``
    (each a joined crd port with its ref ports) per lane and merge ``outputs``.

    Each cut also names the key operand's ref there (interleaved windows keep the
    lane's ``ranges`` of its positions), or None.
    Copy ``ℓ`` renames node ``n`` to ``n_<tag><ℓ>``; the returned aliases map every old
    port to its copies, so a later (outer) replication can find the streams it splits.
    Every merge input is a lane buffer of ``buffer`` tokens per lane it collects.
    ``windows`` (position partition): the cuts of the level below, each a joined crd, its
    ref ports and the key operand's ref, split by each lane's ``window``.
    """
    n_out = len(outputs) - 1  # output crd levels; the last output is the values
    if n_out not in _MERGES:
        raise ValueError(f"{n_out} output levels at and below the parallel index; the "
                         "lane merges handle one or two")
    nodes, edges = b.take()
    result = Replicated()
    lane_outputs: list[list[str]] = []
    for lane, split in enumerate(splits):
        rename = {n.id: f"{n.id}_{tag}{lane}" for n in nodes}

        def port(p: str, rename: dict[str, str] = rename) -> str:
            node, _, name = p.rpartition(".")
            return f"{rename[node]}.{name}"

        ids = []
        for n in nodes:
            ids.append(b.node(rename[n.id], n.op, **n.params))
            result.origin[ids[-1]] = n.id
        # each cut: lane_split nodes on (crd, ref_k); consumers read the split streams
        redirect: dict[str, str] = {}
        for crd, refs, key in cuts:
            # a ref computed from the crd (a locate) follows the split crd by itself
            readers = {e.dst.rpartition(".")[0] for e in edges if e.src == crd}
            refs = [r for r in refs if r.rpartition(".")[0] not in readers]
            for k, ref in enumerate(refs):
                if split.ranges:  # the key's position ranges: a position split
                    if key is None:
                        raise ValueError(f"interleaved windows cut {crd}, where the key "
                                         "operand is not joined")
                    s = b.node(f"split_{tag}{lane}", "position_split",
                               **_windows(split.ranges))
                    b.edge(port(key), f"{s}.pos_in")
                else:
                    s = b.node(f"split_{tag}{lane}", "lane_split", lanes=split.lanes,
                               lane=split.lane, lo=split.lo, hi=split.hi)
                ids.append(s)
                b.edge(port(crd), f"{s}.crd_in")
                b.edge(port(ref), f"{s}.ref_in")
                redirect[port(ref)] = f"{s}.ref"
                if k == 0:
                    redirect[port(crd)] = f"{s}.crd"
        for crd, refs, key in windows if split.windows else ():
            readers = {e.dst.rpartition(".")[0] for e in edges if e.src == crd}
            refs = [r for r in refs if r.rpartition(".")[0] not in readers]
            for k, ref in enumerate(refs):
                s = b.node(f"window_{tag}{lane}", "position_split",
                           **_windows(split.windows))
                ids.append(s)
                for src, dst in ((crd, "crd_in"), (ref, "ref_in"), (key, "pos_in")):
                    b.edge(port(src), f"{s}.{dst}")
                redirect[port(ref)] = f"{s}.ref"
                if k == 0:
                    redirect[port(crd)] = f"{s}.crd"
        for e in edges:
            src = port(e.src)
            depth = e.depth
            if src in redirect and (split.windows or split.shares) and depth is not None:
                depth = max(depth, WINDOW_FIFO)
            b.edges.append(Edge(redirect.get(src, src), port(e.dst), depth))
        for n in nodes:
            for p in _out_ports(n):
                result.aliases.setdefault(p, []).append(redirect.get(port(p), port(p)))
        lane_outputs.append([redirect.get(port(p), port(p)) for p in outputs])
        result.lanes.append(ids)
    combine = any(s.windows or s.shares for s in splits)
    result.merged = _merge_tree(b, tag, lane_outputs, n_out, buffer, combine)
    return result


def _windows(windows: Sequence[tuple[int, int]]) -> dict[str, int | str]:
    """A ``position_split``'s parameters for ascending windows (docs/primitives.md)."""
    (lo, hi), *rest = windows
    return {"lo": lo, "hi": hi} | (
        {"windows": ",".join(f"{a}:{b}" for a, b in rest)} if rest else {})


def _out_ports(n: Node) -> list[str]:
    return [f"{n.id}.{p.name}" for p in n.primitive.outputs]


def _merge_tree(b: GraphBuilder, tag: str, lanes: list[list[str]], n_out: int,
                buffer: int, combine: bool = False) -> list[str]:
    """A balanced binary tree of merges over the lanes' output ports; the root's ports.

    A merge reads its lanes in coordinate order, so a lane whose coordinates come later
    waits with its output in the merge's input FIFO: that FIFO is the lane's output
    buffer, ``buffer`` tokens per lane below it (priced on chip, docs/parallel.md).
    ``combine``: the lanes share coordinates, whose partial values lane reductions add."""
    prim, ins, outs = _MERGES[n_out]
    if combine:
        prim = _COMBINES[n_out]
    level = [(ports, 1) for ports in lanes]
    while len(level) > 1:
        nxt = []
        for k in range(0, len(level) - 1, 2):
            m = b.node(f"merge_{tag}", prim)
            for side, (ports, width) in enumerate(level[k:k + 2]):
                for src, dst in zip(ports, ins[side], strict=True):
                    b.edge(src, f"{m}.{dst}", buffer * width)
            nxt.append(([f"{m}.{p}" for p in outs], level[k][1] + level[k + 1][1]))
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0][0]
