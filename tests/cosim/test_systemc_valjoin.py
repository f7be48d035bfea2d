"""The value joiners (``intersect_val``, ``union_val``) in SystemC against the Python model:
token for token and cycle for cycle at several FIFO depths and with the HBM memory
system, and against numpy; value payloads (-0.0, NaN, int32 extremes) pass unchanged; a
misaligned stream fails with the model's message.

Each graph's configurations run as one batch (one forked SystemC child).
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from _parity import assert_same_result, python_run
from _valjoin_graphs import (
    ALU_OF,
    expected,
    matrix_expected,
    matrix_graph,
    rand_sparse,
    vector_graph,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from cosim import SystemCBackend, SystemCRun
from ir import CompressedLevel, FiberTree, Graph, GraphBuilder, load_hw
from sim_models.python import DeadlockError, SimulationError, simulate

pytestmark = pytest.mark.cosim

JOINS = sorted(ALU_OF)
DTYPES = ["float32", "int32"]
DEPTHS = (1, 2, 4, None)
HBM = load_hw("hbm2-u280")
#: (depth, hardware) of every check: the contract's depths on ideal memory, and HBM
CONFIGS = [(d, None) for d in DEPTHS] + [(2, HBM), (None, HBM)]
N = 8
#: named vector pairs (a, b) as index → value; the coordinate patterns that matter
VECTORS = {
    "both_empty": ({}, {}),
    "a_empty": ({}, {1: 2, 5: -3}),
    "b_empty": ({0: 4, 7: -1}, {}),
    "all_overlap": ({0: 1, 3: -2, 7: 5}, {0: 3, 3: 4, 7: -6}),
    "disjoint": ({0: 1, 2: -2, 4: 5}, {1: 3, 3: 4, 7: -6}),
    "interleaved": ({1: 2, 2: 3, 6: -4}, {0: 5, 2: -1, 5: 2, 6: 6}),
}



def _check(systemc: SystemCBackend, graph: Graph, inputs: dict, want: dict | None = None
           ) -> None:
    """Every configuration of ``graph`` equals the Python model; outputs equal ``want``."""
    results = systemc.run_batch([SystemCRun(graph, inputs, trace=True, depth=d, hw=hw,
                                            mem_trace=hw is not None) for d, hw in CONFIGS])
    for (depth, hw), sc in zip(CONFIGS, results, strict=True):
        where = f"{graph.name} ({graph.dtype}, depth={depth}, hw={hw and hw.name})"
        assert_same_result(python_run(graph, inputs, depth, hw), sc, where)
        if isinstance(sc, DeadlockError) and depth == 1 and "drop" in graph.nodes:
            continue  # a crddrop's outer edge holds one token: the graph's own cycle
        for name, arr in (want or {}).items():
            np.testing.assert_array_equal(sc.dense(name), arr, err_msg=where)


def _dense(entries: dict[int, int], dtype: str) -> np.ndarray:
    x = np.zeros(N, dtype)
    for i, v in entries.items():
        x[i] = v
    return x


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("join", JOINS)
@pytest.mark.parametrize("case", sorted(VECTORS))
def test_vector_matches_model_and_numpy(systemc, case, join, dtype):
    a, b = (_dense(v, dtype) for v in VECTORS[case])
    _check(systemc, vector_graph(join, dtype, N), {"a": a, "b": b},
           {"x": expected(join, a, b)})


#: (outer join of the rows, storage of A and B): dense rows share one scan
MATRIX_CASES = [("dense", "dc"), ("intersect", "cc"), ("intersect", "dc"), ("union", "cc")]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("join", JOINS)
@pytest.mark.parametrize(("outer", "fmt"), MATRIX_CASES)
def test_matrix_matches_model_and_numpy(systemc, outer, fmt, join, dtype):
    """Two levels: S0 (row ends) and S1 pass through the joiner, as do empty rows."""
    rng = np.random.default_rng(zlib.crc32(f"{outer}{fmt}{join}{dtype}".encode()))
    a, b = rand_sparse(rng, (5, 6), 0.4, dtype), rand_sparse(rng, (5, 6), 0.5, dtype)
    a[1], b[3] = 0, 0  # an empty row on each side
    _check(systemc, matrix_graph(join, dtype, 5, 6, outer, fmt), {"A": a, "B": b},
           matrix_expected(join, outer, fmt, a, b))



def _passthrough_graph(join: str, dtype: str, n: int) -> Graph:
    """x = the joiner's val_a straight into a value writer: the payloads as they left."""
    g = GraphBuilder(f"{join}_passthrough", dtype)
    for t in ("a", "b"):
        g.tensor(t, (n,), "c")
        g.node(f"r{t}", "root")
        g.node(f"{t}i", "scan_compressed", tensor=t, level=0)
        g.edge(f"r{t}.ref", f"{t}i.ref_in")
    g.tensor("x", (n,), "c", role="output")
    g.node("av", "array", tensor="a")
    g.node("j", join)
    g.node("xi", "level_writer", tensor="x", level=0)
    g.node("xv", "value_writer", tensor="x")
    for s, d in [("ai.ref", "av.ref"), ("ai.crd", "j.crd_a"), ("av.val", "j.val_a"),
                 ("bi.crd", "j.crd_b"), ("bi.ref", "j.ref_b"), ("j.crd", "xi.crd"),
                 ("j.val_a", "xv.val")]:
        g.edge(s, d)
    return g.build()


_F_SPECIAL = np.array([-0.0, np.nan, np.inf, -np.inf, 1e-40, -3.0e38, 0.1], np.float32)
_F_SPECIAL[1] = np.uint32(0x7FC12345).view(np.float32)  # a quiet NaN with a payload
_I_SPECIAL = np.array([-2**31, 2**31 - 1, -1, 1, -7, 65536, -65537], np.int32)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("join", JOINS)
def test_value_payloads_pass_unchanged(systemc, join, dtype):
    """-0.0, a NaN's payload, infinities, subnormals and int32 extremes reach the writer
    bit for bit (the values sit at every coordinate of a; b covers every other one)."""
    a = _F_SPECIAL if dtype == "float32" else _I_SPECIAL
    n = len(a)
    b = np.zeros_like(a)
    b[::2] = 1
    # stored explicitly: -0.0 (and 0) would not survive a dense array's compression
    tree = FiberTree((n,), "c", [CompressedLevel([0, n], np.arange(n))], a, dtype=dtype)
    g = _passthrough_graph(join, dtype, n)
    inputs = {"a": tree, "b": b}
    results = systemc.run_batch([SystemCRun(g, inputs, trace=True, depth=d) for d in DEPTHS])
    for depth, sc in zip(DEPTHS, results, strict=True):
        where = f"{g.name} ({dtype}, depth={depth})"
        assert_same_result(python_run(g, inputs, depth, None), sc, where)
        got = sc.outputs["x"]
        keep = np.flatnonzero(b) if join == "intersect_val" else np.arange(len(a))
        assert list(got.levels[0].crd) == list(keep), where
        bits = np.asarray(got.vals).astype(dtype).view(np.uint32)
        np.testing.assert_array_equal(bits, a[keep].view(np.uint32), err_msg=where)


def _misaligned_graph(join: str, dtype: str) -> Graph:
    """Side a from a one-row matrix (its end is S1), side b from a vector (S0); val_a
    through a relu (which reads union_val's N as 0) into x."""
    g = GraphBuilder(f"{join}_misaligned", dtype)
    g.tensor("A", (1, 3), "dc")
    g.tensor("b", (3,), "c")
    g.tensor("x", (3,), "c", role="output")
    for nid, op, kw in [("rA", "root", {}), ("rb", "root", {}),
                        ("Ai", "scan_dense", {"tensor": "A", "level": 0}),
                        ("Aj", "scan_compressed", {"tensor": "A", "level": 1}),
                        ("Av", "array", {"tensor": "A"}),
                        ("bi", "scan_compressed", {"tensor": "b", "level": 0}),
                        ("j", join, {}), ("f", "unary", {"op": "relu"}),
                        ("xi", "level_writer", {"tensor": "x", "level": 0}),
                        ("xv", "value_writer", {"tensor": "x"})]:
        g.node(nid, op, **kw)
    for s, d in [("rA.ref", "Ai.ref_in"), ("Ai.ref", "Aj.ref_in"), ("Aj.ref", "Av.ref"),
                 ("rb.ref", "bi.ref_in"), ("Aj.crd", "j.crd_a"), ("Av.val", "j.val_a"),
                 ("bi.crd", "j.crd_b"), ("bi.ref", "j.ref_b"), ("j.crd", "xi.crd"),
                 ("j.val_a", "f.a"), ("f.val", "xv.val")]:
        g.edge(s, d)
    return g.build()


def _assert_same_errors(systemc: SystemCBackend, g: Graph, inputs: dict) -> None:
    results = systemc.run_batch([SystemCRun(g, inputs, trace=True, depth=d) for d in DEPTHS])
    for depth, sc in zip(DEPTHS, results, strict=True):
        assert isinstance(sc, SimulationError), sc
        assert_same_result(python_run(g, inputs, depth, None), sc, f"depth={depth}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("join", JOINS)
def test_misaligned_stops_give_the_model_error(systemc, join, dtype):
    g = _misaligned_graph(join, dtype)
    inputs = {"A": np.array([[1, 0, 2]], dtype), "b": np.array([0, 3, 0], dtype)}
    with pytest.raises(SimulationError, match=f"graph '{join}_misaligned': node 'j' at cycle "
                       r"\d+: misaligned streams: crd_a holds S1 while crd_b holds S0"):
        simulate(g, inputs)
    _assert_same_errors(systemc, g, inputs)


def test_union_val_n_into_a_value_writer_fails_alike(systemc):
    """A value writer rejects N (docs/primitives.md: only values, stops and D), so
    union_val's missing value must pass a value consumer first; both backends agree."""
    g = _passthrough_graph("union_val", "float32", 3)
    inputs = {"a": np.array([1, 0, 0], np.float32), "b": np.array([0, 2, 0], np.float32)}
    with pytest.raises(SimulationError, match="node 'xv' at cycle \\d+: unexpected token N "
                                              "on val"):
        simulate(g, inputs)
    _assert_same_errors(systemc, g, inputs)


@settings(max_examples=8, deadline=None)
@given(join=st.sampled_from(JOINS), dtype=st.sampled_from(DTYPES), m=st.integers(1, 4),
       n=st.integers(1, 6), da=st.sampled_from([0.0, 0.3, 0.7, 1.0]),
       db=st.sampled_from([0.0, 0.3, 0.7, 1.0]), seed=st.integers(0, 2**16),
       shape=st.sampled_from(["vector", *(f"{o}/{f}" for o, f in MATRIX_CASES)]))
def test_random_sparse_inputs(systemc, join, dtype, m, n, da, db, seed, shape):
    rng = np.random.default_rng(seed)
    if shape == "vector":
        a, b = rand_sparse(rng, (n,), da, dtype), rand_sparse(rng, (n,), db, dtype)
        _check(systemc, vector_graph(join, dtype, n), {"a": a, "b": b},
               {"x": expected(join, a, b)})
        return
    outer, fmt = shape.split("/")
    a, b = rand_sparse(rng, (m, n), da, dtype), rand_sparse(rng, (m, n), db, dtype)
    _check(systemc, matrix_graph(join, dtype, m, n, outer, fmt), {"A": a, "B": b},
           matrix_expected(join, outer, fmt, a, b))
