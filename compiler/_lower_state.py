"""The lowering's state and vocabulary: operands, joined coordinates, value streams.

:class:`LowerState` holds what every part of the lowering reads and extends — the
operands, the coordinates of each loop, the graph builder and the fusion table — and
creates every node through :meth:`LowerState.node`, which records it in the table at its
index row and tensor-view column. The parts (``_lower_iterate``, ``_lower_join``,
``_lower_values``, ``_lower_accumulate``, ``_lower_write``) are mixins on it, combined in
``_lower._Lowerer``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ir import GraphBuilder

from ._ast import Access, Expr, Reduction, walk
from ._blocks import BlockPlan
from ._errors import LoweringError
from ._factor import Factorer
from ._layout import Layout
from ._normalize import Normalized
from ._parallel import LaneSplit
from ._table import VAL_ROW, Entry, FusionTable

__all__ = ["Operand", "Bundle", "BCAST", "Acc", "Val", "ACCUMULATORS", "LowerState"]


@dataclass
class Operand:
    """One tensor access of the expression and its iteration state."""

    id: str
    access: Access
    levels: tuple[str, ...]  # internal index stored at each level
    kinds: tuple[str, ...]  # "dense"/"compressed" per level
    context: tuple[str, ...]  # indices it is iterated over, in dataflow order
    ref: str = ""  # current reference stream (node.port)
    maybe_empty: bool = False  # whether ``ref`` can carry N (after a union)
    next_level: int = 0

    def full_at(self, level: int) -> bool:
        """Whether ``level`` yields every coordinate in every fiber: dense, and read from
        a reference that cannot be ``N``."""
        return self.kinds[level] == "dense" and not self.maybe_empty


@dataclass
class Bundle:
    """Joined coordinates at one index, with the aligned reference of each operand."""

    crd: str
    refs: dict[str, str]
    full: bool  # every coordinate of the dimension, in every fiber
    #: a dense level not scanned yet (operand, level): an intersection with a sparser
    #: stream may locate into it instead (:func:`_lower_join.locates`); else it is scanned
    dense: tuple[Operand, int] | None = None


BCAST = None  # an expression that does not depend on the index: present everywhere


@dataclass(frozen=True)
class Acc:
    """What a sparse accumulator emits: it replaces the crds of the kept indices below it."""

    crds: dict[str, str]  # kept index -> the accumulator's crd port for it
    reduction: Reduction


@dataclass
class Val:
    """A value stream (``port``) or a constant folded at compile time."""

    port: str | None = None
    const: float | None = None
    #: set when the value comes out of a sparse accumulator (spacc or spacc2)
    spacc: Acc | None = None
    #: the blocked indices inside each value (block sparsity), in canonical order
    intra: tuple[str, ...] = ()


#: accumulator primitive by the number of kept levels below the reduced index
ACCUMULATORS = {1: "spacc", 2: "spacc2", 3: "spacc3"}


class LowerState:
    """The lowering's shared state and bookkeeping (see the module docstring)."""

    def __init__(self, norm: Normalized, order: list[str], layouts: Mapping[str, Layout],
                 dtype: str, depth: int | None, name: str,
                 par: Mapping[str, Sequence[LaneSplit]], lane_buffer: int,
                 blocks: Mapping[str, int], deep: bool = False) -> None:
        self.norm, self.order, self.layouts = norm, order, layouts
        self.deep = deep
        #: a deep epilogue's join (index, id of the reduction whose rows it meets) -> the
        #: later steps of its deferred operands, run after the join: (index, operands)
        self.postponed: dict[tuple[str, int], list[tuple[str, list[Operand]]]] = {}
        #: operand id -> the join it is deferred to (deep epilogues)
        self.joins: dict[str, tuple[str, int]] = {}
        self.par, self.lane_buffer = par, lane_buffer
        self.blocks = BlockPlan(norm, blocks)
        #: operand id -> the index its iteration is deferred at (an epilogue operand)
        self.deferred: dict[str, str] = {}
        #: id(reduction) -> the reduction, for the reductions epilogues join with
        self.reds: dict[int, Reduction] = {}
        self.deferred_at: dict[str, list[Operand]] = {}
        #: per parallel index, each join's crd port and its ref ports (what a lane
        #: splits): the index's step, and an epilogue union there
        self.cuts: dict[str, list[tuple[str, list[str]]]] = {}
        #: position partition: the level a parallel index's lanes cut by position -> its
        #: key operand, and that level's joins (crd, refs, the key's ref)
        self.windowed = {s[0].at: s[0].key for s in par.values() if s and s[0].windows}
        self.window_cuts: dict[str, list[tuple[str, list[str], str]]] = {}
        #: interleaved windows: a parallel index's joined crd -> the key operand's ref
        #: there, whose positions the lanes' coordinate ranges are kept by
        self.cut_keys: dict[str, str] = {}
        self.lane_of: dict[str, str] = {}
        self.src = norm.assignment.source or None
        self.pos = {v: n for n, v in enumerate(order)}
        self.order_text = ",".join(norm.user[v] for v in order)
        self.dtype = dtype
        self.b = GraphBuilder(name, dtype, depth)
        self.target = norm.assignment.target
        self.rhs = norm.assignment.rhs
        self.ops: dict[int, Operand] = {}  # id(Access) -> operand
        self._operands: dict[int, list[Operand]] = {}  # id(node) -> operands under it
        factorer = Factorer(self.rhs, self.target.indices, deep)
        plan = factorer.plan(order)
        self.context = plan.context  # id(node) -> the loops it is computed in
        self.hoisted = plan.hoisted  # id(node) -> the later loops it is broadcast over
        self.inside = factorer.inside  # id(reduction) -> the ids of the accesses under it
        self.subtrees = factorer.subtrees  # the accesses under each node
        self.indices_under = factorer.subtrees.indices  # id(node) -> its accesses' indices
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
        self.view[key] = self.table.add_column(text)

    def first(self, e: Expr) -> str:
        """The column of an expression's value nodes: that of its first operand."""
        return self.ops[id(self.subtrees.under(e)[0])].id

    def fail(self, msg: str, at: Expr | None = None) -> LoweringError:
        col = getattr(at, "col", 0) or None
        return LoweringError(msg, self.src if col else None, col)

    def user(self, v: str) -> str:
        return self.norm.user[v]

    @staticmethod
    def show(e: Expr) -> str:
        """A subexpression as the user wrote it (internal names like ``k#2`` mapped back)."""
        return re.sub(r"#\d+", "", str(e))

    def collect(self, e: Expr) -> None:
        """Create an operand per access, iterated over its context in the plan."""
        taken = {op.id for op in self.ops.values()}
        tried: dict[str, int] = {}  # tensor -> its last suffix taken (names only grow)
        for node in walk(e):
            if isinstance(node, Reduction):
                for v in node.indices:
                    self.owner[v] = node
            if not isinstance(node, Access):
                continue
            fmt = self.layouts[node.tensor].format
            n = tried.get(node.tensor, 0) + 1
            oid = node.tensor if n == 1 else f"{node.tensor}{n}"
            while oid in taken or (n > 1 and oid in self.layouts):
                n += 1
                oid = f"{node.tensor}{n}"
            tried[node.tensor] = n
            self.ops[id(node)] = Operand(oid, node,
                                         tuple(node.indices[m] for m in fmt.mode_order),
                                         fmt.levels, self.context[id(node)])
            taken.add(oid)
            self.add_view(oid, str(node))

    def operands(self, e: Expr) -> list[Operand]:
        found = self._operands.get(id(e))
        if found is None:
            found = self._operands[id(e)] = [self.ops[id(n)]
                                             for n in self.subtrees.under(e)]
        return found

    def op_by_id(self, oid: str) -> Operand:
        return next(op for op in self.ops.values() if op.id == oid)
