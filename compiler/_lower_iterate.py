"""Iteration: one step per index of the dataflow order.

Takes the operands whose context holds the index, joins their coordinates (through
``_lower_join``) and aligns every operand with the join: those that store the index
follow it, the others are repeated over it (``repsig`` + ``repeat``). Operands outside an
accumulated reduction that share one of its kept indices are deferred to an epilogue
join (``_lower_accumulate``); a deep epilogue postpones their later loops until after it.
Leaves, per index, the joined crd port (``crd``), whether it is full, and each
operand's aligned reference (``step_refs``).
"""

from __future__ import annotations

from itertools import pairwise

from ._ast import Expr, Reduction
from ._errors import LoweringError
from ._factor import epilogue_reduction
from ._lower_state import BCAST, LowerState, Operand

__all__ = ["Iteration"]


class Iteration(LowerState):
    """The per-index steps of the loop nest, and deferral to epilogues."""

    def step(self, v: str) -> None:
        scope = self.owner[v].body if v in self.owner else self.rhs
        parts = [op for op in self.operands(scope) if v in op.context]
        if self.deep:
            self.step_deep(v, scope, parts)
            return
        red = self.defer_epilogue(v, parts)
        if red is not None:  # the accumulated rows meet the deferred operands later
            scope = red
            parts = [op for op in parts if op.id not in self.deferred]
        self.iterate(v, scope, parts)

    def step_deep(self, v: str, scope: Expr, parts: list[Operand]) -> None:
        """A step where epilogues may nest: the operands of loop ``v`` sit at several
        depths, each shallower group deferred to a join with the rows of the reduction
        that separates it from the next deeper one (innermost first); the deepest group
        is iterated now, or after its own join if an earlier epilogue deferred it."""
        late = {op.id for op in parts if op.id in self.deferred}
        groups: dict[tuple[str, ...], list[Operand]] = {}
        for op in parts:
            groups.setdefault(tuple(x for x in op.context if self.pos[x] < self.pos[v]),
                              []).append(op)
        depths = sorted(groups, key=len, reverse=True)
        if len({len(d) for d in depths}) < len(depths):
            self.check_prefixes(v, parts)  # raises: two groups at one depth
        for n, (deeper, shallower) in enumerate(pairwise(depths)):
            red = self.defer_epilogue(v, groups[deeper] + groups[shallower])
            if red is None or any(op.id in late for op in groups[shallower]):
                self.check_prefixes(v, groups[deeper] + groups[shallower])
                raise self.unjoined(v)
            if n == 0:
                scope = red
        inner = groups[depths[0]]
        if not late:
            self.iterate(v, scope, inner)
        elif all(op.id in late for op in inner):  # iterated at ``v`` after their join
            self.postpone(v, inner)
        else:
            raise self.unjoined(self.deferred[next(iter(late))])

    def key_positions(self, v: str, bundle, key: str) -> str:
        """The key operand's ref at ``v``, which a position split keeps lanes' windows of;
        one located from the joined coordinates would follow the split it keys."""
        ref = bundle.refs[key]
        node = ref.rpartition(".")[0]
        if any(e.src == bundle.crd and e.dst.rpartition(".")[0] == node
               for e in self.b.edges):
            raise self.fail(f"position lanes on {self.user(v)!r} keep windows of the "
                            f"positions of {key!r} there, which are located from another "
                            f"operand's coordinates: store level {self.user(v)!r} of "
                            f"{key!r} compressed, or the other operands' dense, or use "
                            "balanced", self.rhs)
        return ref

    def iterate(self, v: str, scope: Expr, parts: list[Operand]) -> None:
        """Join ``scope``'s coordinates at ``v`` and align ``parts`` with them: the
        operands that store ``v`` follow the join, the others are repeated over it."""
        self.check_prefixes(v, parts)
        bundle = self.join(scope, v)
        assert bundle is not BCAST, f"index {v} is used by no operand of its scope"
        bundle = self.scan(bundle, v)
        if v in self.par:
            self.cuts.setdefault(v, []).append((bundle.crd, list(bundle.refs.values())))
            ranged = self.par[v][0]
            if ranged.ranges and ranged.key in bundle.refs:  # interleaved windows
                self.cut_keys[bundle.crd] = self.key_positions(v, bundle, ranged.key)
        if v in self.windowed:
            key = bundle.refs.get(self.windowed[v])
            if key is None:
                raise self.fail(f"position lanes split {self.user(v)!r} by the positions of "
                                f"{self.windowed[v]!r}, which the join there does not hold",
                                self.rhs)
            self.window_cuts.setdefault(v, []).append(
                (bundle.crd, list(bundle.refs.values()), key))
        for op in parts:
            if op.id in bundle.refs:
                op.ref = bundle.refs[op.id]
                self.refer(v, op.id, op.ref)
            else:
                self.repeat(op, v, bundle.crd)
        self.crd[v] = bundle.crd
        self.full[v] = bundle.full
        self.step_refs[v] = {op.id: op.ref for op in parts}

    def repeat(self, op: Operand, v: str, crd: str) -> None:
        """Repeat ``op``'s reference over the coordinates ``crd`` of index ``v``."""
        sig = self.repsig_of(v, crd, op.id)
        rep = self.node(f"rep_{op.id}_{self.user(v)}", "repeat", v, op.id)
        self.b.edge(op.ref, f"{rep}.ref_in")
        self.b.edge(sig, f"{rep}.repsig")
        self.refer(v, op.id, sig)
        op.ref = f"{rep}.ref"

    def postpone(self, v: str, late: list[Operand]) -> None:
        """Iterate ``late`` (operands deferred to one epilogue) at ``v`` after their join."""
        keys = {self.joins[op.id] for op in late}
        if len(keys) != 1:
            raise self.unjoined(self.deferred[late[0].id])
        self.postponed.setdefault(keys.pop(), []).append((v, late))

    def crd_of(self, v: str) -> str:
        """The coordinates of loop ``v``; a loop postponed to a deep epilogue has none
        until that epilogue has joined (anything needing them before cannot lower)."""
        if v not in self.crd:
            u = next(u for (u, _), steps in self.postponed.items()
                     if any(w == v for w, _ in steps))
            raise self.fail(
                f"dataflow order {self.order_text} iterates {self.user(v)!r} only after "
                f"the epilogue join over {self.user(u)!r}, but a value outside that join "
                f"runs in the loop over {self.user(v)!r}; choose an order that puts "
                f"{self.user(v)!r} before the reductions whose rows the join meets")
        return self.crd[v]

    def unjoined(self, v: str) -> LoweringError:
        """Operands deferred to an epilogue at ``v`` that no epilogue join can take."""
        ops = [self.op_by_id(oid) for oid, u in self.deferred.items() if u == v]
        shown = ", ".join(self.show(op.access) for op in ops)
        return self.fail(
            f"dataflow order {self.order_text} defers {shown} to an epilogue join with "
            f"accumulator rows over {self.user(v)!r}, but they do not meet the whole "
            f"reduction in a product, quotient, sum or difference, or share a later loop "
            f"with operands outside that join; move the reduced indices after "
            f"{self.user(v)!r} or split the expression", ops[0].access if ops else None)

    def repsig_of(self, v: str, crd: str, col: str) -> str:
        """The repeat signal of coordinate stream ``crd`` at index ``v`` (made once, in
        the first column that repeats over it)."""
        if crd not in self.repsig:
            rs = self.node(f"rs_{self.user(v)}", "repsig", v, col)
            self.b.edge(crd, f"{rs}.crd")
            self.repsig[crd] = f"{rs}.repsig"
        return self.repsig[crd]

    def defer_epilogue(self, v: str, parts: list[Operand]) -> Reduction | None:
        """Operands that share ``v`` with an accumulated reduction but sit outside it
        (``c(j)`` in ``relu(sum(k) A(i,k)*B(k,j) + c(j))`` over ``i,k,j``) are not
        iterated at ``v`` with the reduction's operands: they meet the rows the
        accumulator drains, in an epilogue join (:meth:`epilogue`; the rule is
        :func:`_factor.epilogue_reduction`). Returns the reduction whose loop ``v`` then
        iterates, or None when the loop is shared."""
        red = epilogue_reduction(v, [(op.access, op.context) for op in parts], self.pos,
                                 self.owner, self.inside, self.deep)
        if red is None:
            return None
        inside = {op.id for op in self.operands(red)}
        self.reds[id(red)] = red
        for op in parts:
            # a deep epilogue's operand stays with the join it was deferred to first
            if op.id not in inside and not (self.deep and op.id in self.deferred):
                self.deferred[op.id] = v
                self.joins[op.id] = (v, id(red))
        self.deferred_at[v] = list(parts)
        return red

    def check_prefixes(self, v: str, parts: list[Operand]) -> None:
        """Every operand iterated at ``v`` must sit at the same loop depth."""
        def prefix(op: Operand) -> tuple[str, ...]:
            return tuple(x for x in op.context if self.pos[x] < self.pos[v])

        groups: dict[tuple[str, ...], list[Operand]] = {}
        for op in parts:
            groups.setdefault(prefix(op), []).append(op)
        if len(groups) < 2:
            return
        deepest = max(groups, key=len)
        extra = [x for x in deepest if x in self.owner and
                 not all(x in prefix(op) for op in parts)]
        if not extra:  # no reduction between them: loops of one depth, not nested
            shown = "; ".join(", ".join(self.show(op.access) for op in g) + " under " +
                              (",".join(self.user(x) for x in k) or "nothing")
                              for k, g in groups.items())
            raise self.fail(f"dataflow order {self.order_text} iterates {self.user(v)!r} "
                            f"under different loops for different operands ({shown}); "
                            "choose an order whose loops nest", self.rhs)
        red = self.owner[extra[0]]
        inside = ", ".join(self.show(op.access) for op in groups[deepest])
        outside = ", ".join(self.show(op.access) for k, g in groups.items() if k != deepest
                            for op in g)
        raise self.fail(
            f"dataflow order {self.order_text} runs the {red.op} over {self.user(extra[0])!r} "
            f"outside index {self.user(v)!r}; the operands inside the reduction ({inside}) "
            f"and outside it ({outside}) cannot share the loop over {self.user(v)!r}. A "
            f"reduction that is not innermost runs in a sparse accumulator, whose rows meet "
            f"the operands outside it only in an epilogue join (intersect_val/union_val) "
            f"of a product, quotient, sum or difference with the whole reduction, on "
            f"operands that store {self.user(v)!r} as their last index: put "
            f"{self.user(extra[0])!r} after {self.user(v)!r} in the order or split the "
            "expression", red)
