"""The value joiners (``intersect_val``, ``union_val``) in generated HLS C++, C-simulated
with g++: token-exact against the Python model on every edge and equal to numpy, on
vectors and two-level matrices (stops of both levels pass the joiner), float32 and int32,
with the recording top and with HBM ``m_axi`` ports; value payloads (-0.0, NaN payloads,
int32 extremes) pass bit for bit; a misaligned stream fails the C-simulation like the model.

Graphs keep fixed shapes so each compiles once per dtype and is reused for every input.
"""

from __future__ import annotations

import numpy as np
import pytest
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

from cosim import HlsCsimBackend, HlsRunError
from ir import CompressedLevel, FiberTree, Graph, GraphBuilder, compare_traces, load_hw
from rtl_hls.hls import generate
from sim_models.python import SimulationError, simulate

pytestmark = pytest.mark.cosim

JOINS = sorted(ALU_OF)
DTYPES = ["float32", "int32"]
HBM = load_hw("hbm2-u280")
N = 8
M, NM = 4, 5
#: named vector pairs (a, b) as index → value
VECTORS = {
    "both_empty": ({}, {}),
    "a_empty": ({}, {1: 2, 5: -3}),
    "b_empty": ({0: 4, 7: -1}, {}),
    "all_overlap": ({0: 1, 3: -2, 7: 5}, {0: 3, 3: 4, 7: -6}),
    "disjoint": ({0: 1, 2: -2, 4: 5}, {1: 3, 3: 4, 7: -6}),
    "interleaved": ({1: 2, 2: 3, 6: -4}, {0: 5, 2: -1, 5: 2, 6: 6}),
}
#: (outer join of the rows, storage of A and B): dense rows share one scan
MATRIX_CASES = [("dense", "dc"), ("intersect", "cc"), ("union", "cc")]


def _assert_same(graph: Graph, inputs: dict, hls: HlsCsimBackend, want: dict | None = None,
                 hw=None) -> None:
    """csim's outputs and every edge's tokens equal the Python model's; outputs = want."""
    py = simulate(graph, inputs, trace=True, hw=hw)
    got = hls.run(graph, inputs, trace=True, hw=hw)
    mismatches = compare_traces(py.trace, got.trace, timed=False)
    assert not mismatches, "\n".join(map(str, mismatches[:5]))
    assert set(got.outputs) == set(py.outputs)
    for name in py.outputs:
        np.testing.assert_array_equal(got.dense(name), py.dense(name), err_msg=name)
    for name, arr in (want or {}).items():
        np.testing.assert_array_equal(got.dense(name), arr, err_msg=f"{name} vs numpy")


def _dense(entries: dict[int, int], dtype: str) -> np.ndarray:
    x = np.zeros(N, dtype)
    for i, v in entries.items():
        x[i] = v
    return x


def test_templates_share_the_joiner_loops():
    """The _val joiners are the plain joiners' loops on a value stream, not copies."""
    for op in JOINS:
        design = generate(vector_graph(op, "float32", N))
        top = design.files[design.top_source]
        assert f'#include "{op}.h"' in top and f"samfuse_{op}(" in top
    from rtl_hls.hls import template_path

    for op, core in (("intersect_val", "intersect_streams"), ("union_val", "union_streams")):
        text = template_path(op).read_text()
        assert f"samfuse::{core}(crd_a, val_a," in text and "while" not in text


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("join", JOINS)
def test_vectors_match_model_and_numpy(hls, join, dtype):
    graph = vector_graph(join, dtype, N)
    for ea, eb in VECTORS.values():
        a, b = _dense(ea, dtype), _dense(eb, dtype)
        _assert_same(graph, {"a": a, "b": b}, hls, {"x": expected(join, a, b)})


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("join", JOINS)
@pytest.mark.parametrize(("outer", "fmt"), MATRIX_CASES)
def test_matrices_match_model_and_numpy(hls, outer, fmt, join, dtype):
    graph = matrix_graph(join, dtype, M, NM, outer, fmt)
    rng = np.random.default_rng(5)
    for da, db in [(0.0, 0.0), (0.4, 0.5), (1.0, 0.3), (1.0, 1.0)]:
        a, b = rand_sparse(rng, (M, NM), da, dtype), rand_sparse(rng, (M, NM), db, dtype)
        a[1] = 0  # an empty row on side a
        _assert_same(graph, {"A": a, "B": b}, hls, matrix_expected(join, outer, fmt, a, b))


@pytest.mark.parametrize("join", JOINS)
def test_off_chip_memory_top_matches_model(hls, join):
    """The m_axi top (HBM channels) of both graph shapes, token-exact."""
    rng = np.random.default_rng(11)
    a, b = rand_sparse(rng, (N,), 0.5, "float32"), rand_sparse(rng, (N,), 0.5, "float32")
    _assert_same(vector_graph(join, "float32", N), {"a": a, "b": b}, hls,
                 {"x": expected(join, a, b)}, hw=HBM)
    a, b = rand_sparse(rng, (M, NM), 0.5, "int32"), rand_sparse(rng, (M, NM), 0.5, "int32")
    _assert_same(matrix_graph(join, "int32", M, NM, "union", "cc"), {"A": a, "B": b}, hls,
                 {"X": expected(join, a, b)}, hw=HBM)


def _passthrough_graph(join: str, dtype: str, n: int) -> Graph:
    """val_a straight into the value writer: x holds a's payloads as the joiner passed
    them, where side b has the crd (intersect_val) or everywhere (union_val; a covers
    every coordinate, so no N reaches the writer)."""
    g = GraphBuilder(f"{join}_payloads", dtype)
    for t in ("a", "b"):
        g.tensor(t, (n,), "c")
        g.node(f"r{t}", "root")
        g.node(f"{t}i", "scan_compressed", tensor=t, level=0)
        g.edge(f"r{t}.ref", f"{t}i.ref_in")
    g.tensor("x", (n,), "c", role="output")
    for nid, op, kw in [("av", "array", {"tensor": "a"}), ("j", join, {}),
                        ("xi", "level_writer", {"tensor": "x", "level": 0}),
                        ("xv", "value_writer", {"tensor": "x"})]:
        g.node(nid, op, **kw)
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
def test_value_payloads_pass_unchanged(hls, join, dtype):
    a = _F_SPECIAL if dtype == "float32" else _I_SPECIAL
    n = len(a)
    b = np.zeros_like(a)
    b[::2] = 1
    # stored explicitly: -0.0 would not survive a dense array's compression
    tree = FiberTree((n,), "c", [CompressedLevel([0, n], np.arange(n))], a, dtype=dtype)
    g = _passthrough_graph(join, dtype, n)
    _assert_same(g, {"a": tree, "b": b}, hls)
    got = hls.run(g, {"a": tree, "b": b}).outputs["x"]
    keep = np.flatnonzero(b) if join == "intersect_val" else np.arange(n)
    assert list(got.levels[0].crd) == list(keep)
    bits = np.asarray(got.vals).astype(dtype).view(np.uint32)
    np.testing.assert_array_equal(bits, a[keep].view(np.uint32))


@pytest.mark.parametrize("join", JOINS)
def test_misaligned_stops_fail_like_the_model(hls, join):
    """Side a from a one-row matrix (its end is S1) against a vector (S0)."""
    g = GraphBuilder(f"{join}_misaligned")
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
    graph = g.build()
    inputs = {"A": np.array([[1, 0, 2]], np.float32), "b": np.array([0, 3, 0], np.float32)}
    with pytest.raises(SimulationError, match="misaligned streams: crd_a holds S1"):
        simulate(graph, inputs)
    with pytest.raises(HlsRunError, match=f"graph '{join}_misaligned': the HLS C-simulation "
                                          "failed(.|\n)*misaligned streams on crd_a / crd_b"):
        hls.run(graph, inputs)


@settings(max_examples=10, deadline=None)
@given(join=st.sampled_from(JOINS), dtype=st.sampled_from(DTYPES),
       shape=st.sampled_from(["vector", *(f"{o}/{f}" for o, f in MATRIX_CASES)]),
       da=st.sampled_from([0.0, 0.3, 0.7, 1.0]), db=st.sampled_from([0.0, 0.3, 0.7, 1.0]),
       seed=st.integers(0, 2**16))
def test_random_sparse_inputs(hls, join, dtype, shape, da, db, seed):
    rng = np.random.default_rng(seed)
    if shape == "vector":
        a, b = rand_sparse(rng, (N,), da, dtype), rand_sparse(rng, (N,), db, dtype)
        _assert_same(vector_graph(join, dtype, N), {"a": a, "b": b}, hls,
                     {"x": expected(join, a, b)})
        return
    outer, fmt = shape.split("/")
    a, b = rand_sparse(rng, (M, NM), da, dtype), rand_sparse(rng, (M, NM), db, dtype)
    _assert_same(matrix_graph(join, dtype, M, NM, outer, fmt), {"A": a, "B": b}, hls,
                 matrix_expected(join, outer, fmt, a, b))
