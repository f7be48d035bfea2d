"""Block-sparse graphs with their inputs and numpy references, shared by every backend's
block tests (docs/blocks.md).

Each case is ``(name, graph, inputs, expected)``: ``inputs`` are full-size numpy arrays
(the backends cut them into the graph's blocks), ``expected`` maps the output tensor to
its dense numpy value. The cases cover every way a firing computes on blocks: a
contraction in a mul (``ij,j->i``, ``ik,kj->ij``), elementwise ALUs with ``N`` from a
union (read as the zero block), a reducer with and without a fold (``ij->i``,
``ij->ij``, ``i->i``), a unary operator on blocks, and accumulators of blocks
(``spacc``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

import ir.examples as ex
from ir import Graph

__all__ = ["block_sparse", "block_cases", "BLOCK_HW_OVERRIDES"]

#: a bounded datapath, so that firings take several cycles (ceil(W / 4))
BLOCK_HW_OVERRIDES = ["compute.macs_per_cycle=4"]


def block_sparse(rng: np.random.Generator, m: int, n: int, b: int, density: float
                 ) -> np.ndarray:
    """An m x n float32 matrix whose nonzeros fill a random pattern of b x b blocks
    (with a few zeros inside stored blocks, which a block format keeps)."""
    pattern = rng.random((m // b, n // b)) < density
    vals = rng.standard_normal((m, n)).astype(np.float32)
    vals[rng.random((m, n)) < 0.1] = 0.0
    return (np.kron(pattern, np.ones((b, b))) * vals).astype(np.float32)


def block_cases(b: int = 2, seed: int = 0, scale: int = 1
                ) -> Iterator[tuple[str, Graph, dict[str, Any], dict[str, np.ndarray]]]:
    """The shared cases at block size ``b`` (sizes multiples of ``b``, ``scale`` times
    the smallest)."""
    rng = np.random.default_rng(seed)
    m, k, n = 4 * b * scale, 3 * b * scale, 2 * b * scale
    B = block_sparse(rng, m, k, b, 0.5)
    c = rng.standard_normal(k).astype(np.float32)
    yield "spmv", ex.spmv(m, k, block=b), {"B": B, "c": c}, {"x": B @ c}
    C = block_sparse(rng, k, n, b, 0.6)
    yield "spmm_ikj", ex.spmm_ikj(m, k, n, block=b), {"B": B, "C": C}, {"X": B @ C}
    M = block_sparse(rng, m, n, b, 0.5)
    Cd = rng.standard_normal((m, k)).astype(np.float32)
    D = rng.standard_normal((k, n)).astype(np.float32)
    mask = np.kron(np.any((M != 0).reshape(m // b, b, n // b, b), axis=(1, 3)),
                   np.ones((b, b)))
    yield "sddmm", ex.sddmm(m, n, k, block=b), {"B": M, "C": Cd, "D": D}, \
        {"X": M * (Cd @ D) * mask}
    for op, f in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                  ("max", np.maximum)):
        A2, B2 = block_sparse(rng, m, n, b, 0.5), block_sparse(rng, m, n, b, 0.5)
        yield f"elementwise_{op}", ex.elementwise(m, n, op, block=b), {"A": A2, "B": B2}, \
            {"X": f(A2, B2)}
    A = block_sparse(rng, m, n, b, 0.6)
    stored = np.kron(np.any((A != 0).reshape(m // b, b, n // b, b), axis=(1, 3)),
                     np.ones((b, b))).astype(bool)
    e = np.where(stored, np.exp(A.astype(np.float64)), 0.0)
    yield "row_sum_exp", ex.row_reduce(m, n, "sum", "exp", block=b), {"A": A}, \
        {"x": e.sum(axis=1).astype(np.float32)}
    # a row with no stored block keeps the reducer's identity, -inf
    yield "row_max", ex.row_reduce(m, n, "max", "", block=b), {"A": A}, \
        {"x": np.where(stored, A, -np.inf).max(axis=1).astype(np.float32)}
