"""Skewed sparse test data shared by the position-lane suites (tests/sim,
tests/parity): power-law rows, one of which may hold a given share of the entries."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def skewed(rng: np.random.Generator, n: int, m: int, nnz: int, hub: float) -> sp.csr_matrix:
    """Power-law rows, one of which holds a ``hub`` share of the entries."""
    weights = (np.arange(n) + 1.0) ** -1.2
    rows = rng.choice(n, size=nnz, p=weights / weights.sum())
    rows[: int(hub * nnz)] = rng.integers(n)
    cols = rng.integers(m, size=nnz)
    A = sp.csr_matrix((rng.random(nnz, dtype=np.float32) + 0.5, (rows, cols)), shape=(n, m))
    A.sum_duplicates()
    return A.astype(np.float32)
