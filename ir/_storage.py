"""Fiber-tree storage: the tensor layout SAM scanners read and level writers produce.

A tensor of format ``fmt`` is a list of levels, one per storage level, plus a value array
indexed by last-level *position*. Positions chain the levels together (SAM paper, Sec. 3):

* :class:`DenseLevel` of size ``n``: the fiber of parent position ``p`` holds every
  coordinate ``c`` in ``0..n-1`` at child position ``p * n + c``.
* :class:`CompressedLevel` ``(seg, crd)``: the fiber of parent position ``p`` is
  ``crd[seg[p]:seg[p+1]]`` (strictly increasing), and the child position of a coordinate
  is its index into ``crd``.

Level 0 has a single parent position, ``0``. A 0-d tensor (scalar) has no levels and one
value. Constructors are vectorised with numpy: they sort, deduplicate and segment
10^6-entry tensors without per-element Python loops.

This module holds the tree and its numpy constructors and views (``from_dense``,
``from_coo``, ``to_dense``, ``to_coo``); the scipy, torch and file converters live in
:mod:`ir._interop` and are reached through thin ``FiberTree`` methods of the same names.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._formats import Format, FormatError

__all__ = ["DenseLevel", "CompressedLevel", "FiberTree", "StorageError", "DTYPES",
           "storage_bytes", "check_fits"]

DTYPES = ("float32", "int32")


class StorageError(ValueError):
    """Inconsistent or unreadable tensor storage; the message names the level or file."""


def storage_bytes(shape: Sequence[int], fmt: Format, nnz: int | None = None) -> int:
    """Bytes a tree of ``shape`` in ``fmt`` needs (dense levels multiply the fiber count;
    compressed ones keep seg and crd arrays of int64, at most ``nnz`` entries), values as
    4 bytes: exact Python ints, so a declared 2^63 is refused, not overflowed."""
    fibers, total = 1, 0
    for level, mode in zip(fmt.levels, fmt.mode_order, strict=True):
        if level == "dense":
            fibers *= shape[mode]
        else:
            total += (fibers + 1) * 8
            fibers = fibers * shape[mode] if nnz is None else min(fibers * shape[mode], nnz)
            total += fibers * 8
    return total + fibers * 4


def check_fits(what: str, shape: Sequence[int], fmt: Format, dtype: str,
               nnz: int | None = None) -> None:
    """Refuse, before numpy is asked, storage larger than the machine's memory (a
    declared 10^12 x 10^12 would otherwise end in MemoryError or an int64 overflow)."""
    need = storage_bytes(shape, fmt, nnz)
    have = _memory_bytes()
    if have and need > have:
        raise StorageError(f"{what}: storing {'x'.join(map(str, shape))} as {fmt.letters} "
                           f"({dtype}) would allocate {_size(need)}, more than this "
                           f"machine's {_size(have)} of memory; refusing")


def _memory_bytes() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 0


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024:
            return f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} PiB"


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


def _int_array(x: Any, what: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.size == 0:
        return np.zeros(arr.shape, dtype=np.int64)
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            return arr.astype(np.int64)
        raise StorageError(f"{what} must hold integers, got dtype {arr.dtype}")
    return arr.astype(np.int64, copy=False)


def _dtype(dtype: Any) -> np.dtype:
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt.name not in DTYPES:
        raise StorageError(f"dtype {dtype!r}: expected one of {DTYPES}")
    return dt


def _cast_values(values: Any, dt: np.dtype, where: str) -> np.ndarray:
    """Values as ``dt``; refuse lossy casts (fractions or NaN into int32, complex)."""
    arr = np.asarray(values)
    if arr.dtype.kind == "c":
        raise StorageError(f"{where}: complex values cannot be stored (dtype {arr.dtype})")
    if arr.dtype.kind not in "biuf":
        raise StorageError(f"{where}: values must be numeric, got dtype {arr.dtype}")
    if arr.dtype == dt:
        return arr
    if dt.kind == "i" and arr.size:
        if arr.dtype.kind == "f" and not (np.all(np.isfinite(arr))
                                          and np.all(arr == np.trunc(arr))):
            raise StorageError(f"{where}: non-integer values cannot be stored as int32")
        info = np.iinfo(dt)
        if arr.dtype.kind != "b" and (arr.min() < info.min or arr.max() > info.max):
            raise StorageError(f"{where}: values outside the int32 range")
    return arr.astype(dt)


def _resolve(fmt: Format | str | None, ndim: int, sparse: bool) -> Format:
    if fmt is None:
        if not sparse:
            return Format.dense(ndim)
        return Format.parse("csr", 2) if ndim == 2 else Format.compressed(ndim)
    try:
        return Format.parse(fmt, ndim)
    except FormatError as e:
        raise StorageError(str(e)) from None


def _check_shape(shape: Any) -> tuple[int, ...]:
    try:
        out = tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        raise StorageError(f"shape {shape!r}: expected a sequence of integers") from None
    if any(s < 0 for s in out):
        raise StorageError(f"shape {out}: sizes must be non-negative")
    return out


def _level_name(fmt: Format, i: int) -> str:
    return f"level {i} ({fmt.levels[i]}, mode {fmt.mode_order[i]})"


class FiberTree:
    """A tensor stored as a fiber tree: ``shape``, ``format``, ``levels`` and ``vals``.

    ``levels[i]`` stores tensor mode ``format.mode_order[i]``; ``vals`` is indexed by
    last-level position (length 1 for a scalar). Built through the ``from_*``
    constructors, which all yield a validated tree; the plain constructor validates too.
    """

    __hash__ = None  # type: ignore[assignment]
    #: block extents per mode of a blocked tree (``shape`` is then the block grid and
    #: ``vals`` is (positions, elements)); None for scalar values (ir/_blocks.py)
    block: tuple[int, ...] | None = None

    def __init__(self, shape: Sequence[int], format: Format | str,
                 levels: Sequence[DenseLevel | CompressedLevel | Any], vals: Any,
                 dtype: Any = None) -> None:
        shape = _check_shape(shape)
        fmt = _resolve(format, len(shape), sparse=False)
        vals_arr = np.asarray(vals)
        if dtype is None:
            dtype = vals_arr.dtype if vals_arr.dtype.name in DTYPES else "float32"
        dt = _dtype(dtype)
        self.shape: tuple[int, ...] = shape
        self.format: Format = fmt
        self.levels: list[DenseLevel | CompressedLevel] = _coerce_levels(shape, fmt, levels)
        if vals_arr.ndim != 1:
            raise StorageError(f"vals must be 1-d (indexed by last-level position), got "
                               f"shape {vals_arr.shape}")
        self.vals: np.ndarray = _cast_values(vals_arr, dt, "vals")
        self._validate()

    @classmethod
    def _trusted(cls, shape: tuple[int, ...], fmt: Format, levels: list, vals: np.ndarray,
                 block: tuple[int, ...] | None = None) -> FiberTree:
        """Skip validation: for constructors whose output is consistent by construction."""
        self = cls.__new__(cls)
        self.shape, self.format, self.levels, self.vals = shape, fmt, levels, vals
        if block is not None:
            self.block = block
        return self

    @property
    def full_shape(self) -> tuple[int, ...]:
        """The logical shape: the grid times the block extents (``shape`` if scalar)."""
        if self.block is None:
            return self.shape
        return tuple(g * b for g, b in zip(self.shape, self.block, strict=True))

    # -- validation --------------------------------------------------------------------

    def _validate(self) -> None:
        fmt, shape = self.format, self.shape
        parents = 1
        for i, lvl in enumerate(self.levels):
            name = _level_name(fmt, i)
            dim = shape[fmt.mode_order[i]]
            if isinstance(lvl, DenseLevel):
                if lvl.size != dim:
                    raise StorageError(f"{name}: dense size {lvl.size} but mode "
                                       f"{fmt.mode_order[i]} has size {dim}")
                parents = lvl.positions(parents)
                continue
            seg, crd = lvl.seg, lvl.crd
            if seg.ndim != 1 or crd.ndim != 1:
                raise StorageError(f"{name}: seg and crd must be 1-d arrays")
            if len(seg) != parents + 1:
                raise StorageError(f"{name}: seg has {len(seg)} entries but the parent "
                                   f"level has {parents} positions (expected "
                                   f"{parents + 1})")
            if seg[0] != 0:
                raise StorageError(f"{name}: seg[0] is {seg[0]}, must be 0")
            if np.any(np.diff(seg) < 0):
                k = int(np.flatnonzero(np.diff(seg) < 0)[0])
                raise StorageError(f"{name}: seg is not monotone (seg[{k}]={seg[k]} > "
                                   f"seg[{k + 1}]={seg[k + 1]})")
            if seg[-1] != len(crd):
                raise StorageError(f"{name}: seg[-1] is {seg[-1]} but crd has {len(crd)} "
                                   "entries")
            if len(crd):
                bad = np.flatnonzero((crd < 0) | (crd >= dim))
                if len(bad):
                    k = int(bad[0])
                    raise StorageError(f"{name}: crd[{k}]={crd[k]} is outside 0..{dim - 1} "
                                       f"(mode {fmt.mode_order[i]} has size {dim})")
                within = np.ones(len(crd) - 1, dtype=bool)
                starts = seg[1:-1]
                starts = starts[(starts > 0) & (starts < len(crd))]
                within[starts - 1] = False
                bad = np.flatnonzero((np.diff(crd) <= 0) & within)
                if len(bad):
                    k = int(bad[0])
                    raise StorageError(f"{name}: crd is not strictly increasing within a "
                                       f"fiber (crd[{k}]={crd[k]}, crd[{k + 1}]="
                                       f"{crd[k + 1]})")
            parents = lvl.positions(parents)
        if len(self.vals) != parents:
            raise StorageError(f"vals has {len(self.vals)} entries but the last level has "
                               f"{parents} positions")

    # -- constructors ------------------------------------------------------------------

    @classmethod
    def from_levels(cls, shape: Sequence[int], fmt: Format | str,
                    levels: Sequence[DenseLevel | CompressedLevel | Any], vals: Any,
                    dtype: Any = None) -> FiberTree:
        """A tree from explicit levels, checked for consistency.

        ``levels`` items may be level objects, a ``(seg, crd)`` pair for a compressed level
        or an int (or None) for a dense one. ``dtype`` defaults to that of ``vals`` when it
        is float32/int32, else float32.
        """
        return cls(shape, fmt, levels, vals, dtype)

    @classmethod
    def from_coo(cls, coords: Any, values: Any, shape: Sequence[int],
                 fmt: Format | str | None = None, dtype: Any = "float32") -> FiberTree:
        """A tree from coordinates ``(ndim, nnz)`` and values; any order, duplicates summed.

        Every given coordinate is stored (explicit zeros included); dense levels add the
        missing coordinates with value 0. ``fmt`` defaults to all-compressed.
        """
        shape = _check_shape(shape)
        ndim = len(shape)
        fmt = _resolve(fmt, ndim, sparse=True)
        dt = _dtype(dtype)
        crds = np.asarray(coords)
        if crds.ndim == 1 and ndim == 1:
            crds = crds[None, :]
        if crds.size == 0 and not (crds.ndim == 2 and crds.shape[0] == ndim):
            # a scalar's coordinates carry no count: take it from the values
            n = np.size(values) if ndim == 0 else 0
            crds = np.zeros((ndim, n), dtype=np.int64)
        if crds.ndim != 2 or crds.shape[0] != ndim:
            raise StorageError(f"coords of shape {crds.shape}: expected ({ndim}, nnz) for a "
                               f"{ndim}-d tensor")
        crds = _int_array(crds, "coords")
        vals = np.asarray(values)
        if vals.ndim == 0:
            vals = np.broadcast_to(vals, (crds.shape[1],))
        if vals.ndim != 1 or len(vals) != crds.shape[1]:
            raise StorageError(f"values of shape {vals.shape}: expected ({crds.shape[1]},), "
                               "one per coordinate")
        for m in range(ndim):
            bad = np.flatnonzero((crds[m] < 0) | (crds[m] >= shape[m]))
            if len(bad):
                k = int(bad[0])
                raise StorageError(f"coordinate {crds[:, k].tolist()} (entry {k}) is out of "
                                   f"bounds for shape {shape} in mode {m}")
        if vals.dtype.kind not in "biuf":
            _cast_values(vals, dt, "values")  # raises the right error
        scrd = crds[list(fmt.mode_order)] if ndim else crds
        sshape = tuple(shape[m] for m in fmt.mode_order)
        scrd, vals = _sort_sum(scrd, vals, sshape)
        vals = _cast_values(vals, dt, "values")
        return cls._build(shape, fmt, scrd, vals, dt)

    @classmethod
    def _build(cls, shape: tuple[int, ...], fmt: Format, scrd: np.ndarray,
               vals: np.ndarray, dt: np.dtype) -> FiberTree:
        """Levels from coordinates sorted and unique in storage order."""
        nnz = scrd.shape[1]
        if not fmt.ndim:
            out = np.zeros(1, dtype=dt)
            out[:] = vals.sum(dtype=dt) if nnz else 0
            return cls._trusted(shape, fmt, [], out)
        levels: list[DenseLevel | CompressedLevel] = []
        parent = np.zeros(nnz, dtype=np.int64)  # position of each entry at the level above
        parents = 1  # number of positions at the level above
        for i, kind in enumerate(fmt.levels):
            c = scrd[i]
            n = shape[fmt.mode_order[i]]
            if kind == "dense":
                levels.append(DenseLevel(n))
                parent = parent * n + c
                parents *= n
                continue
            new = np.ones(nnz, dtype=bool)
            if nnz:
                new[1:] = (parent[1:] != parent[:-1]) | (c[1:] != c[:-1])
            crd = c[new]
            counts = np.bincount(parent[new], minlength=parents)
            seg = np.zeros(parents + 1, dtype=np.int64)
            np.cumsum(counts, out=seg[1:])
            levels.append(CompressedLevel(seg, crd))
            parent = np.cumsum(new) - 1
            parents = len(crd)
        if parents == nnz and (nnz == 0 or parent[-1] == nnz - 1):
            out = np.array(vals, dtype=dt)  # positions are exactly 0..nnz-1; copy
        else:
            out = np.zeros(parents, dtype=dt)
            out[parent] = vals
        return cls._trusted(shape, fmt, levels, out)

    @classmethod
    def from_dense(cls, array: Any, fmt: Format | str | None = None,
                   dtype: Any = "float32") -> FiberTree:
        """A tree from a dense array; compressed levels keep only coordinates with a
        nonzero below them, dense levels keep everything."""
        arr = np.asarray(array)
        fmt = _resolve(fmt, arr.ndim, sparse=False)
        dt = _dtype(dtype)
        if fmt.all_dense:
            vals = _cast_values(np.transpose(arr, fmt.mode_order).ravel(), dt, "values")
            levels = [DenseLevel(arr.shape[m]) for m in fmt.mode_order]
            return cls._trusted(arr.shape, fmt, levels, np.array(vals, dtype=dt))
        # np.nonzero of the transposed array yields coordinates already in storage order.
        t = np.transpose(arr, fmt.mode_order)
        scrd = np.asarray(np.nonzero(t), dtype=np.int64).reshape(arr.ndim, -1)
        vals = _cast_values(t[tuple(scrd)], dt, "values")
        return cls._build(tuple(arr.shape), fmt, scrd, vals, dt)

    @classmethod
    def from_scipy(cls, matrix: Any, fmt: Format | str | None = None,
                   dtype: Any = "float32") -> FiberTree:
        """A tree from a scipy sparse matrix/array (stored entries kept, duplicates
        summed); ``fmt`` defaults to CSR."""
        from ._interop import from_scipy

        return from_scipy(matrix, fmt, dtype)

    @classmethod
    def from_torch(cls, tensor: Any, fmt: Format | str | None = None,
                   dtype: Any = "float32") -> FiberTree:
        """A tree from a torch tensor: strided (dense), sparse COO (coalesced), CSR or CSC."""
        from ._interop import from_torch

        return from_torch(tensor, fmt, dtype)

    @classmethod
    def from_mtx(cls, path: str | os.PathLike, fmt: Format | str | None = None,
                 dtype: Any = "float32") -> FiberTree:
        """A tree from a Matrix Market file (coordinate or array); ``fmt`` defaults to CSR
        for coordinate files and dense for array files."""
        from ._interop import from_mtx

        return from_mtx(path, fmt, dtype)

    @classmethod
    def from_written(cls, shape: Sequence[int], fmt: Format | str,
                     segs_crds: Sequence[tuple[Sequence[int], Sequence[int]]],
                     vals: Sequence[Any], dtype: Any = "float32") -> FiberTree:
        """A tree from level writers' output, converted to ``fmt``.

        Writers store every level as compressed, in ``fmt``'s mode order: level ``i`` has
        one fiber per level-``(i-1)`` crd (level 0 has one). Seg entries past that count
        (trailing fibers a writer closed) are ignored; too few is an error.
        """
        shape = _check_shape(shape)
        ndim = len(shape)
        fmt = _resolve(fmt, ndim, sparse=True)
        dt = _dtype(dtype)
        if len(segs_crds) != ndim:
            raise StorageError(f"written tensor of shape {shape} needs {ndim} levels, got "
                               f"{len(segs_crds)}")
        vals_arr = np.asarray(vals)
        if vals_arr.dtype.kind not in "biuf" and len(vals_arr):
            vals_arr = np.asarray(vals, dtype=np.float64)
        if ndim == 0:
            if len(vals_arr) > 1:
                raise StorageError(f"written scalar has {len(vals_arr)} values, expected 1")
            out = _cast_values(vals_arr if len(vals_arr) else np.zeros(1), dt, "vals")
            return cls._trusted(shape, fmt, [], out.reshape(1))
        levels = []
        fibers = 1
        for i, (seg, crd) in enumerate(segs_crds):
            seg_a = _int_array(list(seg), f"level {i} seg").ravel()
            crd_a = _int_array(list(crd), f"level {i} crd").ravel()
            if len(seg_a) < fibers + 1:
                raise StorageError(f"written level {i}: seg has {len(seg_a)} entries, fewer "
                                   f"than the {fibers + 1} needed for {fibers} fibers (one "
                                   f"per {'root' if i == 0 else f'level-{i - 1} crd'})")
            levels.append(CompressedLevel(seg_a[:fibers + 1], crd_a))
            fibers = len(crd_a)
        written = cls(shape, Format(("compressed",) * ndim, fmt.mode_order), levels,
                      _cast_values(vals_arr.ravel(), dt, "vals"), dt)
        if fmt.all_compressed:
            return written
        return cls.from_coo(*written.to_coo(keep_zeros=True), shape, fmt, dt)

    @classmethod
    def from_any(cls, obj: Any, fmt: Format | str | None = None,
                 dtype: Any = "float32") -> FiberTree:
        """A tree from numpy/array-likes, scipy sparse, torch tensors, FiberTrees or a path
        (``.mtx``, ``.npy``, scipy ``.npz``). ``fmt`` defaults to dense for dense inputs and
        CSR (2-d) or all-compressed for sparse ones."""
        from ._interop import from_any

        return from_any(obj, fmt, dtype)

    # -- queries -----------------------------------------------------------------------

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def dtype(self) -> np.dtype:
        return self.vals.dtype

    @property
    def nnz(self) -> int:
        """Number of stored values (explicit zeros and dense-level fill included)."""
        return len(self.vals)

    def num_fibers(self, level: int) -> int:
        """Number of fibers at storage ``level`` = positions of the level above it."""
        if not 0 <= level < self.ndim:
            raise StorageError(f"level {level} out of range for a {self.ndim}-level tensor")
        return self.num_positions(level - 1)

    def num_positions(self, level: int) -> int:
        """Positions at storage ``level`` (``-1`` is the root, with one position)."""
        n = 1
        for lvl in self.levels[:level + 1]:
            n = lvl.positions(n)
        return n

    # -- numpy views and outside formats -----------------------------------------------

    def _storage_coords(self) -> np.ndarray:
        """Storage-order coordinates ``(ndim, positions)`` of every last-level position."""
        coords: list[np.ndarray] = []
        parents = 1
        for lvl in self.levels:
            if isinstance(lvl, DenseLevel):
                n = lvl.size
                coords = [np.repeat(c, n) for c in coords]
                coords.append(np.tile(np.arange(n, dtype=np.int64), parents))
            else:
                owner = np.repeat(np.arange(parents, dtype=np.int64), np.diff(lvl.seg))
                coords = [c[owner] for c in coords]
                coords.append(lvl.crd)
            parents = lvl.positions(parents)
        if not coords:
            return np.zeros((0, len(self.vals)), dtype=np.int64)
        return np.stack(coords)

    def to_coo(self, keep_zeros: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """``(coords (ndim, n), values)`` in logical mode order, sorted in storage order.

        By default only nonzero values (the logical sparse tensor, so converting a dense
        tree to a compressed format stores no fill); ``keep_zeros`` returns every stored
        position.
        """
        scrd = self._storage_coords()
        vals = self.vals
        if not keep_zeros:
            nz = vals != 0
            scrd, vals = scrd[:, nz], vals[nz]
        coords = np.empty_like(scrd)
        coords[list(self.format.mode_order)] = scrd
        return coords, vals.copy()

    def to_dense(self) -> np.ndarray:
        """The tensor as a dense numpy array in logical mode order (a blocked tree expands
        its blocks to the full shape)."""
        if self.block is not None:
            from ._blocks import from_blocks

            return from_blocks(self)
        fmt = self.format
        sshape = tuple(self.shape[m] for m in fmt.mode_order)
        inverse = tuple(np.argsort(fmt.mode_order)) if fmt.ndim else ()
        if fmt.all_dense:
            return self.vals.reshape(sshape).transpose(inverse).copy()
        out = np.zeros(sshape, dtype=self.vals.dtype)
        out[tuple(self._storage_coords())] = self.vals
        return out.transpose(inverse).copy()

    def to_scipy(self, kind: str = "csr") -> Any:
        """A 2-d tree as a scipy sparse array (``kind`` "csr", "csc" or "coo")."""
        from ._interop import to_scipy

        return to_scipy(self, kind)

    def to_torch(self, layout: str = "dense") -> Any:
        """The tensor as torch: ``layout`` "dense", "coo" (coalesced), "csr" or "csc"."""
        from ._interop import to_torch

        return to_torch(self, layout)

    def to_mtx(self, path: str | os.PathLike) -> None:
        """Write a 2-d tree as a Matrix Market coordinate file (nonzeros only)."""
        from ._interop import to_mtx

        to_mtx(self, path)

    def astype(self, dtype: Any) -> FiberTree:
        """The same tree with values cast to ``dtype`` (float32/int32)."""
        dt = _dtype(dtype)
        return FiberTree._trusted(self.shape, self.format, self.levels,
                                  _cast_values(self.vals, dt, "vals"))

    def __eq__(self, other: object) -> bool:
        """Structural equality: same shape, format, levels and values (dtype included)."""
        return (isinstance(other, FiberTree) and self.shape == other.shape
                and self.format == other.format and self.levels == other.levels
                and self.vals.dtype == other.vals.dtype
                and np.array_equal(self.vals, other.vals))

    def __repr__(self) -> str:
        return (f"FiberTree(shape={self.shape}, format={str(self.format)!r}, "
                f"nnz={self.nnz}, dtype={self.vals.dtype.name})")


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


def _sort_sum(scrd: np.ndarray, vals: np.ndarray, sshape: tuple[int, ...]
              ) -> tuple[np.ndarray, np.ndarray]:
    """Sort coordinates lexicographically (storage order) and sum duplicates."""
    ndim, nnz = scrd.shape
    if nnz <= 1 or ndim == 0:
        return scrd, vals
    if math.prod(sshape) < 2**62:
        key = np.ravel_multi_index(tuple(scrd), sshape)
        if np.all(key[1:] > key[:-1]):
            return scrd, vals  # already sorted and unique: the common case
        order = np.argsort(key, kind="stable")
        key = key[order]
        new = np.empty(nnz, dtype=bool)
        new[0] = True
        np.not_equal(key[1:], key[:-1], out=new[1:])
    else:
        order = np.lexsort(scrd[::-1])
        s = scrd[:, order]
        new = np.empty(nnz, dtype=bool)
        new[0] = True
        np.any(s[:, 1:] != s[:, :-1], axis=0, out=new[1:])
    starts = np.flatnonzero(new)
    svals = vals[order]
    if svals.dtype.kind == "b":
        svals = svals.astype(np.int64)
    summed = svals[starts] if len(starts) == nnz else np.add.reduceat(svals, starts)
    return scrd[:, order[starts]], summed
