"""Position-space partitioning: one heavy fiber spans lanes (Chougule et al., 2026).

``--partition position`` parallelises the outermost loop ``v`` like ``balanced``, but
cuts the *position space* of the level below it, ``w``: the stored entries of a key
operand ``K(v, w)`` in storage order (for SpMM and SpMV, the nonzeros of ``A`` in CSR
order, the co-iteration at the reduction level). The positions are dealt into contiguous
windows of equal *work* measured on the data, the merge-path idea: the work of a position
is the entries every operand contributes under its ``(v, w)`` coordinate. A window may
start and end inside a fiber, so lane ``ℓ`` iterates the rows that hold its window (a
coordinate range of ``v``, shared with a neighbour at a split row) and keeps, at ``w``,
the positions of its window (``position_split``); the lanes' partial rows are added back
in coordinate order by the lane reductions (``lane_combine``, ``lane_combine2``).

Correct when every value of the expression is computed under a position of ``K``: ``K``
multiplies the whole right-hand side (an intersection with every other operand, however
nested unions sit under it) and the only reduction is a sum, whose partials add.

Hierarchical: a nested parallel index cuts the positions of its own level the same way,
by a key ``K2(p, u)`` (``p`` the loop above it). In a model, a key an earlier region
computes has no positions when compiling: its rows are dealt by the work the cost
model's statistics estimate for them (``_position_estimate.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ir import CompressedLevel, FiberTree, Format, Program

from ._ast import Access, BinOp, Expr, Reduction, accesses
from ._errors import LoweringError
from ._normalize import Normalized
from ._parallel import LaneSplit
from ._partition import LanePlan, _given, balanced_ranges
from ._position_estimate import computed_rows

__all__ = ["plan_positions", "model_positions", "POSITION_PARTITIONS", "MAX_ROUNDS",
           "MIN_WINDOW"]

#: the partitions that cut positions: interleaved windows, and one window a lane
POSITION_PARTITIONS = ("position", "position-contiguous")
#: interleaved windows: at most this many a lane (each is a comparator pair in hardware)
MAX_ROUNDS = 16
#: ... and at least this many positions in a window on average (a window boundary inside
#: a fiber makes two lanes scan that fiber and the combine add a partial)
MIN_WINDOW = 32


def plan_positions(norm: Normalized, par: Mapping[str, int], order: Sequence[str],
                   sizes: Mapping[str, int], fmts: Mapping[str, Format],
                   tensors: Mapping[str, Any], nested: LanePlan,
                   contiguous: bool = False,
                   estimates: Mapping[str, np.ndarray] | None = None) -> LanePlan:
    """The lanes' row ranges and position windows for the outermost parallel index of
    ``par`` (checked already by ``plan_lanes``), and the imbalance they predict; the
    other parallel indices (hierarchical lanes, nested inside these) cut the positions
    of their own level (:func:`_nest`) or keep their round-robin splits from ``nested``.
    ``order`` is the internal order.
    ``contiguous``: one window a lane (``position-contiguous``), else interleaved.
    ``estimates``: a computed key's expected entries per row (:func:`computed_rows`),
    whose rows are dealt instead (:func:`_estimated`)."""
    wide = {name: n for name, n in par.items() if n > 1}
    if not wide:
        return LanePlan()
    internal = {norm.user[v]: v for v in norm.indices}
    name = norm.user[order[0]] if order else ""
    if len(order) < 2 or name not in wide:
        shown = ",".join(norm.user[u] for u in order)
        raise LoweringError(f"partition position splits the level below the outermost loop, "
                            f"but {', '.join(wide)} is not outermost in the order {shown}: "
                            f"put a parallel index first")
    lanes, v = wide[name], internal[name]
    w = order[1]
    if norm.user[w] in wide:
        raise LoweringError(f"partition position cuts the positions of {norm.user[w]!r} "
                            f"under {name!r}, so {norm.user[w]!r} cannot have lanes of its "
                            "own: nest lanes on an index below it")
    _check_sums(norm.assignment.rhs)
    key = _key(norm, v, w, fmts)
    if _given(tensors.get(key.tensor)):
        plan = _measured(norm, key, v, w, lanes, sizes, fmts, tensors, nested, contiguous)
    elif key.tensor in (estimates or {}):
        plan = _estimated(norm, key, v, w, lanes, sizes, fmts, tensors, nested,
                          estimates[key.tensor], contiguous)
    else:
        raise LoweringError(f"partition position measures the positions of {key.tensor!r} "
                            "on the data, which was not given: pass every input's data "
                            "(samfuse compile --input NAME=FILE; compile_expression(stats="
                            "{name: tensor}))")
    for inner, n in wide.items():
        if inner != name:
            _nest(plan, norm, internal[inner], n, order, sizes, fmts, tensors, contiguous)
    return plan


def _measured(norm: Normalized, key: Access, v: str, w: str, lanes: int,
              sizes: Mapping[str, int], fmts: Mapping[str, Format],
              tensors: Mapping[str, Any], nested: LanePlan, contiguous: bool) -> LanePlan:
    """A given key: its positions at ``w`` cut into windows of equal measured work."""
    fmt = fmts.get(key.tensor) or Format.dense(len(key.indices))
    tree = FiberTree.from_any(tensors[key.tensor], fmt)
    rows, cols = _positions(tree, fmt)
    work = np.ones(len(rows), dtype=np.float64)
    for a in accesses(norm.assignment.rhs):
        if a is not key:
            work += _contribution(a, v, w, rows, cols, sizes, fmts, tensors)
    rounds = 1 if contiguous else max(1, min(MAX_ROUNDS, len(rows) // (lanes * MIN_WINDOW)))
    windows = balanced_ranges(work, lanes * rounds)
    if rounds == 1:
        splits = _contiguous(windows, rows, sizes[v], w, key.tensor)
    else:
        at_v = _outer_positions(tree, rows)
        splits = [_interleaved(windows[k::lanes], at_v, w, key.tensor)
                  for k in range(lanes)]
    shares = [float(sum(work[lo:hi].sum() for lo, hi in windows[k::lanes]))
              for k in range(lanes)]
    return LanePlan({**nested.splits, v: splits},
                    {**nested.imbalance, **_imbalance(norm.user[v], shares)})


def _nest(plan: LanePlan, norm: Normalized, u: str, lanes: int, order: Sequence[str],
          sizes: Mapping[str, int], fmts: Mapping[str, Format], tensors: Mapping[str, Any],
          contiguous: bool) -> None:
    """A nested parallel index ``u`` cuts the positions of its own level, held by a key
    ``K(p, u)`` (``p`` the loop above ``u``) that multiplies the whole right-hand side:
    one fiber of ``u`` spans lanes, whose partials the lane reductions add. Its windows
    are of equal work, a position's work being 1 plus the times its fiber is entered.
    Without such a key (a union at ``u``) or its data, ``u`` keeps ``plan``'s
    round-robin lanes."""
    p = order[order.index(u) - 1]
    key = next((a for a in _factors(norm.assignment.rhs)
                if _stored(a, fmts) == [p, u] and _given(tensors.get(a.tensor))), None)
    if key is None:
        return
    fmt = fmts.get(key.tensor) or Format.dense(2)
    tree = FiberTree.from_any(tensors[key.tensor], fmt)
    rows, _ = _positions(tree, fmt)
    work = 1.0 + _visits(norm, key, p, order, sizes, fmts, tensors)[rows]
    rounds = 1 if contiguous else max(1, min(MAX_ROUNDS, len(rows) // (lanes * MIN_WINDOW)))
    windows = balanced_ranges(work, lanes * rounds)
    plan.splits[u] = [LaneSplit(1, 0, 0, 0, key=key.tensor, shares=True, ranges=tuple(
        (lo, hi) for lo, hi in windows[k::lanes] if hi > lo) or ((0, 0),))
        for k in range(lanes)]
    plan.imbalance.update(_imbalance(norm.user[u], [
        float(sum(work[lo:hi].sum() for lo, hi in windows[k::lanes]))
        for k in range(lanes)]))


def _visits(norm: Normalized, key: Access, p: str, order: Sequence[str],
            sizes: Mapping[str, int], fmts: Mapping[str, Format],
            tensors: Mapping[str, Any]) -> np.ndarray:
    """How often each fiber ``p`` of the key is entered: the fewest entries at ``p`` of
    an operand that reaches ``p`` from a loop above it (``A(i,k)`` for ``B(k,j)``: the
    nonzeros of column ``k`` of ``A``); once each when none does."""
    above = set(order[:order.index(p)])
    counts = [np.bincount(_coords(a, fmts, tensors)[a.indices.index(p)],
                          minlength=sizes[p])[:sizes[p]].astype(np.float64)
              for a in accesses(norm.assignment.rhs)
              if a is not key and p in a.indices and above & set(a.indices)
              and _given(tensors.get(a.tensor))]
    return np.minimum.reduce(counts) if counts else np.ones(sizes[p])


def _imbalance(name: str, shares: list[float]) -> dict[str, float]:
    """The largest lane's share of the work over the mean lane's."""
    mean = sum(shares) / len(shares)
    return {name: max(shares) / mean} if mean > 0 else {}


def _stored(a: Access, fmts: Mapping[str, Format]) -> list[str]:
    """``a``'s indices in storage order."""
    fmt = fmts.get(a.tensor) or Format.dense(len(a.indices))
    return [a.indices[m] for m in fmt.mode_order]


def _coords(a: Access, fmts: Mapping[str, Format], tensors: Mapping[str, Any]) -> np.ndarray:
    """Coordinates of every stored entry of ``a`` (mode order)."""
    fmt = fmts.get(a.tensor) or Format.dense(len(a.indices))
    return FiberTree.from_any(tensors[a.tensor], fmt).to_coo(keep_zeros=True)[0]


def model_positions(program: Program, formats: Mapping[str, str], job: Any,
                    order: Sequence[str], par: Mapping[str, int], partition: str,
                    given: Mapping[str, Any], nested: LanePlan) -> LanePlan:
    """:func:`plan_positions` for a kernel of a model (``job``: its prepared
    expression; ``order``: its internal order): the bound tensors are measured, and a
    key an earlier region computes is dealt by its estimated rows (:func:`computed_rows`;
    equal rows where the estimate cannot follow its statement). A kernel that position
    lanes cannot cut (no key, a reduction other than a sum) keeps ``nested``'s
    round-robin lanes, and says why (``LanePlan.fallback``)."""
    if job.blocks:
        raise LoweringError("partition position adds the lanes' partial values, which the "
                            "lane reductions do for scalar values only: drop block, or use "
                            "balanced")
    estimates = {}
    for a in accesses(job.norm.assignment.rhs):
        if not _given(given.get(a.tensor)):
            rows = computed_rows(program, formats, given, a.tensor)
            first = (job.fmts.get(a.tensor) or Format.dense(len(a.indices))).mode_order[0]
            estimates[a.tensor] = rows if rows is not None else np.ones(
                program.tensors[a.tensor].shape[first])
    try:
        return plan_positions(job.norm, par, order, job.idx_sizes, job.fmts, given, nested,
                              partition == "position-contiguous", estimates)
    except LoweringError as exc:  # a schedule-wide partition: this kernel deals coordinates
        return LanePlan(nested.splits, nested.imbalance, fallback=exc.message)


def _estimated(norm: Normalized, key: Access, v: str, w: str, lanes: int,
               sizes: Mapping[str, int], fmts: Mapping[str, Format],
               tensors: Mapping[str, Any], nested: LanePlan, rows: np.ndarray,
               contiguous: bool) -> LanePlan:
    """A key an earlier region computes: its positions are unknown when compiling, so
    its *rows* are dealt, in windows of equal estimated work (a row's expected entries
    ``rows``, each bringing the other operands' mean entries): interleaved coordinate
    ranges kept by a ``position_split`` on the key's level-0 positions (its rows when
    that level is dense), else (a compressed level, ``position-contiguous``) one range a
    lane. A heavy row stays on one lane; other parallel indices keep ``nested``."""
    work = np.asarray(rows, dtype=np.float64) * (1.0 + sum(
        _mean_contribution(a, v, w, sizes, fmts, tensors)
        for a in accesses(norm.assignment.rhs) if a is not key))
    fmt = fmts.get(key.tensor) or Format.dense(2)
    dense_rows = fmt.is_dense(0)
    rounds = 1 if contiguous or not dense_rows else max(1, min(
        MAX_ROUNDS, int(rows.sum()) // (lanes * MIN_WINDOW)))
    if rounds == 1:
        windows = balanced_ranges(work, lanes)
        splits = [LaneSplit(1, 0, lo, hi) for lo, hi in windows]
        shares = [float(work[lo:hi].sum()) for lo, hi in windows]
    else:
        dealt, shares = _deal_rows(work, lanes, rounds)
        splits = [LaneSplit(1, 0, 0, 0, key=key.tensor, ranges=tuple(r) or ((0, 0),))
                  for r in dealt]
    return LanePlan({**nested.splits, v: splits},
                    {**nested.imbalance, **_imbalance(norm.user[v], shares)},
                    (norm.user[v],))


def _deal_rows(work: np.ndarray, lanes: int, rounds: int
               ) -> tuple[list[list[tuple[int, int]]], list[float]]:
    """Rows in order, gathered into windows of at least ``1 / (lanes · rounds)`` of the
    work, each given to the lane with the least work so far (a row heavier than a
    window is a window of its own, and the lanes after it catch up); each lane's
    ascending windows (adjacent ones joined) and its work."""
    size = float(work.sum()) / (lanes * rounds)
    dealt: list[list[tuple[int, int]]] = [[] for _ in range(lanes)]
    load = [0.0] * lanes
    lo, acc = 0, 0.0
    for c, x in enumerate(work):
        acc += float(x)
        if acc >= size or c == len(work) - 1:
            k = load.index(min(load))
            load[k] += acc
            mine = dealt[k]
            if mine and mine[-1][1] == lo:
                mine[-1] = (mine[-1][0], c + 1)
            else:
                mine.append((lo, c + 1))
            lo, acc = c + 1, 0.0
    return dealt, load


def _mean_contribution(a: Access, v: str, w: str, sizes: Mapping[str, int],
                       fmts: Mapping[str, Format], tensors: Mapping[str, Any]
                       ) -> np.ndarray | float:
    """Entries operand ``a`` brings under a position of row ``v`` on average
    (:func:`_contribution` without the positions' columns)."""
    if not _given(tensors.get(a.tensor)) or (v in a.indices and w in a.indices):
        return 1.0
    coords = _coords(a, fmts, tensors)
    if w in a.indices:
        return coords.shape[1] / max(1, sizes[w])
    if v in a.indices:
        return np.bincount(coords[a.indices.index(v)], minlength=sizes[v])[:sizes[v]]
    return float(coords.shape[1])


def _contiguous(windows: list[tuple[int, int]], rows: np.ndarray, n_rows: int, w: str,
                key: str) -> list[LaneSplit]:
    """One window a lane: lane ``k`` iterates the rows from its window's first to the
    next lane's first (shared when a window ends inside it), all rows between."""
    starts = [0] + [int(rows[lo]) if lo < len(rows) else n_rows for lo, _ in windows[1:]]
    splits = []
    for k, (lo, hi) in enumerate(windows):
        end = n_rows if k == len(windows) - 1 else starts[k + 1] + int(
            hi > lo and rows[hi - 1] == starts[k + 1])
        splits.append(LaneSplit(1, 0, starts[k], max(end, starts[k]), windows=((lo, hi),),
                                at=w, key=key))
    return splits


def _interleaved(windows: list[tuple[int, int]], rows: np.ndarray, w: str,
                 key: str) -> LaneSplit:
    """A lane's windows taken in turn with the other lanes': it iterates only the rows
    that hold them (``rows``: each position's row as the key's level-0 position, kept
    by a position split there)."""
    kept = tuple((lo, hi) for lo, hi in windows if hi > lo)
    ranges: list[tuple[int, int]] = []
    for lo, hi in kept:
        first, last = int(rows[lo]), int(rows[hi - 1]) + 1
        if ranges and first < ranges[-1][1]:
            ranges[-1] = (ranges[-1][0], max(ranges[-1][1], last))
        else:
            ranges.append((first, last))
    return LaneSplit(1, 0, 0, 0, windows=kept or ((0, 0),), at=w, key=key,
                     ranges=tuple(ranges) or ((0, 0),))


def _check_sums(e: Expr) -> None:
    """Lanes' partials are added: any other reduction would be combined wrongly."""
    for node in _walk(e):
        if isinstance(node, Reduction) and node.op != "sum":
            raise LoweringError(f"partition position adds the lanes' partial results, but "
                                f"the expression reduces with {node.op!r}: use balanced")


def _key(norm: Normalized, v: str, w: str, fmts: Mapping[str, Format]) -> Access:
    """The operand whose positions at ``w`` are dealt: it stores ``v`` then ``w`` and
    multiplies the whole right-hand side, so every value is computed under one of them."""
    for a in _factors(norm.assignment.rhs):
        if _stored(a, fmts) == [v, w]:
            return a
    raise LoweringError(
        f"partition position deals the positions of a matrix K({norm.user[v]},{norm.user[w]}) "
        f"stored {norm.user[v]}-major that multiplies the whole expression (as A in "
        f"A(i,k) * B(k,j)); {norm.assignment.rhs} has none: use balanced")


def _factors(e: Expr) -> list[Access]:
    """The accesses that multiply all of ``e``."""
    if isinstance(e, Reduction):
        return _factors(e.body)
    if isinstance(e, BinOp) and e.op == "*":
        return _factors(e.left) + _factors(e.right)
    return [e] if isinstance(e, Access) else []


def _walk(e: Expr):
    yield e
    for child in ("operand", "left", "right", "body", "arg"):
        sub = getattr(e, child, None)
        if sub is not None and not isinstance(sub, str | int | float):
            yield from _walk(sub)


def _positions(tree: FiberTree, fmt: Format) -> tuple[np.ndarray, np.ndarray]:
    """Row and column of every position of the key's level 1, in position order (every
    stored entry, zeros and a dense level's fill included)."""
    coo = tree.to_coo(keep_zeros=True)[0]
    return (np.asarray(coo[fmt.mode_order[0]], dtype=np.int64),
            np.asarray(coo[fmt.mode_order[1]], dtype=np.int64))


def _outer_positions(tree: FiberTree, rows: np.ndarray) -> np.ndarray:
    """The key's level-0 position of each row (its coordinate on a dense level)."""
    top = tree.levels[0]
    if isinstance(top, CompressedLevel):
        return np.searchsorted(np.asarray(top.crd), rows).astype(np.int64)
    return rows


def _contribution(a: Access, v: str, w: str, rows: np.ndarray, cols: np.ndarray,
                  sizes: Mapping[str, int], fmts: Mapping[str, Format],
                  tensors: Mapping[str, Any]) -> np.ndarray | float:
    """Entries operand ``a`` brings under each position (1 each when its data is not
    given): its own entry, its fiber at the position's ``w`` or ``v``, or all of it."""
    if not _given(tensors.get(a.tensor)):
        return 1.0
    coords = _coords(a, fmts, tensors)
    if v in a.indices and w in a.indices:
        return 1.0
    for u, at in ((w, cols), (v, rows)):
        if u in a.indices:
            return np.bincount(coords[a.indices.index(u)], minlength=sizes[u])[at]
    return float(coords.shape[1])
