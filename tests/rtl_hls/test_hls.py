"""The HLS generator's and C-simulation backend's own behaviour: every primitive has a
template, the generated top and Tcl follow the Vitis conventions, the backend is
registered untimed, its trace file round-trips, a g++ error shows the compiler's message.
Parity with the Python model (token for token, outputs bit for bit) is in tests/parity/
(test_parity_*.py), on every backend at once.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

from cosim import HlsCompileError, HlsCsimBackend, get_backend
from ir import CATALOGUE, Trace, compare_traces, examples
from rtl_hls.hls import UNBOUNDED_DEPTH, generate, template_path


def test_every_catalogue_primitive_has_an_hls_template():
    for op in CATALOGUE:
        path = template_path(op)
        assert path.exists(), f"no HLS template for {op!r} (expected {path})"
        text = path.read_text()
        assert re.search(rf"\bvoid samfuse_{op}\(", text), f"{path} defines no samfuse_{op}()"
        included = "".join((path.parent / inc).read_text()
                           for inc in re.findall(r'#include "(\w+\.h)"', text))
        # every firing loop is pipelined by the timing shell at the template's II, 1 unless
        # the node's ii or a block operator's cycles say more (docs/hls.md, "Timing knobs")
        assert "SAMFUSE_PIPELINE" in text + included and "int II = 1" in text, \
            f"{path}: no II=1 loop"


def test_generated_top_and_tcl_follow_the_vitis_conventions():
    g = examples.spmv(6, 7).with_depth(None)
    design = generate(g)
    top = design.files[design.top_source]
    assert "#pragma HLS dataflow" in top
    assert top.count("hls::stream<samfuse::tok_t>") == len(g.edges)
    assert top.count(f"depth={UNBOUNDED_DEPTH}  // unbounded") == len(g.edges)
    for arg in design.inputs:
        assert f"m_axi port={arg.name} " in top
    assert "samfuse::fork(" in top  # Bi.crd feeds both rs_i and the writer
    assert "samfuse::Discard()" in top  # isect_j.crd has no reader
    tcl = design.files["run_hls.tcl"]
    for cmd in ("open_project", f"set top {design.top}", "set_top $top",
                "csim_design", "csynth_design", "cosim_design -trace_level all",
                "export_design -format ip_catalog"):
        assert cmd in tcl, cmd


def test_hls_backend_is_registered_untimed():
    assert HlsCsimBackend.name == "hls-csim" and HlsCsimBackend.timed is False
    if HlsCsimBackend.unavailable() is None:
        assert isinstance(get_backend("hls-csim"), HlsCsimBackend)


@pytest.mark.cosim
def test_untimed_trace_file_round_trips(hls):
    graph = examples.spmv(6, 7)
    rng = np.random.default_rng(3)
    B = (rng.standard_normal((6, 7)) * (rng.random((6, 7)) < 0.5)).astype(np.float32)
    res = hls.run(graph, {"B": B, "c": rng.standard_normal(7).astype(np.float32)}, trace=True)
    assert res.trace is not None
    assert all(c is None for et in res.trace.edges.values() for c in et.cycles)
    text = res.trace.to_text()
    assert text.startswith("# samfuse-trace 1\n# graph spmv\n") and "\n- D\n" in text
    assert compare_traces(Trace.from_text(text), res.trace, timed=False) == []


@pytest.mark.cosim
def test_compiler_error_shows_gxx_message(hls, monkeypatch):
    import cosim.backends._hls as mod

    def broken(graph):
        design = generate(graph)
        src = design.top_source
        design = replace(design, files={**design.files,
                                        src: design.files[src] + "\nint oops( {\n"})
        return design

    monkeypatch.setattr(mod, "generate", broken)
    with pytest.raises(HlsCompileError) as info:
        hls.build(examples.spmv(3, 3))
    msg = str(info.value)
    assert "g++ failed to compile the HLS design of graph 'spmv'" in msg
    assert "error:" in msg and "oops" in msg
