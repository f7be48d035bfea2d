"""The data generators: exact sizes, documented statistics, determinism."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from ir import datasets as ds


def _same(a: sp.spmatrix, b: sp.spmatrix) -> bool:
    return a.shape == b.shape and (a != b).nnz == 0


def test_cora_like_matches_cora_sizes():
    d = ds.cora_like()
    s = ds.describe(d.adj)
    assert (s.n_nodes, s.n_edges, s.nnz) == (2708, 5278, 10556)
    assert s.symmetric and s.self_loops == 0
    assert d.adj.dtype == np.float32 and set(np.unique(d.adj.data)) == {1.0}
    assert 120 <= s.degree_max <= 220  # Cora: 168
    assert d.features.shape == (2708, 1433)
    assert d.features.nnz == round(0.0127 * 2708 * 1433)
    assert set(np.unique(d.labels)) <= set(range(7))


def test_cora_like_is_deterministic_and_seeded():
    a, b, c = ds.cora_like(seed=3), ds.cora_like(seed=3), ds.cora_like(seed=4)
    assert _same(a.adj, b.adj) and _same(a.features, b.features)
    assert np.array_equal(a.labels, b.labels)
    assert not _same(a.adj, c.adj)


def test_self_loops_on_request():
    d = ds.cora_like(n_nodes=300, n_edges=600, n_features=10, self_loops=True)
    assert ds.describe(d.adj).n_edges == 600


@settings(max_examples=15, deadline=None)
@given(n=st.integers(20, 400), mean_deg=st.floats(0.5, 4.0), seed=st.integers(0, 10**6))
def test_chung_lu_exact_edges_symmetric(n, mean_deg, seed):
    m = int(n * mean_deg / 2)
    adj = ds.chung_lu_graph(n, m, 2.5, seed)
    s = ds.describe(adj)
    assert s.n_edges == m and s.symmetric and s.self_loops == 0
    assert adj.has_sorted_indices


def test_degree_skew_grows_as_exponent_falls():
    skews = [ds.describe(ds.chung_lu_graph(3000, 6000, g, seed=1)).degree_skew
             for g in (2.2, 2.7, 4.0)]
    maxes = [ds.describe(ds.chung_lu_graph(3000, 6000, g, seed=1)).degree_max
             for g in (2.2, 2.7, 4.0)]
    assert skews[0] > skews[1] > skews[2] > 0
    assert maxes[0] > maxes[1] > maxes[2]


def test_ogb_collab_like_small():
    d = ds.ogb_collab_like(n_nodes=2000, n_edges=11000, n_features=16, seed=2)
    s = ds.describe(d.adj)
    assert (s.n_nodes, s.n_edges) == (2000, 11000)
    assert d.features.shape == (2000, 16) and d.features.dtype == np.float32
    assert isinstance(d.features, np.ndarray)
    again = ds.ogb_collab_like(n_nodes=2000, n_edges=11000, n_features=16, seed=2)
    assert np.array_equal(d.features, again.features)


def test_karate_club_is_networkx_graph():
    d = ds.karate_club()
    s = ds.describe(d.adj)
    assert (s.n_nodes, s.n_edges, s.degree_max) == (34, 78, 17)
    gold = nx.to_numpy_array(nx.karate_club_graph(), weight=None)
    np.testing.assert_array_equal(d.adj.toarray(), gold)
    assert sorted(np.bincount(d.labels)) == [17, 17]


def test_normalize_adjacency_matches_dense_formula():
    a = ds.karate_club().adj.toarray().astype(np.float64)
    ai = a + np.eye(34)
    dinv = np.diag(ai.sum(1) ** -0.5)
    np.testing.assert_allclose(ds.normalize_adjacency(a).toarray(), dinv @ ai @ dinv,
                               rtol=1e-6)
    # an isolated node stays zero rather than dividing by zero
    z = ds.normalize_adjacency(sp.csr_matrix((3, 3)), self_loops=False)
    assert z.nnz == 0


def test_mean_adjacency_rows_average():
    a = ds.chung_lu_graph(200, 400, seed=5)
    m = ds.mean_adjacency(a)
    sums = np.asarray(m.sum(1)).ravel()
    deg = np.diff(a.indptr)
    np.testing.assert_allclose(sums[deg > 0], 1.0, rtol=1e-6)
    assert np.all(sums[deg == 0] == 0)
    x = np.random.default_rng(0).standard_normal((200, 3))
    i = int(np.argmax(deg))
    np.testing.assert_allclose((m @ x)[i], x[a[i].indices].mean(0), rtol=1e-5)


@settings(max_examples=20, deadline=None)
@given(nb=st.integers(1, 20), block=st.integers(1, 4), n_random=st.integers(0, 3),
       window=st.sampled_from([1, 3, 5]), n_global=st.integers(0, 2),
       seed=st.integers(0, 100))
def test_bigbird_mask_structure(nb, block, n_random, window, n_global, seed):
    pat = ds.bigbird_blocks(nb, n_random, window, n_global, seed)
    i, j = np.indices((nb, nb))
    assert pat[np.abs(i - j) <= window // 2].all()          # window
    g = min(n_global, nb)
    assert pat[:g].all() and pat[:, :g].all()                # global rows / columns
    base = (np.abs(i - j) <= window // 2) | (i < g) | (j < g)
    extra = (pat & ~base).sum(1)[g:]                         # random blocks per row
    assert np.all(extra == np.minimum(n_random, (~base).sum(1)[g:]))
    mask = ds.bigbird_mask(nb * block, block, n_random, window, n_global, seed)
    np.testing.assert_array_equal(mask.toarray(),
                                  np.kron(pat, np.ones((block, block))))
    assert mask.dtype == np.float32
    assert _same(mask, ds.bigbird_mask(nb * block, block, n_random, window, n_global, seed))


def test_bigbird_errors():
    with pytest.raises(ValueError, match="multiple of block"):
        ds.bigbird_mask(10, 4)
    with pytest.raises(ValueError, match="odd window"):
        ds.bigbird_blocks(4, window=2)


def test_describe_directed_and_errors():
    a = sp.csr_matrix(np.array([[0, 1, 1], [0, 0, 0], [0, 0, 1]], np.float32))
    s = ds.describe(a)
    assert not s.symmetric and s.n_edges == 3 and s.self_loops == 1 and s.isolated == 1
    with pytest.raises(ValueError, match="square"):
        ds.describe(sp.csr_matrix((2, 3)))
    with pytest.raises(ValueError, match="more than half"):
        ds.chung_lu_graph(10, 40)
