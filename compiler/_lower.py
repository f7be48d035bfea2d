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

The lowering is one object assembled from a mixin per concern, each in its own module:

- ``_lower_state``: operands, joined coordinates (``Bundle``), value streams (``Val``)
  and the bookkeeping every part shares; every node is created through
  :meth:`LowerState.node`, which records it in the fusion table (``_table.py``) at its
  index row and tensor-view column;
- ``_lower_iterate``: one step per index, repeats, deferral to epilogues;
- ``_lower_join``: scanning and joining at one index, and the locate/scan policy
  (:func:`_lower_join.locates`);
- ``_lower_values``: arrays, ALUs, unary functions, constant folding, broadcasts;
- ``_lower_accumulate``: reducers, sparse accumulators and epilogue joins;
- ``_lower_write``: writers, ``crddrop`` and lane replication.

The operators' properties (intersect or union, ALU op, constant forms) come from one
table, :data:`_operators.OPERATORS`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ir import GraphBuilder

from ._ast import accesses
from ._layout import Layout
from ._lower_accumulate import Accumulation
from ._lower_iterate import Iteration
from ._lower_join import Joins
from ._lower_values import Values
from ._lower_write import Writing
from ._normalize import Normalized
from ._parallel import DEFAULT_LANE_BUFFER, LaneSplit
from ._table import VAL_ROW, FusionTable

__all__ = ["lower_order", "Lowered"]


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


class _Lowerer(Iteration, Joins, Values, Accumulation, Writing):
    """The whole lowering: set-up, every index's step, the value, the writers."""

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
