"""Hand-built kernel graphs on the reference model, against numpy, over random inputs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ir import examples
from sim_models.python import simulate

DIM = st.integers(1, 6)
DENSITY = st.sampled_from([0.0, 0.2, 0.5, 1.0])
MATRIX_FMT = st.sampled_from(["dc", "cc", "dd"])
# depth 1 deadlocks these graphs by design (see test_depth_one_deadlocks_spmv)
DEPTH = st.sampled_from([2, 3, 4, None])
DTYPE = st.sampled_from(["float32", "int32"])
SETTINGS = settings(max_examples=80, deadline=None)


def _rand(seed: int, shape, density: float, dtype: str) -> np.ndarray:
    """Small integer values (exact in float32 sums) with the given fraction of nonzeros."""
    rng = np.random.default_rng(seed)
    vals = rng.integers(-4, 5, size=shape)
    vals[vals == 0] = 1
    keep = rng.random(shape) < density
    return (vals * keep).astype(np.float32 if dtype == "float32" else np.int32)


def _check(result, name: str, gold: np.ndarray) -> None:
    np.testing.assert_array_equal(result.dense(name), gold)


@SETTINGS
@given(m=DIM, n=DIM, d=DENSITY, fmt=MATRIX_FMT, depth=DEPTH, dtype=DTYPE,
       seed=st.integers(0, 2**16))
def test_spmv(m, n, d, fmt, depth, dtype, seed):
    B, c = _rand(seed, (m, n), d, dtype), _rand(seed + 1, (n,), 1.0, dtype)
    res = simulate(examples.spmv(m, n, fmt, depth, dtype), {"B": B, "c": c})
    _check(res, "x", B @ c)


@SETTINGS
@given(m=DIM, k=DIM, n=DIM, d=DENSITY, fmt=MATRIX_FMT, depth=DEPTH, dtype=DTYPE,
       seed=st.integers(0, 2**16))
def test_spmm_inner_product_order(m, k, n, d, fmt, depth, dtype, seed):
    _check_spmm(examples.spmm_ijk(m, k, n, fmt, depth, dtype), seed, d)


@SETTINGS
@given(m=DIM, k=DIM, n=DIM, d=DENSITY, bf=MATRIX_FMT, cf=MATRIX_FMT, depth=DEPTH,
       dtype=DTYPE, seed=st.integers(0, 2**16))
def test_spmm_gustavson_order_with_sparse_accumulator(m, k, n, d, bf, cf, depth, dtype, seed):
    _check_spmm(examples.spmm_ikj(m, k, n, bf, cf, depth, dtype), seed, d)


@SETTINGS
@given(m=DIM, k=DIM, n=DIM, d=DENSITY, depth=DEPTH, dtype=DTYPE, seed=st.integers(0, 2**16))
def test_spmm_outer_product_order_with_matrix_accumulator(m, k, n, d, depth, dtype, seed):
    _check_spmm(examples.spmm_kij(m, k, n, depth, dtype), seed, d)


def _check_spmm(graph, seed: int, density: float) -> None:
    """X = B @ C on random B, C of the graph's shapes and dtype."""
    shape_b, shape_c = graph.tensors["B"].shape, graph.tensors["C"].shape
    B = _rand(seed, shape_b, density, graph.dtype)
    C = _rand(seed + 1, shape_c, density, graph.dtype)
    _check(simulate(graph, {"B": B, "C": C}), "X", B @ C)


@SETTINGS
@given(m=DIM, n=DIM, k=DIM, d=DENSITY, fmt=MATRIX_FMT, depth=DEPTH, dtype=DTYPE,
       seed=st.integers(0, 2**16))
def test_sddmm(m, n, k, d, fmt, depth, dtype, seed):
    B = _rand(seed, (m, n), d, dtype)
    C, D = _rand(seed + 1, (m, k), 1.0, dtype), _rand(seed + 2, (k, n), 1.0, dtype)
    res = simulate(examples.sddmm(m, n, k, fmt, depth, dtype), {"B": B, "C": C, "D": D})
    _check(res, "X", B * (C @ D))


@SETTINGS
@given(m=DIM, n=DIM, d=DENSITY, op=st.sampled_from(["add", "mul", "sub", "max"]),
       af=MATRIX_FMT, bf=MATRIX_FMT, of=st.sampled_from(["dc", "cc"]), depth=DEPTH,
       dtype=DTYPE, seed=st.integers(0, 2**16))
def test_elementwise_union_and_intersection(m, n, d, op, af, bf, of, depth, dtype, seed):
    A, B = _rand(seed, (m, n), d, dtype), _rand(seed + 1, (m, n), d, dtype)
    res = simulate(examples.elementwise(m, n, op, af, bf, of, depth, dtype), {"A": A, "B": B})
    gold = {"add": A + B, "sub": A - B, "mul": A * B}.get(op)
    if op == "max":  # a missing entry is 0 only where the other side has one
        gold = np.where((A != 0) & (B != 0), np.maximum(A, B),
                        np.where(A != 0, np.maximum(A, 0), np.maximum(B, 0)))
    _check(res, "X", gold)


@SETTINGS
@given(m=DIM, n=DIM, p=DIM, d=DENSITY, fmt=st.sampled_from(["dcc", "ccc", "ddc", "cdc", "ddd"]),
       depth=DEPTH, dtype=DTYPE, seed=st.integers(0, 2**16))
def test_ttv_three_tensor_kernel(m, n, p, d, fmt, depth, dtype, seed):
    B, c = _rand(seed, (m, n, p), d, dtype), _rand(seed + 1, (p,), 1.0, dtype)
    res = simulate(examples.ttv(m, n, p, fmt, depth, dtype), {"B": B, "c": c})
    _check(res, "X", np.einsum("ijk,k->ij", B, c))


@pytest.mark.parametrize("kernel", ["spmv", "spmm_ijk", "spmm_ikj", "sddmm"])
def test_functional_mode_gives_the_same_outputs(kernel):
    rng = np.random.default_rng(1)
    shapes = {"spmv": (7, 9), "spmm_ijk": (7, 5, 6), "spmm_ikj": (7, 5, 6), "sddmm": (7, 6, 5)}
    g = examples.KERNELS[kernel](*shapes[kernel])
    inputs = {t.name: (rng.random(t.shape) * (rng.random(t.shape) < 0.4)).astype(np.float32)
              for t in g.tensors.values() if t.role == "input"}
    timed, fast = simulate(g, inputs), simulate(g, inputs, functional=True)
    (out,) = [t.name for t in g.tensors.values() if t.role == "output"]
    np.testing.assert_array_equal(timed.dense(out), fast.dense(out))
    assert fast.cycles is None and timed.cycles > 0


def test_depth_one_deadlocks_spmv():
    """The reducer holds a row's ref on ``outer`` until the row closes, and the row's
    scanner needs the *next* ref to close it (stop merging): with one slot, the shared
    producer can never write that next ref. Hardware with depth-1 FIFOs would hang too."""
    from sim_models.python import DeadlockError

    B = np.ones((2, 2), np.float32)
    with pytest.raises(DeadlockError) as info:
        simulate(examples.spmv(2, 2, "dc", depth=1), {"B": B, "c": np.ones(2, np.float32)})
    assert ("Bi", "Bi.ref->red.outer", "output full (1/1 tokens unread)") in info.value.blocked
