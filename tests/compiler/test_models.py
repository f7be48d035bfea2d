"""The evaluation models: eager results against numpy, configured sparsity, export."""

import warnings
from itertools import pairwise

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import models as M
from ir import datasets as ds

warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().to_dense().numpy().astype(np.float64)


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


@pytest.mark.parametrize("config", ["tiny", "small"])
@pytest.mark.parametrize("name", sorted(M.MODELS))
def test_test_configs_run_and_export(name, config):
    model = M.MODELS[name].from_config(config)
    args = model.example_inputs()
    out = model(*args)
    assert torch.isfinite(out).all()
    ep = torch.export.export(model, args)
    torch.testing.assert_close(ep.module()(*args), out)
    assert any(n.op == "placeholder" for n in ep.graph.nodes)


def test_gcn_matches_numpy():
    model = M.GCN.from_config("karate")
    (x,) = model.example_inputs()
    a = ds.normalize_adjacency(ds.karate_club().adj).toarray()
    np.testing.assert_allclose(_np(model.adj), a, rtol=1e-6)
    l0, l1 = model.layers
    h = np.maximum(a @ _np(x) @ _np(l0.lin.weight).T + _np(l0.bias), 0)
    gold = _softmax(a @ h @ _np(l1.lin.weight).T + _np(l1.bias))
    out = model(x)
    assert out.shape == (34, 2)
    np.testing.assert_allclose(_np(out), gold, rtol=1e-4, atol=1e-6)
    assert model.adj.layout == torch.sparse_csr


def test_graphsage_matches_numpy():
    g = ds.cora_like(n_nodes=40, n_edges=70, n_features=6, feature_density=0.3, seed=1)
    model = M.GraphSAGE(g.adj, 6, 5, 3, seed=1)
    x = torch.from_numpy(g.features.toarray())
    a = ds.mean_adjacency(g.adj).toarray()

    def layer(h, sage):
        s, n = sage.self_lin, sage.neigh_lin
        return h @ _np(s.weight).T + _np(s.bias) + (a @ h) @ _np(n.weight).T

    h = np.maximum(layer(_np(x), model.layers[0]), 0)
    np.testing.assert_allclose(_np(model(x)), layer(h, model.layers[1]),
                               rtol=1e-4, atol=1e-5)


@settings(max_examples=8, deadline=None)
@given(sparsity=st.floats(0.5, 0.9), method=st.sampled_from(["magnitude", "random"]),
       four=st.booleans(), seed=st.integers(0, 1000))
def test_autoencoder_sparsity_and_result(sparsity, method, four, seed):
    dims = (20, 12, 6, 10) if four else (20, 12, 6)
    model = M.SparseAutoencoder(dims, sparsity, method=method, batch=3, seed=seed)
    for w, (n_in, n_out) in zip(model.weights(), pairwise(model.sizes), strict=True):
        assert w.layout == torch.sparse_csr and w.shape == (n_out, n_in)
        assert w._nnz() == max(1, round((1 - sparsity) * n_in * n_out))
    (x,) = model.example_inputs(seed)
    h = _np(x)
    for i, w in enumerate(model.weights()):
        h = h @ _np(w).T + _np(model.layers[i].bias)
        h = np.maximum(h, 0) if i < 2 else h
    out = model(x)
    assert out.shape == (3, dims[-1] if four else dims[0])
    np.testing.assert_allclose(_np(out), h, rtol=1e-4, atol=1e-5)


def test_magnitude_pruning_keeps_the_largest():
    w = torch.tensor([[0.1, -3.0, 0.5], [2.0, -0.2, 0.05]])
    assert M.prune_mask(w, 0.5).tolist() == [[False, True, True], [True, False, False]]
    with pytest.raises(ValueError, match="sparsity"):
        M.SparseAutoencoder((8, 4, 2), 0.95)
    with pytest.raises(ValueError, match="method"):
        M.prune_mask(w, 0.5, "l1")


@pytest.mark.parametrize("causal", [False, True])
def test_bigbird_attention_matches_dense_masked_attention(causal):
    model = M.BigBirdAttention(24, 8, 4, n_random=1, n_global=1, causal=causal, seed=2)
    allowed = ds.bigbird_mask(24, 4, 1, 3, 1, seed=2).toarray() > 0
    if causal:
        allowed &= np.tril(np.ones((24, 24), bool))
    np.testing.assert_array_equal(model.mask_csr().toarray() > 0, allowed)
    (x,) = model.example_inputs(1)
    xn = _np(x)

    def proj(lin, v):
        return v @ _np(lin.weight).T + _np(lin.bias)

    s = proj(model.qkv.q, xn) @ proj(model.qkv.k, xn).T / np.sqrt(8)
    p = _softmax(np.where(allowed, s, -np.inf))
    gold = proj(model.out, p @ proj(model.qkv.v, xn))
    np.testing.assert_allclose(_np(model(x)), gold, rtol=1e-4, atol=1e-5)


def test_gpt_layer_matches_numpy():
    model = M.GPTDecoderLayer.from_config("small", seed=3)
    (x,) = model.example_inputs()

    def ln(v):
        return (v - v.mean(1, keepdims=True)) / np.sqrt(v.var(1, keepdims=True) + 1e-5)

    xn = _np(x)
    attn, mlp = model.attention.attn, model.mlp
    h = xn + _np(attn(torch.from_numpy(ln(xn)).float()))
    f1 = np.maximum(ln(h) @ _np(mlp.fc1.weight).T + _np(mlp.fc1.bias), 0)
    gold = h + f1 @ _np(mlp.fc2.weight).T + _np(mlp.fc2.bias)
    np.testing.assert_allclose(_np(model(x)), gold, rtol=1e-4, atol=1e-4)
    assert attn.mask.dtype == torch.bool
    assert attn.mask.diagonal().all()
    assert not attn.mask.triu(1).any()  # causal


def test_configs_and_determinism():
    a, b = M.GCN.from_config("small", seed=5), M.GCN.from_config("small", seed=5)
    torch.testing.assert_close(a(*a.example_inputs()), b(*b.example_inputs()))
    assert M.csr_sparsity(a.adj) > 0.8
    assert a.data is not None and a.data.adj.shape == a.adj.shape
    (x,) = a.example_inputs(seed=1)
    assert x.shape == a.data.features.shape
    assert abs(float((x != 0).float().mean()) - 0.1) < 0.02   # the data set's density
    with pytest.raises(KeyError, match="no configuration 'huge'"):
        M.GCN.from_config("huge")
    assert set(M.GCN.default_config) >= {"small", "cora"}
    big = M.GCN.config("cora")
    assert big["hidden"] == 16 and big["classes"] == 7


# -- FuseFlow's artifact settings ------------------------------------------------------------
def _zeros(t: torch.Tensor) -> float:
    return float((t == 0).float().mean())


@pytest.mark.parametrize("name", ["gcn", "graphsage"])
def test_every_table2_data_set_has_a_config_and_a_fuseflow_variant(name):
    cls = M.MODELS[name]
    for data in ds.GRAPHS:
        cfg = cls.config(data)
        assert cfg["hidden"] == 16
        assert cfg["classes" if name == "gcn" else "out_features"] == \
            ds.GRAPHS[data].n_classes
        variant = cls.config(f"{data}-fuseflow")
        assert variant["normalize"] is False
        assert variant["data_args"]["feature_density"] == 1.0
    assert "karate-fuseflow" not in cls.default_config


@pytest.mark.parametrize("name", ["gcn", "graphsage"])
def test_fuseflow_settings_on_cora(name):
    """Raw symmetric 0/1 adjacency without self loops, dense features, W1 at 60 % zeros,
    layer 2 at FuseFlow's fraction, pruned weights declared compressed."""
    model = M.MODELS[name].from_config("cora-fuseflow")
    a = model.adj.to_dense().numpy()
    assert set(np.unique(a)) == {0.0, 1.0} and not a.diagonal().any()
    np.testing.assert_array_equal(a, a.T)
    np.testing.assert_array_equal(a, model.data.adj.toarray())
    assert isinstance(model.data.features, np.ndarray)
    (x,) = model.example_inputs(seed=3)
    assert x.shape == (2708, 1433) and _zeros(x) < 1e-5  # torch.randn gives a rare 0.0
    zeros = M.FUSEFLOW["weight_zeros"][type(model).__name__]
    assert zeros[0] == 0.6 and zeros[1] == (0.5 if name == "gcn" else 0.6)
    weights = {f"layers_{n}_{attr}_weight": (n, lin.weight)
               for n, layer in enumerate(model.layers)
               for attr, lin in layer.named_children() if isinstance(lin, torch.nn.Linear)}
    assert model.sparse_formats == {t: M.PRUNED_WEIGHT_FORMAT for t in weights}
    for n, w in weights.values():
        assert abs(_zeros(w) - zeros[n]) <= 0.01
    assert weights["layers_0_lin_weight" if name == "gcn" else
                   "layers_0_self_lin_weight"][1].shape == (16, 1433)


def test_default_configs_keep_dense_weights_and_the_normalised_adjacency():
    model = M.GCN.from_config("cora")
    assert model.sparse_formats == {} and _zeros(model.layers[0].lin.weight) == 0.0
    a = ds.normalize_adjacency(ds.cora_like().adj).toarray()
    np.testing.assert_allclose(_np(model.adj), a, rtol=1e-6)


def test_fuseflow_weights_are_exported_compressed():
    model = M.GCN.from_config("small-fuseflow").eval()
    args = model.example_inputs()
    from compiler import from_torch, torch_weights
    from ir import FiberTree

    program = from_torch(model, args, formats=model.sparse_formats)
    for tensor, fmt in model.sparse_formats.items():
        assert program.tensors[tensor].format == fmt
        w = torch_weights(model, program)[tensor]
        assert FiberTree.from_any(w, fmt).nnz == np.count_nonzero(w) < w.size


def test_weight_zeros_are_checked():
    g = ds.cora_like(n_nodes=20, n_edges=30, n_features=5)
    with pytest.raises(ValueError, match="names 3 layers; the model has 2"):
        M.GCN(g.adj, 5, 4, 2, weight_zeros=(0.5, 0.5, 0.5))
    with pytest.raises(ValueError, match=r"weight_zeros\[1\] = 1.0 must be in \[0, 1\)"):
        M.GraphSAGE(g.adj, 5, 4, 2, weight_zeros=(0.5, 1.0))
    model = M.GCN(g.adj, 5, 4, 2, weight_zeros=(0.0, 0.5))
    assert list(model.sparse_formats) == ["layers_1_lin_weight"]


def test_scaled_collab_keeps_the_degree_distribution():
    """``collab-s16`` is Collab at 1/16 of its nodes and edges: the same mean degree and
    degree percentiles up to the 99th as the full-size graph (measured with numpy on
    both adjacencies), a shorter tail."""
    import numpy as np

    data, factor = M.SCALED_GRAPHS["collab-s16"]
    full = ds.graph_dataset(data).adj
    small = M.MODELS["gcn"].from_config("collab-s16-fuseflow").data.adj
    spec = ds.GRAPHS[data]
    assert small.shape == (spec.n_nodes // factor,) * 2
    assert small.nnz == 2 * (spec.n_edges // factor)
    deg_full, deg_small = np.diff(full.indptr), np.diff(small.indptr)
    assert abs(deg_small.mean() - deg_full.mean()) < 0.01
    for q in (50, 90, 99):
        assert np.percentile(deg_small, q) == np.percentile(deg_full, q)
    assert deg_small.max() < deg_full.max()
