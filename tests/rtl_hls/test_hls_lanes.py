"""The HLS generator on lane graphs (``lane_split``, ``lane_merge``, ``lane_merge2``): the
top carries the lane buffers' depths (in block RAM when deep), the lane parameters as
template arguments, and discards an unconnected split output. C-simulation's parity with
the Python model is in tests/parity/test_parity_lanes.py.
"""

from __future__ import annotations

import re

import pytest

from ir import Graph, load_hw
from rtl_hls.hls import LANE_BUFFER_BRAM_DEPTH, generate
from tests._lane_graphs import PARTITIONS, hls_lane_graph

HBM = "hbm2-u280"


# -- the generated top -------------------------------------------------------------------
def _stream_ids(top: str) -> dict[str, str]:
    """edge name → the stream variable the top declares for it."""
    return {name: var for var, name in
            re.findall(r'hls::stream<samfuse::tok_t> (s\d+)\("([^"]+)"\);', top)}


def _call_line(top: str, node: str) -> str:
    (line,) = [ln for ln in top.splitlines() if ln.endswith(f"  // {node}")]
    return line


def _merge_inputs(graph: Graph) -> list:
    return [e for e in graph.edges
            if graph.nodes[e.dst_node].op in ("lane_merge", "lane_merge2")]


@pytest.mark.parametrize(("case", "lane_buffer", "depths"), [
    ("spmv_i3", 1024, {1024, 2048}),     # a 3-lane tree: one input has two lanes below
    ("spmm_ikj_i2", 1024, {1024}),
    ("spmm_ijk_i2j2", 4096, {4096, 8192}),  # an i-merge input collects two j lanes
    ("spmv_i3", 4, {4, 8}),
])
def test_lane_buffers_are_deep_streams_in_block_ram(case, lane_buffer, depths):
    graph = hls_lane_graph(case, "round-robin", lane_buffer=lane_buffer)
    for hw in (None, load_hw(HBM)):
        design = generate(graph, hw=hw)
        top = design.files[design.top_source]
        ids = _stream_ids(top)
        assert "#pragma HLS dataflow" in top
        merged = _merge_inputs(graph)
        assert {e.depth for e in merged} == depths
        for e in merged:
            var = ids[e.name]
            assert f"#pragma HLS stream variable={var} depth={e.depth}\n" in top, e.name
            bram = f"#pragma HLS bind_storage variable={var} type=fifo impl=bram"
            assert (bram in top) == (e.depth >= LANE_BUFFER_BRAM_DEPTH), e.name
        others = [ids[e.name] for e in graph.edges if e not in merged]
        assert not any(f"bind_storage variable={v} " in top for v in others)


@pytest.mark.parametrize("partition", PARTITIONS)
def test_lane_split_parameters_are_template_arguments(partition):
    graph = hls_lane_graph("spmv_i3", partition)
    design = generate(graph)
    top = design.files[design.top_source]
    for op in ("lane_split", "lane_merge"):
        assert f'#include "{op}.h"' in top
    splits = [n for n in graph.nodes.values() if n.op == "lane_split"]
    assert len(splits) == 3  # per lane, one split of i's crd and A's ref together
    for node in splits:
        p = node.params
        targs = f"<{p['lanes']}u, {p['lane']}u, {p['lo']}u, {p['hi']}u>"
        assert f"samfuse_lane_split{targs}(" in _call_line(top, node.id)
    los = sorted(n.params["lo"] for n in splits)
    if partition == "balanced":
        assert {n.params["lanes"] for n in splits} == {1} and los[0] == 0 and los[1] > 0
    else:
        assert {n.params["lanes"] for n in splits} == {3} and los == [0, 0, 0]


def test_an_unconnected_lane_split_output_is_discarded():
    graph = hls_lane_graph("add_cc_i2", "round-robin")
    design = generate(graph)
    top = design.files[design.top_source]
    open_crd = [n for n, node in graph.nodes.items() if node.op == "lane_split"
                and not graph.out_edges[n].get("crd")]
    assert open_crd
    for n in open_crd:
        line = _call_line(top, n)
        assert re.search(r"samfuse_lane_split<[^>]*>\(s\d+, s\d+, samfuse::Discard\(\), ",
                         line), line
