"""Position lanes (``position_split``, ``lane_combine``, ``lane_combine2``; docs/parallel.md)
on the SystemC backend against the Python reference model: SpMV, SpMM and SDDMM on a
matrix with a heavy row split across lanes, every FIFO as the graph gives it, unbounded,
and (a tight case) 1 deep, ideal memory and the hbm2-u280 memory system. Every run must
agree with the Python model token for token and cycle for cycle, and equal numpy."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from test_systemc_lanes import CONFIGS, _check, _tight

from compiler import compile_expression

pytestmark = pytest.mark.cosim


def _heavy(m: int, n: int, seed: int) -> sp.csr_matrix:
    """A sparse matrix one of whose rows is full."""
    a = sp.random(m, n, 0.15, format="lil", random_state=seed, dtype=np.float32)
    a[m // 2, :] = np.random.default_rng(seed).random(n).astype(np.float32) + 0.5
    return a.tocsr()


def _case(expr, formats, tensors, order, lanes, **kw):
    g = compile_expression(expr, formats, {k: v.shape for k, v in tensors.items()},
                           order=order, par={"i": lanes}, partition="position",
                           stats=dict(tensors), **kw)
    assert any(n.op == "position_split" for n in g.nodes.values())
    return g, tensors


@pytest.mark.parametrize("lanes", [2, 3, 5])
def test_spmv_position_lanes(systemc, lanes):
    a = _heavy(13, 11, lanes)
    x = np.random.default_rng(lanes).random(11).astype(np.float32)
    cases = [_case("y(i) = A(i,k) * x(k)", {"A": "csr"}, {"A": a, "x": x}, "i,k", lanes),
             _case("y(i) = A(i,k) * x(k)", {"A": "csr"}, {"A": a, "x": x}, "i,k", lanes,
                   lane_buffer=4)]
    cases.append(_tight(cases[0]))
    _check(systemc, cases, a @ x, "y")


@pytest.mark.parametrize("lanes", [2, 4])
def test_spmm_and_sddmm_position_lanes(systemc, lanes):
    rng = np.random.default_rng(lanes)
    a = _heavy(9, 8, 10 + lanes)
    b = rng.random((8, 3), dtype=np.float32)
    u, v = rng.random((9, 2), dtype=np.float32), rng.random((2, 8), dtype=np.float32)
    spmm = [_case("X(i,j) = A(i,k) * B(k,j)", {"A": "csr", "X": "csr"}, {"A": a, "B": b},
                  "i,k,j", lanes)]
    spmm.append(_tight(spmm[0]))
    _check(systemc, spmm, a @ b, "X", CONFIGS)
    sddmm = [_case("X(i,j) = A(i,j) * U(i,k) * V(k,j)", {"A": "csr", "X": "csr"},
                   {"A": a, "U": u, "V": v}, "i,j,k", lanes)]
    _check(systemc, sddmm, a.multiply(u @ v).toarray(), "X", CONFIGS)
