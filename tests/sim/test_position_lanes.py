"""Position-space lanes (``--partition position``, docs/parallel.md) on the Python model:
the position split and lane reductions' firing rules (docs/primitives.md), and compiled
kernels on skewed random data against numpy/scipy."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import LoweringError, compile_expression
from cosim.runs._lanes import lane_report
from ir import DONE, stop
from sim_models.python import StreamError, run_primitive, simulate
from tests._skewed import skewed

S0, S1, D = stop(0), stop(1), DONE


def test_position_split_keeps_a_window_of_positions_inside_a_fiber():
    run = run_primitive("position_split", {"crd_in": [0, 3, 5, S0, 1, S1, D],
                                           "ref_in": [7, 8, 9, S0, 4, S1, D],
                                           "pos_in": [10, 11, 12, S0, 13, S1, D]},
                        params={"lo": 11, "hi": 13})
    assert run.tokens["crd"] == [3, 5, S0, S1, D]
    assert run.tokens["ref"] == [8, 9, S0, S1, D]


def test_position_split_refuses_misaligned_streams():
    with pytest.raises(StreamError, match="misaligned"):
        run_primitive("position_split", {"crd_in": [0, S0, D], "ref_in": [0, S0, D],
                                         "pos_in": [S0, S0, D]}, params={"lo": 0, "hi": 1})


def test_lane_combine_adds_equal_coordinates():
    run = run_primitive("lane_combine", {
        "crd_a": [0, 3, S0, 1, S1, D], "val_a": [1., 2., S0, 4., S1, D],
        "crd_b": [3, 4, S0, S1, D], "val_b": [10., 20., S0, S1, D]})
    assert run.tokens["crd"] == [0, 3, 4, S0, 1, S1, D]
    assert run.tokens["val"] == [1., 12., 20., S0, 4., S1, D]


def test_lane_combine2_merges_the_inner_fibers_of_a_shared_row():
    run = run_primitive("lane_combine2", {
        "crd1_a": [0, 2, S0, D], "crd0_a": [5, S0, 1, 7, S1, D], "val_a": [1., S0, 3., 4., S1, D],
        "crd1_b": [2, 3, S0, D], "crd0_b": [0, 7, S0, 6, S1, D],
        "val_b": [2., 5., S0, 9., S1, D]})
    assert run.tokens["crd1"] == [0, 2, 3, S0, D]
    assert run.tokens["crd0"] == [5, S0, 0, 1, 7, S0, 6, S1, D]
    assert run.tokens["val"] == [1., S0, 2., 3., 9., S0, 9., S1, D]


def _run(expr, formats, tensors, order, lanes):
    shapes = {k: v.shape for k, v in tensors.items()}
    g = compile_expression(expr, formats, shapes, order=order, par={"i": lanes},
                           partition="position", stats=dict(tensors))
    return g, simulate(g, tensors)


CASES = {
    "spmm": ("X(i,j) = A(i,k) * B(k,j)", {"A": "csr", "X": "csr"}, "i,k,j",
             lambda A, d, r: ({"B": d(A.shape[1], 3)}, lambda t: A @ t["B"])),
    "spmv": ("y(i) = A(i,k) * x(k)", {"A": "csr"}, "i,k",
             lambda A, d, r: ({"x": d(A.shape[1])}, lambda t: A @ t["x"])),
    "sddmm": ("X(i,j) = A(i,j) * U(i,k) * V(k,j)", {"A": "csr", "X": "csr"}, "i,j,k",
              lambda A, d, r: ({"U": d(A.shape[0], 2), "V": d(2, A.shape[1])},
                               lambda t: A.multiply(t["U"] @ t["V"]).toarray())),
    "intersect3": ("y(i) = A(i,k) * B(i,k) * C(i,k)",
                   {"A": "csr", "B": "csr", "C": "csr"}, "i,k",
                   lambda A, d, r: ({"B": r(A), "C": r(A)},
                                    lambda t: np.asarray(A.multiply(t["B"]).multiply(t["C"])
                                                         .sum(axis=1)).ravel())),
    "union": ("X(i,j) = A(i,k) * (B(k,j) + C(k,j))",
              {"A": "csr", "B": "csr", "C": "csr", "X": "csr"}, "i,k,j",
              lambda A, d, r: ({"B": r(A.T.tocsr()), "C": r(A.T.tocsr())},
                               lambda t: (A @ (t["B"] + t["C"])).toarray())),
}


@pytest.mark.parametrize("case", sorted(CASES))
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), lanes=st.sampled_from([2, 3, 8]),
       hub=st.sampled_from([0.0, 0.15, 0.5]))
def test_position_lanes_equal_scipy_on_skewed_data(case, seed, lanes, hub):
    expr, formats, order, make = CASES[case]
    rng = np.random.default_rng(seed)
    A = skewed(rng, 12, 10, 40, hub)

    def dense(*shape):
        return rng.random(shape, dtype=np.float32)

    def resample(M):  # same shape, its own sparsity and values
        return sp.random(*M.shape, 0.4, format="csr", dtype=np.float32, random_state=rng)

    others, want = make(A, dense, resample)
    tensors = {"A": A, **others}
    g, res = _run(expr, formats, tensors, order, lanes)
    out = next(iter(set(res.outputs)))
    np.testing.assert_allclose(res.dense(out), want(tensors), rtol=1e-4, atol=1e-4)
    assert any(n.op == "position_split" for n in g.nodes.values())


def test_more_lanes_than_nonzeros_in_the_only_fiber():
    A = sp.csr_matrix((np.array([2., 3.], dtype=np.float32), ([4, 4], [1, 6])), shape=(9, 8))
    x = np.arange(8, dtype=np.float32)
    _, res = _run("y(i) = A(i,k) * x(k)", {"A": "csr"}, {"A": A, "x": x}, "i,k", 8)
    np.testing.assert_allclose(res.dense("y"), A @ x, rtol=1e-6)


def test_a_heavy_row_spans_lanes_and_balances_them():
    rng = np.random.default_rng(3)
    A = skewed(rng, 60, 60, 400, 0.4)
    B = rng.random((60, 4), dtype=np.float32)
    g, res = _run("X(i,j) = A(i,k) * B(k,j)", {"A": "csr", "X": "csr"}, {"A": A, "B": B},
                  "i,k,j", 4)
    np.testing.assert_allclose(res.dense("X"), A @ B, rtol=1e-4, atol=1e-4)
    assert lane_report(g, res).imbalance < 1.2
    assert g.meta["parallel"]["partition"] == "position"


@pytest.mark.parametrize("expr,order,par,what", [
    ("X(i,j) = A(i,k) * B(k,j)", "k,i,j", {"i": 2}, "not outermost"),
    ("X(i,j) = A(i,j) * B(i,j)", "i,j", {"i": 2, "j": 2}, "cannot have lanes"),
    ("X(i,j) = A(i,j) + B(i,j)", "i,j", {"i": 2}, "multiplies the whole"),
])
def test_position_lanes_refuse_what_they_cannot_split(expr, order, par, what):
    A = sp.random(6, 6, 0.5, format="csr", dtype=np.float32, random_state=1)
    B = sp.random(6, 6, 0.5, format="csr", dtype=np.float32, random_state=2)
    with pytest.raises(LoweringError, match=what):
        compile_expression(expr, {"A": "csr", "B": "csr", "X": "csr"},
                           {"A": A.shape, "B": B.shape}, order=order, par=par,
                           partition="position", stats={"A": A, "B": B})


def test_position_lanes_refuse_block_values():
    A = sp.random(8, 8, 0.5, format="csr", dtype=np.float32, random_state=1)
    B = np.ones((8, 8), dtype=np.float32)
    with pytest.raises(LoweringError, match="scalar values only"):
        compile_expression("X(i,j) = A(i,k) * B(k,j)", {"A": "csr", "X": "csr"},
                           {"A": A.shape, "B": B.shape}, order="i,k,j", par={"i": 2},
                           partition="position", stats={"A": A, "B": B},
                           block={"i": 2, "k": 2})
