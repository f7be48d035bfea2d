"""Partitioning a parallel index among lanes: round-robin, or balanced by measured work.

Round-robin (FuseFlow's) deals the coordinates in turn (``c mod lanes``). Load-balanced
(Chougule et al., 2026) splits the index's coordinate space into contiguous ranges of
equal *work*, measured on the data: the work of coordinate ``c`` is the number of stored
entries every operand contributes under ``c`` — its own entries at ``c`` if it has the
index, else the entries of its fibers that an operand with the index reaches at ``c``
through a shared index (``B(k,j)`` under row ``i`` of ``A(i,k)``: the nonzeros of the
rows ``k`` of ``B`` that row ``i`` of ``A`` selects). Summing over operands is what makes
it a partition of multi-operand intersections and unions, not of one matrix.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ir import PARTITIONS, FiberTree, Format, Graph

from ._ast import Access, accesses
from ._cost import TensorStats, estimate
from ._errors import LoweringError
from ._normalize import Normalized
from ._parallel import DEFAULT_LANE_BUFFER, LaneSplit

__all__ = ["PARTITIONS", "MAX_LANES", "LanePlan", "plan_lanes", "coordinate_work",
           "lane_buffer_for", "check_lane_buffer"]

#: lanes per parallel index (a merge tree of 2-input merges; 64 covers FuseFlow's 4x4,
#: 8x8 and the scaling curves)
MAX_LANES = 64


@dataclass(frozen=True)
class LanePlan:
    """Each parallel index's lanes, and the imbalance the data predicts for them."""

    #: internal index -> each lane's split
    splits: dict[str, list[LaneSplit]] = field(default_factory=dict)
    #: user index -> the largest lane's share of the measured work over the mean lane's,
    #: as the splits deal it — what ``sim`` will report as the imbalance, predicted
    #: before the run (round-robin on skewed data is where it is far from 1); only for
    #: expressions some of whose operands' data is given
    imbalance: dict[str, float] = field(default_factory=dict)
    #: user indices whose split points (and imbalance) are estimated by the cost model,
    #: not measured: their key operand is computed by an earlier region of a model
    estimated: tuple[str, ...] = ()
    #: a model kernel a position partition cannot cut (why): it keeps these lanes
    fallback: str = ""


def plan_lanes(norm: Normalized, par: Mapping[str, int], partition: str,
               sizes: Mapping[str, int], fmts: Mapping[str, Format],
               tensors: Mapping[str, Any], *, measured_only: bool = False) -> LanePlan:
    """Each parallel index's (internal name) lanes, checked against the expression, and
    their expected imbalance; the work of an index is measured once for both.
    ``measured_only``: a balanced partition measures the operands whose data is given
    and leaves the others out (a model's intermediates, computed only at run time)."""
    if partition not in PARTITIONS:
        raise LoweringError(f"partition {partition!r} is not one of "
                            f"{', '.join(PARTITIONS)}")
    internal = {norm.user[v]: v for v in norm.indices}
    measured = any(_given(tensors.get(a.tensor)) for a in accesses(norm.assignment.rhs))
    plan = LanePlan()
    for name, lanes in par.items():
        if name not in internal or name not in norm.assignment.target.indices:
            raise LoweringError(
                f"par {name}={lanes}: {name!r} is not an index of the output "
                f"{norm.assignment.target}; lanes split output indices (the output's "
                f"indices: {', '.join(norm.assignment.target.indices) or 'none'})")
        if isinstance(lanes, bool) or not isinstance(lanes, int) or \
                not 1 <= lanes <= MAX_LANES:
            raise LoweringError(f"par {name}={lanes!r}: expected a number of lanes from 1 "
                                f"to {MAX_LANES}")
        if lanes == 1:
            continue
        v, n = internal[name], sizes[internal[name]]
        work = None
        if partition == "balanced":
            work = coordinate_work(norm, v, sizes, fmts, tensors, measured_only)
            splits = [LaneSplit(1, 0, lo, hi) for lo, hi in balanced_ranges(work, lanes)]
        else:
            splits = [LaneSplit(lanes, k, 0, n) for k in range(lanes)]
        plan.splits[v] = splits
        if measured:
            if work is None:
                work = coordinate_work(norm, v, sizes, fmts, tensors, measured_only=True)
            c = np.arange(len(work))
            shares = [float(work[(c % x.lanes == x.lane) & (c >= x.lo) & (c < x.hi)].sum())
                      for x in splits]
            mean = sum(shares) / len(shares)
            if mean > 0:
                plan.imbalance[name] = max(shares) / mean
    return plan


def check_lane_buffer(given: int) -> int:
    """A lane buffer a user gave: at least 2 tokens."""
    if isinstance(given, bool) or not isinstance(given, int) or given < 2:
        raise LoweringError(f"lane_buffer {given!r}: expected a number of tokens >= 2 (a "
                            "lane's values trail its coordinates by a token: a reducer "
                            "closes a fiber when it sees the next coordinate)")
    return given


def lane_buffer_for(one_lane: Graph, splits: Mapping[str, Sequence[LaneSplit]],
                    partition: str, given: int | None,
                    stats: Mapping[str, TensorStats]) -> int:
    """The lane buffer: ``given``, or (``None``) one sized for the partition.

    Round-robin lanes take turns at every fiber, so a shallow buffer
    (:data:`DEFAULT_LANE_BUFFER`) keeps them busy. A balanced lane's coordinates all come
    after the previous lane's, so it must hold its whole output while the earlier lanes
    drain: the buffer is the heuristic's expected output tokens of one lane (the
    one-lane graph's writers' input, ``docs/cost.md``) plus a quarter, at least the
    default. A position lane with interleaved windows (or rows) holds one window's output
    at most: that share of it."""
    if given is not None:
        return check_lane_buffer(given)
    if partition == "round-robin" or not splits:
        return DEFAULT_LANE_BUFFER
    est = estimate(one_lane, stats)
    written = max((est.tokens.get(e.name, 0.0) for e in one_lane.edges
                   if one_lane.nodes[e.dst_node].op == "value_writer"), default=0.0)
    lanes = math.prod(len(s) for s in splits.values())
    rounds = max((len(x.windows) or len(x.ranges) for s in splits.values() for x in s
                  if not x.shares), default=0) or 1  # the outermost lanes' windows
    return max(DEFAULT_LANE_BUFFER, math.ceil(1.25 * written / lanes / rounds) + 2)


def balanced_ranges(work: np.ndarray, lanes: int) -> list[tuple[int, int]]:
    """Contiguous coordinate ranges covering ``work`` with equal shares of its sum."""
    n = len(work)
    cum = np.cumsum(work, dtype=np.float64)
    total = cum[-1] if n else 0.0
    if total <= 0:
        cuts = [n * k // lanes for k in range(lanes + 1)]
    else:
        # lane k starts at the first coordinate whose preceding work reaches k/lanes
        cuts = [0, *(int(np.searchsorted(cum, total * k / lanes, side="left")) + 1
                     for k in range(1, lanes)), n]
        cuts = [min(max(c, 0), n) for c in cuts]
        for k in range(1, len(cuts)):
            cuts[k] = max(cuts[k], cuts[k - 1])
    return [(cuts[k], cuts[k + 1]) for k in range(lanes)]


def coordinate_work(norm: Normalized, v: str, sizes: Mapping[str, int],
                    fmts: Mapping[str, Format], tensors: Mapping[str, Any],
                    measured_only: bool = False) -> np.ndarray:
    """Work of every coordinate of internal index ``v`` (module docstring)."""
    ops = [a for a in accesses(norm.assignment.rhs)
           if not measured_only or _given(tensors.get(a.tensor))]
    if not ops:  # a model region that reads only intermediates: equal coordinate ranges
        return np.ones(sizes[v], dtype=np.float64)
    stored: dict[int, np.ndarray] = {}
    for a in ops:
        if not _given(tensors.get(a.tensor)):
            raise LoweringError(
                f"balanced partitioning of {norm.user[v]!r} measures the work on the data, "
                f"but tensor {a.tensor!r} was not given: pass every input's data "
                "(samfuse compile --input NAME=FILE; compile_expression(stats={name: "
                "tensor}) in Python)")
        fmt = fmts.get(a.tensor) or Format.dense(len(a.indices))
        tree = FiberTree.from_any(tensors[a.tensor], fmt)
        stored[id(a)] = tree.to_coo(keep_zeros=True)[0]
    n = sizes[v]
    work = np.zeros(n, dtype=np.float64)
    holders = [a for a in ops if v in a.indices]
    for a in ops:
        coords = stored[id(a)]
        if v in a.indices:
            work += np.bincount(coords[a.indices.index(v)], minlength=n)[:n]
            continue
        via = _shared(a, holders)
        if via is None:  # iterated in full under every coordinate of v
            work += coords.shape[1]
            continue
        y, u = via
        per_u = np.bincount(coords[a.indices.index(u)], minlength=sizes[u])
        yc = stored[id(y)]
        work += np.bincount(yc[y.indices.index(v)], weights=per_u[yc[y.indices.index(u)]],
                            minlength=n)[:n]
    return work


def _given(x: Any) -> bool:
    """Data, not a density or a statistics summary."""
    return x is not None and not isinstance(x, int | float | TensorStats)


def _shared(a: Access, holders: list[Access]) -> tuple[Access, str] | None:
    """An operand with the parallel index that shares another index with ``a``."""
    for y in holders:
        for u in a.indices:
            if u in y.indices:
                return y, u
    return None
