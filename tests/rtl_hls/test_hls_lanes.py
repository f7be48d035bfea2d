"""Parallel lanes in the HLS C++ backend (``lane_split``, ``lane_merge``, ``lane_merge2``):
compiled lane graphs C-simulated with g++ must give the Python model's token on every edge
and numpy's result, with and without off-chip memory, under both partitions; the top
carries the lane buffers' depths and the lane parameters; malformed lanes fail like the
model.

Each case is compiled once per (partition, memory) and its executable reused for every
input density; the balanced ranges are measured on the middle density's inputs.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest

from compiler import compile_expression
from cosim import HlsCsimBackend, HlsRunError
from ir import Graph, GraphBuilder, GraphError, compare_traces, load_hw
from rtl_hls.hls import LANE_BUFFER_BRAM_DEPTH, generate
from sim_models.python import SimulationError, simulate

HBM = "hbm2-u280"
SPMV = "y(i) = A(i,j) * x(j)"
SPMM = "X(i,j) = A(i,k) * B(k,j)"
DENSITIES = (0.0, 0.35, 1.0)
PARTITIONS = ("round-robin", "balanced")


def _mm(ins: dict) -> np.ndarray:
    return ins["A"] @ ins["B"]


#: case → (expression, formats, shapes, order, par, numpy reference, lane ops it uses)
CASES: dict[str, tuple[str, dict, dict, str | None, dict, Callable, set[str]]] = {
    "spmv_i3": (SPMV, {"A": "csr"}, {"A": (7, 6), "x": (6,)}, None, {"i": 3},
                lambda ins: ins["A"] @ ins["x"], {"lane_split", "lane_merge"}),
    "spmm_ikj_i2": (SPMM, {"A": "csr", "X": "csr"}, {"A": (7, 6), "B": (6, 5)}, "i,k,j",
                    {"i": 2}, _mm, {"lane_split", "lane_merge2"}),
    "spmm_ijk_i2": (SPMM, {"A": "csr", "B": "csr", "X": "csr"}, {"A": (7, 6), "B": (6, 5)},
                    "i,j,k", {"i": 2}, _mm, {"lane_split", "lane_merge2"}),
    "spmm_ijk_j2": (SPMM, {"A": "csr", "B": "csr", "X": "csr"}, {"A": (7, 6), "B": (6, 5)},
                    "i,j,k", {"j": 2}, _mm, {"lane_split", "lane_merge"}),
    "spmm_ijk_i2j2": (SPMM, {"A": "csr", "X": "csr"}, {"A": (7, 6), "B": (6, 5)}, "i,j,k",
                      {"i": 2, "j": 2}, _mm, {"lane_split", "lane_merge", "lane_merge2"}),
    # the join at i is a union of two doubly compressed operands: every operand's ref is
    # split, and the splits of the second ref leave their crd output unconnected
    "add_cc_i2": ("X(i,j) = A(i,j) + B(i,j)", {"A": "cc", "B": "cc", "X": "cc"},
                  {"A": (7, 6), "B": (7, 6)}, None, {"i": 2},
                  lambda ins: ins["A"] + ins["B"], {"lane_split", "lane_merge2"}),
}


def _inputs(case: str, density: float, dtype: str, seed: int) -> dict[str, np.ndarray]:
    """Small-integer values (exact in float32 in any summation order)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in CASES[case][2].items():
        vals = rng.integers(1, 9, shape) * (rng.random(shape) < density)
        out[name] = vals.astype(dtype)
    return out


def _graph(case: str, partition: str, dtype: str = "float32", **kw) -> Graph:
    expr, fmts, shapes, order, par, _, _ = CASES[case]
    stats = _inputs(case, DENSITIES[1], dtype, seed=1) if partition == "balanced" else None
    return compile_expression(expr, fmts, shapes, order=order, par=par, partition=partition,
                              stats=stats, dtype=dtype, **kw)


def _assert_token_exact(graph: Graph, inputs: dict, hls: HlsCsimBackend, want: np.ndarray,
                        hw=None) -> None:
    py = simulate(graph, inputs, trace=True, hw=hw)
    got = hls.run(graph, inputs, trace=True, hw=hw)
    assert set(got.outputs) == set(py.outputs)
    for name, tree in py.outputs.items():
        assert got.outputs[name].levels == tree.levels, name
        assert np.array_equal(got.outputs[name].vals, tree.vals), name
    (name,) = py.outputs
    np.testing.assert_allclose(got.outputs[name].to_dense(), want, rtol=1e-6)
    assert got.trace is not None and py.trace is not None
    assert set(got.trace.edges) == {e.name for e in graph.edges}
    mismatches = compare_traces(py.trace, got.trace, timed=False)
    assert not mismatches, "\n".join(map(str, mismatches))


#: (case, partition, memory): every case both ways without memory, and with it every
#: case but the union (its joins read no memory the others do not)
RUNS = [pytest.param(c, p, m, id=f"{c}-{p}-{'hbm' if m else 'recording'}")
        for c in sorted(CASES) for p in PARTITIONS for m in (False, True)
        if not (m and c == "add_cc_i2")]


@pytest.mark.cosim
@pytest.mark.parametrize(("case", "partition", "memory"), RUNS)
def test_lanes_are_token_exact_and_match_numpy(case, partition, memory, hls):
    """float32 on the recording top, int32 on the m_axi top: both dtypes, one build each."""
    dtype = "int32" if memory else "float32"
    hw = load_hw(HBM) if memory else None
    graph = _graph(case, partition, dtype)
    assert CASES[case][6] <= {n.op for n in graph.nodes.values()}
    for k, density in enumerate(DENSITIES):
        inputs = _inputs(case, density, dtype, seed=10 + k)
        _assert_token_exact(graph, inputs, hls, CASES[case][5](inputs), hw=hw)


@pytest.mark.cosim
def test_shallow_lane_buffers_give_the_same_tokens(hls):
    graph = _graph("spmm_ijk_i2j2", "balanced", lane_buffer=4)
    inputs = _inputs("spmm_ijk_i2j2", 0.6, "float32", seed=5)
    _assert_token_exact(graph, inputs, hls, _mm(inputs))


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
    graph = _graph(case, "round-robin", lane_buffer=lane_buffer)
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
    graph = _graph("spmv_i3", partition)
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
    graph = _graph("add_cc_i2", "round-robin")
    design = generate(graph)
    top = design.files[design.top_source]
    open_crd = [n for n, node in graph.nodes.items() if node.op == "lane_split"
                and not graph.out_edges[n].get("crd")]
    assert open_crd
    for n in open_crd:
        line = _call_line(top, n)
        assert re.search(r"samfuse_lane_split<[^>]*>\(s\d+, s\d+, samfuse::Discard\(\), ",
                         line), line


# -- lanes built by hand: a correct deal, overlapping lanes, a bad lane number -------------
def _deal(lane_b: int, lanes: int = 2) -> Graph:
    """A compressed vector dealt round-robin to two lanes and merged back."""
    g = GraphBuilder("deal", "float32")
    g.tensor("a", (9,), "c")
    g.tensor("x", (9,), "c", role="output")
    g.node("root", "root")
    g.node("ai", "scan_compressed", tensor="a", level=0)
    g.edge("root.ref", "ai.ref_in")
    g.node("merge", "lane_merge")
    for s, lane in (("a", 0), ("b", lane_b)):
        g.node(f"split_{s}", "lane_split", lanes=lanes, lane=lane, lo=0, hi=9)
        g.node(f"val_{s}", "array", tensor="a")
        for src, dst in [("ai.crd", f"split_{s}.crd_in"), ("ai.ref", f"split_{s}.ref_in"),
                         (f"split_{s}.ref", f"val_{s}.ref"),
                         (f"split_{s}.crd", f"merge.crd_{s}"),
                         (f"val_{s}.val", f"merge.val_{s}")]:
            g.edge(src, dst)
    g.node("xi", "level_writer", tensor="x", level=0)
    g.node("xv", "value_writer", tensor="x")
    g.edge("merge.crd", "xi.crd")
    g.edge("merge.val", "xv.val")
    return g.build()


_VEC = {"a": np.array([0, 3, 0, 1, 4, 0, 5, 9, 2], np.float32)}


@pytest.mark.cosim
def test_a_dealt_vector_merges_back_in_order(hls):
    _assert_token_exact(_deal(1), _VEC, hls, _VEC["a"])


@pytest.mark.cosim
def test_overlapping_lanes_fail_in_csim_as_in_the_model(hls, unchecked_graphs):
    graph = _deal(0, 2)
    with pytest.raises(SimulationError, match="both lanes hold coordinate"):
        simulate(graph, _VEC)
    with pytest.raises(HlsRunError, match="samfuse csim: samfuse_lane_\\w+: both lanes hold "
                       "the same coordinate"):
        hls.run(graph, _VEC)


def test_a_lane_beyond_the_lane_count_does_not_load():
    with pytest.raises(GraphError, match="lane 2 must be below lanes 2"):
        _deal(2, 2)
