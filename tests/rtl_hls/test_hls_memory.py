"""Generated HLS tops with off-chip memory (``generate(graph, hw=...)``): one ``m_axi``
pointer per ``ir.memory_ports`` port on its channel's bundle, checked against the port list
itself; a dense output level a stream writes only partly fails with a clear message.
C-simulation's parity with the Python model on the same hardware is in
tests/parity/test_parity_memory.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest

from cosim import HlsRunError
from ir import Graph, Hardware, examples, load_hw, memory_ports
from rtl_hls.hls import DEFAULT_MEM_DEPTH, generate
from sim_models.python import simulate

HBM = "hbm2-u280"
#: graphs whose tensors live off-chip: SpMV, SpMM in three orders (ikj is Gustavson's,
#: with the sparse accumulator spacc; kij needs the matrix accumulator spacc2)
GRAPHS: dict[str, tuple[Callable[[str], Graph], dict[str, tuple[int, ...]]]] = {
    "spmv": (lambda dt: examples.spmv(6, 7, dtype=dt), {"B": (6, 7), "c": (7,)}),
    "spmm_ijk": (lambda dt: examples.spmm_ijk(5, 6, 4, dtype=dt), {"B": (5, 6), "C": (6, 4)}),
    "spmm_ikj": (lambda dt: examples.spmm_ikj(5, 6, 4, dtype=dt), {"B": (5, 6), "C": (6, 4)}),
    "spmm_kij": (lambda dt: examples.spmm_kij(5, 6, 4, dtype=dt), {"B": (5, 6), "C": (6, 4)}),
}
_M_AXI = re.compile(r"#pragma HLS interface m_axi port=(\w+) offset=slave bundle=(\w+) (.*)")


def _top(graph: Graph, hw: Hardware) -> str:
    design = generate(graph, hw=hw)
    return design.files[design.top_source]


def _m_axi(top: str) -> dict[str, tuple[str, str]]:
    """port argument → (bundle, options) of every m_axi pragma."""
    found = [m.groups() for m in _M_AXI.finditer(top)]
    assert len({p for p, _, _ in found}) == len(found), "a port has two m_axi pragmas"
    return {p: (b, opts) for p, b, opts in found}


def _port_no(arg: str) -> int:
    m = re.match(r"m(\d+)_", arg)
    assert m, f"m_axi argument {arg!r} does not name its memory port"
    return int(m.group(1))


@pytest.mark.parametrize("case", sorted(GRAPHS))
def test_ideal_memory_generates_the_same_files_as_no_hardware(case):
    graph = GRAPHS[case][0]("float32")
    assert generate(graph, hw=load_hw("ideal")).files == generate(graph).files


@pytest.mark.parametrize("case", sorted(GRAPHS))
@pytest.mark.parametrize("channels", [1, 4, 32])
def test_one_m_axi_pragma_per_memory_port_on_its_channel_bundle(case, channels):
    graph = GRAPHS[case][0]("float32")
    hw = load_hw(HBM, [f"dram.channels={channels}"])
    ports = memory_ports(graph, hw)
    pragmas = _m_axi(_top(graph, hw))
    assert sorted(_port_no(a) for a in pragmas) == [p.no for p in ports]
    for arg, (bundle, _) in pragmas.items():
        assert bundle == f"gmem{ports[_port_no(arg)].channel}", arg
    bundles = [b for b, _ in pragmas.values()]
    if channels == 1:
        assert set(bundles) == {"gmem0"}
    if channels >= len(ports):
        assert len(set(bundles)) == len(ports), "ports on distinct channels share a bundle"


def test_port_options_come_from_the_hardware_and_agree_within_a_bundle():
    graph = examples.spmm_ikj(5, 6, 4)
    hw = load_hw(HBM, ["dram.channels=2", "dram.line_bytes=128", "dram.outstanding=4",
                       "dram.latency_cycles=30"])
    pragmas = _m_axi(_top(graph, hw))
    for _, opts in pragmas.values():
        for opt in (f"depth={DEFAULT_MEM_DEPTH}", "latency=30", "max_widen_bitwidth=1024",
                    "max_read_burst_length=32", "num_read_outstanding=4",
                    "max_write_burst_length=32", "num_write_outstanding=4"):
            assert opt in opts.split(), (opt, opts)
    by_bundle: dict[str, set[str]] = {}
    for bundle, opts in pragmas.values():
        by_bundle.setdefault(bundle, set()).add(opts)
    assert all(len(v) == 1 for v in by_bundle.values()), by_bundle


def test_pointers_are_const_for_reads_and_counts_are_s_axilite_scalars():
    graph = examples.spmm_kij(5, 6, 4)
    hw = load_hw(HBM)
    design = generate(graph, hw=hw)
    top = design.files[design.top_source]
    for m in design.mem:
        want = "uint32_t*" if m.port.write else "const uint32_t*"
        assert re.search(rf"(?<!const ){re.escape(want)} {m.name}\b", top), m.name
    counts = [c for w in design.writers for c in w.counts]
    assert counts and all(f"s_axilite port={c}\n" in top for c in counts)
    assert "s_axilite port=cap\n" in top and "s_axilite port=return\n" in top


@pytest.mark.cosim
def test_a_partly_written_dense_output_level_fails_with_a_clear_message(hls):
    """A dense level stores nothing off-chip, so its writer needs full fibers: SpMV with a
    doubly compressed B skips empty rows of the dense x."""
    graph = examples.spmv(4, 5, b_fmt="cc")
    inputs = {"B": np.array([[1, 0, 0, 0, 0], [0] * 5, [0, 2, 0, 0, 0], [0] * 5], np.float32),
              "c": np.ones(5, np.float32)}
    simulate(graph, inputs, hw=load_hw(HBM))  # the model writes any stream
    with pytest.raises(HlsRunError, match="dense output level"):
        hls.run(graph, inputs, hw=load_hw(HBM))


def test_tcl_exports_a_vitis_kernel_clocked_by_the_hardware():
    design = generate(examples.spmv(6, 7), hw=load_hw(HBM))   # 300 MHz
    tcl = design.files["run_hls.tcl"]
    assert "create_clock -period 3.333 " in tcl
    assert "export_design -format xo -output $top.xo" in tcl
    assert "create_clock -period 4.0 " in generate(examples.spmv(6, 7)).files["run_hls.tcl"]
