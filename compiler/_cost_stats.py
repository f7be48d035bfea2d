"""What the FLOPs/bytes heuristic knows about an input tensor: its shape, density and
(measured) stored positions per level, from a density, a tensor or given statistics."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ir import FiberTree, Format

__all__ = ["TensorStats", "as_stats"]


@dataclass(frozen=True)
class TensorStats:
    """What the heuristic knows about an input: its shape and how full it is.

    ``density`` is the fraction of non-zeros, assumed uniformly spread.
    ``level_positions`` (optional) are the stored positions per storage level of
    ``format``, as measured by :meth:`from_tensor`; they are used when the graph binds
    the tensor in that same format, and give exact scanner counts.
    """

    shape: tuple[int, ...]
    density: float = 1.0
    level_positions: tuple[int, ...] | None = None
    format: str | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.density <= 1.0:
            raise ValueError(f"TensorStats density {self.density!r} must be in [0, 1]")
        if (self.level_positions is None) != (self.format is None):
            raise ValueError("TensorStats: level_positions and format go together")
        object.__setattr__(self, "shape", tuple(int(s) for s in self.shape))

    @classmethod
    def from_tensor(cls, x: Any, format: str | Format | None = None) -> TensorStats:
        """Measure shape, density and per-level positions of ``x`` stored in ``format``."""
        tree = x if isinstance(x, FiberTree) and format is None else FiberTree.from_any(
            x, format)
        size = math.prod(tree.shape)
        nnz = len(tree.to_coo()[1])
        return cls(tuple(tree.shape), nnz / size if size else 0.0,
                   tuple(tree.num_positions(lv) for lv in range(tree.ndim)),
                   str(tree.format))

    def levels(self, fmt: str | Format) -> list[tuple[int, float]]:
        """``(size, density)`` per storage level of ``fmt``: the density of a level is
        the expected fraction of its ``size`` coordinates stored in one fiber."""
        f = Format.parse(fmt, len(self.shape))
        sizes = [self.shape[m] for m in f.mode_order]
        if self.level_positions is not None and Format.parse(self.format, f.ndim) == f:
            positions = list(self.level_positions)
        else:
            positions = _uniform_positions(sizes, f, self.density)
        out, parent = [], 1.0
        for size, pos in zip(sizes, positions, strict=True):
            out.append((size, pos / (parent * size) if parent * size else 0.0))
            parent = pos
        return out


def _uniform_positions(sizes: list[int], fmt: Format, p: float) -> list[float]:
    """Expected stored positions per level for i.i.d. non-zeros of probability ``p``.

    A prefix at level *l* is stored iff the prefix at the deepest compressed level ≤ *l*
    has a non-zero below it, which happens with probability ``1 − (1 − p)^(cells below)``.
    """
    out = []
    for lv in range(len(sizes)):
        comp = [c for c in range(lv + 1) if fmt.is_compressed(c)]
        nonempty = 1.0
        if comp:
            below = math.prod(sizes[comp[-1] + 1:])
            nonempty = 1.0 - (1.0 - p) ** below
        out.append(math.prod(sizes[:lv + 1]) * nonempty)
    return out


def as_stats(s: TensorStats | float | Any, shape: tuple[int, ...], fmt: str | Format,
             where: str, name: str) -> TensorStats:
    """A :class:`TensorStats` from a TensorStats, a density or a tensor (measured in
    ``fmt``), checked against ``shape``."""
    if isinstance(s, int | float) and not isinstance(s, bool):
        s = TensorStats(shape, float(s))
    elif not isinstance(s, TensorStats):
        s = TensorStats.from_tensor(s, fmt)
    if tuple(s.shape) != tuple(shape):
        raise ValueError(f"estimate: tensor {name!r} has shape {s.shape} but {where} "
                         f"expects {tuple(shape)}")
    return s
