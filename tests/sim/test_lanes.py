"""Parallel lanes on the Python model: the lane primitives' firing rules (docs/primitives.md)
and compiled kernels on 1..N lanes against numpy/scipy, for both partitions."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import LoweringError, compile_expression
from ir import DONE, stop
from sim_models.python import SimulationError, StreamError, run_primitive, simulate

S0, S1, D = stop(0), stop(1), DONE


def test_lane_split_deals_coordinates_and_keeps_stops():
    run = run_primitive("lane_split", {"crd_in": [0, 3, 5, S0, 1, S1, D],
                                       "ref_in": [10, 13, 15, S0, 11, S1, D]},
                        params={"lanes": 2, "lane": 1, "lo": 0, "hi": 8})
    assert run.tokens["crd"] == [3, 5, S0, 1, S1, D]
    assert run.tokens["ref"] == [13, 15, S0, 11, S1, D]


def test_lane_split_keeps_a_coordinate_range_one_cycle_per_input():
    run = run_primitive("lane_split", {"crd_in": [0, 2, 5, 7, S0, D],
                                       "ref_in": [0, 1, 2, 3, S0, D]},
                        params={"lanes": 1, "lane": 0, "lo": 2, "hi": 7})
    assert run.tokens["crd"] == [2, 5, S0, D]
    # a firing per input token, kept or dropped: 0 at 0, 2 at 1, 5 at 2, 7 at 3, S0 at 4
    assert run.cycles["crd"] == [1, 2, 4, 5]


def test_lane_merge_restores_coordinate_order():
    run = run_primitive("lane_merge", {"crd_a": [0, 3, S0, S1, D], "val_a": [1., 2., S0, S1, D],
                                       "crd_b": [1, S0, 2, S1, D], "val_b": [5., S0, 6., S1, D]})
    assert run.tokens["crd"] == [0, 1, 3, S0, 2, S1, D]
    assert run.tokens["val"] == [1., 5., 2., S0, 6., S1, D]


def test_lane_merge2_copies_inner_fibers_and_closes_them_late():
    run = run_primitive("lane_merge2", {
        "crd1_a": [0, 2, S0, D], "crd0_a": [5, S0, 7, S1, D], "val_a": [1., S0, 3., S1, D],
        "crd1_b": [1, S0, D], "crd0_b": [6, S1, D], "val_b": [2., S1, D]})
    assert run.tokens["crd1"] == [0, 1, 2, S0, D]
    assert run.tokens["crd0"] == [5, S0, 6, S0, 7, S1, D]
    assert run.tokens["val"] == [1., S0, 2., S0, 3., S1, D]


def test_lane_merge2_empty_lane_and_empty_inner_fibers():
    run = run_primitive("lane_merge2", {
        "crd1_a": [S0, D], "crd0_a": [S1, D], "val_a": [S1, D],
        "crd1_b": [0, 3, S0, D], "crd0_b": [S0, 4, S1, D], "val_b": [S0, 9., S1, D]})
    assert run.tokens["crd1"] == [0, 3, S0, D]
    assert run.tokens["crd0"] == [S0, 4, S1, D]


@pytest.mark.parametrize("prim,streams,what", [
    ("lane_merge", {"crd_a": [1, S0, D], "val_a": [1., S0, D], "crd_b": [1, S0, D],
                    "val_b": [2., S0, D]}, "both lanes hold coordinate 1"),
    ("lane_merge", {"crd_a": [S0, D], "val_a": [S0, D], "crd_b": [S1, D], "val_b": [S1, D]},
     "misaligned lanes"),
    ("lane_split", {"crd_in": [1, D], "ref_in": [S0, D]}, "misaligned streams"),
])
def test_lane_primitives_reject_malformed_streams(prim, streams, what):
    params = {"lanes": 2, "lane": 0, "lo": 0, "hi": 4} if prim == "lane_split" else {}
    with pytest.raises(StreamError, match=what):
        run_primitive(prim, streams, params=params)


def _spmm(A, B, order, par, partition, sparse_b=False, **kw):
    formats = {"A": "csr", "X": "csr", **({"B": "csr"} if sparse_b else {})}
    g = compile_expression("X(i,j) = A(i,k) * B(k,j)", formats,
                           {"A": A.shape, "B": B.shape}, order=order, par=par,
                           partition=partition, stats={"A": A, "B": B}, **kw)
    return g, simulate(g, {"A": A, "B": B})


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 12), k=st.integers(1, 8), n=st.integers(1, 6),
       density=st.sampled_from([0.0, 0.1, 0.4, 1.0]), order=st.sampled_from(["i,k,j", "i,j,k"]),
       par=st.sampled_from([{"i": 2}, {"i": 5}, {"j": 3}, {"i": 2, "j": 2}, {"i": 16},
                            {"j": 2}]),
       partition=st.sampled_from(["round-robin", "balanced"]),
       buffer=st.sampled_from([2, 4, 1024]), seed=st.integers(0, 2**16))
def test_lanes_compute_what_numpy_computes(m, k, n, density, order, par, partition, buffer,
                                           seed):
    """Every partition, factor (more lanes than rows included) and buffer depth."""
    rng = np.random.default_rng(seed)
    A = sp.random(m, k, density=density, format="csr", random_state=rng, dtype=np.float32)
    B = rng.standard_normal((k, n)).astype(np.float32)
    B[rng.random((k, n)) < 0.5] = 0  # sparse rows of B: j sits at varying positions
    g, res = _spmm(A, B, order, par, partition, lane_buffer=buffer, sparse_b=True)
    np.testing.assert_allclose(res.dense("X"), A.toarray() @ B, rtol=1e-4, atol=1e-4)
    lanes = {lab for lab in g.meta["parallel"]["lane_of"].values()
             if lab.count(".") == len(par) - 1}
    assert len(lanes) == int(np.prod(list(par.values())))


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 10), k=st.integers(1, 6), n=st.integers(1, 8),
       density=st.sampled_from([0.1, 0.5, 1.0]), op=st.sampled_from(["+", "-", "*"]),
       bias=st.sampled_from(["dense", "sparse"]),
       par=st.sampled_from([{"j": 2}, {"j": 3}, {"i": 2, "j": 2}]),
       partition=st.sampled_from(["round-robin", "balanced"]), seed=st.integers(0, 2**16))
def test_lanes_at_an_epilogue_join_split_the_joined_operand(m, k, n, density, op, bias, par,
                                                            partition, seed):
    """Gustavson rows meet d(j) in an epilogue union or intersection with lanes on j: each
    lane's rows meet only its share of d (a whole d per lane wrote every j twice)."""
    rng = np.random.default_rng(seed)
    A = sp.random(m, k, density=density, format="csr", random_state=rng, dtype=np.float32)
    B = sp.random(k, n, density=density, format="csr", random_state=rng, dtype=np.float32)
    d = rng.standard_normal(n).astype(np.float32)
    d[rng.random(n) < 0.4] = 0
    g = compile_expression(f"X(i,j) = A(i,k) * B(k,j) {op} d(j)",
                           {"A": "csr", "B": "csr", "X": "csr",
                            "d": "c" if bias == "sparse" else "d"},
                           {"A": A.shape, "B": B.shape, "d": d.shape}, order="i,k,j",
                           par=par, partition=partition, stats={"A": A, "B": B, "d": d})
    joins = {"union_val", "intersect_val", "locate"}
    assert joins & {n.op for n in g.nodes.values()}, "an epilogue join"
    want = {"+": np.add, "-": np.subtract, "*": np.multiply}[op](A.toarray() @ B.toarray(), d)
    got = simulate(g, {"A": A, "B": B, "d": d}).dense("X")
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 14), n=st.integers(1, 10), density=st.sampled_from([0.05, 0.3, 0.8]),
       lanes=st.integers(2, 9), partition=st.sampled_from(["round-robin", "balanced"]),
       fmt=st.sampled_from(["csr", "dcsr"]), seed=st.integers(0, 2**16))
def test_spmv_and_sddmm_lanes(m, n, density, lanes, partition, fmt, seed):
    """One output level (lane_merge) and a three-operand masked product."""
    rng = np.random.default_rng(seed)
    A = sp.random(m, n, density=density, format="csr", random_state=rng, dtype=np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    g = compile_expression("y(i) = A(i,j) * x(j)", {"A": fmt}, {"A": A.shape, "x": x.shape},
                           par={"i": lanes}, partition=partition, stats={"A": A, "x": x})
    np.testing.assert_allclose(simulate(g, {"A": A, "x": x}).dense("y"), A.toarray() @ x,
                               rtol=1e-4, atol=1e-4)
    U = rng.standard_normal((m, 3)).astype(np.float32)
    V = rng.standard_normal((3, n)).astype(np.float32)
    g = compile_expression("X(i,j) = A(i,j) * U(i,k) * V(k,j)", {"A": fmt, "X": fmt},
                           {"A": A.shape, "U": U.shape, "V": V.shape}, order="i,j,k",
                           par={"i": lanes}, partition=partition,
                           stats={"A": A, "U": U, "V": V})
    got = simulate(g, {"A": A, "U": U, "V": V}).dense("X")
    np.testing.assert_allclose(got, A.toarray() * (U @ V), rtol=1e-4, atol=1e-4)


def test_four_lanes_are_nearly_four_times_faster_on_uniform_spmm():
    rng = np.random.default_rng(3)
    A = sp.random(96, 96, density=0.2, format="csr", random_state=rng, dtype=np.float32)
    B = rng.standard_normal((96, 8)).astype(np.float32)
    one = _spmm(A, B, "i,k,j", {}, "round-robin")[1].cycles
    four = _spmm(A, B, "i,k,j", {"i": 4}, "round-robin")[1].cycles
    assert one / four >= 3.5, (one, four)


def test_balanced_ranges_cut_equal_work_on_a_skewed_matrix():
    rows = [60, 1, 1, 1, 1, 1, 1, 1, 30, 30]
    A = sp.csr_matrix((np.ones(sum(rows), np.float32),
                       np.concatenate([np.arange(r) for r in rows]),
                       np.concatenate([[0], np.cumsum(rows)])), shape=(10, 64))
    x = np.ones(64, np.float32)
    g = compile_expression("y(i) = A(i,j) * x(j)", {"A": "csr"}, {"A": A.shape, "x": x.shape},
                           par={"i": 3}, partition="balanced", stats={"A": A, "x": x})
    # row i costs its nnz in A plus the x entries it meets: 2 * nnz
    assert g.meta["parallel"]["ranges"]["i"] == [[0, 1], [1, 9], [9, 10]]


def test_parallelising_a_reduction_index_is_an_error_naming_it():
    A = sp.random(4, 4, density=0.5, format="csr", dtype=np.float32)
    with pytest.raises(LoweringError, match="'k' is not an index of the output"):
        compile_expression("X(i,j) = A(i,k) * B(k,j)", {"A": "csr"}, {"A": (4, 4), "B": (4, 4)},
                           par={"k": 2}, stats={"A": A})
    with pytest.raises(LoweringError, match="measures the work on the data"):
        compile_expression("X(i,j) = A(i,k) * B(k,j)", {"A": "csr"}, {"A": (4, 4), "B": (4, 4)},
                           par={"i": 2}, partition="balanced")
    with pytest.raises(LoweringError, match="lane_buffer 1: expected a number of tokens >= 2"):
        compile_expression("y(i) = A(i,j) * x(j)", {"A": "csr"}, {"A": (4, 4), "x": (4,)},
                           par={"i": 2}, lane_buffer=1)
    with pytest.raises(LoweringError, match="expected a number of lanes"):
        compile_expression("y(i) = A(i,j) * x(j)", {"A": "csr"}, {"A": (4, 4), "x": (4,)},
                           par={"i": 0})


def test_lane_buffers_count_against_the_onchip_buffer():
    from ir import load_hw

    A = sp.random(8, 8, density=0.5, format="csr", random_state=1, dtype=np.float32)
    x = np.ones(8, np.float32)
    g = compile_expression("y(i) = A(i,j) * x(j)", {"A": "csr"}, {"A": A.shape, "x": x.shape},
                           par={"i": 4}, lane_buffer=64)
    # two leaf merges x 4 FIFOs (crd, val per input) of 64 tokens, the root's 4 of 128
    need = (2 * 4 * 64 + 4 * 128) * 4
    with pytest.raises(SimulationError, match=rf"need {need} bytes.*12 lane buffers"):
        simulate(g, {"A": A, "x": x}, hw=load_hw("hbm2-u280", [f"onchip.bytes={need - 1}"]))
    ok = simulate(g, {"A": A, "x": x}, hw=load_hw("hbm2-u280", [f"onchip.bytes={need}"]))
    np.testing.assert_allclose(ok.dense("y"), A.toarray() @ x, rtol=1e-5)


def test_a_lane_beyond_its_lane_count_does_not_load():
    from ir import GraphError

    with pytest.raises(GraphError, match="lane 2 must be below lanes 2"):
        run_primitive("lane_split", {"crd_in": [D], "ref_in": [D]},
                      params={"lanes": 2, "lane": 2, "lo": 0, "hi": 4})
