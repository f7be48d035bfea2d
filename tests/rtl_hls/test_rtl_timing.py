"""The reference RTL's timing knobs (docs/timing.md, "Latency, II and start-up"): at the
defaults the netlist is exactly today's; off them, the RTL equals the Python model cycle
for cycle and token for token (every edge's write and read cycles), under Icarus and
Verilator, on kernels × knob settings, fixed and random."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cosim.runs._calibrate import bundled_suite
from ir import at_run_depth, compare_traces, load_hw
from rtl_hls.rtl import generate
from rtl_hls.rtl.bench import simulator_missing
from tests.parity._backends import assert_lint_clean

SUITE = {k.name: k for k in bundled_suite("small")}

#: knob settings: RAM FIFOs, scanner and join latencies, an ALU at II 2; start-up and
#: writer latency under FIFO read latency 2; deeper Vitis FIFOs with a late dense scanner
SETTINGS = {
    "vitis-lat-ii": {"fifo.latency": "vitis", "fifo.depth": 3,
                     "timing.scan_compressed.latency": 3, "timing.alu.ii": 2,
                     "timing.intersect.latency": 2, "timing.union.latency": 2},
    "f2-startup": {"fifo.latency": 2, "timing.root.startup": 4, "timing.repeat.latency": 4,
                   "timing.reduce.ii": 2, "timing.level_writer.latency": 3,
                   "timing.value_writer.latency": 2},
    "vitis-d4": {"fifo.latency": "vitis", "fifo.depth": 4, "timing.array.latency": 2,
                 "timing.union.ii": 2, "timing.spacc.latency": 3,
                 "timing.scan_dense.startup": 7},
}
KERNELS = ["spmv", "elementwise_add", "spmm_ikj", "row_scale", "masked_dense", "fused0"]


def _sim(name: str) -> str:
    reason = simulator_missing(name)
    if reason:
        pytest.skip(reason)
    return name


def _hw(overrides):
    return load_hw("ideal").with_overrides(overrides)


def _assert_rtl_equals_python(kernel: str, hw, sim: str) -> None:
    from cosim import RtlBackend
    from cosim.backends._backend import get_backend

    k = SUITE[kernel]
    ref = get_backend("python").run(k.graph, k.inputs, hw=hw, trace=True)
    got = RtlBackend(_sim(sim)).run(k.graph, k.inputs, hw=hw, trace=True)
    assert got.cycles == ref.cycles
    assert compare_traces(ref.trace, got.trace) == []
    late = [n for n, et in ref.trace.edges.items()
            if got.trace.edges[n].read_cycles != et.read_cycles]
    assert not late, f"read cycles differ on {late}"


@pytest.mark.parametrize("kernel", KERNELS)
def test_default_knobs_leave_the_netlist_unchanged(kernel):
    g = SUITE[kernel].graph
    text = generate(g).text
    assert text == generate(g, hw=load_hw("ideal")).text
    for knob_text in ("samfuse_timing_shell", ".CAP(", ".VIS(", "_ts_go"):
        assert knob_text not in text


def test_knobs_render_as_shell_and_fifo_parameters():
    g = SUITE["spmv"].graph
    text = generate(g, hw=_hw(SETTINGS["f2-startup"])).text
    assert "samfuse_timing_shell #(.II(1), .STARTUP(4), .LATENCY(1))" in text  # the roots
    assert ".LATENCY(3))" in text  # the level writers: done delayed by 2 cycles
    assert ".VIS(2)" in text and ".VIS(5)" in text  # F = 2; repeat's latency 4 + F - 1
    hw = _hw(SETTINGS["vitis-d4"])
    vitis = generate(at_run_depth(g, "graph", hw), hw=hw).text  # fifo.depth 4, as a run
    assert ".DEPTH(4), .CAP(5), .VIS(2)" in vitis  # a RAM FIFO: capacity depth + 1


@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_netlist_with_knobs_is_lint_clean(setting, tmp_path):
    assert_lint_clean(generate(SUITE["fused0"].graph, hw=_hw(SETTINGS[setting])), tmp_path)


@pytest.mark.cosim
@pytest.mark.parametrize("setting", sorted(SETTINGS))
@pytest.mark.parametrize("kernel", KERNELS)
def test_rtl_equals_python_at_non_default_knobs(kernel, setting):
    _assert_rtl_equals_python(kernel, _hw(SETTINGS[setting]), "icarus")


@pytest.mark.cosim
@pytest.mark.parametrize("kernel", ["spmm_ikj", "fused2"])
def test_verilator_equals_python_at_non_default_knobs(kernel):
    _assert_rtl_equals_python(kernel, _hw(SETTINGS["vitis-lat-ii"] | SETTINGS["f2-startup"]
                                          | {"fifo.latency": "vitis"}), "verilator")


_KINDS = ["root", "scan_compressed", "scan_dense", "repeat", "repsig", "array", "alu",
          "reduce", "intersect", "union", "level_writer", "value_writer", "spacc"]


@st.composite
def _knobs(draw):
    out = {"fifo.latency": draw(st.sampled_from([1, 2, "vitis"])),
           "fifo.depth": draw(st.integers(2, 5))}
    for kind in draw(st.lists(st.sampled_from(_KINDS), min_size=1, max_size=5, unique=True)):
        out[f"timing.{kind}.latency"] = draw(st.integers(1, 4))
        out[f"timing.{kind}.ii"] = draw(st.integers(1, 3))
        out[f"timing.{kind}.startup"] = draw(st.integers(0, 6))
    return out


@pytest.mark.cosim
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kernel=st.sampled_from(["spmv", "elementwise_mul", "row_sum", "spmm_ikj", "fused2",
                               "sddmm"]), knobs=_knobs())
def test_rtl_equals_python_at_random_knobs(kernel, knobs):
    _assert_rtl_equals_python(kernel, _hw(knobs), "icarus")
