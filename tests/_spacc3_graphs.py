"""Compiled graphs with a ``spacc3`` (a reduced index above three kept ones), their
inputs and numpy references, shared by every backend's spacc3 tests.

Each case is ``(name, graph, inputs, expected)``: ``inputs`` are dense numpy arrays,
``expected`` maps the output tensor to its dense value. The cases cover the orders that
put ``k`` above three kept indices for two kernels (TTM, whose sparse operand is the
order-3 one, and the outer product of a matrix with an order-3 tensor), a format with a
dense kept level, an empty reduction, and block values (the accumulator adds whole
blocks).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from compiler import compile_expression
from ir import Graph

__all__ = ["spacc3_cases", "spacc3_block_case"]

TTM = "X(i,j,l) = B(i,j,k) * C(k,l)"
OUTER3 = "X(i,j,l) = B(i,k) * C(k,j,l)"


def _sparse(rng: np.random.Generator, shape: tuple[int, ...], density: float
            ) -> np.ndarray:
    return (rng.uniform(-2, 2, shape) * (rng.random(shape) < density)).astype(np.float32)


def spacc3_cases(seed: int = 0, scale: int = 1
                 ) -> Iterator[tuple[str, Graph, dict[str, Any], dict[str, np.ndarray]]]:
    """The shared scalar cases (``scale`` multiplies every size)."""
    rng = np.random.default_rng(seed)
    i, j, k, l = 4 * scale, 3 * scale, 5 * scale, 3 * scale
    B = _sparse(rng, (i, j, k), 0.4)
    C = _sparse(rng, (k, l), 0.6)
    ttm = {"X": np.einsum("ijk,kl->ijl", B, C)}
    shapes = {"B": B.shape, "C": C.shape}
    for order in ("k,i,j,l", "k,j,l,i", "k,l,i,j"):
        g = compile_expression(TTM, {"B": "dcc", "C": "dc", "X": "ccc"}, shapes, order=order,
                               name=f"ttm_{order.replace(',', '')}")
        yield g.name, g, {"B": B, "C": C}, ttm
    g = compile_expression(TTM, {"B": "dcc", "C": "dc", "X": "dcc"}, shapes,
                           order="k,i,j,l", name="ttm_dense_rows")
    yield g.name, g, {"B": B, "C": C}, ttm
    zero = np.zeros_like(C)
    g = compile_expression(TTM, {"B": "dcc", "C": "dc", "X": "ccc"}, shapes,
                           order="k,i,j,l", name="ttm_empty")
    yield g.name, g, {"B": B, "C": zero}, {"X": np.zeros((i, j, l), np.float32)}
    Bm = _sparse(rng, (i, k), 0.5)
    Ct = _sparse(rng, (k, j, l), 0.3)
    g = compile_expression(OUTER3, {"B": "csc", "C": "dcc", "X": "ccc"},
                           {"B": Bm.shape, "C": Ct.shape}, order="k,i,j,l", name="outer3")
    yield g.name, g, {"B": Bm, "C": Ct}, {"X": np.einsum("ik,kjl->ijl", Bm, Ct)}


def spacc3_block_case(b: int = 2, seed: int = 0
                      ) -> tuple[str, Graph, dict[str, Any], dict[str, np.ndarray]]:
    """TTM in order ``k,i,j,l`` with ``i``, ``j`` and ``l`` in blocks of ``b``: the
    accumulator adds ``b³``-element blocks (the product is the outer product
    ``ij,l->ijl``)."""
    rng = np.random.default_rng(seed)
    i, j, k, l = 3 * b, 2 * b, 4, 2 * b
    pattern = rng.random((i // b, j // b, k)) < 0.5
    B = (np.kron(pattern, np.ones((b, b, 1))) * rng.standard_normal((i, j, k))).astype(
        np.float32)
    C = _sparse(rng, (k, l), 0.7)
    g = compile_expression(TTM, {"B": "dcc", "C": "dc", "X": "ccc"},
                           {"B": B.shape, "C": C.shape}, order="k,i,j,l",
                           block={"i": b, "j": b, "l": b}, name="ttm_blocks")
    return g.name, g, {"B": B, "C": C}, {"X": np.einsum("ijk,kl->ijl", B, C)}
