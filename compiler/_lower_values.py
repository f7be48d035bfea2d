"""Values: the value stream of each subexpression, bottom-up.

Reads each operand's values through an ``array`` on its final reference, combines them
with ``alu`` nodes (the op from :data:`_operators.OPERATORS`), applies functions and
constants with ``unary`` nodes (constants fold at compile time, in float32 as the
primitive rounds), and repeats a hoisted subexpression over its later loops
(``broadcast``). Reductions and epilogues are ``_lower_accumulate``'s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ._ast import Access, BinOp, Call, Const, Expr, Neg, Reduction
from ._lower_state import Acc, LowerState, Val
from ._operators import OPERATORS
from ._table import VAL_ROW

__all__ = ["Values", "FOLD", "vanishes"]


class Values(LowerState):
    """Value streams: arrays, ALUs, unary functions and broadcasts."""

    def value(self, e: Expr, rows: Mapping[str, str] | None = None) -> Val:
        """``e``'s value stream; a hoisted ``e`` is broadcast over its later loops, whose
        coordinates are ``rows`` (an accumulator's crd outputs) where given."""
        val = self.compute(e)
        later = self.hoisted.get(id(e))
        if not later:
            return val
        if val.spacc is not None:
            raise self.spacc_misuse(val, e)
        return self.broadcast(val, later, self.first(e), rows)

    def broadcast(self, val: Val, later: Sequence[str], col: str,
                  rows: Mapping[str, str] | None = None) -> Val:
        """``val`` (a value per point of the loops before each of ``later``) repeated over
        those loops' coordinates (``rows``' where given, else the loops' own)."""
        port = val.port
        assert port is not None, "a hoisted subexpression reads a tensor"
        for u in later:  # a value per point of the loops before ``u``, repeated over ``u``
            crd = rows[u] if rows and u in rows else self.crd_of(u)
            node = self.node(f"bcast_{self.user(u)}", "broadcast", u, col)
            self.b.edge(port, f"{node}.val_in")
            self.b.edge(self.repsig_of(u, crd, col), f"{node}.repsig")
            port = f"{node}.val"
        return Val(port, spacc=val.spacc, intra=val.intra)

    def operands_of(self, e: BinOp) -> tuple[Val, Val]:
        """Both sides' values; an accumulator's side first, so that the other side,
        hoisted out of the accumulator's kept loops, is broadcast over its crds."""
        if self.hoisted.get(id(e.left)) and not self.hoisted.get(id(e.right)):
            b = self.value(e.right)
            return self.value(e.left, b.spacc.crds if b.spacc else None), b
        a = self.value(e.left)
        return a, self.value(e.right, a.spacc.crds if a.spacc else None)

    def compute(self, e: Expr) -> Val:
        if isinstance(e, Access):
            op = self.ops[id(e)]
            arr = self.node(f"{op.id}_val", "array", VAL_ROW, op.id, tensor=e.tensor)
            self.b.edge(op.ref, f"{arr}.ref")
            return Val(f"{arr}.val", intra=self.blocks.of_access(e))
        if isinstance(e, Const):
            return Val(const=e.value)
        if isinstance(e, Neg):
            inner = self.value(e.operand)
            if inner.const is not None:
                return Val(const=-inner.const)
            return self.unary(inner, "neg", 0.0, e)
        if isinstance(e, Call):
            return self.call(e)
        if isinstance(e, BinOp):
            return self.binary(e)
        assert isinstance(e, Reduction)
        return self.reduce(e)

    def call(self, e: Call) -> Val:
        """``fn(arg)``: a ``unary`` node; a constant argument folds (in float32)."""
        if self.dtype == "int32" and e.fn != "relu":
            raise self.fail(f"{e.fn}() is not available in an int32 graph (its result is "
                            "not an integer); use dtype float32, or relu", e)
        arg = self.value(e.arg)
        if arg.const is None:
            return self.unary(arg, e.fn, 0.0, e)
        folded = FOLD[e.fn](arg.const)
        if not math.isfinite(folded):
            raise self.fail(f"{e.fn}({arg.const!r}) of a constant is {folded!r}; expected a "
                            "finite value", e)
        return Val(const=folded)

    def unary(self, val: Val, op: str, const: float, at: Expr) -> Val:
        if (op, const) in (("mul_const", 1.0), ("add_const", 0.0), ("div_const", 1.0)):
            return val
        if self.dtype == "int32" and const != int(const):
            raise self.fail(f"constant {const!r} is not an integer; an int32 graph computes "
                            "in integers", at)
        node = self.node(op, "unary", VAL_ROW, self.first(at), op=op, const=float(const))
        self.b.edge(val.port, f"{node}.a")
        return Val(f"{node}.val", spacc=val.spacc, intra=val.intra)

    def binary(self, e: BinOp) -> Val:
        joined = self.epilogue(e)
        if joined is not None:  # the accumulator's rows, joined with the other side
            a, b = joined
            return self.alu(e, a, b, a.spacc or b.spacc)
        a, b = self.operands_of(e)
        oper = OPERATORS[e.op]
        if a.const is not None and b.const is not None:
            try:
                return Val(const=oper.fold(a.const, b.const))
            except ZeroDivisionError:
                raise self.fail("division of constants by zero", e) from None
        if a.const is not None:
            val, steps = b, oper.const_left(a.const)
        elif b.const is not None:
            val, steps = a, oper.const_right(b.const)
        else:
            return self.alu(e, a, b, self.rows_of(e, a, b))
        if steps is None:
            raise self.fail(f"a constant divided by a tensor ({e}) is not supported: there "
                            "is no reverse-division primitive", e)
        for op, c in steps:
            val = self.unary(val, op, c, e)
        return val

    def alu(self, e: BinOp, a: Val, b: Val, rows: Acc | None) -> Val:
        """The ALU combining two value streams; ``rows``: the accumulator rows it
        streams on, if any."""
        intra, spec = self.blocks.alu(e, a.intra, b.intra)
        alu = OPERATORS[e.op].alu
        node = self.node(alu, "alu", VAL_ROW, self.first(e), op=alu, **spec)
        self.b.edge(a.port, f"{node}.a")
        self.b.edge(b.port, f"{node}.b")
        self.refer(VAL_ROW, self.first(e.right), node)
        return Val(f"{node}.val", spacc=rows, intra=intra)



_F32_MAX = float(np.finfo(np.float32).max)


def _f32(x: float) -> float:
    """``x`` rounded to float32 (beyond its range: ±inf, as IEEE-754 rounding gives)."""
    if math.isfinite(x) and abs(x) > _F32_MAX:
        return math.copysign(math.inf, x)
    return float(np.float32(x))


def _rsqrt(x: float) -> float:
    return 1.0 / math.sqrt(x) if x > 0 else math.inf if x == 0 else math.nan


#: constant folding of the functions, rounded to float32 as the unary primitive rounds
FOLD = {
    "relu": lambda x: max(_f32(x), 0.0),
    "exp": lambda x: _f32(math.exp(min(_f32(x), 100.0))),
    "rsqrt": lambda x: _f32(_rsqrt(_f32(x))),
}


def vanishes(e: Expr, v: str) -> bool:
    """Whether ``e`` is 0 at a coordinate of ``v`` where its operands that are iterated at
    ``v`` are absent: they read as 0, while operands without ``v`` are broadcast."""
    if isinstance(e, Access):
        return v in e.indices
    if isinstance(e, Const):
        return e.value == 0
    if isinstance(e, Neg):
        return vanishes(e.operand, v)
    if isinstance(e, Reduction):
        return vanishes(e.body, v)
    if isinstance(e, Call):
        return FOLD[e.fn](0.0) == 0.0 and vanishes(e.arg, v)
    assert isinstance(e, BinOp)
    # a product: one vanishing factor is enough (x / 0 = 0 in the primitives)
    if OPERATORS[e.op].multiplicative:
        return vanishes(e.left, v) or vanishes(e.right, v)
    return vanishes(e.left, v) and vanishes(e.right, v)
