"""Reference RTL with the memory system (docs/timing.md, "Memory") against the Python
model: cycle counts, every edge's trace (write and read cycles), every burst, the bytes
per channel and per node, and each memory node's stall_mem, under Icarus and Verilator;
and on ideal hardware, exactly the netlist and the cycles of the RTL without memory."""

from __future__ import annotations

import numpy as np
import pytest
from test_rtl import _assert_lint_clean, _compiled_case, _sim

from ir import compare_traces, load_hw
from rtl_hls.rtl import generate
from sim_models.python import SimulationError, simulate

#: name -> (kernel, hardware overrides on hbm2-u280); small graphs, every memory regime
CASES = {
    "spmv": ("spmv", []),
    "spmm_spacc": ("spmm_ikj", []),                  # Gustavson: i,k,j with spacc
    "spmm_spacc2": ("spmm_kij", []),
    "contention": ("sddmm", ["dram.channels=1"]),     # every port on one channel
    "latency_bound": ("spmm_ikj", ["dram.outstanding=1", "dram.latency_cycles=20"]),
    "bandwidth_bound": ("spmv", ["dram.bytes_per_cycle=4", "dram.channels=1"]),
    # lines of two words: seg[r] and seg[r+1] often straddle lines (two bursts a cycle)
    "short_lines": ("spmm_kij", ["dram.line_bytes=8", "dram.outstanding=2",
                                 "dram.channels=1", "dram.bytes_per_cycle=3"]),
}
VERILATOR_CASES = ["spmm_spacc", "contention", "latency_bound"]


def _bursts(res):
    return [(r.cycle, r.port, r.line, r.lines, r.write) for r in res.mem_requests]


def _memory_stats(res):
    return {n: (s.stall_mem, s.dram_read_bytes, s.dram_write_bytes, s.mem_requests)
            for n, s in res.nodes.items()}


def _check_against_python(kernel: str, overrides: list[str], sim: str,
                          case=None) -> None:
    """``case``: (graph, inputs) instead of the compiled ``kernel``."""
    from cosim import RtlBackend

    hw = load_hw("hbm2-u280", overrides)
    graph, inputs = case or _compiled_case(kernel, "float32")
    ref = simulate(graph, inputs, trace=True, hw=hw, mem_trace=True)
    got = RtlBackend(_sim(sim)).run(graph, inputs, trace=True, hw=hw, mem_trace=True)
    assert got.cycles == ref.cycles
    assert compare_traces(ref.trace, got.trace) == []
    late = [n for n, et in ref.trace.edges.items()
            if got.trace.edges[n].read_cycles != et.read_cycles]
    assert not late, f"read cycles differ on {late}"
    assert _bursts(got) == _bursts(ref)
    assert got.channel_bytes == ref.channel_bytes
    mem_nodes = _memory_stats(got)
    assert mem_nodes == {n: v for n, v in _memory_stats(ref).items() if n in mem_nodes}
    assert got.dram_read_bytes == ref.dram_read_bytes > 0
    assert got.dram_write_bytes == ref.dram_write_bytes > 0
    for name, tree in ref.outputs.items():
        np.testing.assert_array_equal(got.outputs[name].to_dense(), tree.to_dense())


@pytest.mark.cosim
@pytest.mark.parametrize("case", CASES)
def test_memory_matches_python_on_icarus(case):
    _check_against_python(*CASES[case], "icarus")


@pytest.mark.cosim
@pytest.mark.parametrize("case", VERILATOR_CASES)
def test_memory_matches_python_on_verilator(case):
    _check_against_python(*CASES[case], "verilator")


#: the run ends at a write's ack, long after the last D: a level whose only write is the
#: seg line its D flushes (no crds at that level), acknowledged ~50 cycles later
LATE_ACK_CASES = [("spmm_ikj", 2), ("spmm_kij", 2), ("spmm_kij", 4)]


@pytest.mark.cosim
@pytest.mark.parametrize("kernel,depth", LATE_ACK_CASES)
def test_memory_run_ends_at_the_last_ack_on_icarus(kernel, depth):
    """docs/timing.md, "End of run": cycles = max(1 + last D, largest ack). The writers'
    `done` was `fin && now >= last_ack` from registers set at one edge: under Icarus it
    glitched high for a delta cycle at the D firing and the bench stopped at 1 + last D
    (193 instead of 242 for spmm_ikj)."""
    from cosim.runs._sweep import kernel_graph

    case = kernel_graph(kernel, 6, 0.1, depth, "float32", 0)
    ref = simulate(*case, hw=load_hw("hbm2-u280"), mem_trace=True)
    last_write = max(r.cycle for r in ref.mem_requests if r.write)
    assert ref.cycles > last_write + 1  # the case still ends at an ack, not at D
    _check_against_python(kernel, [], "icarus", case)


@pytest.mark.cosim
def test_memory_run_ends_at_the_last_ack_on_verilator():
    from cosim.runs._sweep import kernel_graph

    _check_against_python("spmm_ikj", [], "verilator",
                          kernel_graph("spmm_ikj", 6, 0.1, 2, "float32", 0))


@pytest.mark.cosim
def test_memory_fcfs_when_a_scanner_waits_for_space():
    """A scanner blocked on output space still reads its IN_FIBER crd at its own next
    cycle, ahead of a burst another port issues later (the case that once made the Python
    model grant out of order)."""
    _check_against_python("sddmm", ["dram.line_bytes=4", "dram.outstanding=3",
                                    "dram.channels=2", "dram.bytes_per_cycle=2"], "icarus")


@pytest.mark.parametrize("hw", [None, "ideal"])
def test_ideal_hardware_generates_the_netlist_without_memory(hw):
    graph, _ = _compiled_case("spmm_ikj", "float32")
    hwd = load_hw(hw) if hw else None
    assert generate(graph, hw=hwd).text == generate(graph).text
    assert "samfuse_mem" not in generate(graph, hw=hwd).text


@pytest.mark.cosim
def test_ideal_hardware_runs_the_contract_without_memory():
    from cosim import RtlBackend

    graph, inputs = _compiled_case("spmv", "float32")
    got = RtlBackend(_sim("icarus")).run(graph, inputs, hw=load_hw("ideal"))
    assert got.cycles == simulate(graph, inputs).cycles
    assert got.nodes == {} and got.channel_bytes == [] and got.hw == "ideal"


@pytest.mark.cosim
def test_memory_netlist_is_lint_clean(tmp_path):
    graph, _ = _compiled_case("sddmm", "float32")
    net = generate(graph, hw=load_hw("hbm2-u280", ["dram.channels=3"]))
    assert net.text.count("samfuse_mem_channel") == 3
    _assert_lint_clean(net, tmp_path)


@pytest.mark.cosim
@pytest.mark.parametrize("kernel", ["spmm_ikj", "spmm_kij"])  # spacc (Gustavson), spacc2
def test_onchip_buffer_is_enforced_as_the_model_on_icarus(kernel):
    """Each accumulator's peak register, read by the bench, goes through the model's own
    check: the same error (naming every accumulator and its bytes) over onchip.bytes, and
    a normal run under the default buffer."""
    from cosim import RtlBackend

    graph, inputs = _compiled_case(kernel, "float32")
    small = load_hw("hbm2-u280", ["onchip.bytes=16"])
    with pytest.raises(SimulationError) as want:
        simulate(graph, inputs, hw=small)
    with pytest.raises(SimulationError) as got:
        RtlBackend(_sim("icarus")).run(graph, inputs, hw=small)
    assert str(got.value) == str(want.value)
    hw = load_hw("hbm2-u280")
    res = RtlBackend(_sim("icarus")).run(graph, inputs, hw=hw)
    assert res.cycles == simulate(graph, inputs, hw=hw).cycles
