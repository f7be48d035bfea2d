"""Converters between :class:`FiberTree` and outside tensor formats.

One job: scipy sparse arrays, torch tensors (strided, COO, CSR, CSC), Matrix Market and
``.npy``/``.npz`` files in and out, plus reading a tensor file's header (shape and stored
entries) before its data. The tree's own numpy constructors (``from_dense``, ``from_coo``)
stay in :mod:`ir._storage`; every converter here lowers to them, so validation lives in
one place. scipy and torch are imported inside the functions that need them: importing
``ir`` (and so ``samfuse --help``) must not pay for torch.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from ._formats import Format
from ._storage import FiberTree
from ._storage_input import StorageError, _dtype, _resolve

__all__ = ["from_scipy", "from_torch", "from_mtx", "from_path", "from_any", "to_scipy",
           "to_torch", "to_mtx", "tensor_file_header", "mtx_vector_shape", "npy_header",
           "torch_numpy_view"]

# -- into a tree -------------------------------------------------------------------------

def torch_numpy_view(value: Any) -> Any:
    """``value`` itself unless it is a torch tensor; a CPU strided tensor's numpy view
    (its own memory, not a copy); None for any other torch tensor (sparse, or on a
    device). torch is not imported: a caller that never sees a torch tensor never pays
    for it."""
    if not type(value).__module__.startswith("torch"):
        return value
    if str(value.layout) != "torch.strided" or value.device.type != "cpu":
        return None
    return value.detach().numpy()


def from_scipy(matrix: Any, fmt: Format | str | None = None,
               dtype: Any = "float32") -> FiberTree:
    """A tree from a scipy sparse matrix/array (stored entries kept, duplicates summed);
    ``fmt`` defaults to CSR."""
    import scipy.sparse as sp

    if not sp.issparse(matrix):
        raise StorageError(f"from_scipy expects a scipy sparse matrix or array, got "
                           f"{type(matrix).__name__}")
    coo = matrix.tocoo()
    coords = np.asarray(coo.coords) if hasattr(coo, "coords") else \
        np.asarray([coo.row, coo.col])
    return FiberTree.from_coo(coords, coo.data, coo.shape, _resolve(fmt, coo.ndim, True),
                              dtype)


def from_torch(tensor: Any, fmt: Format | str | None = None,
               dtype: Any = "float32") -> FiberTree:
    """A tree from a torch tensor: strided (dense), sparse COO (coalesced), CSR or CSC."""
    import torch

    t = tensor.detach().cpu()
    if t.is_complex():
        raise StorageError(f"complex torch tensors cannot be stored (dtype {t.dtype})")
    if t.dtype in (torch.float16, torch.bfloat16):
        t = t.float()
    if t.layout == torch.strided:
        return FiberTree.from_dense(t.numpy(), fmt, dtype)
    if t.layout in (torch.sparse_bsr, torch.sparse_bsc):
        t = t.to_sparse_coo()
    if t.layout == torch.sparse_coo:
        if t.dense_dim():
            raise StorageError("hybrid sparse COO tensors (dense_dim > 0) are not "
                               "supported; call .to_dense() or .to_sparse(sparse_dim="
                               f"{t.dim()}) first")
        t = t.coalesce()
        coords, vals = t.indices().numpy(), t.values().numpy()
    elif t.layout in (torch.sparse_csr, torch.sparse_csc):
        coords, vals = _torch_compressed_coo(t, torch)
    else:
        raise StorageError(f"torch layout {t.layout} is not supported")
    return FiberTree.from_coo(coords, vals, tuple(t.shape), _resolve(fmt, t.dim(), True),
                              dtype)


def _torch_compressed_coo(t: Any, torch: Any) -> tuple[np.ndarray, np.ndarray]:
    """Coordinates and values of a 2-d torch CSR/CSC tensor (pointer array expanded)."""
    if t.dim() != 2:
        raise StorageError(f"batched or hybrid {t.layout} tensors are not supported "
                           f"(got {t.dim()}-d)")
    csr = t.layout == torch.sparse_csr
    ptr = (t.crow_indices() if csr else t.ccol_indices()).numpy().astype(np.int64)
    idx = (t.col_indices() if csr else t.row_indices()).numpy().astype(np.int64)
    outer = np.repeat(np.arange(len(ptr) - 1, dtype=np.int64), np.diff(ptr))
    return np.stack([outer, idx] if csr else [idx, outer]), t.values().numpy()


def from_mtx(path: str | os.PathLike, fmt: Format | str | None = None,
             dtype: Any = "float32", vector: bool = False) -> FiberTree:
    """A tree from a Matrix Market file (coordinate or array); ``fmt`` defaults to CSR
    for coordinate files and dense for array files. ``vector`` reads an n x 1 or 1 x n
    matrix as a vector of n: the only way the format stores one (SAM and SuiteSparse
    ship vectors so)."""
    import scipy.io
    import scipy.sparse as sp

    try:
        obj = scipy.io.mmread(os.fspath(path))
    except Exception as e:  # scipy raises many types for malformed files
        raise StorageError(f"cannot read Matrix Market file {os.fspath(path)!r}: "
                           f"{type(e).__name__}: {e}") from e
    if vector:
        return _mtx_vector(obj, os.fspath(path), fmt, dtype)
    if sp.issparse(obj):
        return from_scipy(obj, fmt, dtype)
    return FiberTree.from_dense(np.asarray(obj), fmt, dtype)


def mtx_vector_shape(shape: tuple[int, ...]) -> tuple[int] | None:
    """The vector an n x 1 or 1 x n Matrix Market shape stores, or None."""
    if len(shape) == 2 and 1 in shape:
        return (shape[0] * shape[1],)
    return None


def _mtx_vector(obj: Any, where: str, fmt: Format | str | None, dtype: Any) -> FiberTree:
    import scipy.sparse as sp

    shape = tuple(int(n) for n in obj.shape)
    vec = mtx_vector_shape(shape)
    if vec is None:
        raise StorageError(f"Matrix Market file {where!r} holds a {shape[0]} x {shape[1]} "
                           "matrix where a vector is expected (an n x 1 or 1 x n matrix)")
    if not sp.issparse(obj):
        return FiberTree.from_dense(np.asarray(obj).reshape(vec), fmt, dtype)
    coo = obj.tocoo()
    along = coo.row if shape[1] == 1 else coo.col
    return FiberTree.from_coo(np.asarray(along)[None, :], coo.data, vec,
                              _resolve(fmt, 1, True), dtype)


#: the first bytes of every .npy file (numpy.lib.format)
NPY_MAGIC = b"\x93NUMPY"


def _check_npy_magic(path: Path) -> None:
    """A file named .npy that is not one (a text file, say) is refused by name, instead of
    numpy's guess that it holds pickled objects."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(NPY_MAGIC))
    except OSError as e:
        raise StorageError(f"cannot read .npy file {str(path)!r}: {e.strerror}") from None
    if head != NPY_MAGIC:
        raise StorageError(f".npy file {str(path)!r} is not a NumPy array file (it does not "
                           "start with NumPy's header); write arrays with numpy.save")


def from_path(path: str | os.PathLike, fmt: Format | str | None = None,
              dtype: Any = "float32", ndim: int | None = None) -> FiberTree:
    """A tree from a tensor file, chosen by suffix: ``.mtx``, ``.npy`` or scipy ``.npz``.
    ``ndim=1`` reads a Matrix Market n x 1 or 1 x n matrix as a vector."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".mtx":
        return from_mtx(path, fmt, dtype, vector=ndim == 1)
    if suffix == ".npy":
        _check_npy_magic(path)
        npy_header(path)  # a header promising more than the file holds is refused first
        try:
            arr = np.load(path, allow_pickle=False)
        except Exception as e:
            raise StorageError(f"cannot read .npy file {str(path)!r}: "
                               f"{type(e).__name__}: {e}") from e
        return FiberTree.from_dense(arr, fmt, dtype)
    if suffix == ".npz":
        import scipy.sparse as sp
        try:
            mat = sp.load_npz(path)
        except Exception as e:
            raise StorageError(f"cannot read scipy .npz file {str(path)!r}: "
                               f"{type(e).__name__}: {e}") from e
        return from_scipy(mat, fmt, dtype)
    raise StorageError(f"tensor file {str(path)!r}: unknown suffix {suffix!r}; "
                       "expected .mtx, .npy or .npz")


def from_any(obj: Any, fmt: Format | str | None = None,
             dtype: Any = "float32") -> FiberTree:
    """A tree from numpy/array-likes, scipy sparse, torch tensors, FiberTrees or a path
    (``.mtx``, ``.npy``, scipy ``.npz``). ``fmt`` defaults to dense for dense inputs and
    CSR (2-d) or all-compressed for sparse ones."""
    if isinstance(obj, FiberTree):
        f = _resolve(fmt, obj.ndim, sparse=True) if fmt is not None else obj.format
        if f == obj.format and obj.vals.dtype == _dtype(dtype):
            return obj
        return FiberTree.from_coo(*obj.to_coo(), obj.shape, f, dtype)
    if isinstance(obj, (str, os.PathLike)):
        return from_path(obj, fmt, dtype)
    torch = sys.modules.get("torch")  # a torch tensor implies torch is already imported
    if torch is not None and isinstance(obj, torch.Tensor):
        return from_torch(obj, fmt, dtype)
    if "scipy.sparse" in sys.modules:
        import scipy.sparse as sp
        if sp.issparse(obj):
            return from_scipy(obj, fmt, dtype)
    try:
        arr = np.asarray(obj)
    except Exception as e:
        raise StorageError(f"cannot make a tensor from {type(obj).__name__}: {e}") from e
    if arr.dtype.kind not in "biuf":
        raise StorageError(f"cannot make a tensor from {type(obj).__name__} (numpy dtype "
                           f"{arr.dtype}); expected numbers, a scipy/torch tensor or a "
                           "path")
    return FiberTree.from_dense(arr, fmt, dtype)


def tensor_file_header(path: str | os.PathLike
                       ) -> tuple[tuple[int, ...], int | None] | None:
    """Shape and stored-entry count from a tensor file's header alone (no data read), so a
    caller can refuse a wrong shape or an oversized input before anything is allocated.

    The count is None when the file stores every entry (``.npy``, Matrix Market array).
    Returns None when the header cannot tell (unknown suffix, malformed header): the full
    reader then reports the problem with its own message.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    try:
        if suffix == ".mtx":
            import scipy.io

            rows, cols, entries, layout, *_ = scipy.io.mminfo(path)
            return ((int(rows), int(cols)),
                    int(entries) if layout == "coordinate" else None)
        if suffix == ".npy":
            return npy_header(path), None
    except Exception:  # noqa: BLE001 - malformed headers are the full reader's to report
        return None
    return None


def npy_header(path: str | os.PathLike) -> tuple[int, ...]:
    """The shape an ``.npy`` file's header declares, read without its data; a header
    declaring more bytes than the file holds (15 x 10^12 entries in a few bytes) is a
    :class:`StorageError` before numpy would try to allocate them."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            version = np.lib.format.read_magic(fh)
            read = {(1, 0): np.lib.format.read_array_header_1_0,
                    (2, 0): np.lib.format.read_array_header_2_0}.get(version)
            if read is None:
                raise ValueError(f"unsupported .npy version {version}")
            shape, _, dtype = read(fh, max_header_size=1 << 16)
            offset = fh.tell()
    except (OSError, ValueError) as e:
        raise StorageError(f"cannot read .npy file {str(path)!r}: {type(e).__name__}: "
                           f"{e}") from e
    need = offset + int(np.prod(shape, dtype=object)) * dtype.itemsize
    have = path.stat().st_size
    if need > have:
        raise StorageError(f"cannot read .npy file {str(path)!r}: its header declares "
                           f"shape {tuple(shape)} ({dtype}), {need:,} bytes, but the file "
                           f"holds {have:,}")
    return tuple(int(n) for n in shape)


# -- out of a tree -----------------------------------------------------------------------

def to_scipy(tree: FiberTree, kind: str = "csr") -> Any:
    """A 2-d tree as a scipy sparse array (``kind`` "csr", "csc" or "coo")."""
    import scipy.sparse as sp

    if tree.ndim != 2:
        raise StorageError(f"to_scipy needs a 2-d tensor, this one is {tree.ndim}-d")
    if kind not in ("csr", "csc", "coo"):
        raise StorageError(f"to_scipy kind {kind!r}: expected 'csr', 'csc' or 'coo'")
    coords, vals = tree.to_coo()
    coo = sp.coo_array((vals, (coords[0], coords[1])), shape=tree.shape)
    return coo if kind == "coo" else coo.asformat(kind)


def to_torch(tree: FiberTree, layout: str = "dense") -> Any:
    """The tensor as torch: ``layout`` "dense", "coo" (coalesced), "csr" or "csc"."""
    import torch

    if layout == "dense":
        return torch.from_numpy(tree.to_dense())
    if layout == "coo":
        coords, vals = tree.to_coo()
        order = np.lexsort(coords[::-1]) if tree.ndim else np.arange(len(vals))
        return torch.sparse_coo_tensor(torch.from_numpy(coords[:, order].copy()),
                                       torch.from_numpy(vals[order].copy()),
                                       tree.shape, is_coalesced=True,
                                       check_invariants=False)
    if layout in ("csr", "csc"):
        m = to_scipy(tree, layout)
        ptr = torch.from_numpy(m.indptr.astype(np.int64))
        idx = torch.from_numpy(m.indices.astype(np.int64))
        vals = torch.from_numpy(np.ascontiguousarray(m.data, dtype=tree.vals.dtype))
        ctor = torch.sparse_csr_tensor if layout == "csr" else torch.sparse_csc_tensor
        return ctor(ptr, idx, vals, tree.shape, check_invariants=False)
    raise StorageError(f"to_torch layout {layout!r}: expected 'dense', 'coo', 'csr' or "
                       "'csc'")


def to_mtx(tree: FiberTree, path: str | os.PathLike) -> None:
    """Write a 2-d tree as a Matrix Market coordinate file (nonzeros only)."""
    import scipy.io

    if tree.ndim != 2:
        raise StorageError(f"Matrix Market files hold 2-d tensors; this one is "
                           f"{tree.ndim}-d")
    coo = to_scipy(tree, "coo")
    field = "integer" if tree.vals.dtype.kind == "i" else "real"
    try:
        scipy.io.mmwrite(os.fspath(path), coo, field=field)
    except OSError as e:
        raise StorageError(f"cannot write Matrix Market file {os.fspath(path)!r}: "
                           f"{e}") from e
