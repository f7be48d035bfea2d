"""ir.FiberTree: numpy round trips, levels against scipy, and pinned validation errors.

Gold values come from numpy, scipy or a tiny reference fiber-tree builder written here
(recursion over the dense array), never from the code under test.
"""

import re

import numpy as np
import pytest
import scipy.sparse as sp
from _fibers import all_formats, dense_arrays
from hypothesis import given, settings
from hypothesis import strategies as st

from ir._storage import CompressedLevel, DenseLevel, FiberTree, StorageError

FAST = settings(max_examples=60, deadline=None)
pytestmark = pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")


FORMATS_1_3 = [f for n in (1, 2, 3) for f in all_formats(n)]


def ref_levels(dense, fmt):
    """Reference fiber tree by recursion: [("d", size) | ("c", seg, crd)], vals."""
    t = np.transpose(dense, fmt.mode_order)
    prefixes = [()]
    levels = []
    for i, kind in enumerate(fmt.levels):
        n = t.shape[i]
        nxt, seg, crd = [], [0], []
        for p in prefixes:
            for c in range(n):
                if kind == "dense" or np.any(t[p + (c,)] != 0):
                    nxt.append(p + (c,))
                    crd.append(c)
            seg.append(len(crd))
        levels.append(("d", n) if kind == "dense" else ("c", seg, crd))
        prefixes = nxt
    return levels, [t[p] for p in prefixes]


def assert_levels(tree, levels, vals):
    assert len(tree.levels) == len(levels)
    for got, want in zip(tree.levels, levels, strict=True):
        if want[0] == "d":
            assert got == DenseLevel(want[1])
        else:
            assert isinstance(got, CompressedLevel)
            assert got.seg.tolist() == want[1] and got.crd.tolist() == want[2]
            assert got.seg.dtype == np.int64 and got.crd.dtype == np.int64
    np.testing.assert_array_equal(tree.vals, np.asarray(vals, dtype=tree.vals.dtype))


def sorted_coo(coords, vals):
    order = np.lexsort(coords[::-1]) if len(coords) else np.arange(len(vals))
    return coords[:, order], vals[order]


# -- numpy round trips -----------------------------------------------------------------


@FAST
@given(dense_arrays(), st.data())
def test_from_dense_matches_reference(arr, data):
    fmt = data.draw(st.sampled_from(all_formats(arr.ndim)))
    tree = FiberTree.from_dense(arr, fmt, dtype=arr.dtype)
    assert tree.shape == arr.shape and tree.format == fmt and tree.dtype == arr.dtype
    assert_levels(tree, *ref_levels(arr, fmt))
    out = tree.to_dense()
    assert out.dtype == arr.dtype and out.shape == arr.shape
    np.testing.assert_array_equal(out, arr)
    coords, vals = tree.to_coo()
    gold = np.array(np.nonzero(arr), dtype=np.int64).reshape(arr.ndim, -1)
    got_c, got_v = sorted_coo(coords, vals)
    np.testing.assert_array_equal(got_c, gold)
    np.testing.assert_array_equal(got_v, arr[tuple(gold)])
    # the same tree again through the validating constructor
    assert FiberTree.from_levels(tree.shape, str(fmt), tree.levels, tree.vals) == tree
    assert tree.nnz == len(tree.vals)


@FAST
@given(dense_arrays(), st.data())
def test_from_coo_unsorted_duplicates(arr, data):
    fmt = data.draw(st.sampled_from(all_formats(arr.ndim)))
    gold = np.zeros(arr.shape, dtype=np.int64)
    nnz = data.draw(st.integers(0, 30)) if arr.size else 0
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    coords = np.stack([rng.integers(0, max(s, 1), size=nnz) for s in arr.shape])
    vals = rng.integers(-5, 6, size=nnz)
    np.add.at(gold, tuple(coords), vals)
    dtype = data.draw(st.sampled_from(["float32", "int32", np.float32, np.dtype("int32")]))
    tree = FiberTree.from_coo(coords, vals, arr.shape, fmt, dtype=dtype)
    assert tree.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(tree.to_dense(), gold)
    # every distinct coordinate is stored, even where duplicates cancel to zero
    distinct = {tuple(c) for c in coords.T}
    stored = {tuple(c) for c in tree.to_coo(keep_zeros=True)[0].T}
    assert distinct <= stored
    if fmt.all_compressed:
        assert len(stored) == len(distinct) == tree.nnz


@pytest.mark.parametrize("fmt", FORMATS_1_3, ids=str)
def test_every_format_small_fixed(fmt):
    rng = np.random.default_rng(7)
    shape = (3, 1, 4)[: fmt.ndim]
    arr = (rng.random(shape) < 0.4) * rng.integers(1, 5, size=shape)
    tree = FiberTree.from_dense(arr, fmt, dtype="int32")
    assert_levels(tree, *ref_levels(arr, fmt))
    np.testing.assert_array_equal(tree.to_dense(), arr)
    for i in range(fmt.ndim):
        assert tree.num_fibers(i) == tree.num_positions(i - 1)
    assert tree.num_fibers(0) == 1


def test_csr_example_from_paper_layout():
    a = np.array([[1, 0, 2, 3], [0, 0, 0, 0], [4, 0, 5, 0]], dtype=np.float32)
    tree = FiberTree.from_dense(a, "csr")
    gold = sp.csr_array(a)
    assert tree.levels[0] == DenseLevel(3)
    assert tree.levels[1].seg.tolist() == gold.indptr.tolist()
    assert tree.levels[1].crd.tolist() == gold.indices.tolist()
    dcsr = FiberTree.from_dense(a, "dcsr")
    assert dcsr.levels[0].seg.tolist() == [0, 2] and dcsr.levels[0].crd.tolist() == [0, 2]
    assert dcsr.levels[1].seg.tolist() == [0, 3, 5]
    assert dcsr.num_fibers(1) == 2 and dcsr.nnz == 5


def test_scalar_and_empty():
    s = FiberTree.from_dense(np.float32(2.5))
    assert s.shape == () and s.levels == [] and s.vals.tolist() == [2.5]
    assert s.to_dense().shape == () and s.to_dense() == np.float32(2.5)
    coords, vals = s.to_coo()
    assert coords.shape == (0, 1) and vals.tolist() == [2.5]
    summed = FiberTree.from_coo(np.zeros((0, 3)), [1, 2, 4], (), dtype="int32")
    assert summed.vals.tolist() == [7]
    assert FiberTree.from_coo([], [1, 2], ()).vals.tolist() == [3.0]
    zero = FiberTree.from_coo(np.zeros((0, 0)), [], ())
    assert zero.vals.tolist() == [0.0] and zero.to_coo()[0].shape == (0, 0)
    for fmt in ("dc", "cc", "cc:1,0", "dd"):
        empty = FiberTree.from_coo(np.zeros((2, 0)), [], (0, 5), fmt)
        assert empty.to_dense().shape == (0, 5) and empty.nnz == 0
        empty = FiberTree.from_coo(np.zeros((2, 0)), [], (3, 5), fmt)
        np.testing.assert_array_equal(empty.to_dense(), np.zeros((3, 5)))
    assert FiberTree.from_dense(np.zeros((3, 5)), "dcsr").levels[0].seg.tolist() == [0, 0]


def test_values_do_not_alias_inputs():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    tree = FiberTree.from_dense(a)
    a[0, 0] = 99
    assert tree.vals[0] == 0
    vals = np.array([1.0, 2.0], dtype=np.float32)
    tree = FiberTree.from_coo([[0, 1]], vals, (2,))
    vals[0] = 99
    assert tree.vals.tolist() == [1.0, 2.0]


def test_large_from_coo_is_vectorised():
    rng = np.random.default_rng(0)
    n, shape = 400_000, (3000, 2000)
    coords = np.stack([rng.integers(0, s, n) for s in shape])
    vals = rng.random(n).astype(np.float32)
    gold = sp.coo_array((vals, tuple(coords)), shape=shape).tocsr()
    gold.sum_duplicates()
    tree = FiberTree.from_coo(coords, vals, shape, "csr")
    np.testing.assert_array_equal(tree.levels[1].seg, gold.indptr)
    np.testing.assert_array_equal(tree.levels[1].crd, gold.indices)
    np.testing.assert_allclose(tree.vals, gold.data, rtol=1e-6)
    back = tree.to_scipy("csc")
    assert (abs(back - gold.tocsc()) > 1e-5).nnz == 0


# -- dtypes ----------------------------------------------------------------------------


def test_dtypes():
    a = np.array([[1, 0], [0, 3]])
    assert FiberTree.from_dense(a).dtype == np.float32  # default float32
    assert FiberTree.from_dense(a, dtype="int32").to_dense().dtype == np.int32
    assert FiberTree.from_dense(a, dtype=np.int32).astype("float32").dtype == np.float32
    with pytest.raises(StorageError, match=re.escape("dtype 'float64': expected one of "
                                                     "('float32', 'int32')")):
        FiberTree.from_dense(a, dtype="float64")
    with pytest.raises(StorageError, match="non-integer values cannot be stored as int32"):
        FiberTree.from_dense(np.array([0.5, 1.0]), dtype="int32")
    with pytest.raises(StorageError, match="outside the int32 range"):
        FiberTree.from_dense(np.array([2**40]), dtype="int32")
    with pytest.raises(StorageError, match="complex values cannot be stored"):
        FiberTree.from_dense(np.array([1j]))
    b = FiberTree.from_dense(np.array([True, False, True]), "c", dtype="int32")
    assert b.vals.tolist() == [1, 1] and b.levels[0].crd.tolist() == [0, 2]


# -- from_levels validation ------------------------------------------------------------


def test_from_levels_accepts_shorthand():
    tree = FiberTree.from_levels((3, 4), "dc", [None, ([0, 2, 2, 3], [1, 3, 0])], [1, 2, 3])
    assert tree.levels == [DenseLevel(3), CompressedLevel(np.array([0, 2, 2, 3]),
                                                          np.array([1, 3, 0]))]
    np.testing.assert_array_equal(tree.to_dense(), [[0, 1, 0, 2], [0, 0, 0, 0], [3, 0, 0, 0]])
    assert tree.dtype == np.float32
    t2 = FiberTree.from_levels((3,), "d", [3], np.array([1, 2, 3], dtype=np.int32))
    assert t2.dtype == np.int32


CSR_SHAPE = (3, 4)


@pytest.mark.parametrize("fmt, levels, vals, message", [
    ("dc", [DenseLevel(2), ([0, 1, 1], [0])], [1],
     "level 0 (dense, mode 0): dense size 2 but mode 0 has size 3"),
    ("dc", [DenseLevel(3), ([0, 1, 1], [0])], [1],
     "level 1 (compressed, mode 1): seg has 3 entries but the parent level has 3 positions "
     "(expected 4)"),
    ("dc", [DenseLevel(3), ([1, 1, 1, 1], [0])], [1],
     "level 1 (compressed, mode 1): seg[0] is 1, must be 0"),
    ("dc", [DenseLevel(3), ([0, 2, 1, 3], [0, 1, 2])], [1, 2, 3],
     "level 1 (compressed, mode 1): seg is not monotone (seg[1]=2 > seg[2]=1)"),
    ("dc", [DenseLevel(3), ([0, 1, 1, 2], [0, 1, 2])], [1, 2, 3],
     "level 1 (compressed, mode 1): seg[-1] is 2 but crd has 3 entries"),
    ("dc", [DenseLevel(3), ([0, 1, 1, 2], [0, 4])], [1, 2],
     "level 1 (compressed, mode 1): crd[1]=4 is outside 0..3 (mode 1 has size 4)"),
    ("dc", [DenseLevel(3), ([0, 2, 2, 2], [3, 1])], [1, 2],
     "level 1 (compressed, mode 1): crd is not strictly increasing within a fiber "
     "(crd[0]=3, crd[1]=1)"),
    ("dc", [DenseLevel(3), ([0, 2, 2, 2], [1, 1])], [1, 2],
     "crd is not strictly increasing within a fiber (crd[0]=1, crd[1]=1)"),
    ("dc", [DenseLevel(3), ([0, 1, 1, 2], [0, 1])], [1, 2, 3],
     "vals has 3 entries but the last level has 2 positions"),
    ("dc:1,0", [DenseLevel(4), ([0, 1, 1, 1, 1], [3])], [1],
     "level 1 (compressed, mode 0): crd[0]=3 is outside 0..2 (mode 0 has size 3)"),
    ("cc", [([0, 1], [0]), DenseLevel(4)], [1],
     "level 1 (compressed, mode 1): expected a CompressedLevel or (seg, crd), got "
     "DenseLevel"),
    ("dc", [DenseLevel(3)], [1], "format 'dc' has 2 levels but 1 were given"),
    ("dc", [DenseLevel(3), ([0, 1.5, 2, 2], [0, 1])], [1, 2],
     "level 1 (compressed, mode 1): seg must hold integers"),
    ("dd", [DenseLevel(3), DenseLevel(4)], [[1]],
     "vals must be 1-d (indexed by last-level position), got shape (1, 1)"),
])
def test_from_levels_rejects_malformed(fmt, levels, vals, message):
    with pytest.raises(StorageError, match=re.escape(message)):
        FiberTree.from_levels(CSR_SHAPE, fmt, levels, vals)


def test_crd_may_restart_across_fibers():
    tree = FiberTree.from_levels((2, 3), "dc", [None, ([0, 2, 4], [1, 2, 0, 2])], [1, 2, 3, 4])
    np.testing.assert_array_equal(tree.to_dense(), [[0, 1, 2], [3, 0, 4]])
    # empty fibers in between do not hide a decrease inside a later fiber
    with pytest.raises(StorageError, match=re.escape("(crd[2]=2, crd[3]=0)")):
        FiberTree.from_levels((3, 3), "dc", [None, ([0, 2, 2, 4], [0, 1, 2, 0])], [1] * 4)


def test_from_coo_errors():
    with pytest.raises(StorageError, match=re.escape("coordinate [1, 5] (entry 1) is out of "
                                                     "bounds for shape (2, 3) in mode 1")):
        FiberTree.from_coo([[0, 1], [0, 5]], [1, 2], (2, 3))
    with pytest.raises(StorageError, match=re.escape("coords of shape (3, 2): expected (2, "
                                                     "nnz) for a 2-d tensor")):
        FiberTree.from_coo(np.zeros((3, 2)), [1, 2], (2, 3))
    with pytest.raises(StorageError, match=re.escape("values of shape (3,): expected (2,)")):
        FiberTree.from_coo([[0, 1], [0, 1]], [1, 2, 3], (2, 3))
    with pytest.raises(StorageError, match=re.escape("shape (2, -1): sizes must be "
                                                     "non-negative")):
        FiberTree.from_coo([[0], [0]], [1], (2, -1))


# -- from_written ----------------------------------------------------------------------


def test_from_written_compressed_and_dense_targets():
    # B = [[0, 1, 0], [0, 0, 0], [2, 0, 3]] written as two compressed levels; the
    # level-1 writer also recorded a trailing fiber (extra seg entries) to be ignored.
    segs = [([0, 2], [0, 2]), ([0, 1, 3, 3, 3], [1, 0, 2])]
    gold = np.array([[0, 1, 0], [0, 0, 0], [2, 0, 3]], dtype=np.float32)
    for spec in ("cc", "dc", "dd", "cd"):
        tree = FiberTree.from_written((3, 3), spec, segs, [1.0, 2.0, 3.0])
        assert str(tree.format) == spec
        assert_levels(tree, *ref_levels(gold, tree.format))
    # written in storage (column-major) order for a csc target
    segs_t = [([0, 3], [0, 1, 2]), ([0, 1, 2, 3], [2, 0, 2])]
    tree = FiberTree.from_written((3, 3), "dc:1,0", segs_t, [2, 1, 3], dtype="int32")
    np.testing.assert_array_equal(tree.to_dense(), gold.astype(np.int32))
    # empty output with an empty level-0 fiber
    empty = FiberTree.from_written((3, 3), "dc", [([0, 0], []), ([0], [])], [])
    np.testing.assert_array_equal(empty.to_dense(), np.zeros((3, 3)))
    scalar = FiberTree.from_written((), "", [], [4.0])
    assert scalar.vals.tolist() == [4.0] and scalar.to_dense() == 4.0
    vec = FiberTree.from_written((4,), "d", [([0, 2, 2], [1, 3])], [5, 6], dtype="int32")
    assert vec.vals.tolist() == [0, 5, 0, 6] and vec.dtype == np.int32


def test_from_written_errors():
    with pytest.raises(StorageError, match=re.escape(
            "written level 1: seg has 2 entries, fewer than the 3 needed for 2 fibers (one "
            "per level-0 crd)")):
        FiberTree.from_written((3, 3), "cc", [([0, 2], [0, 2]), ([0, 1], [1])], [1.0])
    with pytest.raises(StorageError, match=re.escape("vals has 2 entries but the last level "
                                                     "has 3 positions")):
        FiberTree.from_written((3, 3), "cc", [([0, 2], [0, 2]), ([0, 1, 3], [1, 0, 2])],
                               [1.0, 2.0])
    with pytest.raises(StorageError, match=re.escape("needs 2 levels, got 1")):
        FiberTree.from_written((3, 3), "cc", [([0, 2], [0, 2])], [1.0])
    with pytest.raises(StorageError, match="crd is not strictly increasing"):
        FiberTree.from_written((3,), "c", [([0, 2], [2, 0])], [1.0, 2.0])


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 7), n=st.integers(1, 7), density=st.floats(0, 1),
       seed=st.integers(0, 2**16))
def test_levels_answer_fiber_crd_and_locate_like_scipy(m, n, density, seed):
    import scipy.sparse as sp

    from ir import CompressedLevel, DenseLevel

    a = sp.random(m, n, density, format="csr", random_state=seed, dtype=np.float32)
    a.sort_indices()
    tree = FiberTree.from_scipy(a, "dc")
    rows, cols = tree.levels
    assert isinstance(rows, DenseLevel) and isinstance(cols, CompressedLevel)
    assert tree.num_fibers(1) == m and tree.num_positions(1) == a.nnz
    for i in range(m):
        start, end = rows.fiber(0)
        assert (start, end) == (0, m) and rows.crd_at(i) == i and rows.locate(0, i) == i
        assert cols.fiber(i) == (a.indptr[i], a.indptr[i + 1])
        for p in range(*cols.fiber(i)):
            assert cols.crd_at(p) == a.indices[p]
        for j in range(n):
            want = next((p for p in range(a.indptr[i], a.indptr[i + 1])
                         if a.indices[p] == j), None)
            assert cols.locate(i, j) == want
    assert rows.locate(0, m) is None and rows.locate(0, -1) is None
    dense = FiberTree.from_dense(a.toarray(), "dd")
    assert dense.levels[1].locate(2, 3) == (2 * n + 3 if n > 3 else None)
    assert dense.levels[1].fiber(1) == (n, 2 * n)
