"""ir.FiberTree: round trips against numpy/scipy/torch gold and pinned validation errors.

Gold values come from numpy, scipy or a tiny reference fiber-tree builder written here
(recursion over the dense array), never from the code under test.
"""

import itertools
import re

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from ir._formats import Format
from ir._storage import CompressedLevel, DenseLevel, FiberTree, StorageError

FAST = settings(max_examples=60, deadline=None)
pytestmark = pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")


def all_formats(ndim):
    return [Format(tuple(lv), order) for lv in itertools.product("dc", repeat=ndim)
            for order in itertools.permutations(range(ndim))]


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


@st.composite
def dense_arrays(draw, min_ndim=1, max_ndim=3, max_side=4):
    ndim = draw(st.integers(min_ndim, max_ndim))
    shape = tuple(draw(st.lists(st.integers(0, max_side), min_size=ndim, max_size=ndim)))
    density = draw(st.sampled_from([0.0, 0.2, 0.5, 1.0]))
    dtype = draw(st.sampled_from(["float32", "int32"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    vals = rng.integers(1, 9, size=shape) * np.where(rng.random(shape) < 0.5, 1, -1)
    if dtype == "float32":
        vals = vals + rng.random(shape).round(3)
    mask = rng.random(shape) < density
    return np.where(mask, vals, 0).astype(dtype)


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


# -- scipy -----------------------------------------------------------------------------


@FAST
@given(st.integers(0, 5), st.integers(0, 5), st.sampled_from([0.0, 0.3, 1.0]),
       st.sampled_from(all_formats(2)), st.sampled_from(["csr", "csc", "coo"]),
       st.sampled_from([sp.csr_matrix, sp.csc_array, sp.coo_array]),
       st.integers(0, 2**32 - 1))
def test_scipy_round_trip(m, n, density, fmt, kind, ctor, seed):
    gold = sp.random(m, n, density=density, format="coo", dtype=np.float32,
                     random_state=np.random.default_rng(seed))
    mat = ctor(gold)
    tree = FiberTree.from_scipy(mat, fmt)
    np.testing.assert_array_equal(tree.to_dense(), gold.toarray())
    out = tree.to_scipy(kind)
    assert out.format == kind and out.shape == (m, n)
    np.testing.assert_array_equal(out.toarray(), gold.toarray())
    if fmt == Format.parse("csr", 2):
        ref = sp.csr_array(gold)
        ref.sort_indices()
        assert tree.levels[1].seg.tolist() == ref.indptr.tolist()
        assert tree.levels[1].crd.tolist() == ref.indices.tolist()


def test_scipy_duplicates_explicit_zeros_and_default_format():
    m = sp.coo_matrix(([1.0, 2.0, 0.0, 5.0], ([1, 1, 0, 2], [2, 2, 1, 0])), shape=(3, 3))
    tree = FiberTree.from_scipy(m)
    assert tree.format == Format.parse("csr", 2)
    np.testing.assert_array_equal(tree.to_dense(), m.toarray())
    assert tree.nnz == 3  # explicit zero at (0, 1) kept, duplicates summed
    assert tree.to_scipy().nnz == 2  # converters give the logical (nonzero) tensor
    with pytest.raises(StorageError, match="to_scipy needs a 2-d tensor, this one is 3-d"):
        FiberTree.from_dense(np.zeros((1, 1, 1))).to_scipy()
    with pytest.raises(StorageError, match="from_scipy expects a scipy sparse"):
        FiberTree.from_scipy(np.zeros((2, 2)))


# -- torch -----------------------------------------------------------------------------


@FAST
@given(dense_arrays(max_ndim=3), st.data())
def test_torch_round_trip(arr, data):
    fmt = data.draw(st.sampled_from(all_formats(arr.ndim)))
    t = torch.from_numpy(arr.copy())
    layouts = [("dense", t), ("coo", t.to_sparse())]
    if arr.ndim == 2:
        layouts += [("csr", t.to_sparse_csr()), ("csc", t.to_sparse_csc())]
    for name, src in layouts:
        tree = FiberTree.from_torch(src, fmt, dtype=arr.dtype)
        np.testing.assert_array_equal(tree.to_dense(), arr, err_msg=name)
        back = tree.to_torch(name)
        got = back.to_dense() if name != "dense" else back
        assert got.dtype == t.dtype
        assert torch.equal(got, t), name


def test_torch_uncoalesced_coo_and_defaults():
    idx = torch.tensor([[2, 0, 2, 1], [1, 0, 1, 3], [0, 0, 0, 1]])
    src = torch.sparse_coo_tensor(idx, torch.tensor([1.0, 2.0, 3.0, 4.0]), (3, 4, 2),
                                  check_invariants=True)
    tree = FiberTree.from_torch(src)
    assert tree.format == Format.compressed(3)
    np.testing.assert_array_equal(tree.to_dense(), src.to_dense().numpy())
    assert tree.nnz == 3
    tree2 = FiberTree.from_torch(src.to_dense()[:, :, 0].to_sparse_csr())
    assert str(tree2.format) == "dc"
    assert str(FiberTree.from_torch(torch.ones(2, 2)).format) == "dd"
    half = FiberTree.from_torch(torch.ones(3, dtype=torch.float16, requires_grad=False))
    assert half.dtype == np.float32 and half.vals.tolist() == [1.0] * 3
    coo = tree.to_torch("coo")
    assert coo.is_coalesced() and torch.equal(coo.to_dense(), src.to_dense())
    with pytest.raises(StorageError, match="to_torch layout 'bsr'"):
        tree.to_torch("bsr")


# -- Matrix Market ---------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(dense_arrays(min_ndim=2, max_ndim=2), st.sampled_from(all_formats(2)))
def test_mtx_round_trip(tmp_path_factory, arr, fmt):
    d = tmp_path_factory.mktemp("mtx")
    gold_path = d / "gold.mtx"
    scipy.io.mmwrite(gold_path, sp.coo_matrix(arr.astype(np.float64)))
    tree = FiberTree.from_mtx(gold_path, fmt, dtype=arr.dtype)
    np.testing.assert_array_equal(tree.to_dense(), arr)
    out = d / "out.mtx"
    tree.to_mtx(out)
    read = scipy.io.mmread(out)
    np.testing.assert_array_equal(sp.coo_matrix(read).toarray().astype(arr.dtype), arr)


def test_mtx_float32_exact_and_errors(tmp_path):
    vals = np.array([0.1, 1 / 3, 1e-7, 12345.678], dtype=np.float32)
    tree = FiberTree.from_coo([[0, 1, 2, 2], [3, 0, 1, 2]], vals, (3, 4), "csr")
    tree.to_mtx(tmp_path / "f.mtx")
    again = FiberTree.from_mtx(tmp_path / "f.mtx")
    assert again == tree
    missing = tmp_path / "nope.mtx"
    with pytest.raises(StorageError, match=re.escape(f"Matrix Market file {str(missing)!r}")):
        FiberTree.from_mtx(missing)
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1\n")
    with pytest.raises(StorageError, match=re.escape(f"cannot read Matrix Market file "
                                                     f"{str(bad)!r}")):
        FiberTree.from_mtx(bad)
    with pytest.raises(StorageError, match="Matrix Market files hold 2-d tensors; this one "
                                           "is 1-d"):
        FiberTree.from_dense(np.ones(3)).to_mtx(tmp_path / "v.mtx")
    dense_file = tmp_path / "arr.mtx"
    scipy.io.mmwrite(dense_file, np.array([[1.0, 0.0], [0.0, 2.0]]))
    t = FiberTree.from_mtx(dense_file)
    assert t.format == Format.dense(2) and t.to_dense().tolist() == [[1, 0], [0, 2]]


# -- from_any --------------------------------------------------------------------------


def test_from_any_dispatch(tmp_path):
    a = np.array([[0, 1.5], [2, 0]], dtype=np.float32)
    cases = {
        "numpy": a, "list": a.tolist(), "scipy": sp.csr_array(a),
        "torch": torch.from_numpy(a), "torch_coo": torch.from_numpy(a).to_sparse(),
    }
    np.save(tmp_path / "a.npy", a)
    scipy.io.mmwrite(tmp_path / "a.mtx", sp.coo_matrix(a))
    sp.save_npz(tmp_path / "a.npz", sp.csr_matrix(a))
    cases.update({"npy": str(tmp_path / "a.npy"), "mtx": tmp_path / "a.mtx",
                  "npz": tmp_path / "a.npz"})
    defaults = {"numpy": "dd", "list": "dd", "scipy": "dc", "torch": "dd",
                "torch_coo": "dc", "npy": "dd", "mtx": "dc", "npz": "dc"}
    for name, obj in cases.items():
        tree = FiberTree.from_any(obj)
        assert str(tree.format) == defaults[name], name
        np.testing.assert_array_equal(tree.to_dense(), a, err_msg=name)
        tree = FiberTree.from_any(obj, "dc:1,0", dtype="float32")
        assert str(tree.format) == "dc:1,0", name
        np.testing.assert_array_equal(tree.to_dense(), a, err_msg=name)
    dense = FiberTree.from_dense(a)
    assert FiberTree.from_any(dense) is dense
    csr = FiberTree.from_any(dense, "csr")
    assert csr.nnz == 2  # dense fill is not carried into the compressed format
    assert FiberTree.from_any(csr, "dc") is csr
    with pytest.raises(StorageError, match="non-integer values cannot be stored as int32"):
        FiberTree.from_any(csr, dtype="int32")
    with pytest.raises(StorageError, match=re.escape("unknown suffix '.txt'")):
        FiberTree.from_any(tmp_path / "a.txt")
    with pytest.raises(StorageError, match="cannot make a tensor from dict"):
        FiberTree.from_any({"a": 1})
    with pytest.raises(StorageError, match=re.escape("format 'csr' for a 3-d tensor")):
        FiberTree.from_any(np.zeros((1, 1, 1)), "csr")


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
