"""Cross-expression fusion: inline a region's private producers into their consumers.

Input: an :class:`ir.Program` and the statement targets of one fusion region. A tensor
the region defines and only the region reads (and that is no program output) is
*internal*: every access to it is replaced by its producer's right-hand side, with the
producer's output indices renamed to the access's indices and its reduction indices
renamed apart. Every other tensor the region defines is *exported*: it gets one fused
expression of its own, so an internal producer used by two exported tensors is computed
twice (recomputation is real and its cycles are counted). The fused expressions print
back as text (:func:`format_assignment`) so users can read them and write dataflow
orders against their index names.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields, is_dataclass, replace
from functools import cache

from ir import Program

from ._ast import Access, Assignment, BinOp, Call, Const, Expr, Neg, Reduction, accesses
from ._errors import CompileError
from ._normalize import normalize
from ._operators import OPERATORS
from ._parse import parse

__all__ = ["FusedExpression", "FusionError", "fuse_region", "format_assignment",
           "region_exports"]


class FusionError(CompileError):
    """Statements that cannot be fused as asked (rank mismatch, unknown statement...)."""


@dataclass(frozen=True)
class FusedExpression:
    """One exported tensor of a region, with every internal producer inlined."""

    target: str
    assignment: Assignment  # parsed from :attr:`text`, so error carets point into it
    statements: tuple[str, ...]  # the statements it fuses, in program order
    inlined: tuple[str, ...]  # internal producers substituted (repeats = recomputation)

    @property
    def text(self) -> str:
        return self.assignment.source

    @property
    def reads(self) -> list[str]:
        """Tensors read from memory, first use first."""
        out: list[str] = []
        for a in accesses(self.assignment.rhs):
            if a.tensor not in out:
                out.append(a.tensor)
        return out

    def index_names(self) -> list[str]:
        """Every index variable: output indices first, then by first appearance."""
        names = list(self.assignment.target.indices)
        for e in _walk(self.assignment.rhs):
            new = e.indices if isinstance(e, (Access, Reduction)) else ()
            names += [i for i in new if i not in names]
        return names


def format_assignment(assign: Assignment) -> str:
    """The assignment as text that :func:`compiler.parse` reads back to the same tree,
    with only the parentheses the grammar needs (so fused expressions stay readable).

    A reduction's body is the whole product chain after it, so a reduction is
    parenthesised unless it ends its product chain. Should the minimal text ever read
    back differently, the fully parenthesised form is returned instead.
    """
    return _reparsed(assign).source


def _reparsed(assign: Assignment) -> Assignment:
    """:func:`format_assignment`'s text parsed back (the check parses it anyway, so the
    fusion pass reuses the tree instead of parsing a fused layer's text twice)."""
    text = f"{assign.target} = {_fmt(assign.rhs, 0, True)}"
    try:
        back = parse(text)
        if _same_tree(back.rhs, assign.rhs):
            return back
    except CompileError:
        pass
    return parse(str(assign))


#: binding strength of each node class; a child weaker than its context is parenthesised
_ADD, _MUL, _FACTOR, _ATOM = 1, 2, 3, 4


def _fmt(e: Expr, need: int, tail: bool) -> str:
    """``e`` in a context that needs strength ``need``; ``tail`` is false when a ``*`` or
    ``/`` follows (which an unparenthesised reduction would swallow)."""
    if isinstance(e, BinOp):
        mul = OPERATORS[e.op].multiplicative
        strength = _MUL if mul else _ADD
        if strength < need:
            return f"({_fmt(e, 0, True)})"
        left = _fmt(e.left, strength, not mul)
        right = _fmt(e.right, _FACTOR if mul else _MUL, tail if mul else True)
        return f"{left} {e.op} {right}"
    if isinstance(e, Reduction):
        if need > _FACTOR or not tail:
            return f"({_fmt(e, 0, True)})"
        return f"{e.op}({','.join(e.indices)}) {_fmt(e.body, _MUL, True)}"
    if isinstance(e, Neg):
        return f"-{_fmt(e.operand, _FACTOR, tail)}" if need <= _FACTOR else \
            f"({_fmt(e, 0, True)})"
    if isinstance(e, Call):
        return f"{e.fn}({_fmt(e.arg, 0, True)})"
    if isinstance(e, Const) and e.value < 0 and need > _FACTOR:
        return f"({e})"
    if isinstance(e, (Access, Const)):
        return str(e)
    raise TypeError(f"cannot print expression node {e!r}: unknown node class")


def _same_tree(a: Expr, b: Expr) -> bool:
    """Whether two trees are equal but for their source columns (parsed from two texts);
    iterative and without copies: a fused layer has thousands of nodes."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        kids = _child_fields(type(x))
        same = _plain_fields(type(x))
        if tuple(getattr(x, n) for n in same) != tuple(getattr(y, n) for n in same):
            return False
        stack.extend((getattr(x, n), getattr(y, n)) for n in kids)
    return True


def region_exports(program: Program, targets: Sequence[str]) -> list[str]:
    """The region's tensors that later regions or the program's caller read (or that no
    one reads), in program order."""
    inside = set(targets)
    out = []
    for st in program.statements:
        if st.target not in inside:
            continue
        users = program.consumers(st.target)
        if st.target in program.outputs or not users \
                or any(u.target not in inside for u in users):
            out.append(st.target)
    return out


def fuse_region(program: Program, targets: Sequence[str],
                materialise: Sequence[str] = ()) -> list[FusedExpression]:
    """One :class:`FusedExpression` per exported tensor of the region, in program order.
    ``materialise``: internal tensors computed once into an on-chip buffer (a fused
    expression of their own, read by their consumers) instead of inlined."""
    for t in targets:
        program.statement(t)  # raises for an unknown target
    inside = [st.target for st in program.statements if st.target in set(targets)]
    exported = region_exports(program, inside)
    for t in materialise:
        _check_materialised(t, inside, exported)
    exported = [t for t in inside if t in exported or t in materialise]
    internal = {t: _explicit(program, t) for t in inside if t not in exported}
    out = []
    for t in exported:
        consumer = _explicit(program, t)
        inliner = _Inliner(internal, _names(consumer))
        rhs = inliner.expr(consumer.rhs)
        fused = _reparsed(Assignment(consumer.target, rhs))
        used = [s for s in inside if s == t or s in inliner.inlined]
        out.append(FusedExpression(t, fused, tuple(used), tuple(inliner.inlined)))
    return out


def _check_materialised(tensor: str, inside: Sequence[str],
                        exported: Sequence[str]) -> None:
    """A materialised tensor is one the region defines and keeps to itself."""
    if tensor not in inside:
        raise FusionError(f"materialise {tensor!r}: the region does not define it")
    if tensor in exported:
        raise FusionError(f"materialise {tensor!r}: later regions or the caller read it, so "
                          "it is written to memory already; materialise only a tensor the "
                          "region keeps to itself")


def _explicit(program: Program, target: str) -> Assignment:
    """The statement with every reduction explicit and named with parseable names."""
    st = program.statement(target)
    try:
        assign = parse(st.text)
    except CompileError as exc:
        raise FusionError(f"statement {st.where()} does not parse: {exc}") from None
    if assign.target.tensor != target:
        raise FusionError(f"statement for {target!r} assigns {assign.target.tensor!r}: "
                          f"{st.where()}")
    norm = normalize(assign)
    used = set(norm.user.values())
    rename = {}
    for internal in norm.indices:
        if "#" in internal:
            rename[internal] = _fresh(norm.user[internal], used)
    rhs = _substitute(norm.assignment.rhs, rename)
    return Assignment(norm.assignment.target, rhs, st.text)


class _Inliner:
    """Replaces accesses to internal tensors, renaming reductions apart as it goes."""

    def __init__(self, internal: dict[str, Assignment], used: set[str]) -> None:
        self.internal, self.used = internal, used
        self.inlined: list[str] = []
        self.suffixes: dict[str, int] = {}  # for _fresh: a fused layer renames k 400 times

    def expr(self, e: Expr) -> Expr:
        if isinstance(e, Access) and e.tensor in self.internal:
            return self.expr(self.instantiate(self.internal[e.tensor], e))
        return _map_children(e, self.expr)

    def instantiate(self, producer: Assignment, use: Access) -> Expr:
        outs = producer.target.indices
        if len(outs) != len(use.indices):
            raise FusionError(f"{use} reads {use.tensor!r} with {len(use.indices)} indices, "
                              f"but it is defined as {producer.target} "
                              f"({len(outs)} indices): {producer.source}")
        env = dict(zip(outs, use.indices, strict=True))
        reduced = [i for e in _walk(producer.rhs) if isinstance(e, Reduction)
                   for i in e.indices]
        for i in reduced:
            env[i] = _fresh(i, self.used, self.suffixes)
        self.inlined.append(use.tensor)
        return _substitute(producer.rhs, env)


def _fresh(base: str, used: set[str], suffixes: dict[str, int] | None = None) -> str:
    """``base`` if free, else ``base2``, ``base3``…; the name is then taken. ``suffixes``
    (base -> its last suffix taken) lets repeated calls on one growing ``used`` start
    after the names they took."""
    n = suffixes.get(base, 1) if suffixes is not None else 1
    name = base if n == 1 else f"{base}{n}"
    while name in used:
        n += 1
        name = f"{base}{n}"
    used.add(name)
    if suffixes is not None:
        suffixes[base] = n
    return name


def _names(assign: Assignment) -> set[str]:
    out = set(assign.target.indices)
    for e in _walk(assign.rhs):
        if isinstance(e, (Access, Reduction)):
            out.update(e.indices)
    return out


def _substitute(e: Expr, env: dict[str, str]) -> Expr:
    """Rename index variables everywhere (accesses and reduction binders)."""
    if isinstance(e, (Access, Reduction)):
        e = replace(e, indices=tuple(env.get(i, i) for i in e.indices))
    return _map_children(e, lambda c: _substitute(c, env))


@cache
def _child_fields(cls: type) -> tuple[str, ...]:
    """The fields of an expression node class that hold subexpressions (generic, so new
    node types need no case; cached per class: the fusion pass maps thousands of nodes)."""
    if not is_dataclass(cls):
        raise TypeError(f"not an expression node class: {cls!r}")
    return tuple(f.name for f in fields(cls) if f.type == "Expr")


@cache
def _plain_fields(cls: type) -> tuple[str, ...]:
    """The fields of an expression node class its equality compares, other than its
    children and its column."""
    return tuple(f.name for f in fields(cls)
                 if f.compare and f.type != "Expr" and f.name != "col")


def _map_children(e: Expr, fn) -> Expr:
    names = _child_fields(type(e))
    return replace(e, **{n: fn(getattr(e, n)) for n in names}) if names else e


def _walk(e: Expr) -> Iterator[Expr]:
    """Every node, parents first (iterative: fused expressions nest hundreds deep)."""
    stack = [e]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(getattr(node, n) for n in reversed(_child_fields(type(node))))
