"""The two kinds of storage level of a fiber tree, as capabilities.

A level answers the questions a scanner, a locate or a writer asks of it — how many
positions, where a fiber lies, which coordinate a position holds, where a coordinate
lives — so no caller has to know which kind it holds:

* :class:`DenseLevel` of size ``n``: the fiber of parent position ``p`` holds every
  coordinate ``c`` in ``0..n-1`` at child position ``p * n + c``.
* :class:`CompressedLevel` ``(seg, crd)``: the fiber of parent position ``p`` is
  ``crd[seg[p]:seg[p+1]]`` (strictly increasing), and the child position of a coordinate
  is its index into ``crd``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._formats import Format
from ._storage_input import StorageError, _int_array, _level_name

__all__ = ["DenseLevel", "CompressedLevel"]


@dataclass(frozen=True, eq=False)
class DenseLevel:
    """Every coordinate ``0..size-1``; child position = ``parent_pos * size + c``.

    A level answers the questions a scanner or a locate asks of it (how many positions,
    where a fiber lies, which coordinate a position holds, where a coordinate lives), so
    no caller has to know which kind of level it holds.
    """

    size: int

    def positions(self, parent_positions: int) -> int:
        """Number of positions at this level given the parent level's count."""
        return parent_positions * self.size

    def fiber(self, parent_pos: int) -> tuple[int, int]:
        """Positions ``[start, end)`` of the fiber under parent position ``parent_pos``."""
        start = parent_pos * self.size
        return start, start + self.size

    def crd_at(self, pos: int) -> int:
        """The coordinate stored at position ``pos``."""
        return pos % self.size if self.size else 0

    def locate(self, parent_pos: int, crd: int) -> int | None:
        """Position of coordinate ``crd`` in the fiber of ``parent_pos`` (a dense level
        holds every coordinate: addressed, never searched); None outside the level."""
        return parent_pos * self.size + crd if 0 <= crd < self.size else None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DenseLevel) and other.size == self.size

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, eq=False)
class CompressedLevel:
    """Fiber of parent position ``p`` = ``crd[seg[p]:seg[p+1]]``; child position = index."""

    seg: np.ndarray
    crd: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "seg", _int_array(self.seg, "seg"))
        object.__setattr__(self, "crd", _int_array(self.crd, "crd"))

    def positions(self, parent_positions: int = 0) -> int:
        """Number of positions at this level: one per stored coordinate."""
        return len(self.crd)

    def fiber(self, parent_pos: int) -> tuple[int, int]:
        """Positions ``[start, end)`` of the fiber under parent position ``parent_pos``."""
        return int(self.seg[parent_pos]), int(self.seg[parent_pos + 1])

    def crd_at(self, pos: int) -> int:
        """The coordinate stored at position ``pos``."""
        return int(self.crd[pos])

    def locate(self, parent_pos: int, crd: int) -> int | None:
        """Position of coordinate ``crd`` in the fiber of ``parent_pos`` (a binary search of
        the fiber's sorted coordinates), or None when the fiber does not store it."""
        start, end = self.fiber(parent_pos)
        i = start + int(np.searchsorted(self.crd[start:end], crd))
        return i if i < end and self.crd[i] == crd else None

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, CompressedLevel) and np.array_equal(self.seg, other.seg)
                and np.array_equal(self.crd, other.crd))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"CompressedLevel(seg={self.seg.tolist()!r}, crd={self.crd.tolist()!r})" \
            if len(self.crd) <= 32 else \
            f"CompressedLevel(<{len(self.seg) - 1} fibers, {len(self.crd)} crds>)"


def _coerce_levels(shape: tuple[int, ...], fmt: Format, levels: Sequence[Any]
                   ) -> list[DenseLevel | CompressedLevel]:
    if len(levels) != fmt.ndim:
        raise StorageError(f"format {str(fmt)!r} has {fmt.ndim} levels but {len(levels)} "
                           "were given")
    out: list[DenseLevel | CompressedLevel] = []
    for i, (kind, lvl) in enumerate(zip(fmt.levels, levels, strict=True)):
        name = _level_name(fmt, i)
        if kind == "dense":
            if lvl is None:
                lvl = DenseLevel(shape[fmt.mode_order[i]])
            elif isinstance(lvl, (int, np.integer)) and not isinstance(lvl, bool):
                lvl = DenseLevel(int(lvl))
            if not isinstance(lvl, DenseLevel):
                raise StorageError(f"{name}: expected a DenseLevel (or its size), got "
                                   f"{type(lvl).__name__}")
        else:
            if isinstance(lvl, tuple) and len(lvl) == 2:
                try:
                    lvl = CompressedLevel(*lvl)
                except StorageError as e:
                    raise StorageError(f"{name}: {e}") from None
            if not isinstance(lvl, CompressedLevel):
                raise StorageError(f"{name}: expected a CompressedLevel or (seg, crd), got "
                                   f"{type(lvl).__name__}")
        out.append(lvl)
    return out
