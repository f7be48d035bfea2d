"""Per-lane work and imbalance of a run on a parallel graph (``docs/parallel.md``)."""

from __future__ import annotations

from dataclasses import dataclass

from ir import Graph
from sim_models.python import SimResult

__all__ = ["LaneReport", "lane_report"]

#: a lane's splits drop what it does not keep: their firings are not its work
_SPLITS = ("lane_split", "position_split")


@dataclass(frozen=True)
class LaneReport:
    """Work (firings) of every innermost lane and the imbalance, max over mean."""

    work: dict[str, int]

    @property
    def imbalance(self) -> float:
        if not self.work:
            return 1.0
        mean = sum(self.work.values()) / len(self.work)
        return max(self.work.values()) / mean if mean else 1.0

    def lines(self) -> list[str]:
        if not self.work:
            return []
        shown = ", ".join(f"{lane} {w}" for lane, w in self.work.items())
        return [f"lanes      {len(self.work)} (work = firings after the split: {shown})",
                f"imbalance  {self.imbalance:.3f} (largest lane / mean lane)"]


def lane_report(graph: Graph, res: SimResult) -> LaneReport:
    """The firings of each innermost lane's nodes downstream of its ``lane_split``s: its
    share of the kernel, without the outer levels every lane iterates privately or the
    coordinates its splits drop. Empty for a one-lane graph or an untimed run."""
    lane_of = graph.meta.get("parallel", {}).get("lane_of") or {}
    if not lane_of or not res.nodes:
        return LaneReport({})
    depth = max(lab.count(".") for lab in lane_of.values())
    leaves = sorted({lab for lab in lane_of.values() if lab.count(".") == depth},
                    key=_lane_key)
    work = dict.fromkeys(leaves, 0)
    todo = [n for n, node in graph.nodes.items() if node.op in _SPLITS]
    seen = set(todo)
    while todo:
        nid = todo.pop()
        for edges in graph.out_edges[nid].values():
            for e in edges:
                if e.dst_node not in seen:
                    seen.add(e.dst_node)
                    todo.append(e.dst_node)
    for nid in seen:
        lab = lane_of.get(nid)
        if lab in work and graph.nodes[nid].op not in _SPLITS and nid in res.nodes:
            work[lab] += res.nodes[nid].fires
    return LaneReport(work)


def _lane_key(label: str) -> tuple:
    """``i10.j2`` sorts after ``i2.j0``: by index name, then lane number, per level."""
    out = []
    for part in label.split("."):
        name = part.rstrip("0123456789")
        out.append((name, int(part[len(name):])))
    return tuple(out)
