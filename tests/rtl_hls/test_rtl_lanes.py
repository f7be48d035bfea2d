"""Reference RTL of the lane primitives (``lane_split``, ``lane_merge``, ``lane_merge2``)
against the Python model, on compiled parallel kernels: SpMV and SpMM (Gustavson
``i,k,j`` and inner product ``i,j,k``) parallel at ``i``, at ``j`` and nested, with
round-robin and balanced partitions and with lane buffers deep (default) and shallow
enough that lanes stall on each other. Whole graphs must match cycle for cycle (every
edge's tokens, write and read cycles) and equal numpy; each primitive also replays its
recorded trace in isolation; a few run with the memory system and under Verilator; random
small inputs (more lanes than non-empty rows included) through hypothesis."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from test_rtl import _assert_lint_clean, _sim
from test_rtl_memory import _check_against_python

from compiler import compile_expression
from ir import compare_traces
from rtl_hls.rtl import generate
from sim_models.python import simulate
from tests.parity._backends import assert_replays

SPMV = "y(i) = A(i,j) * x(j)"
SPMM = "X(i,j) = A(i,k) * B(k,j)"
#: kernel -> (expression, dataflow order); the elementwise kernels join two sparse
#: operands at the parallel index, so each lane splits a crd and two refs there (the
#: second split's crd output is left unconnected)
KERNELS = {"spmv": (SPMV, None), "gustavson": (SPMM, "i,k,j"), "inner": (SPMM, "i,j,k"),
           "emul": ("X(i,j) = A(i,j) * B(i,j)", None),
           "eadd": ("X(i,j) = A(i,j) + B(i,j)", None)}


def _sparse(rng, shape, density: float, npt) -> sp.csr_matrix:
    vals = rng.integers(1, 6, shape) * rng.choice([-1, 1], shape)
    return sp.csr_matrix((vals * (rng.random(shape) < density)).astype(npt))


def _operands(kernel: str, m: int, k: int, n: int, density: float, seed: int,
              dtype: str = "float32") -> dict:
    """A (m×k, scipy CSR, nonzero values) and x (k) or B (k×n, dense numpy); for the
    elementwise kernels B is m×k and as sparse as A."""
    rng = np.random.default_rng(seed)
    npt = np.float32 if dtype == "float32" else np.int32
    a = _sparse(rng, (m, k), density, npt)
    if kernel in ("emul", "eadd"):
        return {"A": a, "B": _sparse(rng, (m, k), density, npt)}
    other = rng.integers(-4, 6, (k,) if kernel == "spmv" else (k, n)).astype(npt)
    return {"A": a, "x" if kernel == "spmv" else "B": other}


def _graph(kernel: str, inputs: dict, par: dict[str, int], partition: str = "round-robin",
           lane_buffer: int = 1024, dtype: str = "float32"):
    expr, order = KERNELS[kernel]
    fmts = {"A": "csr"} if kernel == "spmv" else {"A": "csr", "X": "csr"}
    if kernel in ("emul", "eadd"):
        fmts = {"A": "dc", "B": "dc", "X": "dc"}
    return compile_expression(expr, fmts, {t: v.shape for t, v in inputs.items()},
                              order=order, par=par, partition=partition,
                              lane_buffer=lane_buffer, stats=inputs, dtype=dtype,
                              name=f"{kernel}_lanes")


def _numpy(kernel: str, inputs: dict) -> np.ndarray:
    a = inputs["A"].toarray()
    if kernel == "emul":
        return a * inputs["B"].toarray()
    if kernel == "eadd":
        return a + inputs["B"].toarray()
    return a @ (inputs["x"] if kernel == "spmv" else inputs["B"])


#: name -> (kernel, par, partition, lane_buffer, (m, k, n, density, seed))
CASES = {
    "spmv_i2": ("spmv", {"i": 2}, "round-robin", 1024, (9, 7, 0, 0.35, 1)),
    "spmv_i3": ("spmv", {"i": 3}, "round-robin", 1024, (9, 7, 0, 0.35, 1)),
    "spmv_i3_balanced": ("spmv", {"i": 3}, "balanced", 1024, (9, 7, 0, 0.35, 1)),
    "spmv_i3_shallow": ("spmv", {"i": 3}, "balanced", 2, (12, 7, 0, 0.5, 2)),
    "gustavson_i2": ("gustavson", {"i": 2}, "round-robin", 1024, (8, 6, 5, 0.3, 3)),
    "gustavson_i3_balanced": ("gustavson", {"i": 3}, "balanced", 1024, (8, 6, 5, 0.3, 3)),
    "gustavson_j2": ("gustavson", {"j": 2}, "round-robin", 1024, (8, 6, 5, 0.3, 3)),
    "gustavson_i2j2": ("gustavson", {"i": 2, "j": 2}, "round-robin", 1024,
                       (8, 6, 5, 0.3, 3)),
    "gustavson_i2j2_balanced_shallow": ("gustavson", {"i": 2, "j": 2}, "balanced", 2,
                                        (10, 6, 6, 0.4, 4)),
    "inner_i2": ("inner", {"i": 2}, "round-robin", 1024, (7, 5, 5, 0.4, 5)),
    "inner_j3_balanced": ("inner", {"j": 3}, "balanced", 1024, (7, 5, 5, 0.4, 5)),
    "inner_i2j2_shallow": ("inner", {"i": 2, "j": 2}, "round-robin", 2, (7, 5, 5, 0.4, 5)),
    "emul_j2": ("emul", {"j": 2}, "round-robin", 1024, (6, 7, 0, 0.5, 6)),
    "eadd_i3_balanced": ("eadd", {"i": 3}, "balanced", 1024, (6, 7, 0, 0.3, 6)),
}
#: lane buffers so shallow that lanes wait on each other (asserted in the model)
SHALLOW = [c for c, v in CASES.items() if v[3] == 2]
VERILATOR_CASES = ["gustavson_i2j2_balanced_shallow", "spmv_i3"]


def _case(name: str):
    kernel, par, partition, lane_buffer, (m, k, n, density, seed) = CASES[name]
    inputs = _operands(kernel, m, k, n, density, seed)
    return _graph(kernel, inputs, par, partition, lane_buffer), inputs


def _check_whole_graph(graph, inputs, gold: np.ndarray, sim: str) -> None:
    """RTL == Python model: cycles, every edge's trace and read cycles, outputs; == numpy."""
    from cosim import RtlBackend

    ref = simulate(graph, inputs, trace=True)
    got = RtlBackend(_sim(sim)).run(graph, inputs, trace=True)
    assert got.cycles == ref.cycles
    assert compare_traces(ref.trace, got.trace) == []
    late = [n for n, et in ref.trace.edges.items()
            if got.trace.edges[n].read_cycles != et.read_cycles]
    assert not late, f"read cycles differ on {late}"
    (name, tree), = ref.outputs.items()
    np.testing.assert_array_equal(got.outputs[name].to_dense(), tree.to_dense())
    np.testing.assert_allclose(tree.to_dense(), gold, rtol=1e-5, atol=1e-5)


def test_cases_use_every_lane_primitive():
    ops = {n.op for c in CASES for n in _case(c)[0].nodes.values()}
    assert {"lane_split", "lane_merge", "lane_merge2"} <= ops
    graph = _case("emul_j2")[0]
    assert any(not graph.out_edges[n.id].get("crd") for n in graph.nodes.values()
               if n.op == "lane_split"), "no split leaves its crd output unconnected"
    ops = {n.op for c in VERILATOR_CASES for n in _case(c)[0].nodes.values()}
    assert {"lane_split", "lane_merge", "lane_merge2"} <= ops


def test_a_split_lane_outside_its_lanes_is_an_error_naming_the_node():
    graph = _case("spmv_i2")[0]
    split = next(n for n in graph.nodes.values() if n.op == "lane_split")
    split.params["lane"] = 2
    with pytest.raises(ValueError, match=f"node {split.id!r}: lane 2 is not below lanes 2"):
        generate(graph)


@pytest.mark.parametrize("case", SHALLOW)
def test_shallow_lane_buffers_make_lanes_wait(case):
    """The shallow cases test back-pressure between lanes: with the default buffers the
    same graph finishes sooner."""
    kernel, par, partition, _, _ = CASES[case]
    graph, inputs = _case(case)
    deep = _graph(kernel, inputs, par, partition)
    assert simulate(graph, inputs).cycles > simulate(deep, inputs).cycles


@pytest.mark.cosim
@pytest.mark.parametrize("case", CASES)
def test_lanes_match_python_cycle_for_cycle_on_icarus(case):
    graph, inputs = _case(case)
    _check_whole_graph(graph, inputs, _numpy(CASES[case][0], inputs), "icarus")


@pytest.mark.cosim
@pytest.mark.parametrize("case", VERILATOR_CASES)
def test_lanes_match_python_cycle_for_cycle_on_verilator(case):
    graph, inputs = _case(case)
    _check_whole_graph(graph, inputs, _numpy(CASES[case][0], inputs), "verilator")


@pytest.mark.cosim
@pytest.mark.parametrize("case", ["spmv_i3_shallow", "gustavson_i2j2_balanced_shallow"])
def test_lane_primitives_replay_their_traces_cycle_exactly(case):
    """Every primitive of the graph in isolation, driven by the model's recorded trace:
    a difference names the edge (so the primitive) and the first differing token."""
    graph, inputs = _case(case)
    assert_replays(graph, inputs, _sim("icarus"))


@pytest.mark.cosim
@pytest.mark.parametrize(("case", "sim"), [("spmv_i3_balanced", "icarus"),
                                           ("gustavson_i2j2_balanced_shallow", "icarus"),
                                           ("inner_i2", "icarus")])
def test_lanes_with_memory_match_python(case, sim):
    """hbm2-u280: every lane's scanners and arrays are memory ports of their own."""
    _check_against_python(case, [], sim, _case(case))


@pytest.mark.cosim
def test_lane_netlists_are_lint_clean(tmp_path):
    """Round-robin (lo = 0) and balanced (an empty range: hi = 0) splits, both merges,
    unconnected split outputs, with and without FIFOs."""
    inputs = _operands("gustavson", 3, 4, 4, 0.0, 0)
    graphs = [_graph("gustavson", inputs, {"i": 4, "j": 2}, "balanced"),
              _case("spmv_i3")[0], _case("emul_j2")[0]]
    assert any(n.params["hi"] == 0 for n in graphs[0].nodes.values()
               if n.op == "lane_split")
    for graph in graphs:
        for open_edges in (False, True):
            _assert_lint_clean(generate(graph, open_edges=open_edges), tmp_path)


@pytest.mark.cosim
@settings(max_examples=6, deadline=None)
@given(kernel=st.sampled_from(sorted(KERNELS)), m=st.integers(1, 5), k=st.integers(1, 4),
       n=st.integers(1, 3), density=st.sampled_from([0.0, 0.3, 1.0]),
       lanes=st.integers(2, 6), where=st.sampled_from(["i", "j", "ij"]),
       partition=st.sampled_from(["round-robin", "balanced"]),
       lane_buffer=st.sampled_from([2, 3, 1024]), seed=st.integers(0, 2**16))
def test_lanes_on_random_inputs_match_python_and_numpy(kernel, m, k, n, density, lanes,
                                                        where, partition, lane_buffer,
                                                        seed):
    """int32, so the product equals numpy exactly; up to 6 lanes on up to 5 rows."""
    inputs = _operands(kernel, m, k, n, density, seed, "int32")
    where = "i" if kernel == "spmv" else where
    par = {v: lanes if len(where) == 1 else 2 for v in where}
    graph = _graph(kernel, inputs, par, partition, lane_buffer, "int32")
    _check_whole_graph(graph, inputs, _numpy(kernel, inputs), "icarus")
