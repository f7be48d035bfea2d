"""Parallel lanes: a lane's share of a level (``lane_split``, by coordinate;
``position_split``, by position) and the ordered merge of two lanes' outputs
(``lane_merge`` for one level, ``lane_merge2`` for two; ``lane_combine`` and
``lane_combine2`` when lanes share coordinates and their values add).

Every lane iterates the levels above the split itself and keeps every stop, so all lanes'
streams have the same fibers; within a fiber the lanes' coordinates are disjoint, which
is what lets a merge restore coordinate order by comparing heads.
"""

from __future__ import annotations

from bisect import bisect_right

from ir import DONE, EMPTY, Stop, position_windows, stop

from ._actor import Actor
from ._values import binary_op, zero

__all__ = ["LaneSplit", "PositionSplit", "LaneMerge", "LaneMerge2", "LaneCombine",
           "LaneCombine2"]


def _control(tok) -> bool:
    return tok.__class__ is Stop or tok is DONE


class _Split(Actor):
    """A lane's filter of a (crd, ref) stream: each firing takes the head of every input
    (``ins``: crd, ref, and what the decision reads), passes the pair when
    :meth:`keeps_heads` says so; stops and ``D`` always pass."""

    def run(self):
        ins, oc, orf = self.ins, self.oc, self.orf
        while True:
            rt, blk = self.ready_all(*ins)
            if blk is not None:
                return blk
            heads = [ch.peek() for ch in ins]
            keep = self.keeps_heads(heads)
            st = 0
            if keep:
                st, blk = self.space_all(oc, orf)
                if blk is not None:
                    return blk
            ft = self.fire_at(rt, st)
            for ch in ins:
                ch.pop(ft)
            c = heads[0]
            if keep:
                oc.push(c, ft)
                orf.push(heads[1], ft)
            if c is DONE:
                self.finish(ft)
                return None


class LaneSplit(_Split):
    """Keeps a coordinate ``c`` when ``c mod lanes == lane`` and ``lo <= c < hi``; stops
    and ``D`` pass. Dealing by coordinate, not by position in the fiber: below a
    reduction several fibers feed one output fiber, and a coordinate must reach the same
    lane from each of them."""

    op = "lane_split"

    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        self.ins = (inputs["crd_in"], inputs["ref_in"])
        self.oc, self.orf = outputs["crd"], outputs["ref"]
        p = node.params
        # lane < lanes and lo <= hi: checked when the graph is built (ir.Graph)
        self.lanes, self.lane, self.lo, self.hi = p["lanes"], p["lane"], p["lo"], p["hi"]

    def keeps(self, c) -> bool:
        if c is EMPTY:
            return self.lane == 0 and self.lo == 0
        return c % self.lanes == self.lane and self.lo <= c < self.hi

    def keeps_heads(self, heads) -> bool:
        c, r = heads
        if _control(c) or _control(r):
            if c != r or not _control(c):
                raise self.error(f"misaligned streams: crd_in holds {c!r} while ref_in "
                                 f"holds {r!r}")
            return True
        return self.keeps(c)

    def describe_state(self) -> str:
        return f"lane {self.lane}/{self.lanes} [{self.lo}, {self.hi})"


class PositionSplit(_Split):
    """Keeps a (crd, ref) pair when the key position ``pos_in`` beside it lies in one of
    its windows (``[lo, hi)``, then ``windows``); stops and ``D`` pass. Lanes holding
    disjoint windows of one level's positions hold disjoint entries, even inside one
    fiber."""

    op = "position_split"

    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        self.ins = (inputs["crd_in"], inputs["ref_in"], inputs["pos_in"])
        self.oc, self.orf = outputs["crd"], outputs["ref"]
        self.windows = position_windows(node.params)
        self.starts = [lo for lo, _ in self.windows]

    def keeps_heads(self, heads) -> bool:
        c, r, p = heads
        if _control(c) or _control(r) or _control(p):
            if not c == r == p or not _control(c):
                raise self.error(f"misaligned streams: crd_in holds {c!r}, ref_in {r!r} "
                                 f"and pos_in {p!r}")
            return True
        if p.__class__ is not int:
            raise self.error(f"pos_in holds {p!r}: a position split needs the key "
                             "operand's position in every entry")
        k = bisect_right(self.starts, p) - 1
        return k >= 0 and p < self.windows[k][1]

    def describe_state(self) -> str:
        return "windows " + ", ".join(f"[{lo}, {hi})" for lo, hi in self.windows)


class LaneMerge(Actor):
    """Merges two lanes' (crd, val) streams of one level by coordinate; as a lane
    reduction (the catalogue's ``combines``: ``lane_combine``) it adds the values of a
    coordinate both lanes hold (their partials)."""

    op = "lane_merge"

    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        self.lanes = (inputs["crd_a"], inputs["val_a"]), (inputs["crd_b"], inputs["val_b"])
        self.outs = outputs["crd"], outputs["val"]
        self.combines = node.primitive.combines
        self.add = _adder(self) if self.combines else None

    def run(self):
        (ca, _), (cb, _) = self.lanes
        while True:
            rt, blk = self.ready_all(ca, cb)
            if blk is not None:
                return blk
            a, b = ca.peek(), cb.peek()
            blk = _merge_firing(self, self.lanes, self.outs, (a, b),
                                _order(self, a, b, "crd_a", "crd_b", self.combines), rt)
            if blk is not None or self.finished:
                return blk


class LaneMerge2(Actor):
    """Merges two lanes' (outer crd, inner crd, val) streams: the smaller outer crd is
    written, then its inner fiber and values are copied from that lane; the stop that
    closes a copied fiber is written once the next outer step shows which one it is. As a
    lane reduction (the catalogue's ``combines``: ``lane_combine2``) an outer crd both
    lanes hold is written once and its two inner fibers are merged, adding equal inner
    crds, and a fiber's closing ``S0`` is popped in the next outer step's firing, not in
    one of its own (one firing per output token, docs/timing.md)."""

    op = "lane_merge2"

    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        self.lane_in = {s: (inputs[f"crd1_{s}"], inputs[f"crd0_{s}"], inputs[f"val_{s}"])
                        for s in "ab"}
        self.o1, self.o0, self.ov = outputs["crd1"], outputs["crd0"], outputs["val"]
        self.combines = node.primitive.combines
        self.add = _adder(self) if self.combines else None
        self.copying: str | None = None  # the lane whose inner fiber is being copied
        self.merging = False  # (combines) both lanes' inner fibers are being merged
        self.pending = False  # a copied inner fiber's closing stop is not written yet
        #: per lane, the level of the inner stop that closed its outer fiber (or None)
        self.closed: dict[str, int | None] = {"a": None, "b": None}
        #: (combines) the lanes whose closing S0 waits at the head for the next pick, and
        #: when the closing stops were all visible (the next firing is no earlier)
        self.held, self.fold_rt = "", 0

    def run(self):
        while True:
            blk = self.merge_step() if self.merging else \
                self.copy_step() if self.copying else self.pick_step()
            if blk is not None:
                return blk
            if self.finished:
                return None

    def copy_step(self):
        side = self.copying
        _, c0, v = self.lane_in[side]
        rt, blk = self.ready_all(c0, v)
        if blk is not None:
            return blk
        c, val = c0.peek(), v.peek()
        if c.__class__ is Stop:
            _check_stop(self, val, c, f"val_{side}")
            self.pending, self.copying = True, None
            if self.combines:  # the next pick (S0) or the fiber's end (S1 and up) pops it
                self.fold_rt = rt
                self.held += side if c.level == 0 else ""
                return None
            ft = self.fire_at(rt, 0)
            c0.pop(ft)
            v.pop(ft)
            if c.level > 0:
                self.closed[side] = c.level
            return None
        if c is DONE or c is EMPTY:
            raise self.error(f"crd0_{side} holds {c!r} inside a fiber")
        _check_value(self, val, c, f"val_{side}")
        st, blk = self.space_all(self.o0, self.ov)
        if blk is not None:
            return blk
        ft = self.fire_at(rt, st)
        c0.pop(ft)
        v.pop(ft)
        self.o0.push(c, ft)
        self.ov.push(val, ft)
        return None

    def merge_step(self):
        """One firing of the merge of both lanes' inner fibers (a one-level lane
        reduction); when both hold their closing stop, they fold into the next pick."""
        (_, a0, av), (_, b0, bv) = self.lane_in["a"], self.lane_in["b"]
        rt, blk = self.ready_all(a0, b0)
        if blk is not None:
            return blk
        a, b = a0.peek(), b0.peek()
        if a.__class__ is Stop and b.__class__ is Stop:  # both fibers closed
            r2, blk = self.ready_all(av, bv)
            if blk is not None:
                return blk
            _check_stop(self, av.peek(), a, "val_a")
            _check_stop(self, bv.peek(), b, "val_b")
            self.pending, self.merging, self.fold_rt = True, False, max(rt, r2)
            self.held = "".join(s for s, tok in (("a", a), ("b", b)) if tok.level == 0)
            return None  # folded: the next pick or the fiber's end pops them
        side = _order(self, a, b, "crd0_a", "crd0_b", True)
        if side is None:
            raise self.error(f"crd0_a and crd0_b hold {a!r} inside a fiber")
        return _merge_firing(self, ((a0, av), (b0, bv)), (self.o0, self.ov), (a, b), side,
                             rt)

    def pick_step(self):
        (a1, _, _), (b1, _, _) = self.lane_in["a"], self.lane_in["b"]
        rt, blk = self.ready_all(a1, b1)
        if blk is not None:
            return blk
        a, b = a1.peek(), b1.peek()
        side = _order(self, a, b, "crd1_a", "crd1_b", self.combines)
        if side is None:
            return self.end_fiber(a, rt)
        outs = (self.o1, self.o0, self.ov) if self.pending else (self.o1,)
        st, blk = self.space_all(*outs)
        if blk is not None:
            return blk
        ft = self.fire_at(max(rt, self.fold_rt), st)
        self.pop_held(ft)
        for s in side:
            self.lane_in[s][0].pop(ft)
        self.o1.push(b if side == "b" else a, ft)
        if self.pending:
            self.o0.push(stop(0), ft)
            self.ov.push(stop(0), ft)
        self.pending = False
        if side == "ab":
            self.merging = True
        else:
            self.copying = side
        return None

    def end_fiber(self, a, rt: int):
        """Both lanes end the outer fiber (S_k) or the stream (D): every lane that did
        not close its inner stream in a copy still holds the lone closing stop."""
        (a1, _, _), (b1, _, _) = self.lane_in["a"], self.lane_in["b"]
        inner = DONE if a is DONE else stop(a.level + 1)
        need, names = [], []
        for s in "ab":
            closed = self.closed[s]
            if a is DONE or closed is None:
                need.extend(self.lane_in[s][1:])
                names.extend((f"crd0_{s}", f"val_{s}"))
            elif closed != inner.level:
                raise self.error(f"lane {s}'s inner stream closed its fiber with "
                                 f"S{closed} but the outer stream ends it with {a!r}")
        r2, blk = self.ready_all(*need)
        if blk is not None:
            return blk
        for ch, name in zip(need, names, strict=True):
            _check_stop(self, ch.peek(), inner, name)
        st, blk = self.space_all(self.o1, self.o0, self.ov)
        if blk is not None:
            return blk
        ft = self.fire_at(max(rt, r2, self.fold_rt), st)
        for ch in (a1, b1, *need):
            ch.pop(ft)
        self.o1.push(a, ft)
        self.o0.push(inner, ft)
        self.ov.push(inner, ft)
        self.pending, self.fold_rt = False, 0
        self.closed = {"a": None, "b": None}
        if a is DONE:
            self.finish(ft)
        return None

    def pop_held(self, ft: int) -> None:
        for s in self.held:
            for ch in self.lane_in[s][1:]:
                ch.pop(ft)
        self.held, self.fold_rt = "", 0

    def describe_state(self) -> str:
        return "merging both lanes' fibers" if self.merging else \
            f"copying lane {self.copying}" if self.copying else "picking"


def _adder(actor: Actor):
    """The combine's sum of two partial values (``N`` counts as zero)."""
    add, z = binary_op("add", actor.dtype), zero(actor.dtype)
    return lambda x, y: add(z if x is EMPTY else x, z if y is EMPTY else y)


class LaneCombine(LaneMerge):
    """Lane reduction of one level: ``lane_merge`` with the catalogue's ``combines``."""

    op = "lane_combine"


class LaneCombine2(LaneMerge2):
    """Lane reduction of two levels: ``lane_merge2`` with the catalogue's ``combines``."""

    op = "lane_combine2"


def _merge_firing(actor: Actor, lanes, outs, heads, side: str | None, rt: int):
    """One firing of a one-level ordered merge of ``lanes`` ((crd, val) channels of a and
    b) onto ``outs`` (crd, val) whose crd ``heads`` became visible at ``rt``: the head of
    ``side`` passes with its value ("ab": an equal crd, the values added), or (None) the
    lanes' aligned stop or ``D`` passes once. Returns the channel blocked on, or None."""
    # a list: the compiled core types tuples of different lengths apart
    taken = [0, 1] if side in (None, "ab") else [0] if side == "a" else [1]
    vals = [lanes[k][1] for k in taken]
    r2, blk = actor.ready_all(*vals)
    if blk is not None:
        return blk
    tok = heads[1] if side == "b" else heads[0]
    if side is None:
        for ch, x in zip(vals, "ab", strict=True):
            _check_stop(actor, ch.peek(), tok, f"val_{x}")
        val = tok
    else:
        for ch, k in zip(vals, taken, strict=True):
            _check_value(actor, ch.peek(), tok, f"val_{'ab'[k]}")
        val = actor.add(vals[0].peek(), vals[1].peek()) if side == "ab" else vals[0].peek()
    st, blk = actor.space_all(*outs)
    if blk is not None:
        return blk
    ft = actor.fire_at(max(rt, r2), st)
    for k in taken:
        lanes[k][0].pop(ft)
    for ch in vals:
        ch.pop(ft)
    outs[0].push(tok, ft)
    outs[1].push(val, ft)
    if tok is DONE:
        actor.finish(ft)
    return None


def _order(actor: Actor, a, b, name_a: str, name_b: str, combines: bool) -> str | None:
    """Which head comes next: "a", "b", "ab" (the same coordinate on both lanes of a lane
    reduction), or None when both hold the same stop or ``D``."""
    if combines and a.__class__ is int and a == b:
        return "ab"
    return _pick(actor, a, b, name_a, name_b)


def _pick(actor: Actor, a, b, name_a: str, name_b: str) -> str | None:
    """The lane whose head crd comes next ("a"/"b"), or None when both hold the same
    stop or ``D``; any other combination is a malformed pair of lanes."""
    a_crd, b_crd = a.__class__ is int, b.__class__ is int
    if a_crd and b_crd:
        if a == b:
            raise actor.error(f"both lanes hold coordinate {a}: lanes must partition the "
                              "coordinates")
        return "a" if a < b else "b"
    if a_crd and b.__class__ is Stop:
        return "a"
    if b_crd and a.__class__ is Stop:
        return "b"
    if _control(a) and a == b:
        return None
    raise actor.error(f"misaligned lanes: {name_a} holds {a!r} while {name_b} holds {b!r}")


def _check_stop(actor: Actor, tok, want, name: str) -> None:
    if tok != want or not _control(tok):
        raise actor.error(f"{name} holds {tok!r} where its coordinates hold {want!r}")


def _check_value(actor: Actor, tok, crd, name: str) -> None:
    if _control(tok):
        raise actor.error(f"{name} holds {tok!r} where its coordinates hold {crd!r}")
