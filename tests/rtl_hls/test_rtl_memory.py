"""The reference RTL netlist with the memory system (docs/timing.md, "Memory"): ideal
hardware generates exactly the netlist without memory, a memory netlist is lint clean.
Parity with the Python model (cycles, traces, bursts, bytes, stalls) is in
tests/parity/test_parity_memory.py.
"""

from __future__ import annotations

import pytest

from ir import load_hw
from rtl_hls.rtl import generate
from tests._kernel_graphs import compiled_case
from tests.parity._backends import assert_lint_clean as _assert_lint_clean


@pytest.mark.parametrize("hw", [None, "ideal"])
def test_ideal_hardware_generates_the_netlist_without_memory(hw):
    graph, _ = compiled_case("spmm_ikj", "float32")
    hwd = load_hw(hw) if hw else None
    assert generate(graph, hw=hwd).text == generate(graph).text
    assert "samfuse_mem" not in generate(graph, hw=hwd).text


@pytest.mark.cosim
def test_memory_netlist_is_lint_clean(tmp_path):
    graph, _ = compiled_case("sddmm", "float32")
    net = generate(graph, hw=load_hw("hbm2-u280", ["dram.channels=3"]))
    assert net.text.count("samfuse_mem_channel") == 3
    _assert_lint_clean(net, tmp_path)
