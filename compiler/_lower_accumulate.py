"""Accumulation: reductions and the epilogues that meet accumulator rows.

A reduction whose index is innermost in its loop nest is a ``reduce`` node; one with
one, two or three kept indices below it a ``spacc``/``spacc2``/``spacc3`` (chained when
several indices are reduced). An accumulator emits rows (crd and value streams) that
replace the kept indices' coordinates; operands deferred to an epilogue meet them in an
``intersect_val``/``union_val`` join (or a ``locate``). Produces the reduction's
:class:`Val`, whose ``spacc`` names the rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ._ast import BinOp, Expr, Reduction, walk
from ._errors import LoweringError
from ._lower_state import ACCUMULATORS, BCAST, Acc, Bundle, LowerState, Operand, Val
from ._operators import OPERATORS
from ._table import VAL_ROW

__all__ = ["Accumulation"]


class Accumulation(LowerState):
    """Reducers, sparse accumulators and epilogue joins."""

    def epilogue(self, e: BinOp) -> tuple[Val, Val] | None:
        """An accumulator's rows meeting operands deferred at one of its kept indices
        (:meth:`defer_epilogue`): the rows' crds join the operands' level there —
        ``intersect_val`` for ``*``/``/`` (a dense level is located instead),
        ``union_val`` for ``+``/``-`` — and both sides' values follow the join.
        Returns the two sides' values in ``e``'s order, or None."""
        if not self.deferred:  # the common case: no operand waits for an epilogue
            return None

        def deferred(x: Expr) -> set[str]:
            return {op.id for op in self.operands(x) if op.id in self.deferred}

        for acc_side, other in ((e.left, e.right), (e.right, e.left)):
            us = {self.deferred[oid] for oid in deferred(other)}
            keys = {self.joins[oid] for oid in deferred(other)}
            if self.deep:  # the join of the rows of a reduction on the accumulator's side
                key = next(iter(keys), ("", 0))
                if len(keys) == 1 and any(n is self.reds[key[1]] for n in walk(acc_side)):
                    break
            # the rows the deferred operands wait for come from the accumulator's side;
            # else the join is deeper in ``other`` and nothing here may be built yet (a
            # probe would leave dead nodes, e.g. a factor broadcast over the wrong loop)
            elif us and not deferred(acc_side) and any(
                    n is self.reds[r] for _, r in keys for n in walk(acc_side)):
                break
        else:
            return None
        u = next(iter(us))
        if self.deep and deferred(other) != {o for o, k in self.joins.items()
                                             if k == key and o in self.deferred}:
            return None  # a deep epilogue joins all of its operands at once
        # a deep epilogue broadcasts the rows over the loops after the join, once built
        later = self.hoisted.get(id(acc_side)) if self.deep and key in self.postponed \
            else None
        acc = self.compute(acc_side) if later else self.value(acc_side)
        if acc.spacc is None or len(us) != 1 or u not in acc.spacc.crds:
            return None  # the deferred operands stay unjoined: reported by run()
        group = [op for op in self.operands(other) if op.id in self.deferred]  # in order
        rows = Bundle(acc.spacc.crds[u], {}, False)
        bundle = self.join(other, u)
        if bundle is BCAST:  # a deep epilogue's operands store ``u`` only under sums
            raise self.unjoined(u)
        col = self.first(other)
        crd, val = rows.crd, acc.port
        oper = OPERATORS[e.op]
        if self.locates(oper.join, bundle, rows):  # the rows address a dense level
            aligned = self.locate(bundle, rows, u).refs
            for oid, ref in aligned.items():
                self.op_by_id(oid).ref = ref
        else:
            bundle = self.scan(bundle, u)
            aligned = bundle.refs
            union = not oper.multiplicative
            if union and not bundle.full:
                self.check_vanishes(other, acc_side, e, u)
            prim = f"{oper.join}_val"
            if union and u in self.par:  # the lane's rows meet only the lane's share
                self.cuts.setdefault(u, []).append((bundle.crd, list(bundle.refs.values())))
            for m, (oid, ref) in enumerate(bundle.refs.items()):
                j = self.node(f"{prim}_{self.user(u)}", prim, u, col)
                for src, port in ((rows.crd, "crd_a"), (acc.port, "val_a"),
                                  (bundle.crd, "crd_b"), (ref, "ref_b")):
                    self.b.edge(src, f"{j}.{port}")
                op = self.op_by_id(oid)
                op.ref = f"{j}.ref_b"
                op.maybe_empty = op.maybe_empty or union
                if m == 0:
                    crd, val = f"{j}.crd", f"{j}.val_a"
        for op in group:
            del self.deferred[op.id]
        assert acc.spacc is not None
        joined = Val(val, spacc=Acc({**acc.spacc.crds, u: crd}, acc.spacc.reduction),
                     intra=acc.intra)
        if self.deep and (key in self.postponed or
                          not {op.id for op in group} <= set(aligned)):
            joined = self.after_join(key, crd, group, set(aligned), other, joined,
                                     later or [])
        # hoisted out of the rows' loops, the other side repeats over the rows' crds
        other_val = self.value(other, joined.spacc.crds)
        return (joined, other_val) if acc_side is e.left else (other_val, joined)

    def after_join(self, key: tuple[str, int], crd: str, group: list[Operand],
                   aligned: set[str], other: Expr, joined: Val, later: Sequence[str]
                   ) -> Val:
        """A deep epilogue: the deferred operands that do not store ``u`` are repeated
        over the join's crds, then the operands' later loops run (postponed steps), and
        the joined rows' value is broadcast over those of them it is hoisted out of."""
        u = key[0]
        for op in group:
            if op.id not in aligned:
                self.repeat(op, u, crd)
        self.crd[u], self.full[u] = crd, False
        self.step_refs[u] = {op.id: op.ref for op in group}
        for w, ops in self.postponed.pop(key, []):
            inner = w in self.owner and any(n is self.owner[w] for n in walk(other))
            scope = self.owner[w].body if inner else other
            parts = [op for op in self.operands(scope) if w in op.context]
            if {op.id for op in parts} != {op.id for op in ops}:
                raise self.fail(
                    f"dataflow order {self.order_text}: after the epilogue join over "
                    f"{self.user(u)!r}, the loop over {self.user(w)!r} would mix the joined "
                    "operands with others; move the reduced indices or split the "
                    "expression", other)
            self.iterate(w, scope, parts)
        return self.broadcast(joined, later, self.first(other)) if later else joined

    def rows_of(self, e: BinOp, a: Val, b: Val) -> Acc | None:
        """The accumulator rows a product streams on: one side's, when the other side was
        broadcast over all of their crds (anything else cannot meet them)."""
        for side, other, val in ((a, e.right, b), (b, e.left, a)):
            if side.spacc is None:
                continue
            over = self.hoisted.get(id(other), ())
            if val.spacc is not None or not OPERATORS[e.op].multiplicative or \
                    not set(side.spacc.crds) <= set(over):
                raise self.spacc_misuse(side, other)
            return side.spacc
        return None

    def spacc_misuse(self, val: Val, other: Expr) -> LoweringError:
        assert val.spacc is not None
        red = val.spacc.reduction
        return self.fail(
            f"with dataflow order {self.order_text} the {red.op} over "
            f"{','.join(self.user(x) for x in red.indices)!r} is not innermost, so it runs in "
            f"a sparse accumulator; its rows (crd, value streams) can be scaled, passed "
            f"through functions, multiplied by factors that do not depend on the rows' "
            f"indices ({', '.join(self.user(v) for v in val.spacc.crds)}), summed by an outer "
            f"accumulator, joined with operands outside the reduction (an epilogue) or "
            f"written out, but here they meet {self.show(other)}, which is neither. Put "
            "the reduced index last in the order or split the expression", red)

    def reduce(self, e: Reduction) -> Val:
        body = self.value(e.body)
        assert body.port is not None, "a reduction body reads a tensor"
        nest = list(self.context[id(e.body)])
        left = set(e.indices)
        port, intra = body.port, body.intra
        if body.spacc is not None and nest[-1] in left:
            raise self.spacc_misuse(body, e)  # a reducer cannot follow an accumulator
        while nest and nest[-1] in left:
            v = nest.pop()
            left.discard(v)
            intra, spec = self.blocks.fold(intra, v)
            red = self.node(f"red_{self.user(v)}", "reduce", VAL_ROW, self.first(e), op=e.op,
                            **spec)
            self.b.edge(port, f"{red}.val_in")
            self.b.edge(self.outer_ref(nest, self.first(e)), f"{red}.outer")
            port = f"{red}.val"
            self.reductions.append(f"{e.op}({self.user(v)}): reduce")
        if not left:
            return Val(port, intra=intra)
        return self.accumulate_chain(e, Val(port, intra=intra), nest, left, body.spacc)

    def accumulate_chain(self, e: Reduction, val: Val, nest: list[str],
                         left: set[str], rows: Acc | None) -> Val:
        """Reduced indices above kept ones: one accumulator per reduced index, innermost
        first, each fed the crds its inner neighbour emits (higher-order accumulation
        with existing primitives: ``sum(j,k)`` over ``i,j,k,l`` is a ``spacc`` over
        ``k`` feeding a ``spacc`` over ``j``)."""
        crds = {v: self.crd_of(v) for v in nest if v not in left}
        crds.update(rows.crds if rows else {})  # an inner accumulator's rows, streamed on
        kept: list[str] = []
        acc: Val | None = None
        for v in reversed(nest):
            if v not in left:
                kept.insert(0, v)
                continue
            if len(kept) not in ACCUMULATORS or e.op != "sum":
                raise self.misplaced(e, v, len(kept))
            if v in val.intra:
                raise self.fail(
                    f"block: the sum over {self.user(v)!r} runs in a sparse accumulator, "
                    f"which adds whole blocks, but its summand still carries "
                    f"{self.user(v)!r} inside its blocks (only a product directly under "
                    f"the sum contracts it); use an order with {self.user(v)!r} innermost "
                    f"or do not block {self.user(v)!r}", e)
            acc = self.accumulate(e, val, v, kept, crds)
            assert acc.port is not None and acc.spacc is not None
            val = acc
            crds.update(acc.spacc.crds)
            left.discard(v)
            if not left:
                break
        assert acc is not None and not left, "every reduced index is in the nest"
        return acc

    def misplaced(self, e: Reduction, r: str, kept: int) -> LoweringError:
        """The reduction cannot be a reducer nor an accumulator: say why."""
        names = ",".join(self.user(x) for x in e.indices)
        nest_text = ",".join(self.user(x) for x in self.context[id(e.body)])
        if kept in ACCUMULATORS:
            why = "a max reduction must be innermost: the sparse accumulators only sum"
        else:
            why = (f"the sparse accumulators (spacc, spacc2, spacc3) handle at most "
                   f"three kept levels below the reduced index; {self.user(r)!r} is above "
                   f"{kept}, which would need a higher-order accumulator")
        return self.fail(
            f"dataflow order {self.order_text} puts the {e.op} over {names!r} at a "
            f"position it cannot be lowered from (loop nest {nest_text}); every reduced "
            f"index must be innermost (reduce) or have at most three kept indices below "
            f"it (spacc: one, spacc2: two, spacc3: three; several reduced indices chain "
            f"accumulators); "
            f"{why}. Move the reduced indices towards the end of the order", e)

    def accumulate(self, e: Reduction, val: Val, r: str, kept: list[str],
                   crds: Mapping[str, str]) -> Val:
        """A ``spacc`` (one kept level), ``spacc2`` (two) or ``spacc3`` (three) summing
        over ``r``.

        ``crds`` gives each kept index's current coordinate stream (joined, or emitted by
        an inner accumulator). Its crd outputs replace the kept indices' coordinates for
        what follows: they carry only the coordinates some reduced fiber had.
        """
        prim = ACCUMULATORS[len(kept)]
        acc = self.node(f"{prim}_{self.user(r)}", prim, VAL_ROW, self.first(e))
        n = len(kept)
        ins = ("crd_in",) if n == 1 else tuple(f"crd{m}_in" for m in reversed(range(n)))
        outs = ("crd",) if n == 1 else tuple(f"crd{m}" for m in reversed(range(n)))
        for v, p in zip(kept, ins, strict=True):
            self.b.edge(crds[v], f"{acc}.{p}")
        self.b.edge(val.port, f"{acc}.val_in")
        self.accumulator = max(self.accumulator, len(kept))
        self.reductions.append(f"sum({self.user(r)}): {prim}")
        out = {v: f"{acc}.{p}" for v, p in zip(kept, outs, strict=True)}
        return Val(f"{acc}.val", spacc=Acc(out, e), intra=val.intra)

    def outer_ref(self, nest: list[str], col: str) -> str:
        """A reference stream with one token per fiber of the innermost index."""
        if not nest:
            if self._root is None:
                self._root = self.node("root", "root", VAL_ROW, col)
            return f"{self._root}.ref"
        self.crd_of(nest[-1])
        return next(iter(self.step_refs[nest[-1]].values()))
