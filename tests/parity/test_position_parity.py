"""Position lanes (``--partition position``: interleaved windows; ``position-contiguous``:
one window a lane; docs/parallel.md) on every backend against the Python model and numpy:
the ``position_split`` with several windows and the folding lane reduction
``lane_combine2`` as primitives, and compiled SpMV, SpMM, SDDMM, a three-operand
intersection and a union on skewed data (a heavy row split across lanes, more lanes than
nonzeros). What each backend is held to is in ``_backends.py``.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
import scipy.sparse as sp
from _backends import over
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compiler._position as position
from compiler import LoweringError, compile_expression
from cosim.runs._lanes import lane_report
from ir import DONE, load_hw, position_windows, stop
from sim_models.python import run_primitive, simulate
from tests._skewed import skewed

S0, S1, D = stop(0), stop(1), DONE
HBM = load_hw("hbm2-u280")
CHEAP = [(d, None) for d in (1, 2, 4, None)] + [(2, HBM)]
CONFIGS = {"python": CHEAP, "systemc": CHEAP}


#: name -> expression, formats, order, (A, rng) -> (other inputs, gold of the inputs)
KERNELS = {
    "spmv": ("y(i) = A(i,k) * x(k)", {"A": "csr"}, "i,k",
             lambda A, r: ({"x": r.random(A.shape[1], dtype=np.float32)},
                           lambda t: A @ t["x"])),
    "spmm": ("X(i,j) = A(i,k) * B(k,j)", {"A": "csr", "X": "csr"}, "i,k,j",
             lambda A, r: ({"B": r.random((A.shape[1], 3), dtype=np.float32)},
                           lambda t: A @ t["B"])),
    "sddmm": ("X(i,j) = A(i,j) * U(i,k) * V(k,j)", {"A": "csr", "X": "csr"}, "i,j,k",
              lambda A, r: ({"U": r.random((A.shape[0], 2), dtype=np.float32),
                             "V": r.random((2, A.shape[1]), dtype=np.float32)},
                            lambda t: A.multiply(t["U"] @ t["V"]).toarray())),
    "intersect3": ("y(i) = A(i,k) * B(i,k) * C(i,k)", {"A": "csr", "B": "csr", "C": "csr"},
                   "i,k",
                   lambda A, r: ({"B": _resample(A, r), "C": _resample(A, r)},
                                 lambda t: np.asarray(A.multiply(t["B"]).multiply(t["C"])
                                                      .sum(axis=1)).ravel())),
    "sddmm-ikj": ("X(i,j) = A(i,j) * U(i,k) * V(k,j)", {"A": "csr", "X": "csr"}, "i,k,j",
                  lambda A, r: ({"U": r.random((A.shape[0], 2), dtype=np.float32),
                                 "V": r.random((2, A.shape[1]), dtype=np.float32)},
                                lambda t: A.multiply(t["U"] @ t["V"]).toarray())),
    "intersect3-kj": ("X(i,j) = A(i,k) * B(k,j) * C(k,j)",
                      {"A": "csr", "B": "csr", "C": "csr", "X": "csr"}, "i,k,j",
                      lambda A, r: ({"B": _resample(A.T, r), "C": _resample(A.T, r)},
                                    lambda t: (A @ t["B"].multiply(t["C"])).toarray())),
    "union": ("X(i,j) = A(i,k) * (B(k,j) + C(k,j))",
              {"A": "csr", "B": "csr", "C": "csr", "X": "csr"}, "i,k,j",
              lambda A, r: ({"B": _resample(A.T, r), "C": _resample(A.T, r)},
                            lambda t: (A @ (t["B"] + t["C"])).toarray())),
}


def _resample(M, rng) -> sp.csr_matrix:
    """Same shape, its own sparsity and values."""
    return sp.random(*M.shape, 0.4, format="csr", dtype=np.float32, random_state=rng)


def compile_position(kernel: str, A: sp.csr_matrix, lanes: int, partition: str, seed: int,
                     min_window: int = 2, inner: dict[str, int] | None = None,
                     fmt: str = "csr"):
    """The kernel on ``A`` at ``lanes`` position lanes on ``i`` (``inner``: lanes nested
    in each, cutting their own level's positions where a key holds it); ``min_window``
    positions a window at least (small, so that small data is still dealt in many
    interleaved windows); ``fmt``: the sparse inputs' format."""
    expr, formats, order, make = KERNELS[kernel]
    formats = {t: fmt if f == "csr" and t != "X" else f for t, f in formats.items()}
    others, gold = make(A, np.random.default_rng(seed))
    tensors = {"A": A, **others}
    with mock.patch.object(position, "MIN_WINDOW", min_window):
        g = compile_expression(expr, formats, {k: v.shape for k, v in tensors.items()},
                               order=order, par={"i": lanes, **(inner or {})},
                               partition=partition,
                               stats=dict(tensors))
    assert any(n.op == "position_split" for n in g.nodes.values())
    out = "y" if expr.startswith("y") else "X"
    return g, tensors, {out: np.asarray(gold(tensors))}


def _cases():
    rng = np.random.default_rng(28)
    heavy = skewed(rng, 20, 16, 90, 0.35)
    two = sp.csr_matrix((np.array([2., 3.], dtype=np.float32), ([4, 4], [1, 6])),
                        shape=(9, 8))
    for name, kernel, A, lanes, partition, inner in (
            ("spmv-3", "spmv", heavy, 3, "position", None),
            ("spmm-4", "spmm", heavy, 4, "position", None),
            ("sddmm-4", "sddmm", heavy, 4, "position", None),
            ("intersect3-3", "intersect3", heavy, 3, "position", None),
            ("union-2", "union", heavy, 2, "position", None),
            ("spmm-contiguous-3", "spmm", heavy, 3, "position-contiguous", None),
            ("spmv-8-on-2-nonzeros", "spmv", two, 8, "position", None),
            ("spmm-nested-i3-j2", "spmm", heavy, 3, "position", {"j": 2}),
            ("union-nested-i2-j3", "union", heavy, 2, "position-contiguous", {"j": 3}),
            ("sddmm-nested-i2-j3", "sddmm-ikj", heavy, 2, "position", {"j": 3}),
            ("intersect3-nested-i2-j5", "intersect3-kj", heavy, 2, "position", {"j": 5})):
        yield (name, *compile_position(kernel, A, lanes, partition, seed=lanes, inner=inner))


CASES = list(_cases())
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("backend,name,graph,inputs,expected", over(
    CASES, IDS, only={"hls": ["spmm-4", "sddmm-4", "spmv-8-on-2-nonzeros",
                              "spmm-nested-i3-j2", "intersect3-nested-i2-j5"],
                      "rtl-icarus": ["spmv-3", "spmm-4", "sddmm-4", "union-2",
                                     "spmm-nested-i3-j2", "sddmm-nested-i2-j3"],
                      "rtl-verilator": ["sddmm-4"]}), indirect=["backend"])
def test_position_lanes_match_model_and_numpy(backend, name, graph, inputs, expected):
    backend.check(graph, inputs, expected, configs=CONFIGS)


def test_cases_deal_interleaved_windows_and_split_a_row():
    """The cases exercise what they are named for: several windows a lane, a row that
    two lanes share (its partials added by the lane reductions)."""
    name, graph = CASES[1][0], CASES[1][1]
    splits = [n for n in graph.nodes.values() if n.op == "position_split"]
    assert max(len(position_windows(n.params)) for n in splits) > 2, name
    assert any(n.op == "lane_combine2" for n in graph.nodes.values())
    res = simulate(graph, CASES[1][2])
    X = np.asarray(CASES[1][3]["X"])
    np.testing.assert_allclose(res.dense("X"), X, rtol=1e-5, atol=1e-5)


# -- the primitives ---------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(cuts=st.lists(st.integers(0, 40), min_size=2, max_size=8),
       positions=st.lists(st.integers(0, 45), max_size=20))
def test_position_split_keeps_exactly_the_positions_in_its_windows(cuts, positions):
    cuts = sorted(cuts)[: len(cuts) // 2 * 2]
    wins = list(zip(cuts[::2], cuts[1::2], strict=True))
    params = {"lo": wins[0][0], "hi": wins[0][1],
              "windows": ",".join(f"{lo}:{hi}" for lo, hi in wins[1:])}
    run = run_primitive("position_split", {"crd_in": [*range(len(positions)), S0, D],
                                           "ref_in": [*range(len(positions)), S0, D],
                                           "pos_in": [*positions, S0, D]}, params=params)
    kept = [k for k, p in enumerate(positions) if any(lo <= p < hi for lo, hi in wins)]
    assert run.tokens["crd"] == [*kept, S0, D]
    assert run.tokens["ref"] == [*kept, S0, D]


@pytest.mark.parametrize("windows,what", [("5:3", "lo <= hi"), ("2:4", "previous"),
                                          ("x", "lo:hi")])
def test_position_split_refuses_bad_windows(windows, what):
    with pytest.raises(ValueError, match=what):
        position_windows({"lo": 0, "hi": 3, "windows": windows})


def test_lane_combine2_writes_a_token_every_cycle_across_fibers():
    """The fold: a copied fiber's closing stop is popped with the next outer step, so the
    inner output runs without gaps (lane_merge2 spends a cycle on each closing stop)."""
    ins = {"crd1_a": [0, 2, S0, D], "crd0_a": [5, 6, S0, 1, 7, S1, D],
           "val_a": [1., 2., S0, 3., 4., S1, D],
           "crd1_b": [2, 3, S0, D], "crd0_b": [0, 7, S0, 6, S1, D],
           "val_b": [2., 5., S0, 9., S1, D]}
    run = run_primitive("lane_combine2", ins)
    assert run.tokens["crd1"] == [0, 2, 3, S0, D]
    assert run.tokens["crd0"] == [5, 6, S0, 0, 1, 7, S0, 6, S1, D]
    assert run.tokens["val"] == [1., 2., S0, 2., 3., 9., S0, 9., S1, D]
    inner = run.cycles["crd0"][:-1]
    assert inner == list(range(inner[0], inner[0] + len(inner)))
    merge = run_primitive("lane_merge2", {**ins, "crd1_b": [3, S0, D],
                                          "crd0_b": [6, S1, D], "val_b": [9., S1, D]})
    gaps = np.diff(merge.cycles["crd0"][:-1])
    assert gaps.max() > 1


# -- skewed random data on the reference and SystemC ------------------------------------

@pytest.mark.parametrize("backend", over([()], [""], backends=("python", "systemc")),
                         indirect=["backend"])
@pytest.mark.parametrize("kernel", sorted(KERNELS))
@settings(max_examples=4, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**16), lanes=st.sampled_from([2, 3, 5, 9]),
       hub=st.sampled_from([0.0, 0.3, 0.6]),
       partition=st.sampled_from(["position", "position-contiguous"]))
def test_position_lanes_on_skewed_data(backend, kernel, seed, lanes, hub, partition):
    A = skewed(np.random.default_rng(seed), 14, 12, 50, hub)
    graph, tensors, gold = compile_position(kernel, A, lanes, partition, seed)
    backend.check(graph, tensors, gold, configs={"python": [(2, None)],
                                                 "systemc": [(2, None)]})


def test_hierarchical_lanes_cut_positions_at_both_levels():
    """``par i=3, j=2`` on an SpMM: position lanes on ``i`` (windows of ``A``'s positions,
    a lane reduction tree), in each two ``j`` lanes cutting ``B``'s positions at ``j``
    (position splits, lane reductions: two lanes hold one ``j`` of a row); six innermost
    lanes reported."""
    name, graph, inputs, _ = CASES[IDS.index("spmm-nested-i3-j2")]
    ops = [n.op for n in graph.nodes.values()]
    assert ops.count("lane_combine2") == 2 and ops.count("lane_combine") == 3, name
    assert "lane_split" not in ops and "lane_merge" not in ops
    assert graph.meta["parallel"]["cut"] == {"i": "positions", "j": "positions"}
    report = lane_report(graph, simulate(graph, inputs))
    assert sorted(report.work) == [f"i{a}.j{b}" for a in range(3) for b in range(2)]


def test_a_union_at_the_nested_level_keeps_round_robin_lanes():
    """``B(k,j) + C(k,j)``: no operand holds every entry at ``j``, so the ``j`` lanes
    inside the position lanes deal its coordinates (lane splits, merges)."""
    name, graph, inputs, expected = CASES[IDS.index("union-nested-i2-j3")]
    ops = [n.op for n in graph.nodes.values()]
    assert ops.count("lane_combine2") == 1 and ops.count("lane_merge") == 4, name
    assert graph.meta["parallel"]["cut"] == {"i": "positions", "j": "coordinates"}
    np.testing.assert_allclose(simulate(graph, inputs).dense("X"), expected["X"],
                               rtol=1e-4, atol=1e-4)


#: expressions with a key at the nested level ``j`` (and the union, which has none)
NESTED = ("spmm", "sddmm-ikj", "intersect3-kj", "union")


@pytest.mark.parametrize("backend", over([()], [""], backends=("python", "systemc")),
                         indirect=["backend"])
@pytest.mark.parametrize("kernel", NESTED)
@settings(max_examples=3, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**16), lanes=st.sampled_from([2, 3]),
       inner=st.sampled_from([2, 3, 7]), hub=st.sampled_from([0.0, 0.5]),
       partition=st.sampled_from(["position", "position-contiguous"]),
       fmt=st.sampled_from(["csr", "dcsr"]))
def test_two_level_position_lanes_on_skewed_data(backend, kernel, seed, lanes, inner, hub,
                                                 partition, fmt):
    """Position lanes on ``i`` and ``j`` (7 ``j`` lanes: more than a row of ``B`` holds),
    the sparse operands stored with a dense or a compressed outer level."""
    A = skewed(np.random.default_rng(seed), 12, 10, 40, hub)
    if kernel == "sddmm-ikj":  # its key U is dense: A's compressed i would locate it
        fmt = "csr"
    graph, tensors, gold = compile_position(kernel, A, lanes, partition, seed,
                                            inner={"j": inner}, fmt=fmt)
    backend.check(graph, tensors, gold, configs={"python": [(2, None)],
                                                 "systemc": [(2, None)]})


def test_interleaved_windows_balance_a_heavy_row():
    rng = np.random.default_rng(3)
    A = skewed(rng, 60, 60, 400, 0.4)
    graph, tensors, gold = compile_position("spmm", A, 4, "position", 3, min_window=8)
    res = simulate(graph, tensors)
    np.testing.assert_allclose(res.dense("X"), gold["X"], rtol=1e-4, atol=1e-4)
    assert lane_report(graph, res).imbalance < 1.1
    assert graph.meta["parallel"]["partition"] == "position"


@pytest.mark.parametrize("backend", over([()], [""], backends=("python", "systemc")),
                         indirect=["backend"])
def test_interleaved_windows_on_a_compressed_outer_level(backend):
    """DCSR key: the lanes' row ranges are positions of A's compressed level 0, not rows."""
    rng = np.random.default_rng(5)
    A = sp.vstack([skewed(rng, 20, 20, 80, 0.3), sp.csr_matrix((10, 20), dtype=np.float32)])
    A = sp.csr_matrix(A[np.r_[20:25, 0:20, 25:30]], dtype=np.float32)  # empty rows first
    x = rng.random(20, dtype=np.float32)
    with mock.patch.object(position, "MIN_WINDOW", 2):
        g = compile_expression("y(i) = A(i,k) * x(k)", {"A": "dcsr"},
                               {"A": A.shape, "x": x.shape}, order="i,k", par={"i": 3},
                               partition="position", stats={"A": A, "x": x})
    backend.check(g, {"A": A, "x": x}, {"y": A @ x}, configs=CONFIGS)


def test_a_key_located_from_another_operands_coordinates_is_one_clear_error():
    """SDDMM in order ``i,k,j`` with the mask ``A`` stored DCSR: the key ``U``'s row is
    located from ``A``'s coordinates of ``i``, after the split it would key."""
    with pytest.raises(LoweringError, match="located from another operand's coordinates"):
        compile_position("sddmm-ikj", skewed(np.random.default_rng(1), 12, 10, 40, 0.3),
                         2, "position", 1, fmt="dcsr")
