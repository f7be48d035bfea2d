"""Coordinate joiners: intersecter and unioner of two (crd, ref) streams.

Both look at all four heads each cycle (crd and ref of a side travel together) and
advance by sorted merge. Stops must align (same level on both sides) and ``D`` must
arrive together; anything else is a malformed graph, reported as a StreamError.
"""

from __future__ import annotations

from ir import DONE, EMPTY, Stop

from ._actor import Actor

__all__ = ["Intersect", "Union", "IntersectVal", "UnionVal"]


class _Joiner(Actor):
    #: side a's second stream: a reference stream, or values (``intersect_val``...)
    side_a = "ref_a"

    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        self.ca, self.ra = inputs["crd_a"], inputs[self.side_a]
        self.cb, self.rb = inputs["crd_b"], inputs["ref_b"]
        self.oc, self.oa, self.ob = outputs["crd"], outputs[self.side_a], outputs["ref_b"]

    def _emit(self, rt, crd, ra, rb, pop_a, pop_b):
        st, blk = self.space_all(self.oc, self.oa, self.ob)
        if blk is not None:
            return blk
        ft = self._skip(rt, pop_a, pop_b, st)
        self.oc.push(crd, ft)
        self.oa.push(ra, ft)
        self.ob.push(rb, ft)
        return None

    def _skip(self, rt, pop_a, pop_b, st=0):
        """Fire, popping side a and/or side b; returns the firing cycle."""
        ft = self.fire_at(rt, st)
        if pop_a:
            self.ca.pop(ft)
            self.ra.pop(ft)
        if pop_b:
            self.cb.pop(ft)
            self.rb.pop(ft)
        return ft

    def _control(self, rt, a, b):
        """Both heads are control tokens: aligned stops or D pass through."""
        if a.__class__ is Stop and a == b or a is DONE and b is DONE:
            blk = self._emit(rt, a, a, a, True, True)
            if blk is None and a is DONE:
                self.finish(self.t - self.interval)
            return blk
        raise self.error(f"misaligned streams: crd_a holds {a!r} while crd_b holds {b!r}")


class Intersect(_Joiner):
    """Emits a crd present on both sides; ``N`` matches nothing."""

    op = "intersect"

    def run(self):
        ca, ra, cb, rb = self.ca, self.ra, self.cb, self.rb
        while True:
            rt, blk = self.ready_all(self.ca, self.ra, self.cb, self.rb)
            if blk is not None:
                return blk
            a, b = ca.toks[ca.h], cb.toks[cb.h]
            a_data, b_data = a.__class__ is int, b.__class__ is int
            if a_data and b_data:
                if a == b:
                    blk = self._emit(rt, a, ra.toks[ra.h], rb.toks[rb.h], True, True)
                    if blk is not None:
                        return blk
                    continue
                # skip the smaller side, one crd per cycle, while the other head stays put
                lo_c, lo_r, hi = (ca, ra, b) if a < b else (cb, rb, a)
                while True:
                    ft = self.fire_at(rt, 0)
                    lo_c.pop(ft)
                    lo_r.pop(ft)
                    h = lo_c.h
                    if h >= len(lo_c.toks) or lo_r.h >= len(lo_r.toks):
                        break
                    nxt = lo_c.toks[h]
                    if nxt.__class__ is not int or nxt >= hi:
                        break
                    rt = max(lo_c.wts[h] + lo_c.vis, lo_r.wts[lo_r.h] + lo_r.vis)
                    if rt < self.t:
                        rt = self.t
            elif a_data or a is EMPTY:
                if b is DONE:
                    raise self.error(f"crd_b ended (D) while crd_a holds {a!r}")
                self._skip(rt, True, b is EMPTY)
            elif b_data or b is EMPTY:
                if a is DONE:
                    raise self.error(f"crd_a ended (D) while crd_b holds {b!r}")
                self._skip(rt, False, True)
            else:
                blk = self._control(rt, a, b)
                if blk is not None:
                    return blk
                if self.finished:
                    return None


class Union(_Joiner):
    """Emits every crd of either side, with ``N`` as the ref of the side that lacks it."""

    op = "union"

    def run(self):
        while True:
            rt, blk = self.ready_all(self.ca, self.ra, self.cb, self.rb)
            if blk is not None:
                return blk
            a, b = self.ca.peek(), self.cb.peek()
            a_data, b_data = a.__class__ is int, b.__class__ is int
            if a is EMPTY or b is EMPTY:  # a missing coordinate contributes nothing
                self._skip(rt, a is EMPTY, b is EMPTY)
                continue
            if a_data and (not b_data or a < b):
                if b is DONE:
                    raise self.error(f"crd_b ended (D) while crd_a holds {a!r}")
                blk = self._emit(rt, a, self.ra.peek(), EMPTY, True, False)
            elif b_data and (not a_data or b < a):
                if a is DONE:
                    raise self.error(f"crd_a ended (D) while crd_b holds {b!r}")
                blk = self._emit(rt, b, EMPTY, self.rb.peek(), False, True)
            elif a_data:  # equal coordinates
                blk = self._emit(rt, a, self.ra.peek(), self.rb.peek(), True, True)
            else:
                blk = self._control(rt, a, b)
                if blk is None and self.finished:
                    return None
            if blk is not None:
                return blk


class IntersectVal(Intersect):
    """``intersect`` whose side a carries values (an accumulator's rows) instead of refs."""

    op = "intersect_val"
    side_a = "val_a"


class UnionVal(Union):
    """``union`` whose side a carries values; ``N`` where side a lacks the coordinate."""

    op = "union_val"
    side_a = "val_a"
