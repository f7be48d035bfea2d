"""Checking what users hand the fiber-tree storage: shapes, formats, dtypes, values,
index arrays, and whether the storage fits in memory at all.

Every check raises :class:`StorageError` with one line naming the value and what was
expected; the levels (``_levels``) and the tree (``_storage``) call these and nothing
else to validate input.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._formats import Format, FormatError

__all__ = ["StorageError", "DTYPES", "storage_bytes", "check_fits"]

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
