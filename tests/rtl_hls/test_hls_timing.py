"""HLS under the timing knobs (docs/timing.md): each stream's storage bound as a Vitis
user binds it (a shift register at read latency 1, a RAM with a registered output at 2),
nothing added at the defaults; C-simulation stays token-exact against the Python model
(which runs the same knobs timed); knobs the HLS backend does not render are refused."""

from __future__ import annotations

import numpy as np
import pytest

from cosim.backends._backend import get_backend
from cosim.runs._calibrate import bundled_suite
from ir import HwError, at_run_depth, load_hw
from rtl_hls.hls import generate

SUITE = {k.name: k for k in bundled_suite("small")}


def _top(kernel: str, overrides: dict) -> str:
    hw = load_hw("ideal").with_overrides(overrides)
    design = generate(at_run_depth(SUITE[kernel].graph, "graph", hw), hw=hw)
    return design.files[f"{design.top}.cpp"]


def test_default_knobs_add_no_storage_pragmas():
    assert "bind_storage" not in _top("spmv", {})


def test_vitis_fifo_latency_binds_srl_and_bram_by_depth():
    shallow = _top("spmv", {"fifo.latency": "vitis", "fifo.depth": 2})
    deep = _top("spmv", {"fifo.latency": "vitis", "fifo.depth": 4})
    assert "type=fifo impl=srl" in shallow and "impl=bram" not in shallow
    assert "type=fifo impl=bram" in deep and "impl=srl" not in deep
    assert "#pragma HLS stream variable=s0 depth=4" in deep


def test_knobs_hls_does_not_render_are_refused():
    k = SUITE["spmv"]
    hw = load_hw("ideal").with_overrides({"timing.alu.ii": 2})
    with pytest.raises(HwError, match="does not render the timing knob"):
        get_backend("hls-csim").run(k.graph, k.inputs, hw=hw)


@pytest.mark.cosim
@pytest.mark.parametrize("kernel", ["spmv", "elementwise_add", "fused2"])
def test_csim_is_token_exact_under_vitis_fifos(kernel, hls):
    k = SUITE[kernel]
    hw = load_hw("ideal").with_overrides({"fifo.latency": "vitis", "fifo.depth": 4})
    ref = get_backend("python").run(k.graph, k.inputs, hw=hw)
    got = hls.run(k.graph, k.inputs, hw=hw)
    for name, tree in ref.outputs.items():
        np.testing.assert_array_equal(got.outputs[name].to_dense(), tree.to_dense())
