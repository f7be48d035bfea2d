"""Value computation: binary and unary ALUs, reducers, the sparse vector accumulator."""

from __future__ import annotations

from ir import DONE, EMPTY, Block, Stop, stop

from ._actor import Actor
from ._blocks import BlockBinary, BlockFold, block_add, block_unary
from ._values import binary_op, reduce_identity, unary_op, zero

__all__ = ["Alu", "Unary", "Reduce", "SpAcc", "SpAcc2"]


class Alu(Actor):
    """``val = a op b`` on aligned streams; ``N`` counts as 0; stops must match."""

    op = "alu"

    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        self.a, self.b, self.out = inputs["a"], inputs["b"], outputs["val"]
        spec = node.params.get("block", "")
        if spec:  # block values: N reaches the block op, which reads it as zeros
            self.f, self.zero = BlockBinary(node.params["op"], spec, node.id), EMPTY
        else:
            self.f, self.zero = binary_op(node.params["op"], self.dtype), zero(self.dtype)

    def run(self):
        a_ch, b_ch, out, f = self.a, self.b, self.out, self.f
        while True:
            rt = a_ch.ready()
            if rt < 0:
                return a_ch
            r2 = b_ch.ready()
            if r2 < 0:
                return b_ch
            st = out.space()
            if st < 0:
                return out
            a, b = a_ch.peek(), b_ch.peek()
            cycles = 1
            if a.__class__ is Stop or a is DONE or b.__class__ is Stop or b is DONE:
                if a != b:
                    raise self.error(f"misaligned operands: a holds {a!r} while b holds {b!r}")
                res = a
            else:
                res = f(self.zero if a is EMPTY else a, self.zero if b is EMPTY else b)
                cycles = self.cycles
            ft = self.fire_at(rt if rt > r2 else r2, st, 0, cycles)
            a_ch.pop(ft)
            b_ch.pop(ft)
            out.push(res, ft)
            if res is DONE:
                self.finish(ft)
                return None


class Unary(Actor):
    op = "unary"

    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        self.inp, self.out = inputs["a"], outputs["val"]
        elems = ctx.elems_in(node, "a")
        if elems > 1 or ctx.elems_out(node) > 1:
            self.f = block_unary(node.params["op"], node.params["const"])
            self.zero = Block.zeros(elems)
        else:
            self.f = unary_op(node.params["op"], node.params["const"], self.dtype)
            self.zero = zero(self.dtype)

    def run(self):
        inp, out, f = self.inp, self.out, self.f
        while True:
            rt = inp.ready()
            if rt < 0:
                return inp
            st = out.space()
            if st < 0:
                return out
            tok = inp.peek()
            cls = tok.__class__
            ft = self.fire_at(rt, st, 0, self.cycles if cls is Block or tok is EMPTY else 1)
            inp.pop(ft)
            if cls is float or cls is int or cls is Block:
                out.push(f(tok), ft)
            elif tok is EMPTY:
                out.push(f(self.zero), ft)
            else:
                out.push(tok, ft)
                if tok is DONE:
                    self.finish(ft)
                    return None


class Reduce(Actor):
    """Removes the innermost level: one value per level-0 fiber.

    ``outer`` carries one ref per level-0 fiber (the parent level's ref stream), so an
    inner ``S_k`` (k>0) is unambiguous: if ``outer`` holds a ref, a fiber is closing (emit
    the accumulator, pop the ref); if it holds ``S_{k-1}``, the parent is done (emit
    ``S_{k-1}``, pop both).
    """

    op = "reduce"

    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        self.inp, self.outer, self.out = inputs["val_in"], inputs["outer"], outputs["val"]
        rop = node.params["op"]
        spec = node.params.get("block", "")
        if spec:  # fold the block, then combine elementwise; N reaches the fold as zeros
            self.f = BlockFold(rop, spec, node.id)
            self.identity, self.zero = self.f.identity, EMPTY
        else:
            self.f = binary_op("add" if rop == "sum" else "max", self.dtype)
            self.identity, self.zero = reduce_identity(rop, self.dtype), zero(self.dtype)
        self.acc = self.identity

    def run(self):
        inp, outer, out, f = self.inp, self.outer, self.out, self.f
        while True:
            rt = inp.ready()
            if rt < 0:
                return inp
            tok = inp.peek()
            cls = tok.__class__
            if cls is float or cls is int or cls is Block or tok is EMPTY:
                inp.pop(self.fire_at(rt, 0, 0, self.cycles))
                self.acc = f(self.acc, self.zero if tok is EMPTY else tok)
                continue
            r2 = outer.ready()
            if r2 < 0:
                return outer
            st = out.space()
            if st < 0:
                return out
            o = outer.peek()
            ft = self.fire_at(rt if rt > r2 else r2, st)
            if o.__class__ is int or o is EMPTY:  # a level-0 fiber closes
                if cls is not Stop:
                    raise self.error(f"val_in holds {tok!r} while outer holds a ref")
                outer.pop(ft)
                out.push(self.acc, ft)
                self.acc = self.identity
                if tok.level == 0:
                    inp.pop(ft)
            elif cls is Stop and o.__class__ is Stop and o.level == tok.level - 1 or \
                    tok is DONE and o is DONE:
                outer.pop(ft)
                inp.pop(ft)
                out.push(o, ft)
                if tok is DONE:
                    self.finish(ft)
                    return None
            else:
                raise self.error(f"misaligned streams: val_in holds {tok!r}, outer holds {o!r}")


class SpAcc(Actor):
    """Sparse vector accumulator: sums the level-0 fibers of each level-1 fiber by crd.

    ``S0`` ends one partial vector (nothing emitted); ``S_k`` (k>0) ends the group: the
    accumulated vector is emitted sorted by crd, one entry per cycle, then ``S_{k-1}``.
    """

    op = "spacc"

    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        self.ci, self.vi = inputs["crd_in"], inputs["val_in"]
        self.oc, self.ov = outputs["crd"], outputs["val"]
        self.f = _accumulate(ctx, node, "val_in", self.dtype)
        self.acc: dict[int, float | int] = {}
        self.drain: list = []
        self.drain_pos = 0
        self.peak = 0  # most entries held at once (the on-chip buffer rule)

    def run(self):
        ci, vi, oc, ov = self.ci, self.vi, self.oc, self.ov
        while True:
            if self.drain_pos < len(self.drain):
                st, blk = self.space_all(oc, ov)
                if blk is not None:
                    return blk
                ft = self.fire_at(0, st)
                c, v = self.drain[self.drain_pos]
                self.drain_pos += 1
                oc.push(c, ft)
                ov.push(v, ft)
                continue
            rt = ci.ready()
            if rt < 0:
                return ci
            r2 = vi.ready()
            if r2 < 0:
                return vi
            if r2 > rt:
                rt = r2
            c, v = ci.peek(), vi.peek()
            if c.__class__ is int:
                if v.__class__ is Stop or v is DONE:
                    raise self.error(f"crd_in holds {c!r} while val_in holds {v!r}")
                ft = self.fire_at(rt, 0, 0, self.cycles)
                ci.pop(ft)
                vi.pop(ft)
                acc = self.acc
                acc[c] = self.f(acc.get(c), v)
                continue
            if c is EMPTY:
                ft = self.fire_at(rt, 0)
                ci.pop(ft)
                vi.pop(ft)
                continue
            if c != v:
                raise self.error(f"misaligned streams: crd_in holds {c!r}, val_in holds {v!r}")
            if c.__class__ is Stop and c.level == 0:
                ft = self.fire_at(rt, 0)
                ci.pop(ft)
                vi.pop(ft)
                continue
            st, blk = self.space_all(oc, ov)
            if blk is not None:
                return blk
            ft = self.fire_at(rt, st)
            ci.pop(ft)
            vi.pop(ft)
            if c is DONE:
                oc.push(DONE, ft)
                ov.push(DONE, ft)
                self.finish(ft)
                return None
            s = stop(c.level - 1)
            if len(self.acc) > self.peak:
                self.peak = len(self.acc)
            entries = sorted(self.acc.items())
            self.acc = {}
            entries.append((s, s))
            c0, v0 = entries[0]
            oc.push(c0, ft)
            ov.push(v0, ft)
            self.drain, self.drain_pos = entries, 1


class _SpAccN(Actor):
    """Sparse accumulator over ``levels`` kept levels (``spacc2``: 2, ``spacc3``: 3).

    Input streams nest [outer][crd_{L-1}]…[crd0]; ``crd_m_in`` holds one crd per level
    m-1 fiber of ``crd0_in``. Values are summed by (crd_{L-1}, …, crd0) over the outer
    fiber; when it ends (``S_k``, k ≥ L on ``crd0_in``) the tensor is emitted in crd
    order: an entry writes the crds of the levels it opens, fibers are separated by the
    stops of the levels that close, and the group closes with the lowered stops
    (``S_{k-1-m}`` on crd m, ``S_{k-1}`` on val). A closing stop only loads that drain
    list; its steps go out one per cycle from the next cycle (docs/primitives.md).
    """

    levels = 0

    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        n = self.levels
        #: crd inputs from the innermost (crd0_in) outwards
        self.crds = tuple(inputs[f"crd{m}_in"] for m in range(n))
        self.vi = inputs["val_in"]
        #: outputs in step order: crd_{L-1} … crd0, val
        self.outs = (*(outputs[f"crd{m}"] for m in reversed(range(n))), outputs["val"])
        self.heads = (self.crds[0], self.vi, *self.crds[1:])
        self.f = _accumulate(ctx, node, "val_in", self.dtype)
        self.acc: dict[tuple[int, ...], float | int] = {}
        self.drain: list[tuple] = []
        self.drain_pos = 0
        self.peak = 0  # most entries held at once (the on-chip buffer rule)

    def _space(self, step):
        """Space on the outputs ``step`` writes (a ``None`` leaves its output alone)."""
        return self.space_all(*(ch for ch, tok in zip(self.outs, step, strict=True)
                                if tok is not None))

    def _steps(self, k: int) -> list[tuple]:
        """The output firings for the accumulated tensor, closed by input stop ``S_k``."""
        n = self.levels
        if len(self.acc) > self.peak:
            self.peak = len(self.acc)
        steps: list[tuple] = []
        prev: tuple[int, ...] | None = None
        for key, v in sorted(self.acc.items()):
            d = 0  # first key position (outermost first) that differs from prev
            if prev is not None:
                while key[d] == prev[d]:
                    d += 1
                top = n - 1 - d  # crd level of that position
                if top > 0:  # the fibers below it close
                    steps.append((*(None,) * (n - top),
                                  *(stop(top - 1 - m) for m in reversed(range(top))),
                                  stop(top - 1)))
            steps.append((*(None,) * d, *key[d:], v))
            prev = key
        steps.append((*(stop(k - 1 - m) for m in reversed(range(n))), stop(k - 1)))
        self.acc = {}
        return steps

    def run(self):
        crds, vi, n = self.crds, self.vi, self.levels
        c0 = crds[0]
        while True:
            if self.drain_pos < len(self.drain):
                step = self.drain[self.drain_pos]
                st, blk = self._space(step)
                if blk is not None:
                    return blk
                ft = self.fire_at(0, st)
                for ch, tok in zip(self.outs, step, strict=True):
                    if tok is not None:
                        ch.push(tok, ft)
                self.drain_pos += 1
                if step[0] is DONE:
                    self.finish(ft)
                    return None
                continue
            rt, blk = self.ready_all(*self.heads)
            if blk is not None:
                return blk
            j, v = c0.peek(), vi.peek()
            if j.__class__ is int or j is EMPTY:
                up = [c.peek() for c in crds[1:]]
                if any(u.__class__ is not int for u in up) or v.__class__ is Stop or \
                        v is DONE:
                    raise self.error(f"crd0_in holds {j!r} with {self._show(up)}, "
                                     f"val_in {v!r}")
                ft = self.fire_at(rt, 0, 0, self.cycles if j is not EMPTY else 1)
                c0.pop(ft)
                vi.pop(ft)
                if j is not EMPTY:
                    key = (*reversed(up), j)
                    acc = self.acc
                    acc[key] = self.f(acc.get(key), v)
                continue
            if j != v:
                raise self.error(f"misaligned streams: crd0_in holds {j!r}, val_in {v!r}")
            ft = self.fire_at(rt, 0)
            if j is DONE:
                for m in range(1, n):
                    if crds[m].peek() is not DONE:
                        raise self.error(f"crd0_in ended (D) while crd{m}_in holds "
                                         f"{crds[m].peek()!r}")
                for ch in self.heads:
                    ch.pop(ft)
                self.drain, self.drain_pos = [(DONE,) * (n + 1)], 0
                continue
            k = j.level
            for m in range(1, n):
                u = crds[m].peek()
                if u.__class__ is int:  # the fiber of u closes
                    if k == m - 1:  # and with it the stops below: all pop
                        c0.pop(ft)
                        vi.pop(ft)
                        for c in crds[1:m + 1]:
                            c.pop(ft)
                    else:
                        crds[m].pop(ft)
                    break
                if u.__class__ is not Stop or u.level != k - m:
                    raise self.error(f"misaligned streams: crd0_in holds {j!r}, "
                                     f"crd{m}_in {u!r}")
            else:
                for ch in self.heads:
                    ch.pop(ft)
                if k >= n:
                    self.drain, self.drain_pos = self._steps(k), 0

    def _show(self, up: list) -> str:
        return ", ".join(f"crd{m}_in {u!r}" for m, u in enumerate(up, 1))


class SpAcc2(_SpAccN):
    """Sparse matrix accumulator (outer-product order): two kept levels."""

    op = "spacc2"
    levels = 2


class SpAcc3(_SpAccN):
    """Sparse order-3 accumulator: a reduced index above three kept levels."""

    op = "spacc3"
    levels = 3


def _accumulate(ctx, node, port: str, dtype: str):
    """An accumulator's update ``f(held or None, value or N)``: the scalar sum from 0, or
    the elementwise block sum (docs/blocks.md)."""
    elems = ctx.elems_in(node, port)
    if elems > 1 or ctx.elems_out(node) > 1:
        return lambda held, v: block_add(held, v, elems)
    add, z = binary_op("add", dtype), zero(dtype)
    return lambda held, v: add(z if held is None else held, z if v is EMPTY else v)
