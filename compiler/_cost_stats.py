"""What the FLOPs/bytes heuristic knows about an input tensor: its shape, density and
(measured) stored positions per level, from a density, a tensor or given statistics."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ir import FiberTree, Format, torch_numpy_view

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
        """Measure shape, density and per-level positions of ``x`` stored in ``format``:
        what ``FiberTree.from_any(x, format)`` would store, counted from the tensor's
        non-zero pattern instead of building that tree (OGB-MAG's 736,389 x 349 dense
        activations took 257 M sorted coordinates to re-order)."""
        if isinstance(x, FiberTree) and x.block is None and (
                format is None or (Format.parse(format, x.ndim) == x.format
                                   and x.vals.dtype == np.float32)):
            return cls(tuple(x.shape), _fraction(int(np.count_nonzero(x.vals)), x.shape),
                       tuple(x.num_positions(lv) for lv in range(x.ndim)), str(x.format))
        pattern = _nonzero_pattern(x) if format is not None else None
        if pattern is not None:
            shape, mask, coords = pattern
            fmt = Format.parse(format, len(shape))
            if mask is not None:
                distinct, nnz = _mask_prefixes(mask, fmt), int(np.count_nonzero(mask))
            else:
                distinct, nnz = _coord_prefixes(coords, shape, fmt), coords.shape[1]
            return cls(shape, _fraction(nnz, shape), _level_positions(
                [shape[m] for m in fmt.mode_order], fmt, distinct), str(fmt))
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


def _fraction(nnz: int, shape: tuple[int, ...]) -> float:
    size = math.prod(shape)
    return nnz / size if size else 0.0


#: dtypes whose non-zeros stay non-zero as float32 (a float64 value may underflow)
_EXACT_KINDS = "biu"


def _nonzero_pattern(x: Any) -> tuple[tuple[int, ...], np.ndarray | None,
                                      np.ndarray | None] | None:
    """``(shape, mask, coords)`` of ``x``'s non-zeros, as a boolean array in logical
    order for dense data or as unique logical coordinates ``(ndim, nnz)`` for a
    compressed tree; None where only building the tree tells (the caller does)."""
    x = torch_numpy_view(x)
    if x is None:  # a sparse or device torch tensor
        return None
    if isinstance(x, FiberTree):
        if x.block is not None or x.ndim == 0 or x.vals.dtype.kind not in "fi":
            return None
        if x.format.all_dense:
            stored = x.vals.reshape([x.shape[m] for m in x.format.mode_order])
            return tuple(x.shape), np.transpose(stored != 0,
                                                np.argsort(x.format.mode_order)), None
        return tuple(x.shape), None, x.to_coo()[0]
    if isinstance(x, np.ndarray) and x.ndim and (
            x.dtype.kind in _EXACT_KINDS or x.dtype in (np.float32, np.float16)):
        return tuple(x.shape), x != 0, None
    return None


def _mask_prefixes(mask: np.ndarray, fmt: Format) -> dict[int, int]:
    """Per compressed level ``c``: the distinct storage-order prefixes of length
    ``c + 1`` among the non-zeros of ``mask``."""
    stored = np.transpose(mask, fmt.mode_order)
    ndim = stored.ndim
    return {c: int(np.count_nonzero(stored.any(axis=tuple(range(c + 1, ndim)))
                                    if c + 1 < ndim else stored))
            for c in range(ndim) if fmt.is_compressed(c)}


def _coord_prefixes(coords: np.ndarray, shape: tuple[int, ...], fmt: Format
                    ) -> dict[int, int]:
    """:func:`_mask_prefixes` from unique logical coordinates ``(ndim, nnz)``."""
    stored = coords[list(fmt.mode_order)]
    sizes = [shape[m] for m in fmt.mode_order]
    out = {}
    for c in range(len(sizes)):
        if not fmt.is_compressed(c):
            continue
        if c + 1 == len(sizes):
            out[c] = stored.shape[1]
        elif math.prod(sizes[:c + 1]) < 2**62:
            out[c] = len(np.unique(np.ravel_multi_index(tuple(stored[:c + 1]),
                                                        sizes[:c + 1])))
        else:
            out[c] = np.unique(stored[:c + 1], axis=1).shape[1]
    return out


def _level_positions(sizes: list[int], fmt: Format, distinct: dict[int, int]) -> tuple[int, ...]:
    """Stored positions per level, as ``FiberTree`` builds them: a compressed level
    stores each distinct prefix down to it, a dense level every coordinate under each
    position above."""
    out, positions = [], 1
    for lv, size in enumerate(sizes):
        positions = distinct[lv] if fmt.is_compressed(lv) else positions * size
        out.append(positions)
    return tuple(out)


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
