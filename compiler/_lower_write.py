"""Writing and lanes: the output's level and value writers.

Takes the final value stream and the output indices' coordinates (an accumulator's
rows where they replace them), puts a ``crddrop`` in front of compressed output levels
whose child fibers can come out empty, and — with ``par`` — replicates the graph per
lane of each parallel index and merges the lanes before the writers
(``docs/parallel.md``).
"""

from __future__ import annotations

from ._lower_state import LowerState, Val
from ._parallel import replicate
from ._table import VAL_ROW

__all__ = ["Writing"]


class Writing(LowerState):
    """The writers, the crd droppers before them, and lane replication."""

    def write(self, val: Val) -> None:
        if val.port is None:
            raise self.fail("the right-hand side is constant; there is nothing to stream",
                            self.rhs)
        name = self.target.tensor
        fmt = self.layouts[name].format
        levels = [self.target.indices[m] for m in fmt.mode_order]
        crds = [self.crd_of(v) for v in levels]
        full = [self.full[v] for v in levels]
        rows: set[int] = set()  # levels above a spacc2/3's innermost: never empty
        if val.spacc is not None:
            for v, port in val.spacc.crds.items():
                k = levels.index(v)
                crds[k], full[k] = port, False
                rows.add(k)
            rows.discard(max(rows))
        val_port = val.port
        if self.par:
            crds, val_port = self.parallelize(levels, crds, val_port)
        for lvl in range(len(levels) - 2, -1, -1):
            if fmt.levels[lvl] == "compressed" and not full[lvl + 1] and lvl not in rows:
                drop = self.node(f"drop_{self.user(levels[lvl])}", "crddrop", levels[lvl],
                                 name)
                self.b.edge(crds[lvl], f"{drop}.outer_in")
                self.b.edge(crds[lvl + 1], f"{drop}.inner_in")
                crds[lvl], crds[lvl + 1] = f"{drop}.outer", f"{drop}.inner"
                full[lvl] = False
        for lvl, (v, crd) in enumerate(zip(levels, crds, strict=True)):
            w = self.node(f"{name}_{self.user(v)}", "level_writer", v, name, tensor=name,
                          level=lvl)
            self.b.edge(crd, f"{w}.crd")
            self.refer(v, name, crd)
        vw = self.node(f"{name}_val", "value_writer", VAL_ROW, name, tensor=name)
        self.refer(VAL_ROW, name, val.port)
        self.b.edge(val_port, f"{vw}.val")

    def parallelize(self, levels: list[str], crds: list[str], val: str
                    ) -> tuple[list[str], str]:
        """Replicate the graph per lane of every parallel index, innermost first; the
        output streams the writers read (``docs/parallel.md``)."""
        # every output port of the one-lane graph -> its copies, lane by lane
        current = {f"{n.id}.{p.name}": [f"{n.id}.{p.name}"]
                   for n in self.b.nodes for p in n.primitive.outputs}
        outputs = [*crds, val]
        inner = 1  # innermost lanes in one lane of the index being replicated
        for v in sorted(self.par, key=self.pos.__getitem__, reverse=True):
            assert v in levels, "plan_lanes admits output indices only"
            at = levels.index(v)
            if len(levels) - at > 2:
                raise self.fail(
                    f"index {self.user(v)!r} has {len(levels) - at} output levels at and "
                    "below it; the lane merges (lane_merge, lane_merge2) handle one or two: "
                    "parallelise an index nearer the innermost output level")
            cuts = [(c, [current[r][t] for r in refs],
                     current[self.cut_keys[crd]][t] if crd in self.cut_keys else None)
                    for crd, refs in self.cuts[v] for t, c in enumerate(current[crd])]
            at_w = self.par[v][0].at
            windows = [(c, [current[r][t] for r in refs], current[key][t])
                       for crd, refs, key in self.window_cuts.get(at_w, ())
                       for t, c in enumerate(current[crd])]
            rep = replicate(self.b, f"l{self.user(v)}", cuts,
                            [current[p][0] for p in outputs[at:]], self.par[v],
                            self.lane_buffer * inner, windows)
            inner *= len(self.par[v])
            current = {p: [q for c in cs for q in rep.aliases[c]] for p, cs in current.items()}
            for p, m in zip(outputs[at:], rep.merged, strict=True):
                current[p] = [m]
            self.lane_of = {nid: f"{self.user(v)}{k}" + (
                f".{self.lane_of[rep.origin[nid]]}" if rep.origin.get(nid) in self.lane_of
                else "") for k, ids in enumerate(rep.lanes) for nid in ids}
        final = [current[p][0] for p in outputs]
        return final[:-1], final[-1]
