"""The value joiners (``intersect_val``, ``union_val``) on every backend against the Python
model and numpy: vectors and two-level matrices (stops of both levels pass the joiner,
empty rows too), float32 and int32; SystemC and the Python model at the contract's FIFO
depths and on HBM, HLS and RTL at the graph's depth; value payloads (-0.0, NaN payloads,
int32 extremes) pass bit for bit; a misaligned stream fails as the model does; random
sparse inputs. What each backend is held to is in ``_backends.py``.

Graphs keep fixed shapes, so each HLS and RTL build serves every input of its shape.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from _backends import RTL, assert_lint_clean, assert_replays, bits, over, python_run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cosim import HlsRunError
from ir import CompressedLevel, FiberTree, load_hw
from sim_models.python import SimulationError, simulate
from tests._valjoin_graphs import (
    ALU_OF,
    expected,
    matrix_expected,
    matrix_graph,
    misaligned_graph,
    passthrough_graph,
    rand_sparse,
    vector_graph,
)

JOINS = sorted(ALU_OF)
DTYPES = ["float32", "int32"]
DEPTHS = (1, 2, 4, None)
HBM = load_hw("hbm2-u280")
#: the contract's depths on ideal memory, and HBM (the cheap backends run them all)
CONFIGS = {"python": [(d, None) for d in DEPTHS] + [(2, HBM), (None, HBM)]}
CONFIGS["systemc"] = CONFIGS["python"]
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
VECTOR_CASES = [(c, j, d) for c in sorted(VECTORS) for j in JOINS for d in DTYPES]
#: the RTL runs a selection (each Icarus build takes seconds)
RTL_VECTORS = ["interleaved-union_val-float32", "disjoint-union_val-int32",
               "a_empty-union_val-float32", "all_overlap-union_val-int32",
               "interleaved-intersect_val-int32", "disjoint-intersect_val-float32",
               "all_overlap-intersect_val-float32", "both_empty-intersect_val-int32"]


def _dense(entries: dict[int, int], dtype: str) -> np.ndarray:
    x = np.zeros(N, dtype)
    for i, v in entries.items():
        x[i] = v
    return x


@pytest.mark.parametrize("backend,case,join,dtype",
                         over(VECTOR_CASES, only={"rtl-icarus": RTL_VECTORS,
                                                  "rtl-verilator": []}),
                         indirect=["backend"])
def test_vector_matches_model_and_numpy(backend, case, join, dtype):
    a, b = (_dense(v, dtype) for v in VECTORS[case])
    backend.check(vector_graph(join, dtype, N), {"a": a, "b": b},
                  {"x": expected(join, a, b)}, configs=CONFIGS, exact=True)


#: (outer join of the rows, storage of A and B): dense rows share one scan
MATRIX_SHAPES = [("dense", "dc"), ("intersect", "cc"), ("intersect", "dc"), ("union", "cc"),
                 ("union", "dc")]
#: (density of A, density of B): HLS runs every pair on one build, the others the first
DENSITIES = [(0.4, 0.5), (0.0, 0.0), (1.0, 0.3), (1.0, 1.0)]
MATRIX_CASES = [(o, f, j, d) for o, f in MATRIX_SHAPES for j in JOINS for d in DTYPES]
ONLY_MATRIX = {
    "hls": [f"{o}-{f}-{j}-{d}" for o, f, j, d in MATRIX_CASES
            if (o, f) != ("union", "dc") and (o, f) != ("intersect", "dc")],
    "rtl-icarus": ["union-dc-union_val-float32", "union-cc-union_val-int32",
                   "intersect-dc-intersect_val-int32", "intersect-cc-intersect_val-float32"],
    "rtl-verilator": ["union-cc-union_val-float32", "intersect-cc-intersect_val-float32"]}


@pytest.mark.parametrize("backend,outer,fmt,join,dtype", over(MATRIX_CASES, only=ONLY_MATRIX),
                         indirect=["backend"])
def test_matrix_matches_model_and_numpy(backend, outer, fmt, join, dtype):
    """Two levels: S0 (row ends) and S1 pass through the joiner, as do empty rows."""
    graph = matrix_graph(join, dtype, 5, 6, outer, fmt)
    rng = np.random.default_rng(zlib.crc32(f"{outer}{fmt}{join}{dtype}".encode()))
    for da, db in DENSITIES if backend.name == "hls" else DENSITIES[:1]:
        a, b = rand_sparse(rng, (5, 6), da, dtype), rand_sparse(rng, (5, 6), db, dtype)
        a[1], b[3] = 0, 0  # an empty row on each side
        backend.check(graph, {"A": a, "B": b}, matrix_expected(join, outer, fmt, a, b),
                      configs=CONFIGS, exact=True)


@pytest.mark.parametrize("backend,join", over([(j,) for j in JOINS], backends=(
    "python", "hls", "rtl-icarus")), indirect=["backend"])
def test_off_chip_memory_matches_model(backend, join):
    """HBM (m_axi ports in HLS; bursts, bytes and memory stalls in RTL) on both graph
    shapes (SystemC runs HBM in every check above)."""
    rng = np.random.default_rng(11)
    hbm = {backend.name: [(2, HBM)]}
    a, b = rand_sparse(rng, (N,), 0.5, "float32"), rand_sparse(rng, (N,), 0.5, "float32")
    backend.check(vector_graph(join, "float32", N), {"a": a, "b": b},
                  {"x": expected(join, a, b)}, configs=hbm, exact=True)
    outer = join.removesuffix("_val")
    a, b = rand_sparse(rng, (5, 6), 0.5, "int32"), rand_sparse(rng, (5, 6), 0.5, "int32")
    backend.check(matrix_graph(join, "int32", 5, 6, outer, "cc"), {"A": a, "B": b},
                  {"X": expected(join, a, b)}, configs=hbm, exact=True)


_F_SPECIAL = np.array([-0.0, np.nan, np.inf, -np.inf, 1e-40, -3.0e38, 0.1], np.float32)
_F_SPECIAL[1] = np.uint32(0x7FC12345).view(np.float32)  # a quiet NaN with a payload
_I_SPECIAL = np.array([-2**31, 2**31 - 1, -1, 1, -7, 65536, -65537], np.int32)
PAYLOAD_CASES = [(j, d) for j in JOINS for d in DTYPES]
ONLY_PAYLOADS = {sim: ["union_val-float32", "intersect_val-float32", "intersect_val-int32"]
                 for sim in RTL}


@pytest.mark.parametrize("backend,join,dtype", over(PAYLOAD_CASES, only=ONLY_PAYLOADS),
                         indirect=["backend"])
def test_value_payloads_pass_unchanged(backend, join, dtype):
    """-0.0, a NaN's payload, infinities, subnormals and int32 extremes reach the writer
    bit for bit (the values sit at every coordinate of a; b covers every other one); in
    RTL every primitive replayed from the model's trace writes the recorded words."""
    a = _F_SPECIAL if dtype == "float32" else _I_SPECIAL
    n = len(a)
    b = np.zeros_like(a)
    b[::2] = 1
    # stored explicitly: -0.0 (and 0) would not survive a dense array's compression
    tree = FiberTree((n,), "c", [CompressedLevel([0, n], np.arange(n))], a, dtype=dtype)
    g = passthrough_graph(join, dtype, n)
    inputs = {"a": tree, "b": b}
    keep = np.flatnonzero(b) if join == "intersect_val" else np.arange(n)
    for res in backend.check(g, inputs, configs={"systemc": [(d, None) for d in DEPTHS]}):
        got = res.outputs["x"]
        assert list(got.levels[0].crd) == list(keep)
        np.testing.assert_array_equal(bits(np.asarray(got.vals).astype(dtype)), bits(a[keep]))
    if backend.name in RTL:
        plan = assert_replays(g, inputs, backend.sim)
        val_a = next(e for e in plan if e["name"].startswith("j.val_a"))
        assert [w for w in val_a["tokens"] if w >> 32 == 0] == bits(a[keep]).tolist()


@pytest.mark.parametrize("backend", over([()], ["union_val"], backends=RTL), indirect=True)
def test_every_primitive_replays_a_sum_of_special_values(backend):
    """union_val feeding an add, the special payloads on side a: each primitive replayed
    from the model's trace writes the recorded words (a float compare would take -0.0 for
    0.0 and miss a changed NaN payload)."""
    n = len(_F_SPECIAL)
    tree = FiberTree((n,), "c", [CompressedLevel([0, n], np.arange(n))], _F_SPECIAL,
                     dtype="float32")
    b = np.zeros(n, np.float32)
    b[::2] = 3
    assert_replays(vector_graph("union_val", "float32", n), {"a": tree, "b": b}, backend.sim)


@pytest.mark.parametrize("backend,join,dtype", over(PAYLOAD_CASES, backends=(
    "python", "systemc", "hls"), only={"hls": ["union_val-float32", "intersect_val-float32"]}),
    indirect=["backend"])
def test_misaligned_stops_fail_like_the_model(backend, join, dtype):
    """Side a ends with S1 where side b ends with S0: the model's message; SystemC the
    same error at every depth, the C-simulation its own."""
    g = misaligned_graph(join, dtype)
    inputs = {"A": np.array([[1, 0, 2]], dtype), "b": np.array([0, 3, 0], dtype)}
    with pytest.raises(SimulationError, match=f"graph '{join}_misaligned': node 'j' at cycle "
                       r"\d+: misaligned streams: crd_a holds S1 while crd_b holds S0"):
        simulate(g, inputs)
    if backend.name == "hls":
        with pytest.raises(HlsRunError, match=f"graph '{join}_misaligned': the HLS "
                           "C-simulation failed(.|\n)*misaligned streams on crd_a / crd_b"):
            backend.tool.run(g, inputs)
    elif backend.name == "systemc":
        _assert_same_errors(backend, g, inputs)


def _assert_same_errors(backend, g, inputs) -> None:
    """The run fails at every contract depth, with the model's error."""
    for depth in DEPTHS:
        res = backend.run(g, inputs, depth)
        assert isinstance(res, SimulationError), res
        assert str(res) == str(python_run(g, inputs, depth)), depth


@pytest.mark.parametrize("backend", over([()], ["n"], backends=("python", "systemc")),
                         indirect=True)
def test_union_val_n_into_a_value_writer_fails_alike(backend):
    """A value writer rejects N (docs/primitives.md: only values, stops and D), so
    union_val's missing value must pass a value consumer first; both models agree."""
    g = passthrough_graph("union_val", "float32", 3)
    inputs = {"a": np.array([1, 0, 0], np.float32), "b": np.array([0, 2, 0], np.float32)}
    _assert_same_errors(backend, g, inputs)
    with pytest.raises(SimulationError, match="node 'xv' at cycle \\d+: unexpected token N "
                                              "on val"):
        simulate(g, inputs)


def _random_case(join, dtype, shape, m, n, da, db, seed):
    rng = np.random.default_rng(seed)
    if shape == "vector":
        a, b = rand_sparse(rng, (n,), da, dtype), rand_sparse(rng, (n,), db, dtype)
        return vector_graph(join, dtype, n), {"a": a, "b": b}, {"x": expected(join, a, b)}
    outer, fmt = shape.split("/")
    a, b = rand_sparse(rng, (m, n), da, dtype), rand_sparse(rng, (m, n), db, dtype)
    return (matrix_graph(join, dtype, m, n, outer, fmt), {"A": a, "B": b},
            matrix_expected(join, outer, fmt, a, b))


@pytest.mark.parametrize("backend", over([()], ["random"], backends=(
    "python", "systemc", "hls", "rtl-icarus")), indirect=True)
@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(join=st.sampled_from(JOINS), dtype=st.sampled_from(DTYPES), m=st.integers(1, 4),
       n=st.integers(1, 6), da=st.sampled_from([0.0, 0.3, 0.7, 1.0]),
       db=st.sampled_from([0.0, 0.3, 0.7, 1.0]), seed=st.integers(0, 2**16),
       shape=st.sampled_from(["vector", *(f"{o}/{f}" for o, f in MATRIX_SHAPES)]))
def test_random_sparse_inputs(backend, join, dtype, m, n, da, db, seed, shape):
    graph, inputs, want = _random_case(join, dtype, shape, m, n, da, db, seed)
    backend.check(graph, inputs, want, configs=CONFIGS, exact=True)


def test_hls_templates_share_the_joiner_loops():
    """The _val joiners are the plain joiners' loops on a value stream, not copies."""
    from rtl_hls.hls import generate, template_path

    for op in JOINS:
        design = generate(vector_graph(op, "float32", N))
        top = design.files[design.top_source]
        assert f'#include "{op}.h"' in top and f"samfuse_{op}(" in top
    for op, core in (("intersect_val", "intersect_streams"), ("union_val", "union_streams")):
        text = template_path(op).read_text()
        assert f"samfuse::{core}<II, LAT>(crd_a, val_a," in text and "while" not in text


@pytest.mark.cosim
@pytest.mark.parametrize("open_edges", [False, True])
def test_rtl_netlist_is_lint_clean(open_edges, tmp_path):
    """Both matrix graphs, and a passthrough that leaves ref_b unconnected."""
    from rtl_hls.rtl import generate

    graphs = [matrix_graph(join, "float32", 5, 6, join.removesuffix("_val"), "cc")
              for join in JOINS]
    for graph in [*graphs, passthrough_graph("intersect_val", "int32", 9)]:
        assert_lint_clean(generate(graph, open_edges=open_edges), tmp_path)
