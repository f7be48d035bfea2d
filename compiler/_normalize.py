"""Check an :class:`Assignment` and make every reduction explicit.

Einsum convention: an index on the right but not on the left is reduced (``sum`` by
default). The reduction is placed around the *smallest* subexpression holding every
occurrence of the index, and inside a product chain only around the factors that use it
(``B(i,j)*C(i,k)*D(k,j)`` becomes ``B(i,j) * sum(k) C(i,k)*D(k,j)``: a factor free of
``k`` is pulled out of the sum, which is exact for sums). A function call (``relu``,
``exp``, ``rsqrt``) is nonlinear, so a reduction is never moved into it: an index used
inside a call is reduced around the call (``sum(k) relu(B(i,k))``, as einsum means it),
and a call is one opaque factor of a product. Max reductions follow the
written tree and never regroup a product (``max_k(b·c_k) ≠ b·max_k c_k`` for negative
``b``), so ``B(i)*C(i,k)*D(k)``, read ``(B*C)*D``, becomes ``max(k) (B*C)*D``.

Reduction variables are then renamed apart (``k``, ``k#2``, …) so that two separate
``sum(k)`` loops become two separate loops; :attr:`Normalized.user` maps them back.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._ast import (
    Access,
    Assignment,
    BinOp,
    Call,
    Const,
    Expr,
    Neg,
    Reduction,
    Subtrees,
    accesses,
    free_indices,
)
from ._errors import LoweringError

__all__ = ["Normalized", "normalize", "product_factors"]


@dataclass(frozen=True)
class Normalized:
    """An assignment with explicit, uniquely named reductions."""

    assignment: Assignment
    #: internal index name → the name the user wrote
    user: dict[str, str]
    #: internal index names in order of first appearance (output indices first)
    indices: tuple[str, ...]


def normalize(assign: Assignment, reduce: str = "sum") -> Normalized:
    """Validate ``assign`` and place implicit ``reduce`` reductions (``sum`` or ``max``)."""
    if reduce not in ("sum", "max"):
        raise LoweringError(f"reduce={reduce!r} is not a reduction; expected 'sum' or 'max'")
    _Checker(assign).run()
    out = set(assign.target.indices)
    implicit = free_indices(assign.rhs) - out
    rhs = _place(assign.rhs, implicit, reduce)
    renamed, user = _rename_apart(rhs, out)
    order = list(assign.target.indices)
    for a in accesses(renamed):
        order += [i for i in a.indices if i not in order]
    return Normalized(Assignment(assign.target, renamed, assign.source), user, tuple(order))


class _Checker:
    """Structural checks that need the source column for a good message."""

    def __init__(self, assign: Assignment) -> None:
        self.a = assign
        self.src = assign.source

    def fail(self, msg: str, col: int) -> LoweringError:
        return LoweringError(msg, self.src or None, col or None)

    def run(self) -> None:
        t, rhs = self.a.target, self.a.rhs
        self.check_access(t)
        #: the indices under every node, from one walk (a fused layer has a thousand
        #: reductions, each checked against the indices of its body)
        self.subtrees = Subtrees(rhs)
        ranks: dict[str, tuple[int, Access]] = {}
        for acc in self.subtrees.accesses:
            self.check_access(acc)
            if acc.tensor == t.tensor:
                raise self.fail(f"the output {t.tensor!r} is also read on the right-hand "
                                "side; write the result to a new tensor", acc.col)
            prev = ranks.setdefault(acc.tensor, (len(acc.indices), acc))
            if prev[0] != len(acc.indices):
                raise self.fail(f"tensor {acc.tensor!r} is used with {len(acc.indices)} "
                                f"indices here but as {prev[1]} (rank {prev[0]}) before",
                                acc.col)
        if not self.subtrees.accesses:
            raise self.fail("the right-hand side reads no tensor; there is nothing to "
                            "stream", _col(rhs))
        used = self.subtrees.indices[id(rhs)]
        for i in t.indices:
            if i not in used:
                raise self.fail(f"output index {i!r} does not appear on the right-hand side "
                                "(broadcasting to a new dimension is not supported)", t.col)
        self.check_reductions(rhs, set(t.indices), set(t.indices))

    def check_access(self, acc: Access) -> None:
        seen = set()
        for i in acc.indices:
            if i in seen:
                raise self.fail(f"{acc}: index {i!r} appears twice; diagonal accesses are "
                                "not supported", acc.col)
            seen.add(i)

    def check_reductions(self, e: Expr, bound: set[str], out: set[str]) -> None:
        if isinstance(e, Reduction):
            if len(set(e.indices)) != len(e.indices):
                raise self.fail(f"{e.op}({','.join(e.indices)}) names an index twice", e.col)
            used = self.subtrees.indices[id(e.body)]
            for i in e.indices:
                if i in out:
                    raise self.fail(f"{e.op}({i}) reduces {i!r}, which is an output index",
                                    e.col)
                if i in bound:
                    raise self.fail(f"{e.op}({i}) reduces {i!r} again inside a reduction "
                                    "over it", e.col)
                if i not in used:
                    raise self.fail(f"{e.op}({i}) reduces {i!r}, which no tensor in its body "
                                    "uses", e.col)
            self.check_reductions(e.body, bound | set(e.indices), out)
        elif isinstance(e, Neg):
            self.check_reductions(e.operand, bound, out)
        elif isinstance(e, Call):
            self.check_reductions(e.arg, bound, out)
        elif isinstance(e, BinOp):
            self.check_reductions(e.left, bound, out)
            self.check_reductions(e.right, bound, out)


def _col(e: Expr) -> int:
    return getattr(e, "col", 0)


def _ordered(idx: set[str], e: Expr) -> tuple[str, ...]:
    seen: list[str] = []
    for a in accesses(e):
        seen += [i for i in a.indices if i in idx and i not in seen]
    return tuple(seen)


def _place(e: Expr, pending: set[str], op: str) -> Expr:
    """Wrap the smallest subexpressions of ``e`` holding each pending index in ``op``."""
    if not pending:
        return e
    if isinstance(e, (Access, Call)):  # a call is opaque: never reduce inside it
        return Reduction(op, _ordered(pending, e), e, e.col, implicit=True)
    if isinstance(e, Neg):
        return Neg(_place(e.operand, pending, op), e.col)
    if isinstance(e, Reduction):
        return Reduction(e.op, e.indices, _place(e.body, pending, op), e.col, e.implicit)
    assert isinstance(e, BinOp), e
    if e.op == "*" and op == "sum":
        return _place_product(e, pending, op)
    left, right = free_indices(e.left) & pending, free_indices(e.right) & pending
    both = left & right
    inner = BinOp(e.op, _place(e.left, left - both, op), _place(e.right, right - both, op),
                  e.col)
    return Reduction(op, _ordered(both, e), inner, e.col, implicit=True) if both else inner


def product_factors(e: Expr) -> list[Expr]:
    """The factors of a chain of ``*`` (``e`` itself when it is no product)."""
    if isinstance(e, BinOp) and e.op == "*":
        return product_factors(e.left) + product_factors(e.right)
    return [e]


def _place_product(e: BinOp, pending: set[str], op: str) -> Expr:
    """Group pending indices that share factors; reduce each group over its factors only."""
    factors = product_factors(e)
    uses = {k: {n for n, f in enumerate(factors) if k in free_indices(f)} for k in pending}
    groups: list[tuple[set[str], set[int]]] = []
    for k in sorted(pending, key=lambda k: min(uses[k])):
        idx, fs = {k}, set(uses[k])
        for g in [g for g in groups if g[1] & fs]:
            groups.remove(g)
            idx |= g[0]
            fs |= g[1]
        groups.append((idx, fs))
    new: dict[int, Expr] = {}
    dropped: set[int] = set()
    for idx, fs in groups:
        first = min(fs)
        if len(fs) == 1:
            new[first] = _place(factors[first], idx, op)
            continue
        members = [factors[n] for n in sorted(fs)]
        body = members[0]
        for f in members[1:]:
            body = BinOp("*", body, f, _col(f))
        new[first] = Reduction(op, _ordered(idx, body), body, _col(members[0]), implicit=True)
        dropped |= fs - {first}
    kept = [new.get(n, f) for n, f in enumerate(factors) if n not in dropped]
    out = kept[0]
    for f in kept[1:]:
        out = BinOp("*", out, f, _col(f))
    return out


def _rename_apart(rhs: Expr, out: set[str]) -> tuple[Expr, dict[str, str]]:
    user = {i: i for i in out}
    count: dict[str, int] = {}

    def fresh(name: str) -> str:
        count[name] = count.get(name, 0) + 1
        new = name if count[name] == 1 and name not in out else f"{name}#{count[name]}"
        user[new] = name
        return new

    def go(e: Expr, env: dict[str, str]) -> Expr:
        if isinstance(e, Access):
            return Access(e.tensor, tuple(env.get(i, i) for i in e.indices), e.col)
        if isinstance(e, Const):
            return e
        if isinstance(e, Neg):
            return Neg(go(e.operand, env), e.col)
        if isinstance(e, Call):
            return Call(e.fn, go(e.arg, env), e.col)
        if isinstance(e, BinOp):
            return BinOp(e.op, go(e.left, env), go(e.right, env), e.col)
        assert isinstance(e, Reduction)
        names = tuple(fresh(i) for i in e.indices)
        inner = {**env, **dict(zip(e.indices, names, strict=True))}
        return Reduction(e.op, names, go(e.body, inner), e.col, e.implicit)

    return go(rhs, {}), user
