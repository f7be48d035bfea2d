"""Estimated row lengths of a tensor an earlier region computes, for position lanes.

A position partition cuts the work of its key operand ``K(v, w)``; in a model the key may
be an intermediate (``T`` in ``Y = T·C`` with ``T = A·B``), whose entries exist only at
run time. Its split points then come from the statistics of the data its statement reads,
the way the cost model prices a join (independent, uniformly spread entries): the row
lengths of ``A·B`` follow from the rows of ``A`` and the row lengths of ``B``,

    E[len T_i] = N_j · (1 − Π_{k ∈ A_i} (1 − nnz(B_k) / N_j)),

a product intersects densities, a sum unites them, and a computed operand's own rows are
estimated the same way, statement by statement. What the estimate cannot follow (a
reduction over more than one index, several operands holding the row) gives ``None``:
equal work per row.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ir import FiberTree, Format, Program

from ._ast import Access, BinOp, Call, Const, Expr, Neg, Reduction
from ._normalize import normalize
from ._parse import parse

__all__ = ["computed_rows"]

#: a per-coordinate density, or one density for every coordinate
Density = np.ndarray | float


def computed_rows(program: Program, formats: Mapping[str, str], data: Mapping[str, Any],
                  tensor: str) -> np.ndarray | None:
    """Expected stored entries under each coordinate of ``tensor``'s first stored index,
    from the data its statement (and the statements before it) read; None when its
    statement is beyond the estimate or reads a tensor with neither data nor statement."""
    return _Estimator(program, formats, data).rows(tensor)


class _Estimator:
    def __init__(self, program: Program, formats: Mapping[str, str],
                 data: Mapping[str, Any]) -> None:
        self.program, self.formats, self.data = program, formats, data
        # implicit sums placed (``T(i,k) = A(i,m) * B(m,k)`` sums over ``m``)
        self.defined = {s.target: normalize(parse(s.text)).assignment
                        for s in program.statements}
        self.memo: dict[str, np.ndarray | None] = {}

    def fmt(self, t: str) -> Format:
        return Format.parse(self.formats.get(t, self.program.tensors[t].format),
                            len(self.program.tensors[t].shape))

    def rows(self, t: str) -> np.ndarray | None:
        """Entries per coordinate of ``t``'s first stored mode (memoised)."""
        if t not in self.memo:
            self.memo[t] = None  # a cycle is beyond the estimate
            self.memo[t] = self._rows(t)
        return self.memo[t]

    def _rows(self, t: str) -> np.ndarray | None:
        shape, first = self.program.tensors[t].shape, self.fmt(t).mode_order[0]
        if self._given(t):
            return self.along(t, first)
        assign = self.defined.get(t)
        if assign is None:
            return None
        r = assign.target.indices[first]
        rest = math.prod(s for m, s in enumerate(shape) if m != first)
        d = self.density(assign.rhs, r)
        if d is None:
            return None
        return np.broadcast_to(np.asarray(d, dtype=np.float64), (shape[first],)) * rest

    def _given(self, t: str) -> bool:
        x = self.data.get(t)
        return x is not None and not isinstance(x, int | float)

    def along(self, t: str, mode: int) -> np.ndarray | None:
        """Stored entries of ``t`` under each coordinate of ``mode``."""
        if self._given(t):
            coords = FiberTree.from_any(self.data[t], self.fmt(t)).to_coo(keep_zeros=True)[0]
            return np.bincount(coords[mode], minlength=self.program.tensors[t].shape[mode]
                               ).astype(np.float64)
        return self.rows(t) if mode == self.fmt(t).mode_order[0] else None

    def total(self, t: str) -> float | None:
        rows = self.rows(t)
        return None if rows is None else float(rows.sum())

    def profile(self, a: Access, u: str) -> Density | None:
        """Density of ``a`` per coordinate of its index ``u`` over its other indices
        (one density if ``u`` is not among them or its profile is unknown)."""
        shape = self.program.tensors[a.tensor].shape
        if u in a.indices:
            m = a.indices.index(u)
            per = self.along(a.tensor, m)
            if per is not None:
                return per / max(1, math.prod(s for k, s in enumerate(shape) if k != m))
        nnz = self.total(a.tensor)
        return None if nnz is None else nnz / max(1, math.prod(shape))

    def density(self, e: Expr, r: str) -> Density | None:
        """The expected fraction of the other output coordinates stored under each
        coordinate of ``r``."""
        if isinstance(e, Access):
            return self.profile(e, r)
        if isinstance(e, Const):
            return 1.0
        if isinstance(e, Neg):
            return self.density(e.operand, r)
        if isinstance(e, Call):
            return self.density(e.arg, r)
        if isinstance(e, BinOp):
            left, right = self.density(e.left, r), self.density(e.right, r)
            if left is None or right is None:
                return None
            if e.op == "*":
                return left * right
            if e.op == "/":
                return left
            return 1.0 - (1.0 - left) * (1.0 - right)
        if isinstance(e, Reduction) and e.op == "sum" and len(e.indices) == 1:
            return self._reduced(e.body, r, e.indices[0])
        return None

    def _reduced(self, body: Expr, r: str, k: str) -> Density | None:
        """``sum(k) F(r,k) · rest(k, …)``: a row is stored where any of its ``k`` meets
        a stored entry of the rest, ``1 − Π_{k ∈ F_r} (1 − q_k)``."""
        factors = _product(body)
        if factors is None:
            return None
        holders = [f for f in factors if r in f.indices]
        if len(holders) != 1 or k not in holders[0].indices or len(holders[0].indices) != 2:
            return None
        q: Density = 1.0
        for f in factors:
            if f is not holders[0]:
                p = self.profile(f, k)
                if p is None:
                    return None
                q = q * p
        miss = np.log1p(-np.minimum(np.asarray(q, dtype=np.float64), 1.0 - 1e-12))
        f = holders[0]
        if self._given(f.tensor):
            coords = FiberTree.from_any(self.data[f.tensor], self.fmt(f.tensor)).to_coo(
                keep_zeros=True)[0]
            shape = self.program.tensors[f.tensor].shape
            import scipy.sparse as sp  # on first use: `samfuse --help` and sim import no scipy

            pattern = sp.csr_matrix((np.ones(coords.shape[1]), (
                coords[f.indices.index(r)], coords[f.indices.index(k)])),
                shape=(shape[f.indices.index(r)], shape[f.indices.index(k)]))
            miss = np.broadcast_to(miss, (pattern.shape[1],))
            return 1.0 - np.exp(pattern @ miss)
        per = self.profile(f, r)  # computed: its entries per row, each meeting the mean
        if per is None:
            return None
        n_k = self.program.tensors[f.tensor].shape[f.indices.index(k)]
        return 1.0 - np.exp(np.asarray(per) * n_k * float(np.mean(miss)))


def _product(e: Expr) -> list[Access] | None:
    """The accesses a product multiplies (constants dropped), None if ``e`` is not one."""
    if isinstance(e, Access):
        return [e]
    if isinstance(e, Const):
        return []
    if isinstance(e, BinOp) and e.op == "*":
        left, right = _product(e.left), _product(e.right)
        return None if left is None or right is None else left + right
    return None
