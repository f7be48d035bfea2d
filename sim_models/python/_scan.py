"""Stream sources and reference transformers: root, level scanners, repeat (and its value
form, broadcast), value array."""

from __future__ import annotations

from ir import DONE, EMPTY, REPEAT, Block, Stop, stop

from ._actor import Actor
from ._loadq import LoadQueue

__all__ = ["Root", "ScanCompressed", "ScanDense", "RepSig", "Repeat", "Broadcast", "Array"]

_IDLE, _IN_FIBER, _END = 0, 1, 2


class Root(Actor):
    op = "root"

    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        self.out = outputs["ref"]
        self.sent = 0

    def run(self):
        out = self.out
        while True:
            st = out.space()
            if st < 0:
                return out
            ft = self.fire_at(0, st)
            if self.sent == 0:
                out.push(0, ft)
                self.sent = 1
            else:
                out.push(DONE, ft)
                self.finish(ft)
                return None


class _Scanner(Actor):
    """Level scanner; subclasses say where a fiber starts and ends and what its crds are.

    States: IDLE (waiting for a reference), IN_FIBER (emitting), END (the fiber is done;
    the next input decides between ``S0`` and a merged ``S_{k+1}``).
    """

    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        self.inp = inputs["ref_in"]
        self.oc, self.orf = outputs["crd"], outputs["ref"]
        self.state = _IDLE
        self.p = self.e = 0
        self.base = 0  # first child position of the current fiber (dense: r * n)
        # memory (compressed levels only): ports, and the accesses of the pending firing
        self.sport = self.cport = None
        self.seg_h: tuple | None = None
        self.crd_h = None
        self.mready = 0

    def fiber_memory(self, ref: int, rt: int, p: int, e: int):
        """Read ``seg[ref]``, ``seg[ref+1]`` and (non-empty fiber) ``crd[p]``; set
        ``mready``, or return the port to block on. Each access is issued once."""
        sport, cport = self.sport, self.cport
        a = self.t if self.t >= rt else rt
        if self.seg_h is None:
            self.seg_h = (sport.read(ref, a), sport.read(ref + 1, a))
        m1 = sport.wait(self.seg_h[0])
        m2 = sport.wait(self.seg_h[1]) if m1 >= 0 else -1
        if m2 < 0:
            return sport
        ms = m1 if m1 > m2 else m2
        if p == e:
            self.mready = ms
            return None
        if self.crd_h is None:
            self.crd_h = cport.read(p, a if a >= ms else ms)
        mc = cport.wait(self.crd_h)
        if mc < 0:
            return cport
        self.mready = ms if ms > mc else mc
        return None

    def fiber(self, ref: int) -> tuple[int, int]:
        raise NotImplementedError

    def crd_at(self, p: int) -> int:
        raise NotImplementedError

    def _emit_fiber(self):
        """In a fiber on ideal memory: emit its crds while both outputs have space; the
        channel to block on, or None once the fiber has ended."""
        oc, orf, crd_at, fire_at = self.oc, self.orf, self.crd_at, self.fire_at
        p, e = self.p, self.e
        while p < e:
            st = oc.space()
            if st < 0:
                self.p = p
                return oc
            s2 = orf.space()
            if s2 < 0:
                self.p = p
                return orf
            ft = fire_at(0, st if st > s2 else s2)
            oc.push(crd_at(p), ft)
            orf.push(p, ft)
            p += 1
        self.p = p
        self.state = _END
        return None

    def run(self):
        inp, oc, orf, cport = self.inp, self.oc, self.orf, self.cport
        while True:
            if self.state == _IN_FIBER and cport is None:
                blk = self._emit_fiber()
                if blk is not None:
                    return blk
            # every firing except consuming a ref to an empty fiber writes both outputs
            st = oc.space()
            if st < 0:
                st_block = oc
            else:
                s2 = orf.space()
                st_block = orf if s2 < 0 else None
                if s2 > st:
                    st = s2
            if self.state == _IN_FIBER:
                p = self.p
                mt = 0
                if cport is not None:  # the access does not wait for output space
                    h = self.crd_h
                    if h is None:
                        h = self.crd_h = cport.read(p, self.t)
                    if st_block is not None:
                        return st_block
                    mt = cport.wait(h)
                    if mt < 0:
                        return cport
                    self.crd_h = None
                elif st_block is not None:
                    return st_block
                ft = self.fire_at(0, st, mt)
                oc.push(self.crd_at(p), ft)
                orf.push(p, ft)
                p += 1
                self.p = p
                if p == self.e:
                    self.state = _END
                continue
            rt = inp.ready()
            if rt < 0:
                return inp
            tok = inp.peek()
            cls = tok.__class__
            if self.state == _IDLE:
                if cls is int:
                    p, e = self.fiber(tok)
                    mt = 0
                    if self.sport is not None:
                        blk = self.fiber_memory(tok, rt, p, e)
                        if blk is not None:
                            return blk
                        mt = self.mready
                    if p == e:  # empty fiber: only its stop will be emitted
                        inp.pop(self.fire_at(rt, 0, mt))
                        self.seg_h = None
                        self.state = _END
                        continue
                    if st_block is not None:
                        return st_block
                    ft = self.fire_at(rt, st, mt)
                    self.seg_h = self.crd_h = None
                    inp.pop(ft)
                    oc.push(self.crd_at(p), ft)
                    orf.push(p, ft)
                    self.p, self.e = p + 1, e
                    self.state = _IN_FIBER if p + 1 < e else _END
                    continue
                if st_block is not None:
                    return st_block
                ft = self.fire_at(rt, st)
                inp.pop(ft)
                if cls is Stop:
                    s = stop(tok.level + 1)
                    oc.push(s, ft)
                    orf.push(s, ft)
                elif tok is EMPTY:
                    oc.push(EMPTY, ft)
                    orf.push(EMPTY, ft)
                    self.state = _END
                elif tok is DONE:
                    oc.push(DONE, ft)
                    orf.push(DONE, ft)
                    self.finish(ft)
                    return None
                else:
                    raise self.error(f"unexpected token {tok!r} on ref_in")
            else:  # _END
                if st_block is not None:
                    return st_block
                ft = self.fire_at(rt, st)
                if cls is Stop:
                    inp.pop(ft)
                    s = stop(tok.level + 1)
                else:
                    s = stop(0)
                oc.push(s, ft)
                orf.push(s, ft)
                self.state = _IDLE

    def describe_state(self) -> str:
        return ("idle", "in fiber", "fiber ended")[self.state]


class ScanCompressed(_Scanner):
    op = "scan_compressed"

    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        level = ctx.level(node)
        self.seg, self.crd = level.seg.tolist(), level.crd.tolist()
        self.nfib = len(self.seg) - 1
        self.sport, self.cport = ctx.mem_port(self, "seg"), ctx.mem_port(self, "crd")

    def fiber(self, ref):
        if not 0 <= ref < self.nfib:
            raise self.error(f"reference {ref} is outside the level's {self.nfib} fibers")
        return self.seg[ref], self.seg[ref + 1]

    def crd_at(self, p):
        return self.crd[p]


class ScanDense(_Scanner):
    op = "scan_dense"

    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        self.level = ctx.level(node)
        self.nfib = ctx.fibers(node)

    def fiber(self, ref):
        if not 0 <= ref < self.nfib:
            raise self.error(f"reference {ref} is outside the level's {self.nfib} fibers")
        self.base, end = self.level.fiber(ref)
        return self.base, end

    def crd_at(self, p):
        return p - self.base


class RepSig(Actor):
    op = "repsig"

    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        self.inp, self.out = inputs["crd"], outputs["repsig"]

    def run(self):
        inp, out = self.inp, self.out
        while True:
            rt = inp.ready()
            if rt < 0:
                return inp
            st = out.space()
            if st < 0:
                return out
            ft = self.fire_at(rt, st)
            tok = inp.pop(ft)
            cls = tok.__class__
            if cls is int or tok is EMPTY:
                out.push(REPEAT, ft)
            elif cls is Stop:
                out.push(tok, ft)
            elif tok is DONE:
                out.push(DONE, ft)
                self.finish(ft)
                return None
            else:
                raise self.error(f"unexpected token {tok!r} on crd")


class Repeat(Actor):
    """Repeats the current ref once per ``R``; a repsig stop ends its fiber.

    The ref input holds one ref per fiber of the repsig stream, so its head tells whether a
    repsig stop closes a fiber (head is a ref: pop it) or an empty parent (head is a stop).
    :class:`Broadcast` is the same actor on a value stream (ports and payload types are
    class attributes).
    """

    op = "repeat"
    in_port, out_port = "ref_in", "ref"
    #: payload types of a data token on ``in_port`` (``N`` is always accepted)
    data_types: tuple[type, ...] = (int,)

    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        self.ref, self.sig = inputs[self.in_port], inputs["repsig"]
        self.out = outputs[self.out_port]
        self.skip = -1  # level of an input stop merged into the last emitted stop

    def run(self):
        ref, sig, out, data_types = self.ref, self.sig, self.out, self.data_types
        while True:
            rt = ref.ready()
            if rt < 0:
                return ref
            r = ref.peek()
            if self.skip >= 0:
                if r != stop(self.skip):
                    raise self.error(f"expected S{self.skip} on {self.in_port} after a "
                                     f"merged stop, got {r!r}")
                ref.pop(self.fire_at(rt, 0))
                self.skip = -1
                continue
            rt2 = sig.ready()
            if rt2 < 0:
                return sig
            if rt2 > rt:
                rt = rt2
            st = out.space()
            if st < 0:
                return out
            s = sig.peek()
            ft = self.fire_at(rt, st)
            sig.pop(ft)
            if s is REPEAT:
                if r.__class__ not in data_types and r is not EMPTY:
                    raise self.error(f"repeat signal R but {self.in_port} holds {r!r}")
                out.push(r, ft)
            elif s.__class__ is Stop:
                ref.pop(ft)
                out.push(s, ft)
                if r.__class__ is Stop:  # an empty parent: no fiber was open
                    if r.level != s.level - 1:
                        raise self.error(f"repsig {s!r} against {self.in_port} {r!r}")
                elif s.level > 0:
                    self.skip = s.level - 1
            elif s is DONE:
                if r is not DONE:
                    raise self.error(f"repsig D but {self.in_port} holds {r!r}")
                ref.pop(ft)
                out.push(DONE, ft)
                self.finish(ft)
                return None
            else:
                raise self.error(f"unexpected token {s!r} on repsig")


class Broadcast(Repeat):
    """Repeats the current value once per ``R``: :class:`Repeat` on a value stream.

    It feeds a value computed once per outer coordinate (a hoisted reduction's result)
    into a deeper loop over indices that value does not depend on.
    """

    op = "broadcast"
    in_port, out_port = "val_in", "val"
    data_types = (float, int, Block)


class Array(Actor):
    """Value array: ``val = vals[ref]``; ``N`` loads as 0; stops and ``D`` pass through."""

    op = "array"

    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        self.inp, self.out = inputs["ref"], outputs["val"]
        self.vals = ctx.values(node)
        elems = ctx.elems_out(node)
        self.zero = Block.zeros(elems) if elems > 1 or ctx.tensors[
            node.params["tensor"]].block is not None else 0.0 if self.dtype == "float32" else 0
        self.words = elems  # memory words per value (a block reads all its lines)
        self.port = ctx.mem_port(self, "vals")
        self.h = None  # the pending firing's memory access
        q = ctx.load_queues.get(node.id, 1) if self.port is not None else 1
        self.queue = LoadQueue(self, q) if q > 1 else None

    def run(self):
        if self.queue is not None:
            return self.queue.run()
        inp, out, vals, port = self.inp, self.out, self.vals, self.port
        n = len(vals)
        while True:
            rt = inp.ready()
            if rt < 0:
                return inp
            mt = 0
            if port is not None and inp.peek().__class__ is int:
                # the access is made as soon as the ref is visible, space or not: a later
                # issue would let the channel serve younger bursts first
                ref = inp.peek()
                if ref >= n:
                    raise self.error(f"reference {ref} is outside the {n} values")
                h = self.h
                if h is None:
                    h = self.h = port.read_span(ref * self.words, self.words,
                                                self.t if self.t >= rt else rt)
                st = out.space()
                if st < 0:
                    return out
                mt = port.wait(h)
                if mt < 0:
                    return port
                self.h = None
            else:
                st = out.space()
                if st < 0:
                    return out
            ft = self.fire_at(rt, st, mt)
            tok = inp.pop(ft)
            if tok.__class__ is int:
                if tok >= n:
                    raise self.error(f"reference {tok} is outside the {n} values")
                out.push(vals[tok], ft)
            elif self.emit_control(tok, ft):
                return None

    def emit_control(self, tok, ft: int) -> bool:
        """Write the value of a non-data ref token at ``ft`` (``N``: zero; a stop or ``D``
        passes); whether it was ``D``, which ends the array."""
        if tok is EMPTY:
            self.out.push(self.zero, ft)
        elif tok.__class__ is Stop:
            self.out.push(tok, ft)
        elif tok is DONE:
            self.out.push(DONE, ft)
            self.finish(ft)
            return True
        else:
            raise self.error(f"unexpected token {tok!r} on ref")
        return False
