"""Reference RTL of the value joiners (``intersect_val``, ``union_val``) against the Python
model: hand-built vector and CSR-matrix sums and products whose side a carries values, cycle
for cycle and token for token (read cycles included), value words bit for bit (negative
zero, NaN payloads, int32 extremes), with the memory system, under Icarus and Verilator."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_rtl import _assert_lint_clean, _sim
from test_rtl_memory import _check_against_python

from ir import FiberTree, Graph, GraphBuilder, compare_traces, encode_token
from rtl_hls.rtl import generate
from rtl_hls.rtl.bench import run_trace
from sim_models.python import bind_inputs, simulate

#: the joiner's alu: union adds (a missing value reads as 0), intersection multiplies
ALU = {"union_val": "add", "intersect_val": "mul"}
NUMPY = {"add": np.add, "mul": np.multiply}


def vector_graph(join: str, n: int, dtype: str, alu: bool = True) -> Graph:
    """x = a op b on compressed vectors: ``a``'s (crd, val) meets ``b``'s (crd, ref) in
    ``join``; ``b``'s values are loaded behind the joiner. ``alu=False`` writes the
    joiner's ``val_a`` straight to ``x`` (``b`` only masks) and leaves ``ref_b`` open."""
    name = f"vec_{join}_{'alu' if alu else 'pass'}"
    g = GraphBuilder(name, dtype, 2)
    g.tensor("a", (n,), "c")
    g.tensor("b", (n,), "c")
    g.tensor("x", (n,), "c", role="output")
    g.node("root_a", "root")
    g.node("root_b", "root")
    g.node("a0", "scan_compressed", tensor="a", level=0)
    g.node("b0", "scan_compressed", tensor="b", level=0)
    g.node("av", "array", tensor="a")
    g.node("join", join)
    g.node("x0", "level_writer", tensor="x", level=0)
    g.node("xv", "value_writer", tensor="x")
    edges = [("root_a.ref", "a0.ref_in"), ("root_b.ref", "b0.ref_in"), ("a0.ref", "av.ref"),
             ("a0.crd", "join.crd_a"), ("av.val", "join.val_a"), ("b0.crd", "join.crd_b"),
             ("b0.ref", "join.ref_b"), ("join.crd", "x0.crd")]
    if alu:
        g.node("bv", "array", tensor="b")
        g.node("alu", "alu", op=ALU[join])
        edges += [("join.ref_b", "bv.ref"), ("join.val_a", "alu.a"), ("bv.val", "alu.b"),
                  ("alu.val", "xv.val")]
    else:
        edges.append(("join.val_a", "xv.val"))
    for s, d in edges:
        g.edge(s, d)
    return g.build(kernel=name)


def matrix_graph(join: str, m: int, n: int, dtype: str, fmt: str = "dc") -> Graph:
    """X = A op B on matrices of format ``fmt``: rows meet in the ref joiner (``union`` or
    ``intersect``), row fibers in ``join`` with A's values on side a, so ``S0`` ends each
    row and ``S1`` the matrix; ``crddrop`` keeps X's compressed rows nonempty."""
    ref_join = join.removesuffix("_val")
    g = GraphBuilder(f"mat_{join}_{fmt}", dtype, 2)
    g.tensor("A", (m, n), fmt)
    g.tensor("B", (m, n), fmt)
    g.tensor("X", (m, n), "cc", role="output")
    kind = {"d": "scan_dense", "c": "scan_compressed"}
    g.node("root_A", "root")
    g.node("root_B", "root")
    g.node("Ai", kind[fmt[0]], tensor="A", level=0)
    g.node("Bi", kind[fmt[0]], tensor="B", level=0)
    g.node("join_i", ref_join)
    g.node("Aj", kind[fmt[1]], tensor="A", level=1)
    g.node("Bj", kind[fmt[1]], tensor="B", level=1)
    g.node("Av", "array", tensor="A")
    g.node("join_j", join)
    g.node("Bv", "array", tensor="B")
    g.node("alu", "alu", op=ALU[join])
    g.node("drop", "crddrop")
    g.node("Xi", "level_writer", tensor="X", level=0)
    g.node("Xj", "level_writer", tensor="X", level=1)
    g.node("Xv", "value_writer", tensor="X")
    for s, d in [("root_A.ref", "Ai.ref_in"), ("root_B.ref", "Bi.ref_in"),
                 ("Ai.crd", "join_i.crd_a"), ("Ai.ref", "join_i.ref_a"),
                 ("Bi.crd", "join_i.crd_b"), ("Bi.ref", "join_i.ref_b"),
                 ("join_i.ref_a", "Aj.ref_in"), ("join_i.ref_b", "Bj.ref_in"),
                 ("Aj.ref", "Av.ref"),
                 ("Aj.crd", "join_j.crd_a"), ("Av.val", "join_j.val_a"),
                 ("Bj.crd", "join_j.crd_b"), ("Bj.ref", "join_j.ref_b"),
                 ("join_j.ref_b", "Bv.ref"), ("join_j.val_a", "alu.a"), ("Bv.val", "alu.b"),
                 ("alu.val", "Xv.val"), ("join_i.crd", "drop.outer_in"),
                 ("join_j.crd", "drop.inner_in"), ("drop.outer", "Xi.crd"),
                 ("drop.inner", "Xj.crd")]:
        g.edge(s, d)
    return g.build(kernel=f"mat_{join}")


def _values(rng, shape, dtype):
    vals = rng.integers(-9, 10, shape) if dtype == "int32" else rng.standard_normal(shape)
    return np.where(vals == 0, 1, vals).astype(np.int32 if dtype == "int32" else np.float32)


def _operands(pattern: str, shape: tuple[int, ...], dtype: str, seed: int = 5):
    """(a, b) dense operands whose nonzero patterns are ``pattern``: random, a empty,
    both empty, disjoint (a on even, b on odd positions), identical."""
    rng = np.random.default_rng(seed)
    a, b = _values(rng, shape, dtype), _values(rng, shape, dtype)
    flat = np.arange(int(np.prod(shape))).reshape(shape)
    if pattern == "random":
        return a * (rng.random(shape) < 0.45), b * (rng.random(shape) < 0.45)
    if pattern == "a_empty":
        return a * 0, b * (rng.random(shape) < 0.5)
    if pattern == "both_empty":
        return a * 0, b * 0
    if pattern == "disjoint":
        return a * (flat % 2 == 0), b * (flat % 2 == 1)
    mask = rng.random(shape) < 0.5
    return a * mask, b * mask  # identical


def _check_traced(graph: Graph, inputs: dict, sim: str, op: str) -> None:
    """RTL run equals the Python model's: cycles, every edge's tokens, write and read
    cycles; the output equals numpy."""
    from cosim import RtlBackend

    ref = simulate(graph, inputs, trace=True)
    got = RtlBackend(_sim(sim)).run(graph, inputs, trace=True)
    assert got.cycles == ref.cycles
    assert compare_traces(ref.trace, got.trace) == []
    late = [n for n, et in ref.trace.edges.items()
            if got.trace.edges[n].read_cycles != et.read_cycles]
    assert not late, f"read cycles differ on {late}"
    name = next(iter(ref.outputs))
    want = NUMPY[op](*inputs.values())
    np.testing.assert_array_equal(ref.outputs[name].to_dense(), want)
    np.testing.assert_array_equal(got.outputs[name].to_dense(), want)


VECTOR_CASES = [("union_val", "float32", "random"), ("union_val", "int32", "disjoint"),
                ("union_val", "float32", "a_empty"), ("union_val", "int32", "identical"),
                ("intersect_val", "int32", "random"), ("intersect_val", "float32", "disjoint"),
                ("intersect_val", "float32", "identical"),
                ("intersect_val", "int32", "both_empty")]


@pytest.mark.cosim
@pytest.mark.parametrize(("join", "dtype", "pattern"), VECTOR_CASES)
def test_vector_trace_matches_python_on_icarus(join, dtype, pattern):
    a, b = _operands(pattern, (9,), dtype)
    _check_traced(vector_graph(join, 9, dtype), {"a": a, "b": b}, "icarus", ALU[join])


MATRIX_CASES = [("union_val", "float32", "dc", "random"), ("union_val", "int32", "cc", "random"),
                ("intersect_val", "int32", "dc", "random"),
                ("intersect_val", "float32", "cc", "disjoint")]


@pytest.mark.cosim
@pytest.mark.parametrize(("join", "dtype", "fmt", "pattern"), MATRIX_CASES)
def test_matrix_trace_matches_python_on_icarus(join, dtype, fmt, pattern):
    """Two levels: the val joiner passes S0 (row ends) and S1 (the end) aligned; with "cc"
    a row only one side has reaches the other's scanner as N (an empty fiber)."""
    a, b = _operands(pattern, (5, 6), dtype)
    _check_traced(matrix_graph(join, 5, 6, dtype, fmt), {"A": a, "B": b}, "icarus",
                  ALU[join])


@pytest.mark.cosim
@pytest.mark.parametrize("join", ["union_val", "intersect_val"])
def test_matrix_trace_matches_python_on_verilator(join):
    a, b = _operands("random", (5, 6), "float32", seed=8)
    _check_traced(matrix_graph(join, 5, 6, "float32", "cc"), {"A": a, "B": b}, "verilator",
                  ALU[join])


def _special_a(dtype: str) -> FiberTree:
    """a with values that must cross the joiner bit for bit: negative zero, a NaN with a
    payload, a negative NaN, -inf, a subnormal (float32); INT_MIN, -1, INT_MAX (int32)."""
    if dtype == "float32":
        bits = np.array([0x80000000, 0x7FC00123, 0xFFC00001, 0xFF800000, 0x00000001,
                         0x3F800000], np.uint32)
        vals = bits.view(np.float32)
    else:
        vals = np.array([-2**31, -1, 2**31 - 1, 7, -5, 1], np.int32)
    return FiberTree.from_coo([[0, 2, 3, 5, 6, 8]], vals, (9,), "c", dtype=dtype)


@pytest.mark.cosim
@pytest.mark.parametrize("sim", ["icarus", "verilator"])
@pytest.mark.parametrize(("join", "dtype", "alu"), [("union_val", "float32", True),
                                                    ("intersect_val", "float32", False),
                                                    ("intersect_val", "int32", False)])
def test_values_cross_the_joiner_bit_for_bit(join, dtype, alu, sim):
    """Every primitive replayed from the Python trace writes the recorded words exactly
    (a float compare would take -0.0 for 0.0 and miss a changed NaN payload); the joiner's
    val_a words are a's own bits; without the alu, x's stored bits are a's."""
    from cosim import RtlBackend
    from cosim.backends._rtl import simulate_with_reads

    graph = vector_graph(join, 9, dtype, alu=alu)
    a = _special_a(dtype)
    b = np.zeros(9, np.int32 if dtype == "int32" else np.float32)
    b[[0, 1, 3, 6, 8]] = 3  # meets a at 0, 3, 6, 8: -0.0, the negative NaN, ...1, 1.0
    inputs = {"a": a, "b": b}
    ref, reads = simulate_with_reads(graph, inputs)
    plan = []
    for e in graph.edges:
        et = ref.trace.edges[e.name]
        plan.append({"name": e.name, "depth": e.depth, "writes": et.cycles,
                     "reads": reads[e.name],
                     "tokens": [encode_token(t, et.numeric) for t in et.tokens]})
    obs = run_trace(graph, bind_inputs(graph, inputs), plan, _sim(sim))
    for e in plan:
        o = obs[e["name"]]
        assert (o["tokens"], o["cycles"], o["reads"]) == (e["tokens"], e["writes"],
                                                          e["reads"]), e["name"]
    bits = a.vals.view(np.uint32).tolist()
    keep = [0, 2, 4, 5] if join == "intersect_val" else [0, 1, 2, 3, 4, 5]
    val_a = next(e for e in plan if e["name"].startswith("join.val_a"))
    assert [w for w in val_a["tokens"] if w >> 32 == 0] == [bits[k] for k in keep]
    if not alu:
        got = RtlBackend(_sim(sim)).run(graph, inputs)
        assert got.outputs["x"].vals.view(np.uint32).tolist() == [bits[k] for k in keep]


@pytest.mark.cosim
@pytest.mark.parametrize("join", ["union_val", "intersect_val"])
def test_memory_matches_python(join):
    """hbm2-u280: the joiner sits between memory-timed scanners and arrays; cycles,
    traces, bursts, bytes and memory stalls equal the model's."""
    a, b = _operands("random", (5, 6), "float32", seed=11)
    _check_against_python("", [], "icarus",
                          case=(matrix_graph(join, 5, 6, "float32", "cc"), {"A": a, "B": b}))


@pytest.mark.cosim
@pytest.mark.parametrize("open_edges", [False, True])
def test_generated_netlist_is_lint_clean(open_edges, tmp_path):
    graphs = [matrix_graph(join, 5, 6, "float32", "cc") for join in ALU]
    for graph in [*graphs, vector_graph("intersect_val", 9, "int32", alu=False)]:
        # the last leaves ref_b unconnected
        _assert_lint_clean(generate(graph, open_edges=open_edges), tmp_path)


@pytest.mark.cosim
@settings(max_examples=6, deadline=None)
@given(join=st.sampled_from(list(ALU)), m=st.integers(1, 4), n=st.integers(1, 6),
       da=st.sampled_from([0.0, 0.3, 1.0]), db=st.sampled_from([0.0, 0.3, 1.0]),
       fmt=st.sampled_from(["dc", "cc"]), seed=st.integers(0, 2**16))
def test_random_matrices_match_python_and_numpy(join, m, n, da, db, fmt, seed):
    from cosim import RtlBackend

    rng = np.random.default_rng(seed)
    inputs = {"A": _values(rng, (m, n), "int32") * (rng.random((m, n)) < da),
              "B": _values(rng, (m, n), "int32") * (rng.random((m, n)) < db)}
    graph = matrix_graph(join, m, n, "int32", fmt)
    ref = simulate(graph, inputs)
    got = RtlBackend(_sim("icarus")).run(graph, inputs)
    assert got.cycles == ref.cycles
    np.testing.assert_array_equal(got.outputs["X"].to_dense(),
                                  NUMPY[ALU[join]](inputs["A"], inputs["B"]))
