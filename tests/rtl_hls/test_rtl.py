"""Reference RTL against the Python model: whole graphs (outputs + cycle count, and every
edge's trace with write and read cycles), and every primitive in isolation from a
recorded trace (every output token and its cycle), under Icarus and Verilator."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import compile_expression
from ir import CATALOGUE, compare_traces, examples
from rtl_hls.rtl import SV_DIR, generate, module_name
from rtl_hls.rtl.bench import simulator_missing
from sim_models.python import simulate
from tests.parity._backends import assert_lint_clean as _assert_lint_clean
from tests.parity._backends import assert_replays

SIMS = ["icarus", "verilator"]


def _sim(name: str) -> str:
    reason = simulator_missing(name)
    if reason:
        pytest.skip(reason)
    return name


def _matrix(rng, shape, density, dtype):
    vals = rng.integers(-4, 9, shape) if dtype == "int32" else \
        rng.standard_normal(shape).astype(np.float32)
    vals = np.where(vals == 0, 1, vals)
    return (vals * (rng.random(shape) < density)).astype(
        np.int32 if dtype == "int32" else np.float32)


def _case(kernel: str, dtype: str, seed: int = 1):
    """(graph, inputs) of one example kernel on small random operands."""
    rng = np.random.default_rng(seed)
    if kernel == "spmv":
        return (examples.spmv(6, 7, dtype=dtype),
                {"B": _matrix(rng, (6, 7), 0.4, dtype), "c": _matrix(rng, (7,), 1.0, dtype)})
    if kernel in ("spmm_ijk", "spmm_ikj", "spmm_kij"):
        g = getattr(examples, kernel)(5, 6, 4, dtype=dtype)
        return g, {"B": _matrix(rng, (5, 6), 0.4, dtype), "C": _matrix(rng, (6, 4), 0.5, dtype)}
    if kernel == "row_scale":  # broadcast; an empty row gives it an empty fiber
        return (examples.row_scale(5, 6, dtype=dtype),
                {"A": _matrix(rng, (5, 6), 0.15, dtype)})
    if kernel == "masked_dense":  # locate into dense W; an empty row too
        return (examples.masked_dense(5, 6, dtype=dtype),
                {"A": _matrix(rng, (5, 6), 0.3, dtype), "W": _matrix(rng, (5, 6), 1.0, dtype)})
    op = kernel.split("_")[1]
    g = examples.elementwise(5, 6, op=op, dtype=dtype)
    return g, {"A": _matrix(rng, (5, 6), 0.35, dtype), "B": _matrix(rng, (5, 6), 0.35, dtype)}


KERNELS = ["spmv", "spmm_ijk", "spmm_ikj", "spmm_kij", "elementwise_add",
           "elementwise_mul", "row_scale", "masked_dense"]
#: (kernel, dtype, simulator) of the whole-graph and replay tests
KERNEL_RUNS = [(k, d, s) for k in KERNELS for d in ("int32", "float32") for s in SIMS]


def test_every_catalogue_primitive_has_an_rtl_module():
    for op in CATALOGUE:
        path = SV_DIR / f"{module_name(op)}.sv"
        assert path.exists(), f"no RTL for {op!r}"
        assert re.search(rf"^module {module_name(op)}\b", path.read_text(), re.M)


@pytest.mark.parametrize("kernel", KERNELS)
def test_generated_netlist_is_lint_clean(kernel, tmp_path):
    for open_edges in (False, True):
        _assert_lint_clean(generate(_case(kernel, "float32")[0], open_edges=open_edges),
                           tmp_path)


@pytest.mark.cosim
@pytest.mark.parametrize("kernel,dtype,sim", KERNEL_RUNS,
                         ids=["-".join(r) for r in KERNEL_RUNS])
def test_whole_graph_outputs_and_cycles_match_python(kernel, dtype, sim):
    from cosim import RtlBackend

    graph, inputs = _case(kernel, dtype)
    ref = simulate(graph, inputs)
    got = RtlBackend(_sim(sim)).run(graph, inputs)
    assert got.cycles == ref.cycles
    for name, tree in ref.outputs.items():
        np.testing.assert_array_equal(got.outputs[name].to_dense(), tree.to_dense())


@pytest.mark.cosim
@pytest.mark.parametrize("kernel,dtype,sim", KERNEL_RUNS,
                         ids=["-".join(r) for r in KERNEL_RUNS])
def test_every_primitive_replays_its_trace_cycle_exactly(kernel, dtype, sim):
    graph, inputs = _case(kernel, dtype)
    assert_replays(graph, inputs, _sim(sim))


#: compiled kernels for the whole-graph trace tests: expression, formats, shapes, order
COMPILED = {
    "spmv": ("x(i) = B(i,j) * c(j)", {"B": "csr"}, {"B": (6, 7), "c": (7,)}, None),
    "spmm_ikj": ("X(i,j) = B(i,k) * C(k,j)", {"B": "csr", "C": "csr", "X": "dc"},
                 {"B": (5, 6), "C": (6, 4)}, "i,k,j"),  # spacc
    "spmm_kij": ("X(i,j) = B(i,k) * C(k,j)", {"B": "csc", "C": "csr", "X": "dc"},
                 {"B": (5, 6), "C": (6, 4)}, "k,i,j"),  # spacc2
    "sddmm": ("X(i,j) = B(i,j) * C(i,k) * D(k,j)", {"B": "csr", "X": "dc"},
              {"B": (5, 6), "C": (5, 3), "D": (3, 6)}, None),
    "elementwise_add": ("X(i,j) = A(i,j) + B(i,j)", {"A": "csr", "B": "csr", "X": "dc"},
                        {"A": (5, 6), "B": (5, 6)}, None),
    # factored iteration: the row sum is hoisted out of j and broadcast over it
    "row_scale": ("X(i,j) = A(i,j) * sum(k) B(i,k) * c(k)", {"A": "csr", "B": "csr",
                                                            "X": "dc"},
                  {"A": (5, 6), "B": (5, 4), "c": (4,)}, "i,k,j"),
}


def _compiled_case(kernel: str, dtype: str, seed: int = 3):
    """(graph, inputs) of one compiled kernel; sparse operands 40 % dense, dense ones full."""
    expr, fmts, shapes, order = COMPILED[kernel]
    graph = compile_expression(expr, fmts, shapes, order=order, dtype=dtype, name=kernel)
    rng = np.random.default_rng(seed)
    return graph, {t: _matrix(rng, shape, 0.4 if t in fmts else 1.0, dtype)
                   for t, shape in shapes.items()}


def _rtl_traced(graph, inputs, sim: str):
    from cosim import RtlBackend

    return RtlBackend(_sim(sim)).run(graph, inputs, trace=True)


@pytest.mark.cosim
@pytest.mark.parametrize("sim", SIMS)
@pytest.mark.parametrize(("kernel", "dtype"), [(k, "float32") for k in COMPILED] +
                         [("spmv", "int32"), ("elementwise_add", "int32")])
def test_whole_graph_trace_matches_python_cycle_for_cycle(kernel, dtype, sim):
    graph, inputs = _compiled_case(kernel, dtype)
    ref = simulate(graph, inputs, trace=True)
    got = _rtl_traced(graph, inputs, sim)
    assert got.cycles == ref.cycles
    assert sorted(got.trace.edges) == sorted(e.name for e in graph.edges)
    assert compare_traces(ref.trace, got.trace) == []
    late = [n for n, et in ref.trace.edges.items() if got.trace.edges[n].read_cycles !=
            et.read_cycles]
    assert not late, f"read cycles differ on {late}"


def _long_chain(n: int):
    """x(i) = neg^n(a(i)): a graph of n + 4 edges, one contract FIFO each."""
    from ir import GraphBuilder

    g = GraphBuilder(f"chain{n}", "float32", 2)
    g.tensor("a", (3,), "d")
    g.tensor("x", (3,), "d", role="output")
    g.node("root", "root")
    g.node("ai", "scan_dense", tensor="a", level=0)
    g.node("av", "array", tensor="a")
    g.node("xi", "level_writer", tensor="x", level=0)
    g.node("xv", "value_writer", tensor="x")
    g.edge("root.ref", "ai.ref_in")
    g.edge("ai.crd", "xi.crd")
    g.edge("ai.ref", "av.ref")
    port = "av.val"
    for k in range(n):
        g.node(f"neg{k}", "unary", op="neg")
        g.edge(port, f"neg{k}.a")
        port = f"neg{k}.val"
    g.edge(port, "xv.val")
    return g.build(kernel=f"chain{n}")


@pytest.mark.cosim
def test_traces_of_a_graph_with_more_fifos_than_open_files():
    """Every FIFO shares one trace file: with a file per FIFO, Icarus failed past ~1,000
    edges (the per-layer fused GPT attention graph has 1,146 nodes)."""
    graph = _long_chain(1100)
    inputs = {"a": np.array([1.5, -2.0, 0.25], np.float32)}
    ref = simulate(graph, inputs, trace=True)
    got = _rtl_traced(graph, inputs, "icarus")
    assert len(got.trace.edges) == len(graph.edges) > 1100
    assert got.cycles == ref.cycles
    assert compare_traces(ref.trace, got.trace) == []
    np.testing.assert_array_equal(got.dense("x"), inputs["a"])  # an even number of negs


@pytest.mark.cosim
@pytest.mark.parametrize("sim", SIMS)
def test_changed_expectation_is_a_mismatch_naming_the_edge(sim):
    graph, inputs = _compiled_case("spmm_ikj", "float32")
    got = _rtl_traced(graph, inputs, sim)
    # a Python run at depth 3 stalls less: its trace differs in cycles, edge by edge,
    # exactly as it differs from the Python run at the graph's depth 2
    deeper = simulate(graph, inputs, trace=True, depth=3)
    ref = simulate(graph, inputs, trace=True)
    mm = compare_traces(deeper.trace, got.trace)
    assert mm and mm == compare_traces(deeper.trace, ref.trace)
    first = mm[0]
    assert first.what == "cycle differs"
    assert str(first).startswith(f"edge {first.edge}: cycle differs at token #")
    assert first.edge in {e.name for e in graph.edges}
    # a changed value on one edge is reported on that edge only, at that token
    val, i = next((e.name, i) for e in graph.edges if e.kind == "val"
                  for i, t in enumerate(ref.trace.edges[e.name].tokens) if type(t) is float)
    ref.trace.edges[val].tokens[i] += 1.0
    mm = compare_traces(ref.trace, got.trace)
    assert [(m.edge, m.index, m.what) for m in mm] == [(val, i, "token differs")]


@pytest.mark.cosim
@pytest.mark.parametrize("sim", SIMS)
def test_cosim_report_checks_rtl_traces(sim, monkeypatch):
    from cosim import compare_backends

    monkeypatch.setenv("SAMFUSE_RTL_SIM", _sim(sim))
    graph, inputs = _compiled_case("sddmm", "float32")
    report = compare_backends(graph, inputs, ["python", "rtl"])
    assert report.runs["rtl"].error is None, report.runs["rtl"].error
    assert report.runs["rtl"].result.trace is not None
    assert report.mismatches["rtl"] == [] and report.ok, str(report)


@pytest.mark.cosim
@settings(max_examples=10, deadline=None)
@given(m=st.integers(1, 5), n=st.integers(1, 6), density=st.sampled_from([0.0, 0.2, 0.6, 1.0]),
       fmt=st.sampled_from(["dc", "cc"]), seed=st.integers(0, 2**16))
def test_locate_on_random_sparse_inputs_matches_python_and_numpy(m, n, density, fmt, seed):
    """masked_dense (A's crds locate into dense W) on random shapes and densities: the RTL
    equals the Python model in outputs and cycles, and the product equals numpy."""
    from cosim import RtlBackend

    rng = np.random.default_rng(seed)
    inputs = {"A": _matrix(rng, (m, n), density, "int32"),
              "W": _matrix(rng, (m, n), 1.0, "int32")}
    graph = examples.masked_dense(m, n, fmt, dtype="int32")
    ref = simulate(graph, inputs)
    got = RtlBackend(_sim("icarus")).run(graph, inputs)
    assert got.cycles == ref.cycles
    np.testing.assert_array_equal(got.outputs["X"].to_dense(), inputs["A"] * inputs["W"])
