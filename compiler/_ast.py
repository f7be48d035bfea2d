"""The einsum expression tree: what the parser produces and the lowering consumes.

Nodes are frozen dataclasses carrying the 1-based source column they start at, so that
every later error can point back into the expression the user wrote.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Union

__all__ = ["Access", "Const", "Neg", "BinOp", "Reduction", "Call", "Expr", "Assignment",
           "FUNCTIONS", "children", "walk", "accesses", "free_indices", "index_occurrences",
           "tensor_ranks", "Subtrees"]

#: elementwise functions of the language: the ``unary`` primitive ops of the same name
FUNCTIONS = ("relu", "exp", "rsqrt")


@dataclass(frozen=True)
class Access:
    """``B(i,k)``: a tensor read at the given index variables (in mode order)."""

    tensor: str
    indices: tuple[str, ...]
    col: int = 0

    def __str__(self) -> str:
        return f"{self.tensor}({','.join(self.indices)})" if self.indices else self.tensor


@dataclass(frozen=True)
class Const:
    value: float
    col: int = 0

    def __str__(self) -> str:
        return repr(self.value) if self.value != int(self.value) else str(int(self.value))


@dataclass(frozen=True)
class Neg:
    operand: Expr
    col: int = 0

    def __str__(self) -> str:
        return f"-{_wrap(self.operand)}"


@dataclass(frozen=True)
class BinOp:
    """``left op right`` with ``op`` one of ``+ - * /``; ``col`` is the operator's."""

    op: str
    left: Expr
    right: Expr
    col: int = 0

    def __str__(self) -> str:
        return f"{_wrap(self.left)} {self.op} {_wrap(self.right)}"


@dataclass(frozen=True)
class Reduction:
    """``sum(k) body`` / ``max(k) body``; ``implicit`` marks sums the compiler placed."""

    op: str
    indices: tuple[str, ...]
    body: Expr
    col: int = 0
    implicit: bool = field(default=False, compare=False)

    def __str__(self) -> str:
        return f"{self.op}({','.join(self.indices)}) {_wrap(self.body)}"


@dataclass(frozen=True)
class Call:
    """``relu(e)``, ``exp(e)``, ``rsqrt(e)``: ``fn`` (one of :data:`FUNCTIONS`) applied to
    the stored entries of ``arg``; a reduction is never moved across it (it is nonlinear).
    """

    fn: str
    arg: Expr
    col: int = 0

    def __str__(self) -> str:
        return f"{self.fn}({self.arg})"


Expr = Union[Access, Const, Neg, BinOp, Reduction, Call]  # noqa: UP007 (runtime alias)


@dataclass(frozen=True)
class Assignment:
    """``target = rhs``; ``source`` is the text it was parsed from (for error carets)."""

    target: Access
    rhs: Expr
    source: str = ""

    def __str__(self) -> str:
        return f"{self.target} = {self.rhs}"


def _wrap(e: Expr) -> str:
    return f"({e})" if isinstance(e, (BinOp, Reduction)) else str(e)


def children(e: Expr) -> tuple[Expr, ...]:
    """The direct subexpressions of ``e``, left to right."""
    if isinstance(e, Neg):
        return (e.operand,)
    if isinstance(e, Call):
        return (e.arg,)
    if isinstance(e, BinOp):
        return (e.left, e.right)
    if isinstance(e, Reduction):
        return (e.body,)
    if isinstance(e, (Access, Const)):
        return ()
    raise TypeError(f"not an expression node: {e!r}")


def walk(e: Expr) -> Iterator[Expr]:
    """Every node of ``e``, parents before children, left to right (iteratively: a
    recursive generator costs the depth per node, and fused layers nest hundreds deep)."""
    stack = [e]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))


def accesses(e: Expr) -> list[Access]:
    return [n for n in walk(e) if isinstance(n, Access)]


class Subtrees:
    """The accesses under every node of one expression, from one walk: in walk order a
    subtree is a run of nodes, so its accesses are a run of :attr:`accesses` (a fused
    GPT layer asks for those of a thousand reductions; walking each again cost a tenth
    of its compile)."""

    def __init__(self, e: Expr) -> None:
        self.nodes = list(walk(e))
        self.accesses: list[Access] = []
        before = []  # per node: the accesses ahead of it in walk order
        for node in self.nodes:
            before.append(len(self.accesses))
            if isinstance(node, Access):
                self.accesses.append(node)
        before.append(len(self.accesses))
        size = [1] * len(self.nodes)  # nodes in each subtree: its children follow it
        used: list[frozenset[str]] = [frozenset()] * len(self.nodes)
        for n in range(len(self.nodes) - 1, -1, -1):
            node, k = self.nodes[n], n + 1
            if isinstance(node, Access):
                used[n] = frozenset(node.indices)
            for _ in children(node):
                size[n] += size[k]
                used[n] = used[n] | used[k]
                k += size[k]
        #: id(node) -> the slice of :attr:`accesses` under it
        self.span = {id(node): (before[n], before[n + size[n]])
                     for n, node in enumerate(self.nodes)}
        #: id(node) -> the indices its accesses use (:func:`index_occurrences`)
        self.indices = {id(node): used[n] for n, node in enumerate(self.nodes)}

    def under(self, e: Expr) -> list[Access]:
        """:func:`accesses` of ``e`` (a node of the expression, else walked)."""
        lo, hi = self.span.get(id(e), (0, -1))
        return self.accesses[lo:hi] if hi >= 0 else accesses(e)


def tensor_ranks(assign: Assignment) -> dict[str, int]:
    """Each tensor an assignment names (its output included) -> its number of indices:
    what a caller needs to read a tensor file the expression's way before compiling."""
    return {a.tensor: len(a.indices) for a in [assign.target, *accesses(assign.rhs)]}


def index_occurrences(e: Expr) -> set[str]:
    """Index variables used by any access in ``e`` (reduced ones included)."""
    return {i for a in accesses(e) for i in a.indices}


def free_indices(e: Expr) -> set[str]:
    """Index variables the value of ``e`` depends on (reduced ones excluded)."""
    if isinstance(e, Access):
        return set(e.indices)
    if isinstance(e, Const):
        return set()
    if isinstance(e, Neg):
        return free_indices(e.operand)
    if isinstance(e, Call):
        return free_indices(e.arg)
    if isinstance(e, BinOp):
        return free_indices(e.left) | free_indices(e.right)
    if isinstance(e, Reduction):
        return free_indices(e.body) - set(e.indices)
    raise TypeError(f"not an expression node: {e!r}")
