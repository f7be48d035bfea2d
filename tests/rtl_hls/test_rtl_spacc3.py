"""Reference RTL of the order-3 sparse accumulator (``samfuse_spacc3``, the L = 3
``samfuse_spacc_core``) on the compiled graphs of ``tests/_spacc3_graphs.py`` against the
Python model and numpy: every edge's tokens with their write and read cycles, the cycle
count and the outputs bit for bit; with the memory system (``hbm2-u280``) every burst and
each memory node's stall cycles; block values; the peak entry count through the
on-chip buffer check; lint. Under Icarus, and under Verilator on a few cases (each
Verilator build takes about a minute)."""

from __future__ import annotations

import pytest
from _spacc3_graphs import spacc3_block_case, spacc3_cases
from test_rtl import _assert_lint_clean, _sim
from test_rtl_blocks import HW, _check

from ir import load_hw
from rtl_hls.rtl import generate
from sim_models.python import SimulationError, simulate

CASES = {name: (graph, inputs, expected) for name, graph, inputs, expected in spacc3_cases()}


#: one-word lines, one outstanding write, latency 20: the writers wait for every write,
#: so the drain often finds crd0/val full (a step waits for space on what it writes)
SLOW_WRITES = ["dram.line_bytes=4", "dram.outstanding=1", "dram.latency_cycles=20"]


def _hw(name: str):
    spec = {**HW, "slow_writes": ("hbm2-u280", SLOW_WRITES)}[name]
    return None if spec is None else load_hw(*spec)


def _case(name: str):
    if name == "ttm_blocks":
        return spacc3_block_case(2)[1:]
    return CASES[name]


def test_spacc3_netlists_are_lint_clean(tmp_path):
    """A scalar and a block spacc3 (closed and open edges), and one with memory."""
    for name in ("ttm_kijl", "ttm_blocks"):
        graph = _case(name)[0]
        net = generate(graph)
        assert "samfuse_spacc3 #(.FP(1'b1), .N2(" in net.text
        for open_edges in (False, True):
            _assert_lint_clean(generate(graph, open_edges=open_edges), tmp_path)
    _assert_lint_clean(generate(_case("outer3")[0], hw=load_hw("hbm2-u280")), tmp_path)


def test_spacc3_is_sized_by_its_output_levels():
    """N2 x N1 x N0 entries: the sizes of the output levels its crds are written to."""
    graph = _case("ttm_kijl")[0]
    (node,) = [n for n in graph.nodes.values() if n.op == "spacc3"]
    i, j, _, l = (*graph.tensors["B"].shape, graph.tensors["C"].shape[1])
    net = generate(graph)
    assert f".N2({i}), .N1({j}), .N0({l})" in net.text
    assert net.acc_instances[node.id].endswith(".u_core")


@pytest.mark.cosim
@pytest.mark.parametrize("case", list(CASES))
def test_spacc3_matches_python_on_icarus(case):
    _check(*_case(case), "icarus", None)


#: (case, simulator, hardware): the memory system on both simulators, slow writers; blocks
#: on a bounded datapath (several cycles per accumulation), with memory, under Verilator
MORE = [("ttm_kijl", "verilator", "ideal"), ("outer3", "verilator", "ideal"),
        ("ttm_kijl", "icarus", "hbm2"), ("outer3", "verilator", "hbm2"),
        ("ttm_kijl", "icarus", "slow_writes"), ("outer3", "icarus", "slow_writes"),
        ("ttm_blocks", "icarus", "bounded"), ("ttm_blocks", "icarus", "hbm2"),
        ("ttm_blocks", "verilator", "ideal")]


@pytest.mark.cosim
@pytest.mark.parametrize("case,sim,hw", MORE)
def test_spacc3_more(case, sim, hw):
    _check(*_case(case), sim, _hw(hw))


@pytest.mark.cosim
def test_spacc3_onchip_buffer_is_enforced_as_the_model_on_icarus():
    """The core's peak register, read by the bench at its instance path, goes through the
    model's own check: the same error (naming the accumulator and its bytes, so the same
    peak) over a small buffer."""
    from cosim import RtlBackend

    graph, inputs, _ = _case("ttm_kijl")
    small = load_hw("hbm2-u280", ["onchip.bytes=16"])
    with pytest.raises(SimulationError) as want:
        simulate(graph, inputs, hw=small)
    with pytest.raises(SimulationError) as got:
        RtlBackend(_sim("icarus")).run(graph, inputs, hw=small)
    assert str(got.value) == str(want.value)
