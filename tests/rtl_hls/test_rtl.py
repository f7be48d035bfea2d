"""The reference RTL's own behaviour: every primitive has a module, generated netlists are
lint clean, traces of a graph with more FIFOs than open files, a changed expectation is
reported on its edge, the comparison report checks RTL traces. Parity with the Python
model (whole graphs cycle for cycle, every primitive replaying its trace) is in
tests/parity/ (test_parity_*.py), on every backend at once.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from ir import CATALOGUE, compare_traces
from rtl_hls.rtl import SV_DIR, generate, module_name
from rtl_hls.rtl.bench import simulator_missing
from sim_models.python import simulate
from tests._kernel_graphs import CASES, compiled_case
from tests.parity._backends import assert_lint_clean as _assert_lint_clean

SIMS = ["icarus", "verilator"]
#: the example kernels whose netlists are linted
KERNELS = ["spmv", "spmm_ijk", "spmm_ikj", "spmm_kij", "elementwise_add",
           "elementwise_mul", "row_scale", "masked_dense"]


def _sim(name: str) -> str:
    reason = simulator_missing(name)
    if reason:
        pytest.skip(reason)
    return name


def test_every_catalogue_primitive_has_an_rtl_module():
    for op in CATALOGUE:
        path = SV_DIR / f"{module_name(op)}.sv"
        assert path.exists(), f"no RTL for {op!r}"
        assert re.search(rf"^module {module_name(op)}\b", path.read_text(), re.M)


@pytest.mark.parametrize("kernel", KERNELS)
def test_generated_netlist_is_lint_clean(kernel, tmp_path):
    for open_edges in (False, True):
        _assert_lint_clean(generate(CASES[kernel][0]("float32"), open_edges=open_edges),
                           tmp_path)


def _rtl_traced(graph, inputs, sim: str):
    from cosim import RtlBackend

    return RtlBackend(_sim(sim)).run(graph, inputs, trace=True)


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
    graph, inputs = compiled_case("spmm_ikj", "float32")
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
    graph, inputs = compiled_case("sddmm", "float32")
    report = compare_backends(graph, inputs, ["python", "rtl"])
    assert report.runs["rtl"].error is None, report.runs["rtl"].error
    assert report.runs["rtl"].result.trace is not None
    assert report.mismatches["rtl"] == [] and report.ok, str(report)
