"""Per-primitive token sequences (SAM paper examples) and cycle-exact small cases."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from ir import CATALOGUE, DONE, EMPTY, REPEAT, TensorSpec, stop
from sim_models.python import ACTORS, run_primitive

S0, S1, S2, S3, D, N, R = stop(0), stop(1), stop(2), stop(3), DONE, EMPTY, REPEAT


def test_every_catalogue_primitive_has_a_python_actor():
    assert set(CATALOGUE) <= set(ACTORS)


def _csr_level1():
    """A 4x4 matrix whose level-1 fibers are seg [0,3,4,6], crd [0,2,3,0,2,3] (+ 1 empty)."""
    dense = np.zeros((4, 4), dtype=np.float32)
    for r, cols in enumerate([[0, 2, 3], [0], [2, 3], []]):
        dense[r, cols] = 1.0
    return dense


def test_compressed_scanner_matches_the_sam_paper_example():
    run = run_primitive("scan_compressed", {"ref_in": [0, 0, S0, 1, S0, 2, S1, D]},
                        params={"tensor": "B", "level": 1},
                        tensors={"B": _csr_level1()},
                        tensor_specs=[TensorSpec("B", (4, 4), "dc")])
    assert run.tokens["crd"] == [0, 2, 3, S0, 0, 2, 3, S1, 0, S1, 2, 3, S2, D]
    assert run.tokens["ref"] == [0, 1, 2, S0, 0, 1, 2, S1, 3, S1, 4, 5, S2, D]


def test_empty_fiber_emits_only_its_stop():
    run = run_primitive("scan_compressed", {"ref_in": [3, 1, S0, D]},
                        params={"tensor": "B", "level": 1}, tensors={"B": _csr_level1()},
                        tensor_specs=[TensorSpec("B", (4, 4), "dc")])
    assert run.tokens["crd"] == [S0, 0, S1, D]


def test_dense_scanner_refs_are_parent_times_size_plus_crd():
    run = run_primitive("scan_dense", {"ref_in": [0, 2, S0, D]},
                        params={"tensor": "B", "level": 1},
                        tensors={"B": np.ones((3, 3), np.float32)},
                        tensor_specs=[TensorSpec("B", (3, 3), "dd")])
    assert run.tokens["crd"] == [0, 1, 2, S0, 0, 1, 2, S1, D]
    assert run.tokens["ref"] == [0, 1, 2, S0, 6, 7, 8, S1, D]


def test_scanner_one_token_per_cycle_at_depth_2_and_half_rate_at_depth_1():
    specs, tens = [TensorSpec("B", (1, 8), "dd")], {"B": np.ones((1, 8), np.float32)}
    fast = run_primitive("scan_dense", {"ref_in": [0, D]}, params={"tensor": "B", "level": 1},
                         tensors=tens, tensor_specs=specs, depth=2)
    assert fast.cycles["crd"] == list(range(10))  # 8 crds, S0, D: one per cycle from 0
    slow = run_primitive("scan_dense", {"ref_in": [0, D]}, params={"tensor": "B", "level": 1},
                         tensors=tens, tensor_specs=specs, depth=1)
    assert slow.cycles["crd"] == list(range(0, 20, 2))


def test_repsig_and_repeater():
    sig = run_primitive("repsig", {"crd": [0, 1, 2, S0, D]})
    assert sig.tokens["repsig"] == [R, R, R, S0, D]
    rep = run_primitive("repeat", {"ref_in": [7, D], "repsig": [R, R, R, S0, D]})
    assert rep.tokens["ref"] == [7, 7, 7, S0, D]


def test_repeater_merges_nested_stops_and_empty_parents():
    # crd fibers [a a] [b] at level 0 inside one parent, then an empty parent
    rep = run_primitive("repeat", {"ref_in": [10, 11, S0, S1, D],
                                   "repsig": [R, R, S0, R, S1, S2, D]})
    assert rep.tokens["ref"] == [10, 10, S0, 11, S1, S2, D]


def test_broadcast_repeats_float_values_like_repeat_repeats_refs():
    run = run_primitive("broadcast", {"val_in": [1.5, D], "repsig": [R, R, R, S0, D]})
    assert run.tokens["val"] == [1.5, 1.5, 1.5, S0, D]
    assert run.cycles["val"] == [0, 1, 2, 3, 4]  # one per cycle, like repeat


def test_broadcast_merges_nested_stops_and_empty_parents():
    # one value per level-0 fiber: fibers [x x] [y] in one parent, then an empty parent
    # (its S1 on val_in stands for the fiber-less parent, as a reducer emits it)
    run = run_primitive("broadcast", {"val_in": [1.5, -2.25, S0, S1, D],
                                      "repsig": [R, R, S0, R, S1, S2, D]})
    assert run.tokens["val"] == [1.5, 1.5, S0, -2.25, S1, S2, D]
    # an empty fiber (repsig S0 at once) pops its value and emits only the stop; N repeats
    run = run_primitive("broadcast", {"val_in": [0.5, N, 4.0, S0, D],
                                      "repsig": [S0, R, R, S0, R, S1, D]})
    assert run.tokens["val"] == [S0, N, N, S0, 4.0, S1, D]
    # the example of docs/primitives.md
    run = run_primitive("broadcast", {"val_in": [4.0, 0.5, S0, D],
                                      "repsig": [R, R, S0, R, S1, D]})
    assert run.tokens["val"] == [4.0, 4.0, S0, 0.5, S1, D]


def test_broadcast_of_int32_values():
    big = 2**31 - 1
    run = run_primitive("broadcast", {"val_in": [-7, big, S0, D],
                                      "repsig": [R, S0, R, R, S1, D]}, dtype="int32")
    assert run.tokens["val"] == [-7, S0, big, big, S1, D]


def test_broadcast_rejects_a_control_token_under_r():
    with pytest.raises(Exception, match="repeat signal R but val_in holds S0"):
        run_primitive("broadcast", {"val_in": [S0, D], "repsig": [R, S0, D]})


def test_intersect_and_union():
    a = {"crd_a": [0, 2, 3, S0, D], "ref_a": [0, 1, 2, S0, D]}
    b = {"crd_b": [1, 2, 3, 4, S0, D], "ref_b": [5, 6, 7, 8, S0, D]}
    i = run_primitive("intersect", {**a, **b})
    assert i.tokens["crd"] == [2, 3, S0, D]
    assert i.tokens["ref_a"] == [1, 2, S0, D]
    assert i.tokens["ref_b"] == [6, 7, S0, D]
    u = run_primitive("union", {**a, **b})
    assert u.tokens["crd"] == [0, 1, 2, 3, 4, S0, D]
    assert u.tokens["ref_a"] == [0, N, 1, 2, N, S0, D]
    assert u.tokens["ref_b"] == [N, 5, 6, 7, 8, S0, D]


def test_intersect_rejects_misaligned_stops():
    with pytest.raises(Exception, match="misaligned streams"):
        run_primitive("intersect", {"crd_a": [S0, D], "ref_a": [S0, D],
                                    "crd_b": [S1, D], "ref_b": [S1, D]})


def test_array_loads_n_as_zero():
    run = run_primitive("array", {"ref": [1, N, S0, D]}, params={"tensor": "v"},
                        tensors={"v": np.array([5.0, 6.0], np.float32)},
                        tensor_specs=[TensorSpec("v", (2,), "d")])
    assert run.tokens["val"] == [6.0, 0.0, S0, D]


@pytest.mark.parametrize("op,expect", [("add", 5.0), ("sub", -1.0), ("mul", 6.0),
                                       ("div", 2 / 3), ("max", 3.0), ("min", 2.0)])
def test_alu_ops_round_to_float32(op, expect):
    run = run_primitive("alu", {"a": [2.0, S0, D], "b": [3.0, S0, D]}, params={"op": op})
    assert run.tokens["val"][0] == float(np.float32(expect))
    assert run.tokens["val"][1:] == [S0, D]


def test_int32_alu_wraps_and_truncates():
    run = run_primitive("alu", {"a": [2**31 - 1, -7, 5, D], "b": [1, 2, 0, D]},
                        params={"op": "add"}, dtype="int32")
    assert run.tokens["val"][0] == -(2**31)
    div = run_primitive("alu", {"a": [-7, 5, -(2**31), D], "b": [2, 0, -1, D]},
                        params={"op": "div"}, dtype="int32")
    assert div.tokens["val"][:3] == [-3, 0, -(2**31)]  # INT32_MIN / -1 wraps
    div_const = run_primitive("unary", {"a": [-(2**31), 9, D]},
                              params={"op": "div_const", "const": -1.0}, dtype="int32")
    assert div_const.tokens["val"][:2] == [-(2**31), -9]


def test_reducer_lowers_stops_and_uses_outer_refs_for_empty_fibers():
    # fibers: [1,2] [] [3] | parent with no fibers | [4]
    run = run_primitive("reduce", {"val_in": [1.0, 2.0, S0, S0, 3.0, S1, S2, 4.0, S2, D],
                                   "outer": [0, 1, 2, S0, S1, 3, S1, D]})
    assert run.tokens["val"] == [3.0, 0.0, 3.0, S0, S1, 4.0, S1, D]


def test_max_reducer_identity_is_minus_infinity():
    run = run_primitive("reduce", {"val_in": [-5.0, -2.0, S0, S1, D], "outer": [0, 1, S0, D]},
                        params={"op": "max"})
    assert run.tokens["val"] == [-2.0, float("-inf"), S0, D]


def test_spacc_sums_partial_rows_sorted():
    run = run_primitive("spacc", {"crd_in": [3, 1, S0, 1, 2, S1, S1, D],
                                  "val_in": [1.0, 2.0, S0, 3.0, 4.0, S1, S1, D]})
    assert run.tokens["crd"] == [1, 2, 3, S0, S0, D]
    assert run.tokens["val"] == [5.0, 4.0, 1.0, S0, S0, D]


def test_spacc2_sums_sub_matrices_and_emits_rows_sorted():
    # outer fiber 1: rows i=2:[j1=1.0], i=0:[j0=2.0]; outer fiber 2: i=2:[j1=3.0, j3=4.0]
    run = run_primitive("spacc2", {
        "crd1_in": [2, 0, S0, 2, S1, D],
        "crd0_in": [1, S0, 0, S1, 1, 3, S2, D],
        "val_in": [1.0, S0, 2.0, S1, 3.0, 4.0, S2, D]})
    assert run.tokens["crd1"] == [0, 2, S0, D]
    assert run.tokens["crd0"] == [0, S0, 1, 3, S1, D]
    assert run.tokens["val"] == [2.0, S0, 4.0, 4.0, S1, D]


def test_spacc2_empty_group_emits_only_the_lowered_stops():
    run = run_primitive("spacc2", {"crd1_in": [S1, D], "crd0_in": [S2, D], "val_in": [S2, D]})
    assert run.tokens == {"crd1": [S0, D], "crd0": [S1, D], "val": [S1, D]}


def test_spacc3_sums_order3_sub_tensors_and_emits_them_sorted():
    # k=0: i1 -> j0:[l2=1.0], j2:[l0=2.0]; i0 -> j1:[l1=3.0]; k=1: i1 -> j2:[l0=4.0, l3=5.0]
    run = run_primitive("spacc3", {
        "crd2_in": [1, 0, S0, 1, S1, D],
        "crd1_in": [0, 2, S0, 1, S1, 2, S2, D],
        "crd0_in": [2, S0, 0, S1, 1, S2, 0, 3, S3, D],
        "val_in": [1.0, S0, 2.0, S1, 3.0, S2, 4.0, 5.0, S3, D]})
    assert run.tokens == {"crd2": [0, 1, S0, D], "crd1": [1, S0, 0, 2, S1, D],
                          "crd0": [1, S1, 2, S0, 0, 3, S2, D],
                          "val": [3.0, S1, 1.0, S0, 6.0, 5.0, S2, D]}


def test_spacc3_empty_group_emits_only_the_lowered_stops():
    run = run_primitive("spacc3", {"crd2_in": [S1, D], "crd1_in": [S2, D],
                                   "crd0_in": [S3, D], "val_in": [S3, D]})
    assert run.tokens == {"crd2": [S0, D], "crd1": [S1, D], "crd0": [S2, D],
                          "val": [S2, D]}


def test_spacc3_rejects_a_stop_that_does_not_match_the_level_above():
    with pytest.raises(Exception, match=r"misaligned streams: crd0_in holds S2, crd1_in S0"):
        run_primitive("spacc3", {"crd2_in": [1, S0, D], "crd1_in": [0, S0, D],
                                 "crd0_in": [2, S2, D], "val_in": [1.0, S2, D]})


def test_crddrop_sam_example():
    run = run_primitive("crddrop", {"outer_in": [0, 1, S0, D], "inner_in": [1, S0, S1, D]})
    assert run.tokens["outer"] == [0, S0, D]
    assert run.tokens["inner"] == [1, S1, D]


def test_crdhold_sam_example():
    run = run_primitive("crdhold", {"outer_in": [0, 1, 2, S0, D],
                                    "inner_in": [0, 2, S0, 2, S0, 2, S1, D]})
    assert run.tokens["outer"] == [0, 0, S0, 1, S0, 2, S1, D]
    assert run.tokens["inner"] == [0, 2, S0, 2, S0, 2, S1, D]


def test_unary_ops():
    run = run_primitive("unary", {"a": [-1.0, 4.0, S0, D]}, params={"op": "relu"})
    assert run.tokens["val"] == [0.0, 4.0, S0, D]
    run = run_primitive("unary", {"a": [4.0, D]}, params={"op": "rsqrt"})
    assert run.tokens["val"] == [0.5, D]
    run = run_primitive("unary", {"a": [3.0, D]}, params={"op": "mul_const", "const": 2.5})
    assert run.tokens["val"] == [7.5, D]


# -- locate: a coordinate stream addresses a dense level --------------------------------

def _locate(crd, ref, shape=(3, 4), **kw):
    return run_primitive("locate", {"crd_in": crd, "ref_in": ref},
                         params={"tensor": "W", "level": 1},
                         tensors={"W": np.ones(shape, np.float32)},
                         tensor_specs=[TensorSpec("W", shape, "dd")], **kw)


def test_locate_refs_are_parent_times_size_plus_crd_one_per_cycle():
    run = _locate([1, 3, S0, 0, S0, S1, 2, S1, D], [0, 0, S0, 2, S0, S1, 1, S1, D])
    assert run.tokens["ref"] == [1, 3, S0, 8, S0, S1, 6, S1, D]
    # latency one, initiation interval one: token n (visible at n) is written at cycle n
    assert run.cycles["ref"] == list(range(9))


def test_locate_passes_n_and_half_rate_at_depth_1():
    run = _locate([N, 2, S0, D], [1, N, S0, D], depth=1)
    assert run.tokens["ref"] == [N, N, S0, D]
    assert run.cycles["ref"] == [0, 2, 4, 6]


@pytest.mark.parametrize("crd, ref, what", [
    ([4, D], [0, D], "coordinate 4 is outside"),
    ([0, D], [3, D], "reference 3 is outside"),
    ([0, S0, D], [S0, D], "misaligned"),
    ([S0, D], [S1, D], "misaligned"),
])
def test_locate_rejects_bad_streams(crd, ref, what):
    with pytest.raises(RuntimeError, match=what):
        _locate(crd, ref)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 7), st.floats(0.0, 1.0), st.integers(0, 2**31))
def test_locate_gathers_a_dense_operand_at_a_sparse_pattern(m, n, density, seed):
    """``X = A .* W`` with A CSR and W dense: W's values at A's pattern, against scipy."""
    rng = np.random.default_rng(seed)
    a = sp.random(m, n, density=density, format="csr", random_state=rng, dtype=np.float32)
    a.sort_indices()
    w = rng.standard_normal((m, n)).astype(np.float32)
    crd, ref = [], []
    for i in range(m):  # A's level-1 crds, and W's level-0 ref i repeated over each fiber
        cols = a.indices[a.indptr[i]:a.indptr[i + 1]].tolist()
        crd += cols + [stop(1 if i == m - 1 else 0)]
        ref += [i] * len(cols) + [stop(1 if i == m - 1 else 0)]
    run = run_primitive("locate", {"crd_in": crd + [D], "ref_in": ref + [D]},
                        params={"tensor": "W", "level": 1}, tensors={"W": w},
                        tensor_specs=[TensorSpec("W", (m, n), "dd")])
    pos = [t for t in run.tokens["ref"] if isinstance(t, int)]
    got = a.data * w.ravel()[pos]
    np.testing.assert_array_equal(got, a.multiply(w).tocsr().data if a.nnz else got[:0])
    assert [t for t in run.tokens["ref"] if not isinstance(t, int)] == \
        [t for t in crd if not isinstance(t, int)] + [D]


def test_intersect_n_rows_as_documented():
    """A crd against N pops both sides (one firing); N against a crd pops side a only."""
    run = run_primitive("intersect", {"crd_a": [5, S0, D], "ref_a": [1, S0, D],
                                      "crd_b": [N, S0, D], "ref_b": [N, S0, D]})
    assert run.tokens["crd"] == [S0, D] and run.cycles["crd"] == [1, 2]
    run = run_primitive("intersect", {"crd_a": [N, S0, D], "ref_a": [N, S0, D],
                                      "crd_b": [3, S0, D], "ref_b": [1, S0, D]})
    assert run.tokens["crd"] == [S0, D] and run.cycles["crd"] == [2, 3]
