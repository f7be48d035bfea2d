"""TensorStats.from_tensor counts a tensor's stored positions from its non-zero pattern;
they must equal those of the tree ``FiberTree.from_any`` builds, and scipy's counts."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import TensorStats
from ir import FiberTree, Format

#: every format of a 2-d tensor (level types x mode orders) and some of a 3-d one
FORMATS_2D = [f"{a}{b}{o}" for a in "dc" for b in "dc" for o in ("", ":1,0")]
FORMATS_3D = ["ddd", "ccc", "dcd", "cdc:2,0,1", "dcc:1,2,0", "ccd:2,1,0"]


def _reference(x, fmt: str) -> TensorStats:
    """What the heuristic measured before: the tree built in ``fmt`` and its COO."""
    tree = FiberTree.from_any(x, fmt)
    nnz = len(tree.to_coo()[1])
    return TensorStats(tuple(tree.shape), nnz / np.prod(tree.shape),
                       tuple(tree.num_positions(lv) for lv in range(tree.ndim)),
                       str(tree.format))


@st.composite
def _tensors(draw):
    ndim = draw(st.sampled_from([2, 3]))
    shape = tuple(draw(st.lists(st.integers(1, 7), min_size=ndim, max_size=ndim)))
    density = draw(st.floats(0.0, 1.0))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = (rng.integers(1, 9, shape) * (rng.random(shape) < density)).astype(np.float32)
    fmt = draw(st.sampled_from(FORMATS_2D if ndim == 2 else FORMATS_3D))
    return x, fmt


@settings(max_examples=200, deadline=None)
@given(case=_tensors(), held=st.sampled_from(["numpy", "int32", "torch", "tree-dense",
                                              "tree-sparse", "tree-int32"]))
def test_from_tensor_matches_the_built_tree(case, held):
    x, fmt = case
    source = {"numpy": lambda: x, "int32": lambda: x.astype(np.int32),
              "torch": lambda: torch.from_numpy(x),
              "tree-dense": lambda: FiberTree.from_any(x, "d" * x.ndim + ":" + ",".join(
                  str(m) for m in reversed(range(x.ndim)))),
              "tree-sparse": lambda: FiberTree.from_any(x, "c" * x.ndim),
              "tree-int32": lambda: FiberTree.from_any(x, "c" * x.ndim, dtype="int32")}
    got = TensorStats.from_tensor(source[held](), fmt)
    assert got == _reference(x, fmt)


@settings(max_examples=100, deadline=None)
@given(n=st.integers(1, 40), m=st.integers(1, 40), density=st.floats(0.0, 0.3),
       seed=st.integers(0, 2**16))
def test_from_tensor_counts_like_scipy(n, m, density, seed):
    """CSR, DCSR and CSC positions are scipy's row/column and entry counts."""
    a = sp.random(n, m, density=density, format="csr", dtype=np.float32,
                  random_state=seed, data_rvs=lambda k: np.arange(1, k + 1))
    dense = a.toarray()
    nonempty_rows = int(np.count_nonzero(np.diff(a.indptr)))
    for x in (dense, FiberTree.from_any(dense, "dd:1,0")):
        assert TensorStats.from_tensor(x, "csr").level_positions == (n, a.nnz)
        assert TensorStats.from_tensor(x, "dcsr").level_positions == (nonempty_rows, a.nnz)
        assert TensorStats.from_tensor(x, "csc").level_positions == (m, a.nnz)
        assert TensorStats.from_tensor(x, "dense").level_positions == (n, n * m)
        assert TensorStats.from_tensor(x, "csr").density == a.nnz / (n * m)


def test_from_tensor_keeps_a_trees_explicit_zeros():
    """A tree already in the asked format is measured as stored (explicit zeros are
    positions), as the heuristic always has."""
    tree = FiberTree.from_coo([[0, 1], [1, 2]], [0.0, 3.0], (3, 4), "dcsr")
    got = TensorStats.from_tensor(tree, Format.parse("dcsr", 2))
    assert got.level_positions == (2, 2) and got.density == 1 / 12
