"""ir.elaborate: each node's derived parameters, computed once for every backend."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ir
import ir.examples as ex
from rtl_hls.hls import generate as hls_generate
from rtl_hls.rtl import generate as rtl_generate
from tests._spacc3_graphs import spacc3_block_case


def test_name_sets_are_derived_from_the_catalogue():
    assert ir.COMPUTE_PRIMITIVES == {"alu", "unary", "reduce", "spacc", "spacc2", "spacc3"}
    assert dict(ir.ENTRY_BYTES) == {"spacc": 8, "spacc2": 12, "spacc3": 16}
    assert ir.LANE_MERGES == {"lane_merge", "lane_merge2", "lane_combine", "lane_combine2"}
    assert ir.MEMORY_PRIMITIVES == {"scan_compressed", "array", "level_writer",
                                    "value_writer"}
    assert ir.WRITER_PRIMITIVES == {"level_writer", "value_writer"}
    assert {p.name for p in ir.CATALOGUE.values() if p.writes_level} == {"level_writer"}
    assert {p.name for p in ir.CATALOGUE.values() if p.reads_values} == {"array"}


def _grid_max(graph: ir.Graph) -> int:
    return int(max((np.array(t.shape) // np.array(t.block or (1,) * len(t.shape))).max()
                   for t in graph.tensors.values()))


def test_spacc_capacity_is_the_block_grid_in_every_generator():
    """The drift of issue 24: the netlist sized a blocked spacc by the full shape."""
    g = ex.spmm_ikj(8, 6, 4, block=2)
    (acc,) = [n for n in g.nodes.values() if n.op == "spacc"]
    bound = _grid_max(g)
    assert bound == 4  # 8 // 2; the full shape's 8 would be twice the grid
    assert ir.elaborate(g).nodes[acc.id].acc_bounds == (bound,)
    assert f"samfuse_spacc #(.FP(1'b1), .N({bound}), .E(4))" in rtl_generate(g).text
    assert f"samfuse_spacc<{bound}u, true>" in hls_generate(g).files["spmm_ikj_top.cpp"]


def test_spacc3_bounds_are_the_output_levels_over_the_grid():
    _, g, _, _ = spacc3_block_case(b=2)
    (acc,) = [n for n in g.nodes.values() if n.op == "spacc3"]
    x = g.tensors["X"]
    grid = tuple(int(n) for n in np.array(x.shape) // np.array(x.block))
    assert ir.elaborate(g).nodes[acc.id].acc_bounds == grid
    n2, n1, n0 = grid
    assert f".N2({n2}), .N1({n1}), .N0({n0})" in rtl_generate(g).text


def test_block_firing_cycles_are_the_work_over_the_macs():
    g = ex.spmm_ikj(8, 6, 4, block=2)
    hw = ir.load_hw("ideal", ["compute.macs_per_cycle=3"])
    elab = ir.elaborate(g, hw)
    # a 2x2 block product is 2*2*2 = 8 MACs: ceil(8 / 3) = 3 cycles; the accumulator's
    # 4 adds: ceil(4 / 3) = 2
    assert {n: c for n, c in elab.cycles.items()} == {
        n.id: 3 if n.op == "alu" else 2 for n in g.nodes.values()
        if n.op in ("alu", "spacc")}
    assert elab.cycles == ir.block_cycles(g, hw)
    assert ir.elaborate(g).cycles == {}


def test_elaboration_at_a_run_depth_and_its_memory_ports():
    g = ex.spmv(4, 3)
    hw = ir.load_hw("hbm2-u280")
    elab = ir.elaborate(g, hw, depth=5)
    assert {e.depth for e in elab.graph.edges} == {5}
    assert ir.elaborate(g, hw).graph is g
    assert elab.mem_ports == tuple(ir.memory_ports(g, hw))
    assert sum(len(n.mem_ports) for n in elab.nodes.values()) == len(elab.mem_ports)


def test_run_cycles_is_the_last_writer_plus_one_or_the_memory_end():
    assert ir.run_cycles([3, 9, 4]) == 10
    assert ir.run_cycles([3, 9, 4], memory_end=12) == 12
    assert ir.run_cycles([]) == 0


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.uint32, st.tuples(st.integers(0, 5), st.sampled_from([1, 2, 4]))))
def test_written_block_values_keep_every_bit(bits):
    elems = bits.shape[1]
    rows = ir.written_values(bits.reshape(-1).tolist(), "float32", elems if elems > 1 else 1)
    if elems == 1:
        expect = bits.reshape(-1).view(np.float32).tolist()
        got = np.array(rows, dtype=np.float32).view(np.uint32)
        assert np.array_equal(got, np.array(expect, dtype=np.float32).view(np.uint32))
    else:
        assert len(rows) == bits.shape[0]
        for row, want in zip(rows, bits, strict=True):
            assert np.array_equal(np.asarray(row).view(np.uint32), want)
