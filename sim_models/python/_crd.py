"""Coordinate-stream transformers: coordinate dropper and coordinate hold.

Both take an outer crd stream with one crd per fiber of the inner stream, so the outer
head tells whether an inner stop closes a fiber (outer head is a crd) or an empty parent
(outer head is a stop).
"""

from __future__ import annotations

from ir import DONE, Stop

from ._actor import Actor

__all__ = ["CrdDrop", "CrdHold"]


class _OuterInner(Actor):
    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        self.oi, self.ii = inputs["outer_in"], inputs["inner_in"]
        self.oo, self.io = outputs["outer"], outputs["inner"]

    def _end(self, rt, o, h):
        """Inner ``S_k`` (k>0) meets outer ``S_{k-1}``, or both hold ``D``."""
        ok = (o is DONE and h is DONE) or (
            o.__class__ is Stop and h.__class__ is Stop and o.level == h.level - 1)
        if not ok:
            raise self.error(f"misaligned streams: outer_in holds {o!r}, inner_in holds {h!r}")
        st, blk = self.space_all(self.oo, self.io)
        if blk is not None:
            return blk
        ft = self.fire_at(rt, st)
        self.oi.pop(ft)
        self.ii.pop(ft)
        self.oo.push(o if self.outer_stops_lowered else h, ft)
        self.io.push(h, ft)
        if h is DONE:
            self.finish(ft)
        return None

    outer_stops_lowered = True


class CrdDrop(_OuterInner):
    """Drops outer crds whose inner fiber is empty, merging the inner stops that remain."""

    op = "crddrop"

    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        self.has_data = False
        self.pending = None  # an S0 held back: a later S_k may replace it

    def run(self):
        oi, ii, oo, io = self.oi, self.ii, self.oo, self.io
        while True:
            rt = ii.ready()
            if rt < 0:
                return ii
            h = ii.peek()
            if h.__class__ is not Stop and h is not DONE:  # a crd (or N)
                if self.pending is not None:
                    st = io.space()
                    if st < 0:
                        return io
                    io.push(self.pending, self.fire_at(rt, st))
                    self.pending = None
                elif self.has_data:
                    st = io.space()
                    if st < 0:
                        return io
                    ft = self.fire_at(rt, st)
                    ii.pop(ft)
                    io.push(h, ft)
                else:
                    r2 = oi.ready()
                    if r2 < 0:
                        return oi
                    st, blk = self.space_all(self.oo, self.io)
                    if blk is not None:
                        return blk
                    ft = self.fire_at(max(rt, r2), st)
                    oo.push(oi.pop(ft), ft)
                    io.push(ii.pop(ft), ft)
                    self.has_data = True
                continue
            r2 = oi.ready()
            if r2 < 0:
                return oi
            rt = max(rt, r2)
            o = oi.peek()
            if h.__class__ is Stop and h.level == 0:
                ft = self.fire_at(rt, 0)
                ii.pop(ft)
                if self.has_data:
                    self.pending = h
                    self.has_data = False
                else:  # an empty fiber: drop its outer crd
                    if o.__class__ is Stop or o is DONE:
                        raise self.error(f"inner S0 closes a fiber but outer_in holds {o!r}")
                    oi.pop(ft)
                continue
            if o.__class__ is not Stop and o is not DONE:
                if self.has_data:
                    raise self.error(f"inner {h!r} closes the parent but outer_in holds {o!r}")
                oi.pop(self.fire_at(rt, 0))  # the last fiber was empty: drop its crd
                continue
            blk = self._end(rt, o, h)
            if blk is not None:
                return blk
            self.pending = None
            self.has_data = False
            if self.finished:
                return None


class CrdHold(_OuterInner):
    """Repeats each outer crd once per inner crd, turning the pair into a point stream."""

    op = "crdhold"
    outer_stops_lowered = False

    def run(self):
        oi, ii, oo, io = self.oi, self.ii, self.oo, self.io
        while True:
            rt = ii.ready()
            if rt < 0:
                return ii
            r2 = oi.ready()
            if r2 < 0:
                return oi
            if r2 > rt:
                rt = r2
            h, o = ii.peek(), oi.peek()
            o_crd = o.__class__ is not Stop and o is not DONE
            if h.__class__ is not Stop and h is not DONE:
                if not o_crd:
                    raise self.error(f"inner_in holds {h!r} but outer_in holds {o!r}")
                st, blk = self.space_all(self.oo, self.io)
                if blk is not None:
                    return blk
                ft = self.fire_at(rt, st)
                oo.push(o, ft)
                io.push(ii.pop(ft), ft)
            elif h.__class__ is Stop and h.level == 0:
                if not o_crd:
                    raise self.error(f"inner S0 closes a fiber but outer_in holds {o!r}")
                st, blk = self.space_all(self.oo, self.io)
                if blk is not None:
                    return blk
                ft = self.fire_at(rt, st)
                oi.pop(ft)
                ii.pop(ft)
                oo.push(h, ft)
                io.push(h, ft)
            elif o_crd:
                oi.pop(self.fire_at(rt, 0))  # the fiber closed by this S_k: its crd is done
            else:
                blk = self._end(rt, o, h)
                if blk is not None:
                    return blk
                if self.finished:
                    return None



