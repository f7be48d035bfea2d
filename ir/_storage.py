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
``from_coo``, ``to_dense``, ``to_coo``); the levels are in :mod:`ir._levels`, the checks
of user input in :mod:`ir._storage_input`; the scipy, torch and file converters live in
:mod:`ir._interop` and are reached through thin ``FiberTree`` methods of the same names.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._formats import Format
from ._levels import CompressedLevel, DenseLevel, _coerce_levels
from ._storage_input import (
    DTYPES,
    StorageError,
    _cast_values,
    _check_shape,
    _dtype,
    _int_array,
    _level_name,
    _resolve,
    check_fits,
    storage_bytes,
)

__all__ = ["DenseLevel", "CompressedLevel", "FiberTree", "StorageError", "DTYPES",
           "storage_bytes", "check_fits"]


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
