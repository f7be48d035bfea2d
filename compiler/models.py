"""The models of the FuseFlow evaluation, written for the torch.export frontend.

GCN, GraphSAGE, a sparse autoencoder, BigBird block-sparse attention and a GPT-3-style
decoder layer. They use only the operations the frontend translates: ``torch.mm`` with a
sparse (CSR) or dense operand, ``nn.Linear``, ``+ - * /``, ``relu``, ``exp``, ``amax``,
``sum``, ``mean``, ``softmax``, ``layer_norm``, ``masked_fill`` with a mask buffer and
``transpose``. Sparse operands (adjacency matrices, pruned weights) are registered
**buffers** holding ``torch.sparse_csr`` tensors, so ``torch.export`` shows them as
``b_*`` placeholders whose layout the frontend can read; dense weights are parameters.
Inputs are 2-d (no batch dimension for the graph and attention models).

Every model has ``default_config`` (named sizes: ``"small"`` for tests, larger ones for
benchmarks), :meth:`from_config` and :meth:`example_inputs`. See ``docs/models.md``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
import torch
from torch import nn

from ir import datasets as ds

__all__ = ["GCN", "GraphSAGE", "SparseAutoencoder", "BigBirdAttention", "GPTDecoderLayer",
           "MODELS", "to_torch_csr", "prune_mask", "csr_sparsity"]


def to_torch_csr(matrix: Any) -> torch.Tensor:
    """A scipy/numpy/torch 2-d matrix as a float32 ``torch.sparse_csr`` tensor."""
    with warnings.catch_warnings():  # "sparse CSR support is in beta": known, not news
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
        if isinstance(matrix, torch.Tensor):
            t = matrix.to(torch.float32)
            return t if t.layout == torch.sparse_csr else t.to_sparse_csr()
        m = sp.csr_matrix(matrix, dtype=np.float32)
        m.sort_indices()
        return torch.sparse_csr_tensor(torch.from_numpy(m.indptr.astype(np.int64)),
                                       torch.from_numpy(m.indices.astype(np.int64)),
                                       torch.from_numpy(m.data), size=m.shape,
                                       check_invariants=True)


def csr_sparsity(t: torch.Tensor) -> float:
    """Fraction of zero entries of a sparse CSR (or dense) 2-d tensor."""
    nnz = t._nnz() if t.layout == torch.sparse_csr else int(torch.count_nonzero(t))
    return 1.0 - nnz / t.numel()


def prune_mask(weight: torch.Tensor, sparsity: float, method: str = "magnitude",
               generator: torch.Generator | None = None) -> torch.Tensor:
    """Bool mask keeping exactly ``round((1 - sparsity)·numel)`` entries of ``weight``.

    ``"magnitude"`` keeps the largest |w| (unstructured magnitude pruning, Han et al.
    2015); ``"random"`` keeps a uniformly random subset.
    """
    if not 0.0 <= sparsity < 1.0:
        raise ValueError(f"sparsity {sparsity!r} must be in [0, 1)")
    if method not in ("magnitude", "random"):
        raise ValueError(f"pruning method {method!r}: expected 'magnitude' or 'random'")
    keep = max(1, round((1.0 - sparsity) * weight.numel()))
    score = weight.abs().flatten() if method == "magnitude" else \
        torch.rand(weight.numel(), generator=generator)
    mask = torch.zeros(weight.numel(), dtype=torch.bool)
    mask[torch.topk(score, keep).indices] = True
    return mask.view_as(weight)


def _linear(n_in: int, n_out: int, gen: torch.Generator, bias: bool = True) -> nn.Linear:
    """``nn.Linear`` initialised from ``gen`` (PyTorch's default uniform bound 1/√n_in)."""
    lin = nn.Linear(n_in, n_out, bias=bias)
    bound = 1.0 / math.sqrt(n_in)
    with torch.no_grad():
        lin.weight.uniform_(-bound, bound, generator=gen)
        if bias:
            lin.bias.uniform_(-bound, bound, generator=gen)
    return lin


def _graph_features(n_nodes: int, n_features: int, density: float, seed: int
                    ) -> torch.Tensor:
    """Binary sparse features below density 1, standard-normal dense ones at 1 (dense)."""
    if density >= 1.0:
        g = torch.Generator().manual_seed(seed)
        return torch.randn(n_nodes, n_features, generator=g)
    return torch.from_numpy(ds.random_features(n_nodes, n_features, density, seed).toarray())


class _Model(nn.Module):
    """Named configurations, shared by every model; each subclass also defines
    ``example_inputs(seed=0)``: the arguments of ``forward`` (and of
    ``torch.export.export``), deterministic by seed."""

    default_config: ClassVar[dict[str, dict[str, Any]]] = {}

    @classmethod
    def config(cls, name: str = "small") -> dict[str, Any]:
        try:
            return dict(cls.default_config[name])
        except KeyError:
            raise KeyError(f"{cls.__name__} has no configuration {name!r}; known: "
                           f"{sorted(cls.default_config)}") from None

    @classmethod
    def from_config(cls, name: str = "small", seed: int = 0) -> _Model:
        """The model at a named size, with its data generated from ``seed``."""
        return cls._build(cls.config(name), seed)

    @classmethod
    def _build(cls, cfg: dict[str, Any], seed: int) -> _Model:
        return cls(**cfg, seed=seed)


class _GraphModel(_Model):
    """Graph models: configs name a data set; the adjacency is a sparse CSR buffer."""

    @classmethod
    def _build(cls, cfg: dict[str, Any], seed: int) -> _Model:
        data = cfg.pop("dataset")
        graph = data(seed=seed, **cfg.pop("data_args", {}))
        n_in = graph.features.shape[1]
        density = 1.0 if isinstance(graph.features, np.ndarray) else \
            graph.features.nnz / float(np.prod(graph.features.shape))
        return cls(graph.adj, n_in, **cfg, feature_density=density, seed=seed)

    def example_inputs(self, seed: int = 0) -> tuple[torch.Tensor, ...]:
        return (_graph_features(self.adj.shape[0], self.in_features, self.feature_density,
                                seed),)


class GCN(_GraphModel):
    """Two-layer GCN (Kipf & Welling, 2017): softmax(Â·relu(Â·X·W1 + b1)·W2 + b2).

    ``adj`` is the raw 0/1 adjacency; Â = D^-1/2 (A + I) D^-1/2 is computed here
    (:func:`ir.datasets.normalize_adjacency`) unless ``normalize=False`` (then ``adj`` is
    used as given). The output is a probability per node and class.
    """

    default_config: ClassVar[dict[str, dict[str, Any]]] = {
        "small": {"dataset": ds.cora_like, "hidden": 8, "classes": 4,
                  "data_args": {"n_nodes": 48, "n_edges": 96, "n_features": 24,
                                "feature_density": 0.1}},
        "karate": {"dataset": lambda seed: ds.karate_club(), "hidden": 8, "classes": 2},
        "cora": {"dataset": ds.cora_like, "hidden": 16, "classes": 7},
    }

    def __init__(self, adj: Any, in_features: int, hidden: int, classes: int, *,
                 normalize: bool = True, feature_density: float = 1.0, seed: int = 0):
        super().__init__()
        a = ds.normalize_adjacency(adj) if normalize else adj
        self.register_buffer("adj", to_torch_csr(a))
        self.in_features, self.feature_density = in_features, feature_density
        gen = torch.Generator().manual_seed(seed)
        self.lin1 = _linear(in_features, hidden, gen, bias=False)
        self.lin2 = _linear(hidden, classes, gen, bias=False)
        self.b1 = nn.Parameter(torch.zeros(hidden))
        self.b2 = nn.Parameter(torch.zeros(classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(torch.mm(self.adj, self.lin1(x)) + self.b1)
        return torch.softmax(torch.mm(self.adj, self.lin2(h)) + self.b2, dim=1)


class GraphSAGE(_GraphModel):
    """Two-layer GraphSAGE with the mean aggregator (Hamilton et al., 2017).

    Layer: ``X·Ws + (A_mean·X)·Wn + b``, relu after the first; the second returns logits.
    ``adj`` is the raw adjacency; A_mean = D^-1 A (:func:`ir.datasets.mean_adjacency`)
    unless ``normalize=False``.
    """

    default_config: ClassVar[dict[str, dict[str, Any]]] = {
        "small": {"dataset": ds.cora_like, "hidden": 8, "out_features": 4,
                  "data_args": {"n_nodes": 48, "n_edges": 96, "n_features": 24,
                                "feature_density": 0.1}},
        "cora": {"dataset": ds.cora_like, "hidden": 16, "out_features": 7},
        "collab": {"dataset": ds.ogb_collab_like, "hidden": 64, "out_features": 64},
    }

    def __init__(self, adj: Any, in_features: int, hidden: int, out_features: int, *,
                 normalize: bool = True, feature_density: float = 1.0, seed: int = 0):
        super().__init__()
        self.register_buffer("adj", to_torch_csr(ds.mean_adjacency(adj) if normalize
                                                 else adj))
        self.in_features, self.feature_density = in_features, feature_density
        gen = torch.Generator().manual_seed(seed)
        self.self1 = _linear(in_features, hidden, gen)
        self.neigh1 = _linear(in_features, hidden, gen, bias=False)
        self.self2 = _linear(hidden, out_features, gen)
        self.neigh2 = _linear(hidden, out_features, gen, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.self1(x) + self.neigh1(torch.mm(self.adj, x)))
        return self.self2(h) + self.neigh2(torch.mm(self.adj, h))


class SparseAutoencoder(_Model):
    """Three-layer autoencoder with pruned (sparse CSR) weights.

    ``dims = (in, h1, h2)`` gives in→h1→h2→in; ``(in, h1, h2, out)`` ends at ``out``.
    Each weight W_l (out × in) is pruned to ``sparsity`` by :func:`prune_mask` and kept
    as a sparse CSR buffer ``w{l}``; a layer computes ``relu(W_l · Hᵀ + b_l)`` with the
    activations transposed (features × batch), so the sparse weight is the left operand
    of ``torch.mm``. The last layer has no relu. Input and output are (batch × features).
    """

    default_config: ClassVar[dict[str, dict[str, Any]]] = {
        "small": {"dims": (32, 16, 8), "sparsity": 0.7, "batch": 4},
        "mnist": {"dims": (784, 256, 64), "sparsity": 0.9, "batch": 64},
    }

    def __init__(self, dims: tuple[int, ...], sparsity: float = 0.8, *,
                 method: str = "magnitude", batch: int = 8, seed: int = 0):
        super().__init__()
        if len(dims) not in (3, 4) or min(dims) < 1:
            raise ValueError(f"SparseAutoencoder dims {dims!r}: expected (in, h1, h2) or "
                             "(in, h1, h2, out) of positive sizes")
        if not 0.5 <= sparsity <= 0.9:
            raise ValueError(f"SparseAutoencoder sparsity {sparsity!r}: expected 0.5–0.9 "
                             "(the FuseFlow evaluation range)")
        sizes = tuple(dims) if len(dims) == 4 else (*dims, dims[0])
        self.sizes, self.sparsity, self.batch = sizes, sparsity, batch
        gen = torch.Generator().manual_seed(seed)
        for layer, (n_in, n_out) in enumerate(zip(sizes, sizes[1:], strict=False)):
            lin = _linear(n_in, n_out, gen)
            w = lin.weight.detach() * prune_mask(lin.weight.detach(), sparsity, method, gen)
            self.register_buffer(f"w{layer}", to_torch_csr(w))
            self.register_parameter(f"b{layer}", nn.Parameter(lin.bias.detach()[:, None]))

    def weights(self) -> list[torch.Tensor]:
        """The sparse weights, first layer first."""
        return [getattr(self, f"w{i}") for i in range(len(self.sizes) - 1)]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.transpose(0, 1)
        last = len(self.sizes) - 2
        for i, w in enumerate(self.weights()):
            h = torch.mm(w, h) + getattr(self, f"b{i}")
            if i < last:
                h = torch.relu(h)
        return h.transpose(0, 1)

    def example_inputs(self, seed: int = 0) -> tuple[torch.Tensor, ...]:
        return (torch.randn(self.batch, self.sizes[0],
                            generator=torch.Generator().manual_seed(seed)),)


class BigBirdAttention(_Model):
    """Single-head block-sparse attention with a BigBird mask (Zaheer et al., 2020).

    ``softmax(mask(Q·Kᵀ / √d)) · V`` then an output projection; Q, K, V are linear
    projections of the (seq_len × d_model) input. The bool buffer ``mask`` (True =
    attended; :func:`ir.datasets.bigbird_mask`) is applied as ``masked_fill(~mask, -inf)``,
    the form the frontend reads as "restrict to the pattern" (an SDDMM); pass
    ``formats={"attn_mask": "csr"}`` (or the buffer's name) to ``from_torch`` to store it
    sparse. ``causal=True`` also masks future positions (GPT); the diagonal is always
    attended, so no row is empty.
    """

    default_config: ClassVar[dict[str, dict[str, Any]]] = {
        "small": {"seq_len": 32, "d_model": 16, "block": 4},
        "bigbird16": {"seq_len": 1024, "d_model": 768, "block": 16, "n_random": 3,
                      "n_global": 2},
    }

    def __init__(self, seq_len: int, d_model: int, block: int, *, n_random: int = 1,
                 window: int = 3, n_global: int = 1, causal: bool = False, seed: int = 0):
        super().__init__()
        mask = ds.bigbird_mask(seq_len, block, n_random, window, n_global, seed).toarray()
        allowed = torch.from_numpy(mask > 0)
        if causal:
            allowed &= torch.ones(seq_len, seq_len, dtype=torch.bool).tril()
        self.register_buffer("mask", allowed)
        self.seq_len, self.d_model, self.block = seq_len, d_model, block
        gen = torch.Generator().manual_seed(seed)
        self.q, self.k, self.v, self.out = (_linear(d_model, d_model, gen) for _ in range(4))
        self.scale = 1.0 / math.sqrt(d_model)

    def mask_csr(self) -> sp.csr_matrix:
        """The attended positions as a 0/1 float32 CSR matrix."""
        return sp.csr_matrix(self.mask.numpy().astype(np.float32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scores = torch.mm(self.q(x), self.k(x).transpose(0, 1)) * self.scale
        probs = torch.softmax(scores.masked_fill(~self.mask, float("-inf")), dim=1)
        return self.out(torch.mm(probs, self.v(x)))

    def example_inputs(self, seed: int = 0) -> tuple[torch.Tensor, ...]:
        return (torch.randn(self.seq_len, self.d_model,
                            generator=torch.Generator().manual_seed(seed)),)


class GPTDecoderLayer(_Model):
    """A GPT-3-style pre-LN decoder layer with causal BigBird attention.

    ``x + attn(ln1(x))`` then ``h + fc2(relu(fc1(ln2(h))))``. GPT-3 uses GELU, which is
    not in the frontend's operation set, so the MLP uses relu. The "gpt3-small" config
    has GPT-3 Small's width (d_model 768, d_ff 3072) and one head of full width.
    """

    default_config: ClassVar[dict[str, dict[str, Any]]] = {
        "small": {"seq_len": 32, "d_model": 16, "d_ff": 64, "block": 4},
        "gpt3-small": {"seq_len": 1024, "d_model": 768, "d_ff": 3072, "block": 16},
    }

    def __init__(self, seq_len: int, d_model: int, d_ff: int, block: int, *,
                 n_random: int = 1, window: int = 3, n_global: int = 1, seed: int = 0):
        super().__init__()
        self.seq_len, self.d_model = seq_len, d_model
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = BigBirdAttention(seq_len, d_model, block, n_random=n_random,
                                     window=window, n_global=n_global, causal=True,
                                     seed=seed)
        gen = torch.Generator().manual_seed(seed + 1)
        self.fc1, self.fc2 = _linear(d_model, d_ff, gen), _linear(d_ff, d_model, gen)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + self.attn(self.ln1(x))
        return h + self.fc2(torch.relu(self.fc1(self.ln2(h))))

    def example_inputs(self, seed: int = 0) -> tuple[torch.Tensor, ...]:
        return (torch.randn(self.seq_len, self.d_model,
                            generator=torch.Generator().manual_seed(seed)),)


#: every model by name, for drivers and the command line
MODELS: dict[str, type[_Model]] = {"gcn": GCN, "graphsage": GraphSAGE,
                                   "autoencoder": SparseAutoencoder,
                                   "bigbird": BigBirdAttention, "gpt": GPTDecoderLayer}
