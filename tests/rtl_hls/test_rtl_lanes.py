"""The RTL netlist of the lane primitives (``lane_split``, ``lane_merge``, ``lane_merge2``):
the shared lane cases use every lane primitive (the parity suite's and Verilator's
selections too), a split lane outside its lanes is an error naming the node, the shallow
cases really make lanes wait, the netlists lint clean. Parity with the Python model is in
tests/parity/test_parity_lanes.py.
"""

from __future__ import annotations

import pytest

from rtl_hls.rtl import generate
from sim_models.python import simulate
from tests._lane_graphs import LANE_CASES, lane_case, lane_graph, lane_operands
from tests.parity._backends import assert_lint_clean as _assert_lint_clean


def test_cases_use_every_lane_primitive():
    ops = {n.op for c in LANE_CASES for n in lane_case(c)[0].nodes.values()}
    assert {"lane_split", "lane_merge", "lane_merge2"} <= ops
    graph = lane_case("emul_j2")[0]
    assert any(not graph.out_edges[n.id].get("crd") for n in graph.nodes.values()
               if n.op == "lane_split"), "no split leaves its crd output unconnected"
    verilator = ("gustavson_i2j2_balanced_shallow", "spmv_i3")  # the parity suite's
    ops = {n.op for c in verilator for n in lane_case(c)[0].nodes.values()}
    assert {"lane_split", "lane_merge", "lane_merge2"} <= ops


def test_a_split_lane_outside_its_lanes_is_an_error_naming_the_node():
    graph = lane_case("spmv_i2")[0]
    split = next(n for n in graph.nodes.values() if n.op == "lane_split")
    split.params["lane"] = 2
    with pytest.raises(ValueError, match=f"node {split.id!r}: lane 2 is not below lanes 2"):
        generate(graph)


@pytest.mark.parametrize("case", [c for c, v in LANE_CASES.items() if v[3] == 2])
def test_shallow_lane_buffers_make_lanes_wait(case):
    """The shallow cases test back-pressure between lanes: with the default buffers the
    same graph finishes sooner."""
    kernel, par, partition, _, _ = LANE_CASES[case]
    graph, inputs = lane_case(case)
    deep = lane_graph(kernel, inputs, par, partition)
    assert simulate(graph, inputs).cycles > simulate(deep, inputs).cycles


@pytest.mark.cosim
def test_lane_netlists_are_lint_clean(tmp_path):
    """Round-robin (lo = 0) and balanced (an empty range: hi = 0) splits, both merges,
    unconnected split outputs, with and without FIFOs."""
    inputs = lane_operands("gustavson", 3, 4, 4, 0.0, 0)
    graphs = [lane_graph("gustavson", inputs, {"i": 4, "j": 2}, "balanced"),
              lane_case("spmv_i3")[0], lane_case("emul_j2")[0]]
    assert any(n.params["hi"] == 0 for n in graphs[0].nodes.values()
               if n.op == "lane_split")
    for graph in graphs:
        for open_edges in (False, True):
            _assert_lint_clean(generate(graph, open_edges=open_edges), tmp_path)
