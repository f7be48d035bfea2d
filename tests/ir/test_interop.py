"""ir._interop: FiberTree to and from scipy, torch, Matrix Market and .npy/.npz files.

Gold values come from scipy, torch and numpy directly (scipy reads and writes the files),
never from the code under test. Each converter is reached through the public
``FiberTree`` methods, the API callers use.
"""

import re

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import torch
from _fibers import all_formats, dense_arrays
from hypothesis import given, settings
from hypothesis import strategies as st

from ir import tensor_file_header
from ir._formats import Format
from ir._storage import FiberTree, StorageError

FAST = settings(max_examples=60, deadline=None)
pytestmark = pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")


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


# -- headers ---------------------------------------------------------------------------


def test_tensor_file_header_reads_shape_and_entries_without_the_data(tmp_path):
    coo = sp.coo_matrix(([1.0, 2.0, 3.0], ([0, 2, 2], [1, 0, 3])), shape=(3, 5))
    scipy.io.mmwrite(tmp_path / "c.mtx", coo)
    assert tensor_file_header(tmp_path / "c.mtx") == ((3, 5), 3)
    scipy.io.mmwrite(tmp_path / "a.mtx", np.ones((2, 4)))
    assert tensor_file_header(str(tmp_path / "a.mtx")) == ((2, 4), None)
    np.save(tmp_path / "t.npy", np.zeros((2, 3, 4), dtype=np.float32))
    assert tensor_file_header(tmp_path / "t.npy") == ((2, 3, 4), None)
    # a header that lies about its size is still read as written: the caller decides
    (tmp_path / "huge.mtx").write_text("%%MatrixMarket matrix coordinate real general\n"
                                       "1000000000 1000000000 5\n1 1 1.0\n")
    assert tensor_file_header(tmp_path / "huge.mtx") == ((10**9, 10**9), 5)
    # unknown, missing or malformed: None, and the full reader reports the problem
    (tmp_path / "bad.mtx").write_text("not a matrix market file\n")
    for name in ("bad.mtx", "missing.npy", "x.npz", "x.txt"):
        assert tensor_file_header(tmp_path / name) is None, name
