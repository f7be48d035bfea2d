"""The models of the FuseFlow evaluation, written for the torch.export frontend.

GCN, GraphSAGE, a sparse autoencoder, BigBird block-sparse attention and a GPT-3-style
decoder layer. They use only the operations the frontend translates: ``torch.mm`` with a
sparse (CSR) or dense operand, ``nn.Linear``, ``+ - * /``, ``relu``, ``exp``, ``amax``,
``sum``, ``mean``, ``softmax``, ``layer_norm``, ``masked_fill`` with a mask buffer and
``transpose``. Sparse operands (adjacency matrices, pruned weights) are registered
**buffers** holding ``torch.sparse_csr`` tensors, so ``torch.export`` shows them as
``b_*`` placeholders whose layout the frontend can read; dense weights are parameters.
Inputs are 2-d (no batch dimension for the graph and attention models).

Each model is built from layer submodules (``layers`` lists, attention and MLP blocks),
so the scope the frontend records for a statement names its layer and
``ir.Schedule.by_scope`` fuses one region per layer; operands every layer reads (the
adjacency, the attention mask) stay on the model and are passed in.

Every model has ``default_config`` (named sizes: ``"tiny"`` for end-to-end simulation
tests, ``"small"`` for tests and quick runs, larger ones for benchmarks; the graph
models have one per data set of FuseFlow's Table 2 and a ``<name>-fuseflow`` variant of
each with FuseFlow's artifact settings, :data:`FUSEFLOW`), :meth:`from_config` and
:meth:`example_inputs`. See ``docs/models.md``.
"""

from __future__ import annotations

import functools
import math
import warnings
from itertools import pairwise
from typing import Any, ClassVar, Self

import numpy as np
import scipy.sparse as sp
import torch
from torch import nn

from ir import datasets as ds

__all__ = ["GCN", "GraphSAGE", "SparseAutoencoder", "BigBirdAttention", "GPTDecoderLayer",
           "MODELS", "FUSEFLOW", "GRAPH_HIDDEN", "PRUNED_WEIGHT_FORMAT", "to_torch_csr",
           "prune_mask", "csr_sparsity", "attention_core"]


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
    #: storage formats to pass to ``from_torch`` for the sparse form of the model
    #: (tensors the frontend cannot see as sparse, e.g. a bool attention mask; graph
    #: models set their own for weights pruned by ``weight_zeros``)
    sparse_formats: ClassVar[dict[str, str]] = {}

    @classmethod
    def config(cls, name: str = "small") -> dict[str, Any]:
        try:
            return dict(cls.default_config[name])
        except KeyError:
            raise KeyError(f"{cls.__name__} has no configuration {name!r}; known: "
                           f"{sorted(cls.default_config)}") from None

    @classmethod
    def from_config(cls, name: str = "small", seed: int = 0) -> Self:
        """The model at a named size, with its data generated from ``seed``."""
        return cls._build(cls.config(name), seed)

    @classmethod
    def _build(cls, cfg: dict[str, Any], seed: int) -> Self:
        return cls(**cfg, seed=seed)


class _GraphModel(_Model):
    """Graph models: configs name a data set; the adjacency is a sparse CSR buffer.

    A model built by :meth:`from_config` keeps its data set as ``data`` (features,
    labels); :meth:`example_inputs` draws fresh features of the same width and density
    (binary below density 1, standard normal at 1), so any seed gives valid inputs.
    """

    data: ds.GraphData | None = None

    @classmethod
    def _build(cls, cfg: dict[str, Any], seed: int) -> Self:
        data = cfg.pop("dataset")
        graph = data(seed=seed, **cfg.pop("data_args", {}))
        n_in = graph.features.shape[1]
        density = 1.0 if isinstance(graph.features, np.ndarray) else \
            graph.features.nnz / float(np.prod(graph.features.shape))
        model = cls(graph.adj, n_in, **cfg, feature_density=density, seed=seed)
        model.data = graph
        return model

    def _stack(self, adj: Any, layer: type[nn.Module], widths: tuple[int, ...],
               feature_density: float, seed: int, weight_zeros: tuple[float, ...] = ()
               ) -> None:
        """The (normalised) adjacency buffer and ``layers``: one ``layer`` per pair of
        consecutive ``widths``, relu after every one but the last. ``weight_zeros[n]``
        zeroes that fraction of every weight of layer *n* at random positions and stores
        those weights compressed (:data:`PRUNED_WEIGHT_FORMAT`, in ``sparse_formats``)."""
        self.register_buffer("adj", to_torch_csr(adj))
        self.in_features, self.feature_density = widths[0], feature_density
        gen = torch.Generator().manual_seed(seed)
        last = len(widths) - 2
        self.layers = nn.ModuleList([layer(widths[n], widths[n + 1], gen, relu=n < last)
                                     for n in range(last + 1)])
        if len(weight_zeros) > len(self.layers):
            raise ValueError(f"{type(self).__name__}: weight_zeros {tuple(weight_zeros)!r} "
                             f"names {len(weight_zeros)} layers; the model has "
                             f"{len(self.layers)}")
        self.sparse_formats = {}
        for n, zeros in enumerate(weight_zeros):
            if not 0.0 <= zeros < 1.0:
                raise ValueError(f"{type(self).__name__}: weight_zeros[{n}] = {zeros!r} "
                                 "must be in [0, 1)")
            for attr, lin in self.layers[n].named_children():
                if zeros and isinstance(lin, nn.Linear):
                    with torch.no_grad():
                        lin.weight.mul_(prune_mask(lin.weight, zeros, "random", gen))
                    self.sparse_formats[f"layers_{n}_{attr}_weight"] = PRUNED_WEIGHT_FORMAT

    def _propagate(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(self.adj, x)
        return x

    def example_inputs(self, seed: int = 0) -> tuple[torch.Tensor, ...]:
        return (_graph_features(self.adj.shape[0], self.in_features, self.feature_density,
                                seed),)


#: storage of a weight pruned by ``weight_zeros``: both levels compressed (FuseFlow's CSF),
#: output unit outer, as nn.Linear keeps W(out, in). FuseFlow's W(in, out) keeps the input
#: feature outer ("dcsc" here), which the fully fused GCN and GraphSAGE as written cannot
#: iterate; a schedule's ``formats:`` selects it (docs/models.md, "FuseFlow's settings")
PRUNED_WEIGHT_FORMAT = "dcsr"

#: FuseFlow's artifact settings (docs/models.md, "FuseFlow's settings"), applied by every
#: ``<config>-fuseflow`` configuration of GCN and GraphSAGE: the raw 0/1 adjacency (no
#: normalisation, no self loops), dense standard-normal features stored dense, and the
#: weights of each layer zeroed at random to these fractions and stored compressed. The
#: hidden width 16 is that of every full-size graph configuration.
FUSEFLOW: dict[str, Any] = {
    "normalize": False,
    "feature_density": 1.0,
    "weight_zeros": {"GCN": (0.6, 0.5), "GraphSAGE": (0.6, 0.6)},
}

#: the hidden width of every full-size graph configuration (FuseFlow's and Kipf &
#: Welling's)
GRAPH_HIDDEN = 16

#: scaled-down copies of a data set, ``name -> (data set, factor)``: 1/factor of its
#: nodes and edges (the same mean degree and degree exponent, so the same power law, its
#: tail cut shorter), for counts too slow to simulate at full size (docs/models.md)
SCALED_GRAPHS: dict[str, tuple[str, int]] = {"collab-s16": ("collab", 16)}


def _graph_configs(out: str, test_outs: dict[str, int], fuseflow_zeros: tuple[float, ...],
                   **extra: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A graph model's named configurations: ``tiny`` and ``small`` for tests (output
    width ``test_outs[name]``), one per data set of :data:`ir.datasets.GRAPHS` at full size
    (hidden :data:`GRAPH_HIDDEN`, the data set's class count as output width), ``extra``,
    and ``<name>-fuseflow`` for each of the generated ones: :data:`FUSEFLOW`'s settings with
    ``fuseflow_zeros`` as the layers' weight zeros."""
    tests = {"tiny": {"n_nodes": 6, "n_edges": 5, "n_features": 3, "feature_density": 0.5},
             "small": {"n_nodes": 48, "n_edges": 96, "n_features": 24, "feature_density": 0.1}}
    base: dict[str, dict[str, Any]] = {
        name: {"dataset": ds.cora_like, "hidden": hidden, out: test_outs[name],
               "data_args": tests[name]}
        for name, hidden in (("tiny", 2), ("small", 8))}
    base.update({name: {"dataset": functools.partial(ds.graph_dataset, name),
                        "hidden": GRAPH_HIDDEN, out: spec.n_classes}
                 for name, spec in ds.GRAPHS.items()})
    for name, (data, factor) in SCALED_GRAPHS.items():
        spec = ds.GRAPHS[data]
        base[name] = {**base[data], "data_args": {"n_nodes": spec.n_nodes // factor,
                                                  "n_edges": spec.n_edges // factor}}
    variants = {f"{name}-fuseflow": {
        **cfg, "normalize": FUSEFLOW["normalize"], "weight_zeros": fuseflow_zeros,
        "data_args": {**cfg.get("data_args", {}),
                      "feature_density": FUSEFLOW["feature_density"]}}
        for name, cfg in base.items()}
    return {**base, **extra, **variants}


class GCNLayer(nn.Module):
    """One GCN layer, ``Â·(H·W) + b`` (then relu if ``relu``); the adjacency is the
    model's buffer, passed in, so every layer reads the same ``adj`` tensor."""

    def __init__(self, n_in: int, n_out: int, gen: torch.Generator, *, relu: bool):
        super().__init__()
        self.lin = _linear(n_in, n_out, gen, bias=False)
        self.bias = nn.Parameter(torch.zeros(n_out))
        self.relu = relu

    def forward(self, adj: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        out = torch.mm(adj, self.lin(h)) + self.bias
        return torch.relu(out) if self.relu else out


class GCN(_GraphModel):
    """Two-layer GCN (Kipf & Welling, 2017): softmax(Â·relu(Â·X·W1 + b1)·W2 + b2).

    ``layers`` holds the two :class:`GCNLayer`; the softmax over classes is the model's
    own last step. ``adj`` is the raw 0/1 adjacency; Â = D^-1/2 (A + I) D^-1/2 is
    computed here (:func:`ir.datasets.normalize_adjacency`) unless ``normalize=False``
    (then ``adj`` is used as given). The output is a probability per node and class.
    """

    default_config: ClassVar[dict[str, dict[str, Any]]] = _graph_configs(
        "classes", {"tiny": 2, "small": 4}, FUSEFLOW["weight_zeros"]["GCN"],
        karate={"dataset": lambda seed: ds.karate_club(), "hidden": 8, "classes": 2})

    def __init__(self, adj: Any, in_features: int, hidden: int, classes: int, *,
                 normalize: bool = True, feature_density: float = 1.0,
                 weight_zeros: tuple[float, ...] = (), seed: int = 0):
        super().__init__()
        self._stack(ds.normalize_adjacency(adj) if normalize else adj, GCNLayer,
                    (in_features, hidden, classes), feature_density, seed, weight_zeros)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self._propagate(x), dim=1)


class SAGELayer(nn.Module):
    """One GraphSAGE layer with the mean aggregator, ``H·Ws + bs + A_mean·(H·Wn)`` (then
    relu if ``relu``). The neighbour projection is applied before the aggregation
    (A·(H·Wn) = (A·H)·Wn, the order GraphSAGE kernels usually take); ``adj`` is the
    model's buffer, passed in."""

    def __init__(self, n_in: int, n_out: int, gen: torch.Generator, *, relu: bool):
        super().__init__()
        self.self_lin = _linear(n_in, n_out, gen)
        self.neigh_lin = _linear(n_in, n_out, gen, bias=False)
        self.relu = relu

    def forward(self, adj: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        out = self.self_lin(h) + torch.mm(adj, self.neigh_lin(h))
        return torch.relu(out) if self.relu else out


class GraphSAGE(_GraphModel):
    """Two-layer GraphSAGE with the mean aggregator (Hamilton et al., 2017).

    ``layers`` holds two :class:`SAGELayer`: ``X·Ws + A_mean·(X·Wn) + b``, relu after
    the first; the second returns logits. ``adj`` is the raw adjacency; A_mean = D^-1 A
    (:func:`ir.datasets.mean_adjacency`) unless ``normalize=False``.
    """

    default_config: ClassVar[dict[str, dict[str, Any]]] = _graph_configs(
        "out_features", {"tiny": 2, "small": 4}, FUSEFLOW["weight_zeros"]["GraphSAGE"])

    def __init__(self, adj: Any, in_features: int, hidden: int, out_features: int, *,
                 normalize: bool = True, feature_density: float = 1.0,
                 weight_zeros: tuple[float, ...] = (), seed: int = 0):
        super().__init__()
        self._stack(ds.mean_adjacency(adj) if normalize else adj, SAGELayer,
                    (in_features, hidden, out_features), feature_density, seed, weight_zeros)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._propagate(x)


class SparseLinear(nn.Module):
    """``W·H + b`` (then relu if ``relu``) with W pruned to ``sparsity`` by
    :func:`prune_mask` and kept as a sparse CSR buffer ``weight`` (out × in); the
    activations are transposed (features × batch), so W is the left ``mm`` operand."""

    def __init__(self, n_in: int, n_out: int, sparsity: float, method: str,
                 gen: torch.Generator, *, relu: bool):
        super().__init__()
        lin = _linear(n_in, n_out, gen)
        w = lin.weight.detach() * prune_mask(lin.weight.detach(), sparsity, method, gen)
        self.register_buffer("weight", to_torch_csr(w))
        self.bias = nn.Parameter(lin.bias.detach())
        self.relu = relu

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        out = torch.mm(self.weight, h) + self.bias.unsqueeze(1)
        return torch.relu(out) if self.relu else out


class SparseAutoencoder(_Model):
    """Three-layer autoencoder with pruned (sparse CSR) weights.

    ``dims = (in, h1, h2)`` gives in→h1→h2→in; ``(in, h1, h2, out)`` ends at ``out``.
    ``layers`` holds three :class:`SparseLinear` (relu after all but the last); the input
    is transposed once on the way in and back on the way out (batch × features).
    """

    default_config: ClassVar[dict[str, dict[str, Any]]] = {
        "tiny": {"dims": (8, 4, 2), "sparsity": 0.5, "batch": 2},
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
        last = len(sizes) - 2
        self.layers = nn.ModuleList(
            SparseLinear(n_in, n_out, sparsity, method, gen, relu=n < last)
            for n, (n_in, n_out) in enumerate(pairwise(sizes)))

    def weights(self) -> list[torch.Tensor]:
        """The sparse weights, first layer first."""
        return [layer.weight for layer in self.layers]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x.transpose(0, 1)
        for layer in self.layers:
            h = layer(h)
        return h.transpose(0, 1)

    def example_inputs(self, seed: int = 0) -> tuple[torch.Tensor, ...]:
        return (torch.randn(self.batch, self.sizes[0],
                            generator=torch.Generator().manual_seed(seed)),)


class QKVProjection(nn.Module):
    """The three linear projections of attention, one block: ``(q(x), k(x), v(x))``."""

    def __init__(self, d_model: int, gen: torch.Generator):
        super().__init__()
        self.q, self.k, self.v = (_linear(d_model, d_model, gen) for _ in range(3))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.q(x), self.k(x), self.v(x)


class MaskedAttention(nn.Module):
    """The attention core, ``softmax(masked_fill(Q·Kᵀ·scale, ~mask, -inf))·V``: scores,
    masked softmax and the weighted sum of values (the part FuseFlow fuses fully)."""

    def __init__(self, d_model: int):
        super().__init__()
        self.scale = 1.0 / math.sqrt(d_model)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                mask: torch.Tensor) -> torch.Tensor:
        scores = torch.mm(q, k.transpose(0, 1)) * self.scale
        probs = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=1)
        return torch.mm(probs, v)


class BigBirdAttention(_Model):
    """Single-head block-sparse attention with a BigBird mask (Zaheer et al., 2020).

    Three blocks: ``qkv`` (:class:`QKVProjection`), ``attend`` (:class:`MaskedAttention`,
    ``softmax(mask(Q·Kᵀ / √d))·V``) and ``out`` (the output projection), over a
    (seq_len × d_model) input. The bool buffer ``mask`` (True = attended;
    :func:`ir.datasets.bigbird_mask`) is applied as ``masked_fill(~mask, -inf)``, the form
    the frontend reads as "restrict to the pattern" (an SDDMM); pass
    ``formats={"mask": "csr"}`` (the buffer's program name) to ``from_torch`` to store it
    sparse. ``causal=True`` also masks future positions (GPT); the diagonal is always
    attended, so no row is empty.
    """

    default_config: ClassVar[dict[str, dict[str, Any]]] = {
        "tiny": {"seq_len": 4, "d_model": 2, "block": 1, "n_random": 0},
        "small": {"seq_len": 32, "d_model": 16, "block": 4},
        "medium": {"seq_len": 256, "d_model": 32, "block": 16, "n_random": 2},
        "bigbird16": {"seq_len": 1024, "d_model": 768, "block": 16, "n_random": 3,
                      "n_global": 2},
        # FuseFlow Fig. 12's GPT-3 + BigBird attention at its three block sizes: one head
        # of GPT-3 Small (d 64) over 512 tokens, mask blocks of B (window 3, one global,
        # one random block); run with --block B so values are B x B blocks
        **{f"fuseflow-b{b}": {"seq_len": 512, "d_model": 64, "block": b}
           for b in (16, 32, 64)},
    }

    sparse_formats: ClassVar[dict[str, str]] = {"mask": "csr"}

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
        self.qkv = QKVProjection(d_model, gen)
        self.out = _linear(d_model, d_model, gen)
        self.attend = MaskedAttention(d_model)

    def mask_csr(self) -> sp.csr_matrix:
        """The attended positions as a 0/1 float32 CSR matrix."""
        return sp.csr_matrix(self.mask.numpy().astype(np.float32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x)
        return self.out(self.attend(q, k, v, self.mask))

    def example_inputs(self, seed: int = 0) -> tuple[torch.Tensor, ...]:
        return (torch.randn(self.seq_len, self.d_model,
                            generator=torch.Generator().manual_seed(seed)),)


class AttentionBlock(nn.Module):
    """Pre-LN attention with its residual: ``x + attn(ln(x))``."""

    def __init__(self, attn: BigBirdAttention):
        super().__init__()
        self.ln, self.attn = nn.LayerNorm(attn.d_model), attn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.attn(self.ln(x))


class MLPBlock(nn.Module):
    """Pre-LN MLP with its residual: ``h + fc2(relu(fc1(ln(h))))``."""

    def __init__(self, d_model: int, d_ff: int, gen: torch.Generator):
        super().__init__()
        self.ln = nn.LayerNorm(d_model)
        self.fc1, self.fc2 = _linear(d_model, d_ff, gen), _linear(d_ff, d_model, gen)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h + self.fc2(torch.relu(self.fc1(self.ln(h))))


class GPTDecoderLayer(_Model):
    """A GPT-3-style pre-LN decoder layer with causal BigBird attention.

    Two blocks: ``attention`` (:class:`AttentionBlock`, ``x + attn(ln1(x))``) and ``mlp``
    (:class:`MLPBlock`, ``h + fc2(relu(fc1(ln2(h))))``). GPT-3 uses GELU, which is not in
    the frontend's operation set, so the MLP uses relu. The "gpt3-small" config has GPT-3
    Small's width (d_model 768, d_ff 3072) and one head of full width.
    """

    default_config: ClassVar[dict[str, dict[str, Any]]] = {
        "tiny": {"seq_len": 2, "d_model": 2, "d_ff": 2, "block": 1, "n_random": 0},
        "small": {"seq_len": 32, "d_model": 16, "d_ff": 64, "block": 4},
        "gpt3-small": {"seq_len": 1024, "d_model": 768, "d_ff": 3072, "block": 16},
    }

    sparse_formats: ClassVar[dict[str, str]] = {"attention_attn_mask": "csr"}

    def __init__(self, seq_len: int, d_model: int, d_ff: int, block: int, *,
                 n_random: int = 1, window: int = 3, n_global: int = 1, seed: int = 0):
        super().__init__()
        self.seq_len, self.d_model = seq_len, d_model
        self.attention = AttentionBlock(BigBirdAttention(
            seq_len, d_model, block, n_random=n_random, window=window, n_global=n_global,
            causal=True, seed=seed))
        self.mlp = MLPBlock(d_model, d_ff, torch.Generator().manual_seed(seed + 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.mlp(self.attention(x))

    def example_inputs(self, seed: int = 0) -> tuple[torch.Tensor, ...]:
        return (torch.randn(self.seq_len, self.d_model,
                            generator=torch.Generator().manual_seed(seed)),)


#: every model by name, for drivers and the command line
MODELS: dict[str, type[_Model]] = {"gcn": GCN, "graphsage": GraphSAGE,
                                   "autoencoder": SparseAutoencoder,
                                   "bigbird": BigBirdAttention, "gpt": GPTDecoderLayer}


def attention_core(seq_len: int, d_model: int, block: int, *, n_random: int = 1,
                   window: int = 3, n_global: int = 1, seed: int = 0) -> tuple[Any, dict]:
    """BigBird's attention core as an einsum program and its inputs: softmax without the
    max shift (as block-sparse attention accelerators compute it), an SDDMM, exp, row
    sum, normalisation and the SpMM with V; the mask M (CSR) and Q, K, V are inputs.
    Scopes ``score`` (S, E), ``norm`` (Z) and ``out`` (P, O) make partial fusion fuse the
    SDDMM with exp and the normalisation with the SpMM."""
    from ._model import einsum_program

    seq, d = seq_len, d_model
    mask = ds.bigbird_mask(seq, block, n_random, window, n_global, seed)
    prog = einsum_program(
        ["S(i,j) = M(i,j) * sum(k) Q(i,k) * K(j,k)", "E(i,j) = M(i,j) * exp(S(i,j))",
         "Z(i) = sum(j) E(i,j)", "P(i,j) = E(i,j) / Z(i)",
         "O(i,j) = sum(k) P(i,k) * V(k,j)"],
        {"M": (seq, seq), "Q": (seq, d), "K": (seq, d), "V": (seq, d)},
        {"M": "csr", "S": "csr", "E": "csr", "P": "csr"},
        scopes=["score", "score", "norm", "out", "out"], name="attention_core")
    rng = np.random.default_rng(seed)
    scale = d ** -0.25  # scores Q·Kᵀ of unit variance
    inputs = {"M": mask, **{t: (scale * rng.standard_normal((seq, d))).astype(np.float32)
                            for t in ("Q", "K")},
              "V": rng.standard_normal((seq, d)).astype(np.float32)}
    return prog, inputs
