"""Synthetic inputs with documented statistics, for the models and the benchmarks.

Nothing downloads at run time, so the graph and attention workloads of the FuseFlow
evaluation are reproduced by generators whose statistics match the real data sets where
it matters to a sparse accelerator (sizes, edge counts, degree skew, feature density,
block structure). Every generator is deterministic given ``seed``. Graphs come back as a
:class:`GraphData` with a symmetric ``scipy.sparse`` CSR adjacency (float32 0/1, no self
loops unless asked); :func:`describe` states the statistics that docs and tests quote.
See ``docs/models.md`` for the tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np
import scipy.sparse as sp
import scipy.stats

__all__ = ["GraphData", "GraphStats", "GraphSpec", "GRAPHS", "graph_dataset",
           "synthetic_graph", "cora_like", "ogb_collab_like", "karate_club", "chung_lu_graph",
           "normalize_adjacency", "mean_adjacency", "bigbird_blocks", "bigbird_mask",
           "describe", "random_features", "rmat_graph"]


@dataclass(frozen=True)
class GraphData:
    """A graph workload: adjacency (CSR, float32), node features and class labels."""

    name: str
    adj: sp.csr_matrix
    features: sp.csr_matrix | np.ndarray
    labels: np.ndarray

    @property
    def n_nodes(self) -> int:
        return self.adj.shape[0]


@dataclass(frozen=True)
class GraphStats:
    """What :func:`describe` reports about a square adjacency matrix."""

    n_nodes: int
    n_edges: int  # undirected edges (self loops count once) if symmetric, else nnz
    nnz: int
    density: float  # nnz / n²
    symmetric: bool
    self_loops: int
    isolated: int  # nodes of degree 0
    degree_max: int
    degree_mean: float
    degree_std: float
    degree_skew: float  # Fisher skewness of the degree sequence (0 for a regular graph)


def describe(adj: sp.spmatrix | np.ndarray) -> GraphStats:
    """Node/edge counts, density and degree statistics (degree = stored entries per row)."""
    a = sp.csr_matrix(adj)
    n, m = a.shape
    if n != m:
        raise ValueError(f"describe: adjacency must be square, got shape {a.shape!r}")
    a.eliminate_zeros()
    deg = np.diff(a.indptr).astype(np.float64)
    loops = int(np.count_nonzero(a.diagonal()))
    symmetric = (a != a.T).nnz == 0
    edges = (a.nnz - loops) // 2 + loops if symmetric else a.nnz
    skew = float(scipy.stats.skew(deg)) if n > 1 and deg.std() > 0 else 0.0
    return GraphStats(n, int(edges), int(a.nnz), a.nnz / float(n * n) if n else 0.0,
                      bool(symmetric), loops, int(np.count_nonzero(deg == 0)),
                      int(deg.max(initial=0)), float(deg.mean()) if n else 0.0,
                      float(deg.std()) if n else 0.0, skew)


def chung_lu_graph(n_nodes: int, n_edges: int, degree_exponent: float = 2.5,
                   seed: int = 0, self_loops: bool = False, directed: bool = False
                   ) -> sp.csr_matrix:
    """A symmetric 0/1 CSR graph with exactly ``n_edges`` undirected edges.

    Chung–Lu model: node *i* gets weight ``w_i ∝ (i+1)^(-1/(γ-1))`` (γ =
    ``degree_exponent``), so expected degrees follow a power law with exponent γ (smaller γ
    = more skew; ``γ = inf`` gives uniform weights, an Erdős–Rényi-like graph). Endpoints
    are drawn independently ∝ w, duplicates and (unless ``self_loops``) self loops are
    rejected, and drawing stops at the ``n_edges``-th distinct edge, so the count is exact.
    Node ids are shuffled so that hubs are spread over the index range.

    ``directed=True`` gives ``n_edges`` distinct arcs (row → column, e.g. paper → cited
    paper) and no symmetrisation: sources and targets are drawn from the same power law
    under two independent shuffles, so out-hubs and in-hubs are different nodes.
    """
    if n_nodes < 2 or n_edges < 0:
        raise ValueError(f"chung_lu_graph: need n_nodes >= 2 and n_edges >= 0, got "
                         f"n_nodes={n_nodes!r}, n_edges={n_edges!r}")
    possible = n_nodes * (n_nodes - 1) // (1 if directed else 2) + \
        (n_nodes if self_loops else 0)
    if n_edges > possible // 2:
        raise ValueError(f"chung_lu_graph: {n_edges} edges on {n_nodes} nodes is more than "
                         f"half of the {possible} possible; the model is meant for sparse "
                         "graphs")
    if degree_exponent <= 1:
        raise ValueError(f"chung_lu_graph: degree_exponent must be > 1, got "
                         f"{degree_exponent!r}")
    rng = np.random.default_rng(seed)
    w = (np.arange(n_nodes) + 1.0) ** (-1.0 / (degree_exponent - 1.0))
    w = w[rng.permutation(n_nodes)]
    p = w / w.sum()
    p_in = p[rng.permutation(n_nodes)] if directed else p
    keys = np.empty(0, dtype=np.int64)  # distinct edges min*n+max (u*n+v), in draw order
    for _ in range(200):
        need = n_edges - len(keys)
        if need <= 0:
            break
        batch = int(need * 1.3) + 64
        u = rng.choice(n_nodes, size=batch, p=p)
        v = rng.choice(n_nodes, size=batch, p=p_in)
        if not self_loops:
            u, v = u[u != v], v[u != v]
        if not directed:
            u, v = np.minimum(u, v), np.maximum(u, v)
        new = u.astype(np.int64) * n_nodes + v
        allk = np.concatenate([keys, new])
        _, first = np.unique(allk, return_index=True)
        keys = allk[np.sort(first)]
    else:
        raise ValueError(f"chung_lu_graph: could not draw {n_edges} distinct edges with "
                         f"degree_exponent={degree_exponent!r}; raise the exponent")
    keys = keys[:n_edges]
    u, v = keys // n_nodes, keys % n_nodes
    rows = u if directed else np.concatenate([u, v[u != v]])
    cols = v if directed else np.concatenate([v, u[u != v]])
    adj = sp.csr_matrix((np.ones(len(rows), np.float32), (rows, cols)),
                        shape=(n_nodes, n_nodes))
    adj.sort_indices()
    return adj


def rmat_graph(scale: int, edge_factor: int = 8, probs: tuple[float, float, float, float] =
               (0.57, 0.19, 0.19, 0.05), seed: int = 0) -> sp.csr_matrix:
    """A directed R-MAT graph (Chakrabarti et al., 2004; the Graph500 generator's
    parameters by default): ``2**scale`` nodes, ``edge_factor · 2**scale`` edges drawn by
    recursively choosing one of the adjacency matrix's four quadrants with ``probs``
    (a, b, c, d); duplicates and self loops are dropped. Node ids are *not* shuffled, so
    the hubs sit at low ids, as in the generator's raw output: degrees span three orders
    of magnitude or more from scale 12 on, which is what a partitioner has to balance.
    """
    if not 1 <= scale <= 26 or edge_factor < 1:
        raise ValueError(f"rmat_graph: need 1 <= scale <= 26 and edge_factor >= 1, got "
                         f"scale={scale!r}, edge_factor={edge_factor!r}")
    a, b, c, d = probs
    if min(probs) < 0 or abs(a + b + c + d - 1.0) > 1e-9:
        raise ValueError(f"rmat_graph: probs {probs!r} must be 4 non-negative numbers "
                         "summing to 1")
    rng = np.random.default_rng(seed)
    n, m = 1 << scale, edge_factor << scale
    rows = np.zeros(m, dtype=np.int64)
    cols = np.zeros(m, dtype=np.int64)
    for bit in range(scale):
        r = rng.random(m)
        down = r >= a + b                      # quadrants c, d: the lower half
        right = ((r >= a) & (r < a + b)) | (r >= a + b + c)   # quadrants b, d
        rows |= down.astype(np.int64) << bit
        cols |= right.astype(np.int64) << bit
    keep = rows != cols
    adj = sp.csr_matrix((np.ones(int(keep.sum()), np.float32), (rows[keep], cols[keep])),
                        shape=(n, n))
    adj.sum_duplicates()
    adj.data[:] = 1.0
    adj.sort_indices()
    return adj


def random_features(n_rows: int, n_cols: int, density: float, seed: int = 0
                    ) -> sp.csr_matrix:
    """Binary bag-of-words-like features: exactly ``round(density·n_rows·n_cols)`` ones."""
    if not 0.0 <= density <= 1.0:
        raise ValueError(f"random_features: density must be in [0, 1], got {density!r}")
    rng = np.random.default_rng(seed)
    total = n_rows * n_cols
    nnz = int(round(density * total))
    flat = rng.choice(total, size=nnz, replace=False)
    out = sp.csr_matrix((np.ones(nnz, np.float32), (flat // n_cols, flat % n_cols)),
                        shape=(n_rows, n_cols))
    out.sort_indices()
    return out


def synthetic_graph(name: str, n_nodes: int, n_edges: int, n_features: int,
                    feature_density: float, degree_exponent: float, n_classes: int,
                    seed: int = 0, self_loops: bool = False, directed: bool = False
                    ) -> GraphData:
    """A :func:`chung_lu_graph` with node features and labels, the generator behind every
    named graph workload. Features are binary (:func:`random_features`, CSR) below
    ``feature_density`` 1 and dense standard-normal float32 at 1 (embeddings such as
    OGB's word2vec vectors); labels are uniform random in ``n_classes`` (no homophily:
    these inputs exercise the hardware, not a classifier). Seeds: the graph ``seed``,
    the features ``seed + 1``, the labels ``seed + 2``."""
    if not 0.0 <= feature_density <= 1.0:
        raise ValueError(f"{name}: feature_density must be in [0, 1], got "
                         f"{feature_density!r}")
    adj = chung_lu_graph(n_nodes, n_edges, degree_exponent, seed, self_loops, directed)
    if feature_density >= 1.0:
        feats: sp.csr_matrix | np.ndarray = np.random.default_rng(seed + 1).standard_normal(
            (n_nodes, n_features), dtype=np.float32)
    else:
        feats = random_features(n_nodes, n_features, feature_density, seed + 1)
    labels = np.random.default_rng(seed + 2).integers(0, n_classes, size=n_nodes)
    return GraphData(name, adj, feats, labels)


def cora_like(n_nodes: int = 2708, n_edges: int = 5278, n_features: int = 1433,
              feature_density: float = 0.0127, degree_exponent: float = 2.7,
              n_classes: int = 7, seed: int = 0, self_loops: bool = False) -> GraphData:
    """A citation-graph workload sized like Cora (Sen et al., 2008).

    Cora: 2,708 nodes, 5,278 undirected edges, 1,433 binary word features at 1.27 %
    density, 7 classes, maximum degree 168. Here: a :func:`synthetic_graph` with exactly
    ``n_edges`` edges (the default γ = 2.7 gives maximum degree 169 at seed 0).
    """
    return synthetic_graph("cora_like", n_nodes, n_edges, n_features, feature_density,
                           degree_exponent, n_classes, seed, self_loops)


def ogb_collab_like(n_nodes: int = 235_868, n_edges: int = 1_285_465, n_features: int = 128,
                    degree_exponent: float = 3.0, seed: int = 0) -> GraphData:
    """A collaboration-graph workload sized like ogbl-collab (Hu et al., 2020).

    ogbl-collab: 235,868 authors, 1,285,465 collaboration edges, 128-dimensional dense
    (word2vec) node features. Here: a :func:`synthetic_graph` with exactly ``n_edges``
    distinct undirected edges and dense standard-normal float32 features; labels are all
    zero (the real set is a link-prediction task). The defaults take ~2 s and ~300 MB;
    tests use small sizes.
    """
    g = synthetic_graph("ogb_collab_like", n_nodes, n_edges, n_features, 1.0,
                        degree_exponent, 1, seed)
    return GraphData(g.name, g.adj, g.features, np.zeros(n_nodes, np.int64))


@dataclass(frozen=True)
class GraphSpec:
    """The published statistics a named graph workload copies (``source`` says whence)."""

    name: str
    n_nodes: int
    n_edges: int  # undirected edges, or arcs if ``directed``
    n_features: int
    n_classes: int
    feature_density: float  # of the binary features; 1.0 = dense embeddings
    degree_exponent: float  # γ of the Chung–Lu power law (a modelling choice, not data)
    directed: bool = False
    source: str = ""

    @property
    def sparsity(self) -> float:
        """Fraction of zero entries of the 0/1 adjacency (both directions if undirected)."""
        nnz = self.n_edges * (1 if self.directed else 2)
        return 1.0 - nnz / float(self.n_nodes) ** 2


#: Table 2 of the FuseFlow evaluation (Lacouture et al., ASPLOS 2026): the graphs as its
#: artifact loads them (PyTorch Geometric / OGB); docs/models.md gives each figure's source
_PLANETOID = "Planetoid Cora (Sen et al. 2008; PyG Planetoid: 10,556 directed entries)"
_CITATION_FULL = "PyG CitationFull (Bojchevski & Günnemann 2018)"
GRAPHS: dict[str, GraphSpec] = {s.name: s for s in (
    GraphSpec("cora", 2_708, 5_278, 1_433, 7, 0.0127, 2.7, source=_PLANETOID),
    GraphSpec("cora-ml", 2_995, 8_158, 2_879, 7, 0.0127, 2.7,
              source=f"{_CITATION_FULL} Cora_ML: 16,316 directed entries"),
    GraphSpec("dblp", 17_716, 52_867, 1_639, 4, 0.0127, 2.7,
              source=f"{_CITATION_FULL} DBLP: 105,734 directed entries"),
    GraphSpec("collab", 235_868, 1_285_465, 128, 2, 1.0, 3.0,
              source="OGB ogbl-collab (Hu et al. 2020): all 1,285,465 edges"),
    GraphSpec("mag", 736_389, 5_416_271, 128, 349, 1.0, 2.7, directed=True,
              source="OGB ogbn-mag paper-cites-paper (the relation FuseFlow's artifact "
              "loads): 736,389 papers, 5,416,271 citations"),
)}


def graph_dataset(name: str, seed: int = 0, **overrides: Any) -> GraphData:
    """The named workload of :data:`GRAPHS` at its full size, deterministic by ``seed``;
    ``overrides`` replace any :func:`synthetic_graph` argument (e.g. ``n_nodes`` for a
    scaled-down copy)."""
    try:
        spec = GRAPHS[name]
    except KeyError:
        raise ValueError(f"graph_dataset: unknown data set {name!r}; known: "
                         f"{', '.join(GRAPHS)}") from None
    args = {"n_nodes": spec.n_nodes, "n_edges": spec.n_edges, "n_features": spec.n_features,
            "feature_density": spec.feature_density, "degree_exponent": spec.degree_exponent,
            "n_classes": spec.n_classes, "directed": spec.directed}
    unknown = sorted(set(overrides) - set(args) - {"self_loops"})
    if unknown:
        raise ValueError(f"graph_dataset: {name}: unknown argument(s) {unknown}; known: "
                         f"{sorted(args)}")
    return synthetic_graph(name, seed=seed, **{**args, **overrides})


def karate_club() -> GraphData:
    """Zachary's karate club (34 nodes, 78 edges) from networkx: real, small, shipped.

    Features are the identity (one-hot node ids, as in Kipf & Welling's demo); labels are
    the two clubs (0 = "Mr. Hi", 1 = "Officer").
    """
    g = nx.karate_club_graph()
    nodes = sorted(g.nodes)
    adj = nx.to_scipy_sparse_array(g, nodelist=nodes, weight=None, dtype=np.float32,
                                   format="csr")
    adj = sp.csr_matrix(adj)
    adj.sort_indices()
    labels = np.array([0 if g.nodes[v]["club"] == "Mr. Hi" else 1 for v in nodes])
    feats = sp.identity(len(nodes), dtype=np.float32, format="csr")
    return GraphData("karate_club", adj, feats, labels)


def normalize_adjacency(adj: sp.spmatrix | np.ndarray, self_loops: bool = True
                        ) -> sp.csr_matrix:
    """GCN propagation matrix D^-1/2 (A + I) D^-1/2 (Kipf & Welling, 2017).

    D is the degree (row sums) of A + I (of A if ``self_loops=False``); rows of degree 0
    stay zero instead of dividing by zero.
    """
    a = sp.csr_matrix(adj, dtype=np.float64)
    if self_loops:
        a = a + sp.identity(a.shape[0], format="csr")
    deg = np.asarray(a.sum(axis=1)).ravel()
    inv = np.zeros_like(deg)
    inv[deg > 0] = deg[deg > 0] ** -0.5
    d = sp.diags(inv)
    out = sp.csr_matrix(d @ a @ d, dtype=np.float32)
    out.sort_indices()
    return out


def mean_adjacency(adj: sp.spmatrix | np.ndarray) -> sp.csr_matrix:
    """Row-normalised D^-1 A: row *i* averages the neighbours of *i* (GraphSAGE mean)."""
    a = sp.csr_matrix(adj, dtype=np.float64)
    deg = np.asarray(a.sum(axis=1)).ravel()
    inv = np.zeros_like(deg)
    inv[deg > 0] = 1.0 / deg[deg > 0]
    out = sp.csr_matrix(sp.diags(inv) @ a, dtype=np.float32)
    out.sort_indices()
    return out


def bigbird_blocks(n_blocks: int, n_random: int = 1, window: int = 3, n_global: int = 1,
                   seed: int = 0) -> np.ndarray:
    """The BigBird block pattern (Zaheer et al., 2020) as an ``n_blocks²`` bool matrix.

    - window: block (i, j) with ``|i - j| <= window // 2`` (``window`` blocks per row,
      centred on the diagonal; must be odd);
    - global: the first ``n_global`` block rows and block columns are all set;
    - random: each other block row gets ``n_random`` extra blocks, drawn without
      replacement among the blocks it does not have yet (fewer if none are left).
    """
    if n_blocks < 1 or window < 1 or window % 2 == 0 or n_random < 0 or n_global < 0:
        raise ValueError(f"bigbird_blocks: need n_blocks >= 1, odd window >= 1, n_random "
                         f">= 0, n_global >= 0; got n_blocks={n_blocks!r}, window={window!r},"
                         f" n_random={n_random!r}, n_global={n_global!r}")
    idx = np.arange(n_blocks)
    pat = np.abs(idx[:, None] - idx[None, :]) <= window // 2
    g = min(n_global, n_blocks)
    pat[:g, :] = True
    pat[:, :g] = True
    rng = np.random.default_rng(seed)
    for i in range(g, n_blocks):
        free = np.flatnonzero(~pat[i])
        take = min(n_random, len(free))
        if take:
            pat[i, rng.choice(free, size=take, replace=False)] = True
    return pat


def bigbird_mask(seq_len: int, block: int, n_random: int = 1, window: int = 3,
                 n_global: int = 1, seed: int = 0) -> sp.csr_matrix:
    """Token-level 0/1 attention mask (CSR, float32): :func:`bigbird_blocks` expanded to
    ``block × block`` tiles. ``seq_len`` must be a multiple of ``block``."""
    if block < 1 or seq_len < 1 or seq_len % block:
        raise ValueError(f"bigbird_mask: seq_len={seq_len!r} must be a positive multiple of "
                         f"block={block!r}")
    pat = bigbird_blocks(seq_len // block, n_random, window, n_global, seed)
    mask = sp.kron(sp.csr_matrix(pat, dtype=np.float32),
                   np.ones((block, block), np.float32), format="csr")
    mask.sort_indices()
    return sp.csr_matrix(mask, dtype=np.float32)
