"""Factored iteration: the loops each subexpression runs in, for one dataflow order.

A single global loop nest computes every subexpression at every point of its context
(the output's indices plus those of the reductions around it), so a row reduction
inside a softmax is recomputed at every output coordinate. FuseFlow factors the
iteration instead: a subexpression that holds a reduction and does not depend on the
context indices ordered after all of its own loops is computed once, in a loop nest of
its own, and its value is broadcast over those later indices (``broadcast`` nodes).
The lowering (``_lower.py``) builds graphs from :func:`factor`; the order searches rank
candidate orders by :meth:`Factorer.cost` of the same plan, so both read one rule.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from ._ast import Access, BinOp, Expr, Reduction, Subtrees, children
from ._operators import OPERATORS

__all__ = ["Factorer", "Factoring", "factor", "reduction_groups", "epilogue_reduction",
           "accesses_under"]


@dataclass
class Factoring:
    """The iteration plan of an expression for one order."""

    #: id(node) -> the indices the node is computed at, in dataflow order
    context: dict[int, tuple[str, ...]]
    #: id(node) -> the later context indices its value is broadcast over
    hoisted: dict[int, list[str]]


class Factorer:
    """Plans the factored iteration of one expression for any order (cheap per order)."""

    def __init__(self, rhs: Expr, out: Sequence[str], deep: bool = False) -> None:
        self.rhs, self.out = rhs, tuple(out)
        #: whether epilogue joins may go on iterating after the join
        #: (:func:`epilogue_reduction`'s ``deep``)
        self.deep = deep
        #: id(node) -> the indices its accesses use, for nodes that hold a reduction
        self.used: dict[int, frozenset[str]] = {}
        self.accesses: set[int] = set()
        #: id(node) -> the indices its accesses use, for nodes that read a tensor and
        #: hold no reduction
        self.plain: dict[int, frozenset[str]] = {}
        #: expression nodes: planning one order visits each once
        self.size = 0
        self._scan(rhs)
        #: the accesses under each node
        self.subtrees = Subtrees(rhs)
        self._access_nodes = self.subtrees.accesses
        #: reduced index -> its reduction
        self.owner = {v: r for r in _reductions(rhs) for v in r.indices}
        self.inside = accesses_under(rhs, self.subtrees)

    def _scan(self, e: Expr) -> tuple[frozenset[str], bool]:
        """The indices ``e``'s accesses use and whether it holds a reduction (one pass)."""
        self.size += 1
        if isinstance(e, Access):
            self.accesses.add(id(e))
            self.plain[id(e)] = frozenset(e.indices)
            return self.plain[id(e)], False
        used, reduces = frozenset(), isinstance(e, Reduction)
        for child in children(e):
            u, r = self._scan(child)
            used, reduces = used | u, reduces or r
        if reduces:
            self.used[id(e)] = used
        elif any(id(c) in self.plain for c in children(e)):  # it reads a tensor
            self.plain[id(e)] = used
        return used, reduces

    def _streamed(self, e: Expr, ctx: frozenset[str], pos: Mapping[str, int],
                  memo: dict[tuple[int, frozenset[str]], frozenset[str]]
                  ) -> frozenset[str]:
        """The context indices ``e``'s value reaches only through a sparse accumulator's
        crd streams: kept indices after one of an accumulated reduction's own indices.
        Products and functions pass an accumulator's rows on; a union cannot, unless
        deep epilogues may join the rows with its other side. ``memo``: the answers of
        this order's pass (each product asks again for every product below it)."""
        if id(e) not in self.used or isinstance(e, BinOp) and \
                not OPERATORS[e.op].multiplicative and not self.deep:
            return frozenset()
        found = memo.get((id(e), ctx))
        if found is not None:
            return found
        if not isinstance(e, Reduction):
            found = frozenset().union(*(self._streamed(c, ctx, pos, memo)
                                        for c in children(e)))
        else:
            used = self.used[id(e)]
            first, last = min(pos[r] for r in e.indices), max(map(pos.__getitem__, used))
            found = frozenset(u for u in ctx if u not in e.indices and pos[u] > first
                              and (u in used or pos[u] < last))
        memo[(id(e), ctx)] = found
        return found

    def _beside(self, e: Expr, ctx: frozenset[str], pos: Mapping[str, int],
                memo: dict[tuple[int, frozenset[str]], frozenset[str]]
                ) -> dict[int, frozenset[str]]:
        """For a product whose one factor is an accumulator's rows: the other factor is
        computed outside the rows' loops and broadcast over the rows' crds (the inner
        row of a nested matmul meets ``A(i,k)`` once per row, not once per entry)."""
        if not isinstance(e, BinOp) or not OPERATORS[e.op].multiplicative:
            return {}
        found = {}
        for side, other in ((e.left, e.right), (e.right, e.left)):
            rows = self._streamed(side, ctx, pos, memo)
            uses = self.plain.get(id(other))
            if rows and uses is not None and not uses & rows:
                found[id(other)] = rows
        return found

    def _contexts(self, order: Sequence[str]
                  ) -> Iterator[tuple[Expr, frozenset[str], list[str]]]:
        """Every node with the loops it is computed in and the later loops it is hoisted
        out of (those after all of its own loops that it does not use)."""
        pos = {v: n for n, v in enumerate(order)}
        memo: dict[tuple[int, frozenset[str]], frozenset[str]] = {}  # for _streamed
        stack: list[tuple[Expr, frozenset[str], frozenset[str]]] = [
            (self.rhs, frozenset(self.out), frozenset())]
        while stack:
            e, ctx, rows = stack.pop()
            used = self.used.get(id(e))
            later: list[str] = []
            if used:
                last = max(map(pos.__getitem__, used))
                later = [u for u in ctx if u not in used and pos[u] > last]
            if rows:
                later = [*later, *(u for u in rows & ctx if u not in later)]
            if later:
                later.sort(key=pos.__getitem__)
                ctx = ctx.difference(later)
            yield e, ctx, later
            if isinstance(e, Reduction):  # its body runs in its loops too
                ctx = ctx.union(e.indices)
            beside = self._beside(e, ctx, pos, memo) if id(e) in self.used else {}
            stack.extend((child, ctx, beside.get(id(child), frozenset()))
                         for child in reversed(children(e)))

    def plan(self, order: Sequence[str]) -> Factoring:
        """Each node's loop context (in dataflow order) and what it is hoisted over."""
        pos = {v: n for n, v in enumerate(order)}
        plan = Factoring({}, {})
        ordered: dict[frozenset[str], tuple[str, ...]] = {}
        for e, ctx, later in self._contexts(order):
            if ctx not in ordered:
                ordered[ctx] = tuple(sorted(ctx, key=pos.__getitem__))
            plan.context[id(e)] = ordered[ctx]
            if later:
                plan.hoisted[id(e)] = later
        return plan

    def nests(self, order: Sequence[str]) -> bool:
        """Whether every loop's operands sit at one depth (the same loops above them).

        The lowering rejects an order that fails this ("cannot share the loop"); the
        order search uses it to skip such orders before building any graph.
        """
        plan = self.plan(order)
        return self._nests({a: plan.context[id(a)] for a in self._access_nodes}, order)

    def _nests(self, ctx_of: Mapping[Access, tuple[str, ...]], order: Sequence[str]) -> bool:
        """Every loop's accesses share the loops above it, or split only as an epilogue
        join (:func:`epilogue_reduction`)."""
        above: dict[str, tuple[str, ...]] = {}
        split: set[str] = set()
        for ctx in ctx_of.values():
            for n, v in enumerate(ctx):
                if above.setdefault(v, ctx[:n]) != ctx[:n]:
                    split.add(v)
        if not split:
            return True
        pos = {v: n for n, v in enumerate(order)}
        return all(epilogue_reduction(v, [(a, c) for a, c in ctx_of.items() if v in c], pos,
                                      self.owner, self.inside, self.deep) is not None
                   for v in split)

    def cost(self, order: Sequence[str], sizes: Mapping[str, int]) -> float:
        """Points computed over all nodes of the plan, every level taken dense.

        An upper bound that ignores sparsity; it ranks orders by what factoring saves
        (recomputation multiplies dimensions, so it dominates), not a cycle estimate.
        Plain operands are never hoisted: repeating their references costs no more
        than broadcasting their values.
        """
        points: dict[frozenset[str], int] = {}
        total = 0
        for _, ctx, _ in self._contexts(order):
            if ctx not in points:
                points[ctx] = math.prod(sizes.get(v, 1) for v in ctx)
            total += points[ctx]
        return float(total)


    def rank(self, order: Sequence[str], sizes: Mapping[str, int]) -> tuple[bool, float]:
        """``(not nests(order), cost(order, sizes))`` in one pass over the plan: the
        order searches sort candidates by it."""
        pos = {v: n for n, v in enumerate(order)}
        points: dict[frozenset[str], int] = {}
        ordered: dict[frozenset[str], tuple[str, ...]] = {}
        ctx_of: dict[Access, tuple[str, ...]] = {}
        total = 0
        for e, ctx, _ in self._contexts(order):
            if ctx not in points:
                points[ctx] = math.prod(sizes.get(v, 1) for v in ctx)
            total += points[ctx]
            if id(e) in self.accesses:
                if ctx not in ordered:
                    ordered[ctx] = tuple(sorted(ctx, key=pos.__getitem__))
                ctx_of[e] = ordered[ctx]  # type: ignore[index]
        return not self._nests(ctx_of, order), float(total)


def epilogue_reduction(v: str, parts: Sequence[tuple[Access, tuple[str, ...]]],
                       pos: Mapping[str, int], owner: Mapping[str, Reduction],
                       inside: Mapping[int, frozenset[int]], deep: bool = False
                       ) -> Reduction | None:
    """The accumulated reduction whose rows meet the other operands of loop ``v`` in an
    epilogue join, or None (``docs/compiler.md``, rule 5). ``parts``: the accesses whose
    loop nest contains ``v``, each with that nest in dataflow order.

    The loop is split in two depths: the deeper accesses are all inside one reduction
    whose own indices make the difference, some of them store ``v``; the shallower ones
    are outside it, store ``v`` and have it as their innermost loop, and are not inside
    another reduction accumulated above ``v`` (two accumulators' rows never join). The lowering then
    iterates ``v`` inside the reduction and joins the shallower operands with the rows
    its accumulator drains; the order search counts such a loop as nesting. ``inside``:
    id(reduction) -> the ids of the accesses under it (:func:`accesses_under`).

    ``deep`` also admits a *deep epilogue*: shallower operands that go on iterating
    loops after ``v`` (``X(i,k)·Ws(j,k)`` beside the rows of ``(A·X)·Wn`` over
    ``…,j,k``) or that do not store ``v`` (repeated over the join), as long as one of
    them stores ``v``; their later loops run after the join. The order searches admit
    it only when no other order lowers, so that existing graphs keep their orders."""
    def prefix(ctx: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(x for x in ctx if pos[x] < pos[v])

    prefixes = {prefix(ctx) for _, ctx in parts}
    if len(prefixes) != 2:
        return None
    deep_prefix, shallow = sorted(prefixes, key=len, reverse=True)
    extra = [x for x in deep_prefix if x not in shallow]
    if not extra or any(x not in owner for x in extra):
        return None
    red = owner[extra[0]]
    under = inside[id(red)]
    inner = [a for a, ctx in parts if prefix(ctx) == deep_prefix]
    outer = [(a, ctx) for a, ctx in parts if prefix(ctx) == shallow]
    if any(id(a) not in under for a in inner) or not any(v in a.indices for a in inner) \
            or any(id(a) in under for a, _ in outer):
        return None
    if any(x in owner and not under <= inside[id(owner[x])] for x in shallow):
        return None  # the shallower operands are an accumulator's rows of their own
    if deep:
        return red if any(v in a.indices for a, _ in outer) else None
    if any(ctx[-1] != v or v not in a.indices for a, ctx in outer):
        return None
    return red


def accesses_under(rhs: Expr, subtrees: Subtrees | None = None
                   ) -> dict[int, frozenset[int]]:
    """id(reduction) -> the ids of the accesses under it, for every reduction of ``rhs``
    (``subtrees``: ``rhs``'s, if made already)."""
    subtrees = subtrees or Subtrees(rhs)
    return {id(e): frozenset(map(id, subtrees.under(e))) for e in subtrees.nodes
            if isinstance(e, Reduction)}


def factor(rhs: Expr, out: Sequence[str], order: Sequence[str], deep: bool = False
           ) -> Factoring:
    """The factored-iteration plan of ``rhs`` for one ``order`` (``deep``: with deep
    epilogue joins, :class:`Factorer`)."""
    return Factorer(rhs, out, deep).plan(order)


@dataclass(frozen=True)
class ReductionGroup:
    """A reduction's own indices, the indices its value depends on, and its depth."""

    indices: frozenset[str]
    free: frozenset[str]
    depth: int


def _reductions(e: Expr) -> Iterator[Reduction]:
    if isinstance(e, Reduction):
        yield e
    for child in children(e):
        yield from _reductions(child)


def reduction_groups(rhs: Expr) -> list[ReductionGroup]:
    """Every reduction of ``rhs``, parents before children."""
    groups: list[ReductionGroup | None] = []

    def visit(e: Expr, depth: int) -> frozenset[str]:
        """The free indices of ``e`` (bottom-up: a fused layer nests a thousand
        reductions, and asking each for its own would walk its body again)."""
        if isinstance(e, Access):
            return frozenset(e.indices)
        slot = len(groups)
        if isinstance(e, Reduction):
            groups.append(None)  # parents before children: filled in below
            depth += 1
        free = frozenset().union(*(visit(child, depth) for child in children(e)))
        if isinstance(e, Reduction):
            free = free.difference(e.indices)
            groups[slot] = ReductionGroup(frozenset(e.indices), free, depth - 1)
        return free

    visit(rhs, 0)
    return [g for g in groups if g is not None]

