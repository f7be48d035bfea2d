"""Position lanes in models: a key an earlier region computes is dealt by its estimated
rows (``compiler/_position_estimate.py``, docs/parallel.md). The estimate is checked
against the rows scipy computes; the lanes against numpy and, by simulation, against
equal coordinate ranges."""

from __future__ import annotations

import dataclasses
from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import compiler._position as position
from compiler import compile_model, einsum_program
from compiler._position_estimate import computed_rows
from cosim import run_model
from cosim.runs._lanes import lane_report
from ir import Schedule
from tests._skewed import skewed


def _chain(seed: int, n: int = 160):
    """``Y = (A·B)·C`` on a power-law ``A`` (one row a tenth of its entries)."""
    rng = np.random.default_rng(seed)
    A = skewed(rng, n, n, 8 * n, 0.1)
    B = sp.random(n, n, 0.02, format="csr", dtype=np.float32, random_state=rng)
    C = rng.random((n, 4), dtype=np.float32)
    p = einsum_program(["T(i,k) = A(i,m) * B(m,k)", "Y(i,j) = T(i,k) * C(k,j)"],
                       {"A": A.shape, "B": B.shape, "C": C.shape},
                       {"A": "csr", "B": "csr", "T": "csr"})
    return p, {"A": A, "B": B, "C": C}


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16), density=st.sampled_from([0.005, 0.02, 0.1]),
       hub=st.sampled_from([0.0, 0.2]))
def test_rows_of_a_product_follow_the_rows_and_row_lengths_of_its_operands(seed, density,
                                                                           hub):
    rng = np.random.default_rng(seed)
    A = skewed(rng, 80, 60, 400, hub)
    B = sp.random(60, 50, density, format="csr", dtype=np.float32, random_state=rng)
    p = einsum_program(["T(i,k) = A(i,m) * B(m,k)"], {"A": A.shape, "B": B.shape},
                       {"A": "csr", "B": "csr", "T": "csr"})
    est = computed_rows(p, {"A": "csr", "B": "csr", "T": "csr"}, {"A": A, "B": B}, "T")
    pattern = (A != 0).astype(np.float64) @ (B != 0).astype(np.float64)
    actual = np.diff(sp.csr_matrix(pattern).indptr)
    assert est.shape == actual.shape
    assert abs(est.sum() - actual.sum()) <= 0.15 * actual.sum() + 5
    assert np.abs(est - actual).max() <= 0.25 * actual.max() + 5


def test_rows_through_unions_functions_and_two_statements():
    """``relu(A + D)`` unites the rows; a product of a computed tensor estimates its
    rows from the estimate; a tensor with neither data nor statement is unknown."""
    rng = np.random.default_rng(4)
    A, D = (sp.random(30, 20, 0.2, format="csr", dtype=np.float32, random_state=rng)
            for _ in range(2))
    B = sp.random(20, 25, 0.3, format="csr", dtype=np.float32, random_state=rng)
    p = einsum_program(["U(i,m) = relu(A(i,m) + D(i,m))", "T(i,k) = U(i,m) * B(m,k)"],
                       {"A": A.shape, "D": D.shape, "B": B.shape},
                       {"A": "csr", "D": "csr", "B": "csr", "U": "csr", "T": "csr"})
    fmts = {t: "csr" for t in ("A", "D", "B", "U", "T")}
    data = {"A": A, "D": D, "B": B}
    u = computed_rows(p, fmts, data, "U")
    da, dd = np.diff(A.indptr) / 20, np.diff(D.indptr) / 20
    np.testing.assert_allclose(u, 20 * (1 - (1 - da) * (1 - dd)))
    t = computed_rows(p, fmts, data, "T")
    actual = np.diff(sp.csr_matrix(((A != 0) + (D != 0)).astype(float)
                                   @ (B != 0).astype(float)).indptr)
    assert abs(t.sum() - actual.sum()) <= 0.15 * actual.sum()
    assert computed_rows(p, fmts, {"A": A, "D": D}, "T") is None


def _run(p, data, partition: str, lanes: int = 8):
    sched = dataclasses.replace(Schedule.unfused(p), par={"i": lanes}, partition=partition)
    compiled = compile_model(p, sched, stats=data)
    run = run_model(compiled, data)
    kernels = {k.target: (k.graph, rr.results[k.target])
               for reg, rr in zip(compiled.regions, run.regions, strict=True)
               for k in reg.kernels}
    return run, kernels


def test_a_computed_key_is_split_by_estimated_work_better_than_equal_ranges():
    """``Y = T·C`` where ``T = A·B`` is computed: the estimated rows give a lower
    imbalance (simulated) than equal coordinate ranges; both equal numpy."""
    p, data = _chain(7)
    gold = (data["A"] @ data["B"]) @ data["C"]
    run, kernels = _run(p, data, "position")
    graph, result = kernels["Y"]
    assert graph.meta["parallel"]["estimated"] == ["i"]
    assert graph.meta["parallel"]["cut"] == {"i": "rows"}
    np.testing.assert_allclose(run.outputs["Y"], gold, rtol=1e-4, atol=1e-4)
    estimated = lane_report(graph, result).imbalance
    with mock.patch.object(position, "computed_rows", return_value=None):
        run, kernels = _run(p, data, "position")
    np.testing.assert_allclose(run.outputs["Y"], gold, rtol=1e-4, atol=1e-4)
    equal = lane_report(*kernels["Y"]).imbalance
    assert estimated < 0.8 * equal, (estimated, equal)
    assert kernels["T"][0].meta["parallel"]["cut"] == {"i": "positions"}


@pytest.mark.parametrize("partition", ["position", "position-contiguous"])
def test_gnn_layer_on_position_lanes(partition):
    """``H = A·(X·W)``: the aggregation's key ``A`` is bound (its positions are dealt),
    ``X·W`` computed (one entry a position); a bias after the sum has no key, so that
    kernel keeps round-robin lanes and says why."""
    rng = np.random.default_rng(2)
    A = skewed(rng, 40, 40, 240, 0.15)
    X, W, b = (rng.random(s, dtype=np.float32) for s in ((40, 6), (6, 5), (5,)))
    p = einsum_program(["T(i,j) = X(i,k) * W(k,j)", "H(i,j) = A(i,k) * T(k,j)",
                        "Y(i,j) = H(i,j) + b(j)"],
                       {"A": A.shape, "X": X.shape, "W": W.shape, "b": b.shape},
                       {"A": "csr"}, outputs=["Y"])
    data = {"A": A, "X": X, "W": W, "b": b}
    with mock.patch.object(position, "MIN_WINDOW", 4):
        run, kernels = _run(p, data, partition, lanes=3)
    np.testing.assert_allclose(run.outputs["Y"], A @ (X @ W) + b, rtol=1e-4, atol=1e-4)
    assert kernels["H"][0].meta["parallel"]["cut"] == {"i": "positions"}
    assert "fallback" not in kernels["H"][0].meta["parallel"]
    assert "multiplies the whole expression" in kernels["Y"][0].meta["parallel"]["fallback"]
    assert lane_report(*kernels["H"]).imbalance < 1.3


def test_nested_lanes_in_a_model_cut_positions_below_estimated_rows():
    """A schedule's ``par: {i: 3, j: 2}`` reaches every kernel with those output indices
    (both, not only the first: ``Schedule.lanes_of`` was handed a generator); in ``Y``
    the ``i`` lanes deal ``T``'s estimated rows and the ``j`` lanes cut ``C``'s
    positions."""
    p, data = _chain(3, 60)
    sched = dataclasses.replace(Schedule.unfused(p), par={"i": 3, "j": 2},
                                partition="position")
    compiled = compile_model(p, sched, stats=data)
    run = run_model(compiled, data)
    np.testing.assert_allclose(run.outputs["Y"], (data["A"] @ data["B"]) @ data["C"],
                               rtol=1e-4, atol=1e-4)
    meta = {k.target: k.graph.meta["parallel"] for r in compiled.regions for k in r.kernels}
    assert meta["Y"]["par"] == {"i": 3, "j": 2} and meta["T"]["par"] == {"i": 3}
    assert meta["Y"]["cut"] == {"i": "rows", "j": "positions"}
