"""Lower one normalized expression, for one dataflow order, to a SAM-style ``ir.Graph``.

The loop nest is visited index by index in dataflow order (``docs/compiler.md`` states
the rules with examples). At index ``v`` every operand whose *context* contains ``v``
takes part: the context of an operand is the output's indices plus the indices of every
reduction around it. Operands that store ``v`` are scanned and their coordinates joined —
intersect for ``*`` and ``/``, union for ``+`` and ``-`` — following the expression tree;
a dense level intersected with a sparser stream is not scanned but *located* (``locate``:
the sparse crds address it directly); operands that do not store ``v`` are repeated over
the joined coordinates (broadcast). After the last index each operand's reference stream
feeds a value array; ALUs combine values bottom-up; a reduction whose index is innermost
in its loop nest is a ``reduce`` node, one directly above the innermost index a ``spacc``
(vector accumulator), one directly above the two innermost indices a ``spacc2`` (matrix
accumulator). A function call (``relu``/``exp``/``rsqrt``) is a ``unary`` node on its
argument's value stream: it sees only the coordinates its argument is iterated at (its
stored entries). Writers record the output, with ``crddrop`` in front of compressed
output levels whose child fibers can come out empty.

Every node is created through :meth:`_Lowerer.node`, which records it in the fusion
table (``_table.py``) at its index row and tensor-view column.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np

from ir import GraphBuilder

from ._ast import Access, BinOp, Call, Const, Expr, Neg, Reduction, accesses, walk
from ._blocks import BlockPlan
from ._errors import LoweringError
from ._factor import accesses_under, epilogue_reduction, factor
from ._layout import Layout
from ._normalize import Normalized
from ._parallel import DEFAULT_LANE_BUFFER, LaneSplit, replicate
from ._table import VAL_ROW, Entry, FusionTable

__all__ = ["lower_order", "Lowered"]

_ALU = {"+": "add", "-": "sub", "*": "mul", "/": "div"}


@dataclass
class _Operand:
    """One tensor access of the expression and its iteration state."""

    id: str
    access: Access
    levels: tuple[str, ...]  # internal index stored at each level
    kinds: tuple[str, ...]  # "dense"/"compressed" per level
    context: tuple[str, ...]  # indices it is iterated over, in dataflow order
    ref: str = ""  # current reference stream (node.port)
    maybe_empty: bool = False  # whether ``ref`` can carry N (after a union)
    next_level: int = 0


@dataclass
class _Bundle:
    """Joined coordinates at one index, with the aligned reference of each operand."""

    crd: str
    refs: dict[str, str]
    full: bool  # every coordinate of the dimension, in every fiber
    #: a dense level not scanned yet (operand, level): an intersection with a sparser
    #: stream locates into it instead (``_Lowerer.locate``); anything else scans it
    dense: tuple[_Operand, int] | None = None


_BCAST = None  # an expression that does not depend on the index: present everywhere


@dataclass(frozen=True)
class _Acc:
    """What a sparse accumulator emits: it replaces the crds of the kept indices below it."""

    crds: dict[str, str]  # kept index -> the accumulator's crd port for it
    reduction: Reduction


@dataclass
class _Val:
    port: str | None = None
    const: float | None = None
    #: set when the value comes out of a sparse accumulator (spacc or spacc2)
    spacc: _Acc | None = None
    #: the blocked indices inside each value (block sparsity), in canonical order
    intra: tuple[str, ...] = ()


#: accumulator primitive by the number of kept levels below the reduced index
_ACCUMULATORS = {1: "spacc", 2: "spacc2", 3: "spacc3"}


@dataclass
class Lowered:
    """A lowered graph plus what the order search needs to rank it."""

    builder: GraphBuilder
    #: the plan the graph was built from (rows: order + val, columns: tensor views)
    table: FusionTable
    #: 0 = reducers only, else the kept levels of the largest sparse accumulator (1:
    #: spacc, 2: spacc2, 3: spacc3); the order search prefers the smallest (less state,
    #: no drain bursts)
    accumulator: int = 0
    reductions: list[str] = field(default_factory=list)
    #: node id -> its lane ("i2", or "i2.j0" nested, outer index first); nodes shared
    #: by every lane (the merge tree, writers) are absent (``docs/parallel.md``)
    lane_of: dict[str, str] = field(default_factory=dict)

    @property
    def uses_spacc(self) -> bool:
        """Whether any reduction runs in a sparse accumulator."""
        return self.accumulator > 0


def lower_order(norm: Normalized, order: list[str], layouts: Mapping[str, Layout],
                dtype: str, depth: int | None, name: str,
                par: Mapping[str, Sequence[LaneSplit]] | None = None,
                lane_buffer: int = DEFAULT_LANE_BUFFER,
                blocks: Mapping[str, int] | None = None, deep: bool = False) -> Lowered:
    """Build the graph for internal dataflow ``order``; raises :class:`LoweringError`.
    ``par`` gives each parallel output index (internal name) its lanes' splits;
    ``blocks`` each blocked index its block extent (the layouts then hold the block
    grid's sizes; docs/blocks.md). ``deep`` admits deep epilogues (operands joined
    with accumulator rows that go on iterating after the join,
    :func:`_factor.epilogue_reduction`); an order that lowers without them lowers to
    the same graph with them."""
    return _Lowerer(norm, order, layouts, dtype, depth, name, par or {}, lane_buffer,
                    blocks or {}, deep).run()


class _Lowerer:
    def __init__(self, norm: Normalized, order: list[str], layouts: Mapping[str, Layout],
                 dtype: str, depth: int | None, name: str,
                 par: Mapping[str, Sequence[LaneSplit]], lane_buffer: int,
                 blocks: Mapping[str, int], deep: bool = False) -> None:
        self.norm, self.order, self.layouts = norm, order, layouts
        self.deep = deep
        #: a deep epilogue's join (index, id of the reduction whose rows it meets) -> the
        #: later steps of its deferred operands, run after the join: (index, operands)
        self.postponed: dict[tuple[str, int], list[tuple[str, list[_Operand]]]] = {}
        #: operand id -> the join it is deferred to (deep epilogues)
        self.joins: dict[str, tuple[str, int]] = {}
        self.par, self.lane_buffer = par, lane_buffer
        self.blocks = BlockPlan(norm, blocks)
        #: operand id -> the index its iteration is deferred at (an epilogue operand)
        self.deferred: dict[str, str] = {}
        #: id(reduction) -> the reduction, for the reductions epilogues join with
        self.reds: dict[int, Reduction] = {}
        self.deferred_at: dict[str, list[_Operand]] = {}
        self._inside: dict[int, frozenset[int]] | None = None  # accesses per reduction
        #: per parallel index, each join's crd port and its ref ports (what a lane
        #: splits): the index's step, and an epilogue union there
        self.cuts: dict[str, list[tuple[str, list[str]]]] = {}
        self.lane_of: dict[str, str] = {}
        self.src = norm.assignment.source or None
        self.pos = {v: n for n, v in enumerate(order)}
        self.order_text = ",".join(norm.user[v] for v in order)
        self.dtype = dtype
        self.b = GraphBuilder(name, dtype, depth)
        self.target = norm.assignment.target
        self.rhs = norm.assignment.rhs
        self.ops: dict[int, _Operand] = {}  # id(Access) -> operand
        self._operands: dict[int, list[_Operand]] = {}  # id(node) -> operands under it
        plan = factor(self.rhs, self.target.indices, order, deep)
        self.context = plan.context  # id(node) -> the loops it is computed in
        self.hoisted = plan.hoisted  # id(node) -> the later loops it is broadcast over
        self.owner: dict[str, Reduction] = {}  # reduced index -> its reduction
        self.crd: dict[str, str] = {}
        self.full: dict[str, bool] = {}
        self.step_refs: dict[str, dict[str, str]] = {}
        self.repsig: dict[str, str] = {}
        self.reductions: list[str] = []
        self.accumulator = 0
        self._root: str | None = None
        self.table = FusionTable([*order, VAL_ROW], [])
        self.view: dict[str, str] = {}  # operand id (or output name) -> its column
        self.made: dict[str, tuple[str, str]] = {}  # node id -> its cell

    def node(self, node_id: str, prim: str, row: str, col: str, /, **params) -> str:
        """Create a graph node and record it in the fusion table at (``row``, ``col``)."""
        nid = self.b.node(node_id, prim, **params)
        op = params.get("op")
        self.table.add(row, self.view[col], Entry(nid, f"{prim} {op}" if op else prim))
        self.made[nid] = (row, self.view[col])
        return nid

    def refer(self, row: str, col: str, port: str) -> None:
        """Note in a cell that its view's stream comes from a node another cell made."""
        nid = port.split(".")[0]
        where = self.made.get(nid)
        if where is not None and where != (row, self.view[col]):
            self.table.add(row, self.view[col], Entry(nid, "", ref=True))

    def add_view(self, key: str, text: str) -> None:
        n, label = 1, text
        while label in self.table.columns:
            n += 1
            label = f"{text}#{n}"
        self.view[key] = label
        self.table.columns.append(label)

    def first(self, e: Expr) -> str:
        """The column of an expression's value nodes: that of its first operand."""
        return next(self.ops[id(n)].id for n in walk(e) if isinstance(n, Access))

    def fail(self, msg: str, at: Expr | None = None) -> LoweringError:
        col = getattr(at, "col", 0) or None
        return LoweringError(msg, self.src if col else None, col)

    def user(self, v: str) -> str:
        return self.norm.user[v]

    @staticmethod
    def show(e: Expr) -> str:
        """A subexpression as the user wrote it (internal names like ``k#2`` mapped back)."""
        return re.sub(r"#\d+", "", str(e))

    # -- set-up -------------------------------------------------------------------------
    def run(self) -> Lowered:
        indices = {a.tensor: a.indices for a in (*accesses(self.rhs), self.target)}
        for lay in self.layouts.values():
            role = "output" if lay.name == self.target.tensor else "input"
            shape, block = self.blocks.tensor(lay.shape, indices[lay.name])
            self.b.tensor(lay.name, shape, str(lay.format), role, block)
        self.collect(self.rhs)
        self.add_view(self.target.tensor, str(self.target))
        for op in self.ops.values():
            row = op.context[0] if op.context else VAL_ROW
            root = self.node(f"root_{op.id}", "root", row, op.id)
            op.ref = f"{root}.ref"
        for v in self.order:
            self.step(v)
        val = self.value(self.rhs)
        if self.deferred:  # no epilogue joined them: the loops cannot be shared after all
            v = next(iter(self.deferred.values()))
            self.check_prefixes(v, self.deferred_at[v])
            if self.deep:
                raise self.unjoined(v)
        self.write(val)
        return Lowered(self.b, self.table, self.accumulator, self.reductions,
                       self.lane_of)

    def sorted(self, idx) -> list[str]:
        return sorted(idx, key=self.pos.__getitem__)

    def collect(self, e: Expr) -> None:
        """Create an operand per access, iterated over its context in the plan."""
        for node in walk(e):
            if isinstance(node, Reduction):
                for v in node.indices:
                    self.owner[v] = node
            if not isinstance(node, Access):
                continue
            fmt = self.layouts[node.tensor].format
            taken = {op.id for op in self.ops.values()}
            oid, n = node.tensor, 1
            while oid in taken or (n > 1 and oid in self.layouts):
                n += 1
                oid = f"{node.tensor}{n}"
            self.ops[id(node)] = _Operand(oid, node,
                                          tuple(node.indices[m] for m in fmt.mode_order),
                                          fmt.levels, self.context[id(node)])
            self.add_view(oid, str(node))

    def operands(self, e: Expr) -> list[_Operand]:
        found = self._operands.get(id(e))
        if found is None:
            found = self._operands[id(e)] = [self.ops[id(n)] for n in walk(e)
                                             if isinstance(n, Access)]
        return found

    # -- iteration: one step per index --------------------------------------------------
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

    def step_deep(self, v: str, scope: Expr, parts: list[_Operand]) -> None:
        """A step where epilogues may nest: the operands of loop ``v`` sit at several
        depths, each shallower group deferred to a join with the rows of the reduction
        that separates it from the next deeper one (innermost first); the deepest group
        is iterated now, or after its own join if an earlier epilogue deferred it."""
        late = {op.id for op in parts if op.id in self.deferred}
        groups: dict[tuple[str, ...], list[_Operand]] = {}
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

    def iterate(self, v: str, scope: Expr, parts: list[_Operand]) -> None:
        """Join ``scope``'s coordinates at ``v`` and align ``parts`` with them: the
        operands that store ``v`` follow the join, the others are repeated over it."""
        self.check_prefixes(v, parts)
        bundle = self.join(scope, v)
        assert bundle is not _BCAST, f"index {v} is used by no operand of its scope"
        bundle = self.scan(bundle, v)
        if v in self.par:
            self.cuts.setdefault(v, []).append((bundle.crd, list(bundle.refs.values())))
        for op in parts:
            if op.id in bundle.refs:
                op.ref = bundle.refs[op.id]
                self.refer(v, op.id, op.ref)
            else:
                self.repeat(op, v, bundle.crd)
        self.crd[v] = bundle.crd
        self.full[v] = bundle.full
        self.step_refs[v] = {op.id: op.ref for op in parts}

    def repeat(self, op: _Operand, v: str, crd: str) -> None:
        """Repeat ``op``'s reference over the coordinates ``crd`` of index ``v``."""
        sig = self.repsig_of(v, crd, op.id)
        rep = self.node(f"rep_{op.id}_{self.user(v)}", "repeat", v, op.id)
        self.b.edge(op.ref, f"{rep}.ref_in")
        self.b.edge(sig, f"{rep}.repsig")
        self.refer(v, op.id, sig)
        op.ref = f"{rep}.ref"

    def postpone(self, v: str, late: list[_Operand]) -> None:
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

    def defer_epilogue(self, v: str, parts: list[_Operand]) -> Reduction | None:
        """Operands that share ``v`` with an accumulated reduction but sit outside it
        (``c(j)`` in ``relu(sum(k) A(i,k)*B(k,j) + c(j))`` over ``i,k,j``) are not
        iterated at ``v`` with the reduction's operands: they meet the rows the
        accumulator drains, in an epilogue join (:meth:`epilogue`; the rule is
        :func:`_factor.epilogue_reduction`). Returns the reduction whose loop ``v`` then
        iterates, or None when the loop is shared."""
        if self._inside is None:
            self._inside = accesses_under(self.rhs)
        red = epilogue_reduction(v, [(op.access, op.context) for op in parts], self.pos,
                                 self.owner, self._inside, self.deep)
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

    def check_prefixes(self, v: str, parts: list[_Operand]) -> None:
        """Every operand iterated at ``v`` must sit at the same loop depth."""
        def prefix(op: _Operand) -> tuple[str, ...]:
            return tuple(x for x in op.context if self.pos[x] < self.pos[v])

        groups: dict[tuple[str, ...], list[_Operand]] = {}
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

    def join(self, e: Expr, v: str, within: _Bundle | None = None) -> _Bundle | None:
        """Coordinates of ``e`` at ``v`` (scanning, intersecting, uniting as needed).

        ``within``: the coordinates of the factor ``e`` is multiplied by; only those
        matter, so a sum with a term that lacks ``v`` (dense there) unites with them
        instead of iterating every coordinate (``P·exp(S − m)``: :meth:`restricted`)."""
        if isinstance(e, Access):
            op = self.ops[id(e)]
            if v not in e.indices:
                return _BCAST
            assert op.levels[op.next_level] == v, "layouts guarantee concordance"
            level = op.next_level
            op.next_level += 1
            if op.kinds[level] == "dense" and not op.maybe_empty:
                return _Bundle("", {}, True, (op, level))  # scanned or located later
            return self.scan_level(op, level, v)
        if isinstance(e, Const):
            return _BCAST
        if isinstance(e, Neg):
            return self.join(e.operand, v, within)
        if isinstance(e, Call):  # a function is computed where its argument is stored
            return self.join(e.arg, v, within)
        if isinstance(e, Reduction):
            inner = self.join(e.body, v)
            if inner is not _BCAST and any(self.pos[r] < self.pos[v] for r in e.indices):
                # a sparse accumulator emits only the coordinates some reduced fiber had
                inner = self.scan(inner, v)
                return _Bundle(inner.crd, inner.refs, False)
            return inner
        assert isinstance(e, BinOp)
        left = self.join(e.left, v)
        # the left factor's coordinates bound the right one's (the frontend emits P · f(…))
        restrict = left if e.op == "*" and left is not _BCAST else None
        right = self.join(e.right, v, restrict)
        if left is _BCAST or right is _BCAST:
            other = right if left is _BCAST else left
            if other is _BCAST or e.op in "*/":
                return other
            if not other.full and within is not None:
                sparse = e.left if right is _BCAST else e.right
                if self.covers(sparse, v, within):  # already at every coordinate of within
                    return other
                return self.restricted(other, within, v)
            if not other.full:
                side = e.left if left is _BCAST else e.right
                raise self.fail(
                    f"'{e.op}' adds {self.show(side)}, which does not depend on index "
                    f"{self.user(v)!r}, to an operand that is sparse in {self.user(v)!r}; "
                    "the sum is nonzero at every coordinate, which needs a dense "
                    f"iteration over {self.user(v)!r} (store that operand dense at this "
                    "level, or rewrite the expression)", e)
            return other
        if e.op in "+-":
            for side, other, bundle in ((e.left, e.right, left), (e.right, e.left, right)):
                if not bundle.full:
                    self.check_vanishes(side, other, e, v)
        return self.merge(left, right, "intersect" if e.op in "*/" else "union", v)

    def restricted(self, sparse: _Bundle, within: _Bundle, v: str) -> _Bundle:
        """``sparse`` (a term sparse in ``v``, plus one that lacks ``v``) at the
        coordinates of the factor ``within`` multiplies it by: their union, whose refs
        are ``sparse``'s (``N`` where it is absent, read as 0 — the term's value there);
        the product then intersects it with ``within``, keeping just those."""
        joined = self.merge(sparse, within, "union", v, present=within)
        return _Bundle(joined.crd, {o: r for o, r in joined.refs.items()
                                    if o not in within.refs}, False)

    def covers(self, e: Expr, v: str, within: _Bundle) -> bool:
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
                full = op.kinds[op.levels.index(v)] == "dense" and not op.maybe_empty
                return full or (x.tensor, x.indices) in same
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
            if x.op in "*/":
                return walk_covers(x.left) and walk_covers(x.right)
            return walk_covers(x.left) or walk_covers(x.right)

        return walk_covers(e)

    def check_vanishes(self, side: Expr, other: Expr, at: BinOp, v: str) -> None:
        """A union visits coordinates where ``side`` is absent; its value must be 0 there.

        Its operands iterated at ``v`` read as 0 there (those broadcast over ``v`` keep
        their values), so ``exp``/``rsqrt`` of such an operand would give ``f(0) != 0``
        where the function must not be computed at all.
        """
        if _vanishes(side, v):
            return
        # a sparse side that does not vanish holds such a call: constants and broadcast
        # operands only join a union with a full side (the rule above)
        bad = next(n for n in walk(side) if isinstance(n, Call) and _FOLD[n.fn](0.0) != 0
                   and _vanishes(n.arg, v))
        raise self.fail(
            f"{self.show(bad)} is sparse in index {self.user(v)!r} but '{at.op}' unites it "
            f"with {self.show(other)}: {bad.fn} applies to stored entries only, and the "
            f"union would compute {bad.fn}(0) = {_FOLD[bad.fn](0.0)!r} where its argument "
            f"is absent. Store its operands dense in {self.user(v)!r}, or multiply by a "
            "mask instead of adding", bad)

    def scan_level(self, op: _Operand, level: int, v: str) -> _Bundle:
        """Scan storage level ``level`` of ``op`` from its current reference stream."""
        kind = op.kinds[level]
        scan = self.node(f"{op.id}_{self.user(v)}", "scan_" + kind, v, op.id,
                         tensor=op.access.tensor, level=level)
        self.b.edge(op.ref, f"{scan}.ref_in")
        return _Bundle(f"{scan}.crd", {op.id: f"{scan}.ref"},
                       kind == "dense" and not op.maybe_empty)

    def scan(self, bundle: _Bundle, v: str) -> _Bundle:
        """The bundle itself, or the scan of its dense level if that is still pending."""
        return bundle if bundle.dense is None else self.scan_level(*bundle.dense, v)

    def locate(self, dense: _Bundle, sparse: _Bundle, v: str) -> _Bundle:
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
        return _Bundle(sparse.crd, {**sparse.refs, op.id: f"{loc}.ref"}, False)

    def locatable(self, b: _Bundle) -> bool:
        """A sparser stream that can address a dense level: scanned and not full. Its crds
        may carry ``N`` (an operand scanned from a reference that can be ``N``, after a
        union): ``locate`` turns an ``N`` crd into an ``N`` reference, as an intersecter
        does, so the located operand becomes maybe-empty too (:meth:`locate`)."""
        return b.dense is None and not b.full

    def merge(self, a: _Bundle, b: _Bundle, kind: str, v: str,
              present: _Bundle | None = None) -> _Bundle:
        """Join two bundles; one joiner per reference pair keeps every ref aligned.
        A union leaves the operands of a side that is not full maybe absent (``N``),
        except those of ``present`` (a later intersection keeps only its coordinates)."""
        if kind == "intersect":
            if a.dense is not None and self.locatable(b):
                return self.locate(a, b, v)
            if b.dense is not None and self.locatable(a):
                return self.locate(b, a, v)
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
            return _Bundle(crd, refs, a.full or b.full)
        return _Bundle(crd, refs, a.full and b.full)

    def op_by_id(self, oid: str) -> _Operand:
        return next(op for op in self.ops.values() if op.id == oid)

    # -- values ---------------------------------------------------------------------------
    def value(self, e: Expr, rows: Mapping[str, str] | None = None) -> _Val:
        """``e``'s value stream; a hoisted ``e`` is broadcast over its later loops, whose
        coordinates are ``rows`` (an accumulator's crd outputs) where given."""
        val = self.compute(e)
        later = self.hoisted.get(id(e))
        if not later:
            return val
        if val.spacc is not None:
            raise self.spacc_misuse(val, e)
        return self.broadcast(val, later, self.first(e), rows)

    def broadcast(self, val: _Val, later: Sequence[str], col: str,
                  rows: Mapping[str, str] | None = None) -> _Val:
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
        return _Val(port, spacc=val.spacc, intra=val.intra)

    def operands_of(self, e: BinOp) -> tuple[_Val, _Val]:
        """Both sides' values; an accumulator's side first, so that the other side,
        hoisted out of the accumulator's kept loops, is broadcast over its crds."""
        if self.hoisted.get(id(e.left)) and not self.hoisted.get(id(e.right)):
            b = self.value(e.right)
            return self.value(e.left, b.spacc.crds if b.spacc else None), b
        a = self.value(e.left)
        return a, self.value(e.right, a.spacc.crds if a.spacc else None)

    def compute(self, e: Expr) -> _Val:
        if isinstance(e, Access):
            op = self.ops[id(e)]
            arr = self.node(f"{op.id}_val", "array", VAL_ROW, op.id, tensor=e.tensor)
            self.b.edge(op.ref, f"{arr}.ref")
            return _Val(f"{arr}.val", intra=self.blocks.of_access(e))
        if isinstance(e, Const):
            return _Val(const=e.value)
        if isinstance(e, Neg):
            inner = self.value(e.operand)
            if inner.const is not None:
                return _Val(const=-inner.const)
            return self.unary(inner, "neg", 0.0, e)
        if isinstance(e, Call):
            return self.call(e)
        if isinstance(e, BinOp):
            return self.binary(e)
        assert isinstance(e, Reduction)
        return self.reduce(e)

    def call(self, e: Call) -> _Val:
        """``fn(arg)``: a ``unary`` node; a constant argument folds (in float32)."""
        if self.dtype == "int32" and e.fn != "relu":
            raise self.fail(f"{e.fn}() is not available in an int32 graph (its result is "
                            "not an integer); use dtype float32, or relu", e)
        arg = self.value(e.arg)
        if arg.const is None:
            return self.unary(arg, e.fn, 0.0, e)
        folded = _FOLD[e.fn](arg.const)
        if not math.isfinite(folded):
            raise self.fail(f"{e.fn}({arg.const!r}) of a constant is {folded!r}; expected a "
                            "finite value", e)
        return _Val(const=folded)

    def unary(self, val: _Val, op: str, const: float, at: Expr) -> _Val:
        if (op, const) in (("mul_const", 1.0), ("add_const", 0.0), ("div_const", 1.0)):
            return val
        if self.dtype == "int32" and const != int(const):
            raise self.fail(f"constant {const!r} is not an integer; an int32 graph computes "
                            "in integers", at)
        node = self.node(op, "unary", VAL_ROW, self.first(at), op=op, const=float(const))
        self.b.edge(val.port, f"{node}.a")
        return _Val(f"{node}.val", spacc=val.spacc, intra=val.intra)

    def binary(self, e: BinOp) -> _Val:
        joined = self.epilogue(e)
        if joined is not None:  # the accumulator's rows, joined with the other side
            a, b = joined
            return self.alu(e, a, b, a.spacc or b.spacc)
        a, b = self.operands_of(e)
        if a.const is not None and b.const is not None:
            x, y = a.const, b.const
            if e.op == "/" and y == 0:
                raise self.fail("division of constants by zero", e)
            return _Val(const={"+": x + y, "-": x - y, "*": x * y, "/": x / y if y else 0.0}
                        [e.op])
        if a.const is not None or b.const is not None:
            val, c = (b, a.const) if a.const is not None else (a, b.const)
            assert c is not None
            if e.op == "*":
                return self.unary(val, "mul_const", c, e)
            if e.op == "+":
                return self.unary(val, "add_const", c, e)
            if e.op == "-" and b.const is not None:
                return self.unary(val, "add_const", -c, e)
            if e.op == "-":
                return self.unary(self.unary(val, "neg", 0.0, e), "add_const", c, e)
            if b.const is not None:
                return self.unary(val, "div_const", c, e)
            raise self.fail(f"a constant divided by a tensor ({e}) is not supported: there "
                            "is no reverse-division primitive", e)
        return self.alu(e, a, b, self.rows_of(e, a, b))

    def alu(self, e: BinOp, a: _Val, b: _Val, rows: _Acc | None) -> _Val:
        """The ALU combining two value streams; ``rows``: the accumulator rows it
        streams on, if any."""
        intra, spec = self.blocks.alu(e, a.intra, b.intra)
        node = self.node(_ALU[e.op], "alu", VAL_ROW, self.first(e), op=_ALU[e.op], **spec)
        self.b.edge(a.port, f"{node}.a")
        self.b.edge(b.port, f"{node}.b")
        self.refer(VAL_ROW, self.first(e.right), node)
        return _Val(f"{node}.val", spacc=rows, intra=intra)

    def epilogue(self, e: BinOp) -> tuple[_Val, _Val] | None:
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
        rows = _Bundle(acc.spacc.crds[u], {}, False)
        bundle = self.join(other, u)
        if bundle is _BCAST:  # a deep epilogue's operands store ``u`` only under sums
            raise self.unjoined(u)
        col = self.first(other)
        crd, val = rows.crd, acc.port
        if e.op in "*/" and bundle.dense is not None:  # the rows address a dense level
            aligned = self.locate(bundle, rows, u).refs
            for oid, ref in aligned.items():
                self.op_by_id(oid).ref = ref
        else:
            bundle = self.scan(bundle, u)
            aligned = bundle.refs
            union = e.op in "+-"
            if union and not bundle.full:
                self.check_vanishes(other, acc_side, e, u)
            prim = "union_val" if union else "intersect_val"
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
        joined = _Val(val, spacc=_Acc({**acc.spacc.crds, u: crd}, acc.spacc.reduction),
                      intra=acc.intra)
        if self.deep and (key in self.postponed or
                          not {op.id for op in group} <= set(aligned)):
            joined = self.after_join(key, crd, group, set(aligned), other, joined,
                                     later or [])
        other_val = self.value(other)
        return (joined, other_val) if acc_side is e.left else (other_val, joined)

    def after_join(self, key: tuple[str, int], crd: str, group: list[_Operand],
                   aligned: set[str], other: Expr, joined: _Val, later: Sequence[str]
                   ) -> _Val:
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

    def rows_of(self, e: BinOp, a: _Val, b: _Val) -> _Acc | None:
        """The accumulator rows a product streams on: one side's, when the other side was
        broadcast over all of their crds (anything else cannot meet them)."""
        for side, other, val in ((a, e.right, b), (b, e.left, a)):
            if side.spacc is None:
                continue
            over = self.hoisted.get(id(other), ())
            if val.spacc is not None or e.op not in "*/" or \
                    not set(side.spacc.crds) <= set(over):
                raise self.spacc_misuse(side, other)
            return side.spacc
        return None

    def spacc_misuse(self, val: _Val, other: Expr) -> LoweringError:
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

    def reduce(self, e: Reduction) -> _Val:
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
            return _Val(port, intra=intra)
        return self.accumulate_chain(e, _Val(port, intra=intra), nest, left, body.spacc)

    def accumulate_chain(self, e: Reduction, val: _Val, nest: list[str],
                         left: set[str], rows: _Acc | None) -> _Val:
        """Reduced indices above kept ones: one accumulator per reduced index, innermost
        first, each fed the crds its inner neighbour emits (higher-order accumulation
        with existing primitives: ``sum(j,k)`` over ``i,j,k,l`` is a ``spacc`` over
        ``k`` feeding a ``spacc`` over ``j``)."""
        crds = {v: self.crd_of(v) for v in nest if v not in left}
        crds.update(rows.crds if rows else {})  # an inner accumulator's rows, streamed on
        kept: list[str] = []
        acc: _Val | None = None
        for v in reversed(nest):
            if v not in left:
                kept.insert(0, v)
                continue
            if len(kept) not in _ACCUMULATORS or e.op != "sum":
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
        if kept in _ACCUMULATORS:
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

    def accumulate(self, e: Reduction, val: _Val, r: str, kept: list[str],
                   crds: Mapping[str, str]) -> _Val:
        """A ``spacc`` (one kept level), ``spacc2`` (two) or ``spacc3`` (three) summing
        over ``r``.

        ``crds`` gives each kept index's current coordinate stream (joined, or emitted by
        an inner accumulator). Its crd outputs replace the kept indices' coordinates for
        what follows: they carry only the coordinates some reduced fiber had.
        """
        prim = _ACCUMULATORS[len(kept)]
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
        return _Val(f"{acc}.val", spacc=_Acc(out, e), intra=val.intra)

    def outer_ref(self, nest: list[str], col: str) -> str:
        """A reference stream with one token per fiber of the innermost index."""
        if not nest:
            if self._root is None:
                self._root = self.node("root", "root", VAL_ROW, col)
            return f"{self._root}.ref"
        self.crd_of(nest[-1])
        return next(iter(self.step_refs[nest[-1]].values()))

    # -- output -------------------------------------------------------------------------
    def write(self, val: _Val) -> None:
        if val.port is None:
            raise self.fail("the right-hand side is constant; there is nothing to stream",
                            self.rhs)
        name = self.target.tensor
        fmt = self.layouts[name].format
        levels = [self.target.indices[m] for m in fmt.mode_order]
        crds = [self.crd_of(v) for v in levels]
        full = [self.full[v] for v in levels]
        rows: set[int] = set()  # levels above a spacc2/3's innermost: never empty
        if val.spacc is not None:
            for v, port in val.spacc.crds.items():
                k = levels.index(v)
                crds[k], full[k] = port, False
                rows.add(k)
            rows.discard(max(rows))
        val_port = val.port
        if self.par:
            crds, val_port = self.parallelize(levels, crds, val_port)
        for lvl in range(len(levels) - 2, -1, -1):
            if fmt.levels[lvl] == "compressed" and not full[lvl + 1] and lvl not in rows:
                drop = self.node(f"drop_{self.user(levels[lvl])}", "crddrop", levels[lvl],
                                 name)
                self.b.edge(crds[lvl], f"{drop}.outer_in")
                self.b.edge(crds[lvl + 1], f"{drop}.inner_in")
                crds[lvl], crds[lvl + 1] = f"{drop}.outer", f"{drop}.inner"
                full[lvl] = False
        for lvl, (v, crd) in enumerate(zip(levels, crds, strict=True)):
            w = self.node(f"{name}_{self.user(v)}", "level_writer", v, name, tensor=name,
                          level=lvl)
            self.b.edge(crd, f"{w}.crd")
            self.refer(v, name, crd)
        vw = self.node(f"{name}_val", "value_writer", VAL_ROW, name, tensor=name)
        self.refer(VAL_ROW, name, val.port)
        self.b.edge(val_port, f"{vw}.val")

    def parallelize(self, levels: list[str], crds: list[str], val: str
                    ) -> tuple[list[str], str]:
        """Replicate the graph per lane of every parallel index, innermost first; the
        output streams the writers read (``docs/parallel.md``)."""
        # every output port of the one-lane graph -> its copies, lane by lane
        current = {f"{n.id}.{p.name}": [f"{n.id}.{p.name}"]
                   for n in self.b.nodes for p in n.primitive.outputs}
        outputs = [*crds, val]
        inner = 1  # innermost lanes in one lane of the index being replicated
        for v in sorted(self.par, key=self.pos.__getitem__, reverse=True):
            assert v in levels, "plan_lanes admits output indices only"
            at = levels.index(v)
            if len(levels) - at > 2:
                raise self.fail(
                    f"index {self.user(v)!r} has {len(levels) - at} output levels at and "
                    "below it; the lane merges (lane_merge, lane_merge2) handle one or two: "
                    "parallelise an index nearer the innermost output level")
            cuts = [(c, [current[r][t] for r in refs]) for crd, refs in self.cuts[v]
                    for t, c in enumerate(current[crd])]
            rep = replicate(self.b, f"l{self.user(v)}", cuts,
                            [current[p][0] for p in outputs[at:]], self.par[v],
                            self.lane_buffer * inner)
            inner *= len(self.par[v])
            current = {p: [q for c in cs for q in rep.aliases[c]] for p, cs in current.items()}
            for p, m in zip(outputs[at:], rep.merged, strict=True):
                current[p] = [m]
            self.lane_of = {nid: f"{self.user(v)}{k}" + (
                f".{self.lane_of[rep.origin[nid]]}" if rep.origin.get(nid) in self.lane_of
                else "") for k, ids in enumerate(rep.lanes) for nid in ids}
        final = [current[p][0] for p in outputs]
        return final[:-1], final[-1]


_F32_MAX = float(np.finfo(np.float32).max)


def _f32(x: float) -> float:
    """``x`` rounded to float32 (beyond its range: ±inf, as IEEE-754 rounding gives)."""
    if math.isfinite(x) and abs(x) > _F32_MAX:
        return math.copysign(math.inf, x)
    return float(np.float32(x))


def _rsqrt(x: float) -> float:
    return 1.0 / math.sqrt(x) if x > 0 else math.inf if x == 0 else math.nan


#: constant folding of the functions, rounded to float32 as the unary primitive rounds
_FOLD = {
    "relu": lambda x: max(_f32(x), 0.0),
    "exp": lambda x: _f32(math.exp(min(_f32(x), 100.0))),
    "rsqrt": lambda x: _f32(_rsqrt(_f32(x))),
}


def _vanishes(e: Expr, v: str) -> bool:
    """Whether ``e`` is 0 at a coordinate of ``v`` where its operands that are iterated at
    ``v`` are absent: they read as 0, while operands without ``v`` are broadcast."""
    if isinstance(e, Access):
        return v in e.indices
    if isinstance(e, Const):
        return e.value == 0
    if isinstance(e, Neg):
        return _vanishes(e.operand, v)
    if isinstance(e, Reduction):
        return _vanishes(e.body, v)
    if isinstance(e, Call):
        return _FOLD[e.fn](0.0) == 0.0 and _vanishes(e.arg, v)
    assert isinstance(e, BinOp)
    if e.op in "*/":  # one vanishing factor is enough (x / 0 = 0 in the primitives)
        return _vanishes(e.left, v) or _vanishes(e.right, v)
    return _vanishes(e.left, v) and _vanishes(e.right, v)
