"""Joins: the coordinates of a subexpression at one index.

Scans the operands that store the index and joins them following the expression tree:
intersect for multiplicative operators, union for additive ones
(:data:`_operators.OPERATORS`). A dense level met by an intersection is left pending;
:meth:`Joins.locates` decides whether a sparser stream addresses it (``locate``) or it is
scanned and joined. Produces a :class:`Bundle`: one crd port plus each operand's aligned
reference.
"""

from __future__ import annotations

from ._ast import Access, BinOp, Call, Const, Expr, Neg, Reduction, walk
from ._lower_state import BCAST, Bundle, LowerState, Operand
from ._lower_values import FOLD, vanishes
from ._operators import OPERATORS

__all__ = ["Joins"]


class Joins(LowerState):
    """Scanning, intersecting, uniting and locating the operands of one index."""

    def join(self, e: Expr, v: str, within: Bundle | None = None) -> Bundle | None:
        """Coordinates of ``e`` at ``v`` (scanning, intersecting, uniting as needed).

        ``within``: the coordinates of the factor ``e`` is multiplied by; only those
        matter, so a sum with a term that lacks ``v`` (dense there) unites with them
        instead of iterating every coordinate (``P·exp(S − m)``: :meth:`restricted`)."""
        if v not in self.indices_under.get(id(e), (v,)):  # no access below uses ``v``
            return BCAST
        if isinstance(e, Access):
            op = self.ops[id(e)]
            if v not in e.indices:
                return BCAST
            assert op.levels[op.next_level] == v, "layouts guarantee concordance"
            level = op.next_level
            op.next_level += 1
            if op.full_at(level):
                return Bundle("", {}, True, (op, level))  # scanned or located later
            return self.scan_level(op, level, v)
        if isinstance(e, Const):
            return BCAST
        if isinstance(e, Neg):
            return self.join(e.operand, v, within)
        if isinstance(e, Call):  # a function is computed where its argument is stored
            return self.join(e.arg, v, within)
        if isinstance(e, Reduction):
            inner = self.join(e.body, v)
            if inner is not BCAST and any(self.pos[r] < self.pos[v] for r in e.indices):
                # a sparse accumulator emits only the coordinates some reduced fiber had
                inner = self.scan(inner, v)
                return Bundle(inner.crd, inner.refs, False)
            return inner
        assert isinstance(e, BinOp)
        oper = OPERATORS[e.op]
        left = self.join(e.left, v)
        restrict = left if oper.bounds_right and left is not BCAST else None
        right = self.join(e.right, v, restrict)
        if left is BCAST or right is BCAST:
            other = right if left is BCAST else left
            if other is BCAST or oper.multiplicative:
                return other
            if not other.full and within is not None:
                sparse = e.left if right is BCAST else e.right
                if self.covers(sparse, v, within):  # already at every coordinate of within
                    return other
                return self.restricted(other, within, v)
            if not other.full:
                side = e.left if left is BCAST else e.right
                raise self.fail(
                    f"'{e.op}' adds {self.show(side)}, which does not depend on index "
                    f"{self.user(v)!r}, to an operand that is sparse in {self.user(v)!r}; "
                    "the sum is nonzero at every coordinate, which needs a dense "
                    f"iteration over {self.user(v)!r} (store that operand dense at this "
                    "level, or rewrite the expression)", e)
            return other
        if not oper.multiplicative:
            for side, other, bundle in ((e.left, e.right, left), (e.right, e.left, right)):
                if not bundle.full:
                    self.check_vanishes(side, other, e, v)
        return self.merge(left, right, oper.join, v)

    def restricted(self, sparse: Bundle, within: Bundle, v: str) -> Bundle:
        """``sparse`` (a term sparse in ``v``, plus one that lacks ``v``) at the
        coordinates of the factor ``within`` multiplies it by: their union, whose refs
        are ``sparse``'s (``N`` where it is absent, read as 0 — the term's value there);
        the product then intersects it with ``within``, keeping just those."""
        joined = self.merge(sparse, within, "union", v, present=within)
        return Bundle(joined.crd, {o: r for o, r in joined.refs.items()
                                   if o not in within.refs}, False)

    def covers(self, e: Expr, v: str, within: Bundle) -> bool:
        """Whether ``e``'s coordinates at ``v`` include ``within``'s: its sparse accesses
        there are accesses ``within`` joins too (``x·P`` inlined under ``P``: the SDDMM
        form of a fused masked softmax), so no union is needed."""
        same = {(op.access.tensor, op.access.indices)
                for op in map(self.op_by_id, within.refs)}

        def walk_covers(x: Expr) -> bool:
            if isinstance(x, Access):
                op = self.ops[id(x)]
                if v not in x.indices:
                    return True
                return op.full_at(op.levels.index(v)) or (x.tensor, x.indices) in same
            if isinstance(x, Const):
                return True
            if isinstance(x, Neg):
                return walk_covers(x.operand)
            if isinstance(x, Call):
                return walk_covers(x.arg)
            if isinstance(x, Reduction):
                return all(self.pos[r] > self.pos[v] for r in x.indices) and \
                    walk_covers(x.body)
            assert isinstance(x, BinOp)
            if OPERATORS[x.op].multiplicative:
                return walk_covers(x.left) and walk_covers(x.right)
            return walk_covers(x.left) or walk_covers(x.right)

        return walk_covers(e)

    def check_vanishes(self, side: Expr, other: Expr, at: BinOp, v: str) -> None:
        """A union visits coordinates where ``side`` is absent; its value must be 0 there.

        Its operands iterated at ``v`` read as 0 there (those broadcast over ``v`` keep
        their values), so ``exp``/``rsqrt`` of such an operand would give ``f(0) != 0``
        where the function must not be computed at all.
        """
        if vanishes(side, v):
            return
        # a sparse side that does not vanish holds such a call: constants and broadcast
        # operands only join a union with a full side (the rule above)
        bad = next(n for n in walk(side) if isinstance(n, Call) and FOLD[n.fn](0.0) != 0
                   and vanishes(n.arg, v))
        raise self.fail(
            f"{self.show(bad)} is sparse in index {self.user(v)!r} but '{at.op}' unites it "
            f"with {self.show(other)}: {bad.fn} applies to stored entries only, and the "
            f"union would compute {bad.fn}(0) = {FOLD[bad.fn](0.0)!r} where its argument "
            f"is absent. Store its operands dense in {self.user(v)!r}, or multiply by a "
            "mask instead of adding", bad)

    def scan_level(self, op: Operand, level: int, v: str) -> Bundle:
        """Scan storage level ``level`` of ``op`` from its current reference stream."""
        kind = op.kinds[level]
        scan = self.node(f"{op.id}_{self.user(v)}", "scan_" + kind, v, op.id,
                         tensor=op.access.tensor, level=level)
        self.b.edge(op.ref, f"{scan}.ref_in")
        return Bundle(f"{scan}.crd", {op.id: f"{scan}.ref"}, op.full_at(level))

    def scan(self, bundle: Bundle, v: str) -> Bundle:
        """The bundle itself, or the scan of its dense level if that is still pending."""
        return bundle if bundle.dense is None else self.scan_level(*bundle.dense, v)

    def locate(self, dense: Bundle, sparse: Bundle, v: str) -> Bundle:
        """Intersect a pending dense level with a sparser bundle without scanning it:
        the dense operand's parent reference is repeated over the sparse coordinates and
        ``locate`` addresses the level with them (one cycle per sparse coordinate instead
        of a scan and intersection over every dense one)."""
        assert dense.dense is not None
        op, level = dense.dense
        sig = self.repsig_of(v, sparse.crd, op.id)
        rep = self.node(f"rep_{op.id}_{self.user(v)}", "repeat", v, op.id)
        self.b.edge(op.ref, f"{rep}.ref_in")
        self.b.edge(sig, f"{rep}.repsig")
        loc = self.node(f"{op.id}_{self.user(v)}", "locate", v, op.id,
                        tensor=op.access.tensor, level=level)
        self.b.edge(sparse.crd, f"{loc}.crd_in")
        self.b.edge(f"{rep}.ref", f"{loc}.ref_in")
        self.refer(v, op.id, sparse.crd)
        op.maybe_empty = op.maybe_empty or \
            any(self.op_by_id(oid).maybe_empty for oid in sparse.refs)
        return Bundle(sparse.crd, {**sparse.refs, op.id: f"{loc}.ref"}, False)

    def locates(self, join: str, pending: Bundle, by: Bundle) -> bool:
        """Whether ``pending``'s dense level is *located* by ``by``'s coordinates instead
        of being scanned and joined (the one place this is decided): only in an
        intersection (a union needs every dense coordinate), and only by a sparser stream
        — not full and not itself pending. Its crds may carry ``N`` (an operand scanned
        from a reference that can be ``N``, after a union): ``locate`` turns an ``N`` crd
        into an ``N`` reference, as an intersecter does, so the located operand becomes
        maybe-empty too (:meth:`locate`). The sparse crds then address the level
        directly: one cycle per sparse coordinate instead of a scan and an intersection
        over every dense one."""
        return join == "intersect" and pending.dense is not None and by.dense is None \
            and not by.full

    def merge(self, a: Bundle, b: Bundle, kind: str, v: str,
              present: Bundle | None = None) -> Bundle:
        """Join two bundles; one joiner per reference pair keeps every ref aligned.
        A union leaves the operands of a side that is not full maybe absent (``N``),
        except those of ``present`` (a later intersection keeps only its coordinates)."""
        for pending, by in ((a, b), (b, a)):
            if self.locates(kind, pending, by):
                return self.locate(pending, by, v)
        a, b = self.scan(a, v), self.scan(b, v)
        ra, rb = list(a.refs.items()), list(b.refs.items())
        refs: dict[str, str] = {}
        crd = ""
        for m in range(max(len(ra), len(rb))):
            ida, refa = ra[min(m, len(ra) - 1)]
            idb, refb = rb[min(m, len(rb) - 1)]
            j = self.node(f"{'isect' if kind == 'intersect' else 'union'}_{self.user(v)}",
                          kind, v, ida)
            for src, port in ((a.crd, "crd_a"), (refa, "ref_a"), (b.crd, "crd_b"),
                              (refb, "ref_b")):
                self.b.edge(src, f"{j}.{port}")
            self.refer(v, idb, j)
            if m < len(ra):
                refs[ida] = f"{j}.ref_a"
            if m < len(rb):
                refs[idb] = f"{j}.ref_b"
            crd = crd or f"{j}.crd"
        if kind == "union":
            kept = present.refs if present is not None else {}
            for side in (a, b):
                if not side.full:
                    for oid in side.refs:
                        if oid not in kept:
                            self.op_by_id(oid).maybe_empty = True
            return Bundle(crd, refs, a.full or b.full)
        return Bundle(crd, refs, a.full and b.full)
