"""On-chip buffers (docs/timing.md, "On-chip buffers") in the RTL and HLS backends: the
RTL (Icarus and Verilator) equals the Python model cycle for cycle, token for token, with
equal bursts, DRAM bytes per channel and node, memory stalls and buffer statistics; HLS
C-simulation equals it token for token; outputs against numpy/scipy.

Each graph is built once per simulator (a build is keyed by the netlist, which the
hardware's buffer ports and latency are part of), so the cases spread the settings over
the graphs: buffer ports 1 and 2, latency 0 and 2, load queues 1 and 4, ``hbm2-u280`` and
one narrow channel where the fills contend with each other and with the DRAM ports.
Random inputs (hypothesis) rerun a built graph at no build cost.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp
from _backends import RTL, Under, assert_lint_clean, over
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from compiler import compile_expression
from cosim.backends._backend import BACKENDS, _load_optional
from ir import CATALOGUE, HwError, examples, load_hw
from tests._block_graphs import block_cases
from tests._materialised import gcn_chain, kernel_cases

#: hardware regimes: the preset, and one narrow channel every fill and port shares
REGIMES = {"hbm": {}, "tight": {"dram.channels": 1, "dram.bytes_per_cycle": 4}}


def _hw(regime: str, ports: int, latency: int, q: int):
    return load_hw("hbm2-u280", {**REGIMES[regime], "onchip.ports": ports,
                                 "onchip.latency": latency, "dram.load_queue": q})


def _csr(m: int, n: int, density: float, seed: int) -> sp.csr_matrix:
    return sp.random(m, n, density=density, format="csr", random_state=seed, dtype=np.float32)


def _graph(kernel: str, m: int, n: int):
    if kernel == "spmv":
        return examples.spmv(m, n)
    if kernel == "spmm":  # A·X with X dense: X gathered per nonzero of A
        return compile_expression("Y(i,j) = A(i,k) * X(k,j)",
                                  formats={"A": "csr", "X": "dense", "Y": "dense"},
                                  shapes={"A": (m, n), "X": (n, 3)}, order="ikj")
    if kernel == "sddmm":
        return examples.sddmm(m, n, 3)
    assert kernel == "lanes"  # SpMV on 2 lanes: both lanes' arrays read one buffer of x
    return compile_expression("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"},
                              shapes={"A": (m, n)}, par={"i": 2})


def _inputs(kernel: str, m: int, n: int, density: float, seed: int):
    """(inputs, gold outputs) of ``kernel`` on random operands."""
    rng = np.random.default_rng(seed)
    a = _csr(m, n, density, seed)
    if kernel == "sddmm":
        c, d = (rng.standard_normal(s).astype(np.float32) for s in ((m, 3), (3, n)))
        return {"B": a, "C": c, "D": d}, {"X": a.toarray() * (c @ d)}
    if kernel == "spmm":
        x = rng.standard_normal((n, 3)).astype(np.float32)
        return {"A": a, "X": x}, {"Y": a @ x}
    x = rng.standard_normal(n).astype(np.float32)
    if kernel == "spmv":
        return {"B": a, "c": x}, {"x": a @ x}
    return {"A": a, "x": x}, {"y": a @ x}


#: (kernel, buffered arrays, regime, onchip.ports, onchip.latency, load queue): together
#: every setting the brief names, each graph one build per simulator
CASES = {
    "spmv-all-tight": ("spmv", "all", "tight", 1, 2, 4),
    "spmm-X-hbm": ("spmm", {"X": ("vals",)}, "hbm", 2, 0, 1),
    "lanes-x-tight": ("lanes", {"x": True}, "tight", 1, 0, 4),
    "lanes-all-hbm": ("lanes", "all", "hbm", 2, 2, 1),
    # a scanner with one array on chip and one in DRAM, beside an unbuffered operand
    "sddmm-mixed-tight": ("sddmm", {"B": ("seg1", "vals"), "D": True}, "tight", 2, 0, 1),
}
#: the cases Verilator builds too (each build costs ~30 s)
VERILATOR_CASES = ["spmv-all-tight", "spmm-X-hbm", "lanes-x-tight", "lanes-all-hbm"]
SHAPE = (9, 20)


def _case(cid: str):
    kernel, buffered, regime, ports, latency, q = CASES[cid]
    graph = _graph(kernel, *SHAPE)
    if buffered == "all":
        buffered = {t.name: True for t in graph.tensors.values() if t.role == "input"}
    return kernel, graph.with_buffers(buffered), _hw(regime, ports, latency, q)


def _check_buffers(under: Under, graph, inputs, gold, hw) -> None:
    """``under`` equals the model (``Under.check``) and, RTL, its buffer statistics too."""
    (got,) = under.check(graph, inputs, gold, configs={under.name: [(2, hw)]})
    if under.name in RTL:
        from _backends import python_run

        assert got.buffers == python_run(graph, inputs, 2, hw).buffers
        assert set(got.buffers) == {b.name for b in _elab_buffers(graph, hw)}


def _elab_buffers(graph, hw):
    from ir import elaborate

    return elaborate(graph, hw).buffers


@pytest.mark.parametrize(("backend", "cid"), over([(c,) for c in CASES], list(CASES),
                                                  backends=("python", "hls", *RTL),
                                                  only={"rtl-verilator": VERILATOR_CASES}),
                         indirect=["backend"])
def test_buffered_graph_agrees(backend, cid):
    kernel, graph, hw = _case(cid)
    inputs, gold = _inputs(kernel, *SHAPE, 0.3, 11)
    _check_buffers(backend, graph, inputs, gold, hw)


@pytest.mark.parametrize("backend", over([()], ["spmm_ikj-b4"],
                                        backends=("python", "hls", "rtl-icarus")),
                         indirect=True)
def test_buffered_blocks_agree(backend):
    """Block values: a buffered value is one access whatever its block's width; every
    array of a 4x4-block SpMM on chip, fills on one narrow channel."""
    _, graph, inputs, gold = next(c for c in block_cases(4) if c[0] == "spmm_ikj")
    graph = graph.with_buffers({t.name: True for t in graph.tensors.values()
                                if t.role == "input"})
    _check_buffers(backend, graph, inputs, gold, _hw("tight", 1, 2, 4))


@pytest.mark.cosim
@settings(max_examples=6, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(cid=st.sampled_from(sorted(CASES)), density=st.floats(0.0, 0.7),
       seed=st.integers(0, 2**16))
@example(cid="lanes-all-hbm", density=0.0, seed=5)  # empty arrays: no fill, filled 0
def test_random_inputs_agree_on_icarus(cid, density, seed):
    """Random operands through the graphs built above (a run, no build, each)."""
    from cosim.backends._rtl import RtlBackend

    kernel, graph, hw = _case(cid)
    inputs, gold = _inputs(kernel, *SHAPE, density, seed)
    _check_buffers(Under("rtl-icarus", RtlBackend("icarus")), graph, inputs, gold, hw)


def test_buffered_netlist_wires_one_buffer_per_array(tmp_path):
    """One ``samfuse_onchip_buffer`` per buffer with its readers' accesses, the buffered
    ports' cores read through it (no window), the fill on the fill port's channel slot;
    lint clean."""
    from rtl_hls.rtl.netlist import generate

    _, graph, hw = _case("lanes-x-tight")
    net = generate(graph, hw=hw)
    (buf,) = _elab_buffers(graph, hw)
    assert buf.name == "x.vals" and len(buf.readers) == 2
    assert net.text.count("samfuse_onchip_buffer #(") == 1
    assert f".NA(2), .P({hw.onchip.ports}), .LAT({hw.onchip.latency})" in net.text
    assert net.text.count(".VAL_BUF(1'b1)") == 2
    assert net.buffer_instances == {"x.vals": "u_buf0"}
    # the fill replaces its port's request on the channel; the other reader has none
    chan = re.search(r"\.nlines\(\{([^}]*)\}\)", net.text).group(1)
    assert "buf0_fill_nlines" in chan and f"mp{buf.readers[1]}_nlines" not in chan
    assert_lint_clean(net, tmp_path)


def test_buffers_on_ideal_memory_leave_the_netlist_unchanged():
    from rtl_hls.rtl.netlist import generate

    graph = _graph("spmv", *SHAPE)
    marked = graph.with_buffers({"c": True, "B": True})
    assert generate(marked, hw=load_hw("ideal")).text == generate(graph).text


@pytest.mark.parametrize("name", ["python", "systemc", "hls-csim", "rtl", "auto"])
def test_every_backend_renders_buffers(name):
    """A backend that does not render on-chip buffers fails here (and refuses them)."""
    _load_optional()
    assert BACKENDS[name].onchip_buffers, name


@pytest.mark.parametrize("op", sorted(op for op, prim in CATALOGUE.items() if prim.mem_reads))
def test_every_reading_primitive_has_a_buffered_port_in_rtl(op):
    """A primitive that reads memory can read each array from an on-chip buffer: its
    memory core takes ``<ARRAY>_BUF`` and instantiates ``samfuse_buf_rdport``."""
    from rtl_hls.rtl.netlist import SV_DIR, _mem_module

    text = (SV_DIR / f"{_mem_module(op)[0]}.sv").read_text()
    for array in CATALOGUE[op].mem_reads:
        stem = "VAL" if array == "vals" else array.upper()
        assert re.search(rf"parameter bit {stem}_BUF\b", text), (op, array)
    assert text.count("samfuse_buf_rdport #") == len(CATALOGUE[op].mem_reads), op


def test_a_backend_without_buffers_refuses_them():
    """One line naming the buffers, never a silent run on DRAM."""
    from cosim.backends._backend import PythonBackend

    class Unbuffered(PythonBackend):
        name = "unbuffered"
        onchip_buffers = False

    graph = _graph("spmv", 4, 6)
    inputs, _ = _inputs("spmv", 4, 6, 0.5, 1)
    with pytest.raises(HwError, match=r"does not render on-chip buffers yet \(c\.vals") as err:
        Unbuffered().run(graph.with_buffers({"c": True}), inputs, hw="hbm2-u280")
    assert "\n" not in str(err.value)


def test_hls_fills_a_local_copy_for_each_buffered_port_only():
    """Each process reading a buffered array copies it from its m_axi port into a local
    array bound to the RAM the buffer's ports ask for, then reads the copy; the others
    read their m_axi pointer; the fill's length is an s_axilite scalar the testbench sets."""
    from rtl_hls.hls import generate

    _, graph, hw = _case("spmm-X-hbm")
    design = generate(graph, hw=hw)
    src, tb = design.files[design.top_source], design.files[design.testbench]
    buffered = [m for m in design.mem if m.port.buffer is not None]
    assert [m.port.array_name for m in buffered] == ["vals"]
    assert {m.port.tensor for m in buffered} == {"X"}
    for m in design.mem:
        local = f"static uint32_t {m.name}_buf[{SHAPE[1] * 3}];"
        assert (local in src) == (m in buffered), m.name
        fill = f"samfuse::fill_onchip({m.name}_buf, {m.name}, {m.name}_len);"
        assert (fill in src) == (m in buffered), m.name
        assert (f"s_axilite port={m.name}_len" in src) == (m in buffered), m.name
        assert (f"static_cast<uint32_t>({m.name}.size())" in tb) == (m in buffered), m.name
    (m,) = buffered
    assert (f"#pragma HLS bind_storage variable={m.name}_buf type=ram_t2p impl=bram\n"
            in src)  # onchip.ports 2: a true dual-port RAM; latency 0: Vitis's own
    # one process of its own: its definition and its call
    assert len(re.findall(r"\b(?!fill_)\w+_onchip\(", src)) == 2
    one_port = generate(graph, hw=_hw("hbm", 1, 2, 1)).files[design.top_source]
    assert f"variable={m.name}_buf type=ram_1p impl=bram latency=2" in one_port


def test_hls_top_without_buffers_is_unchanged():
    from rtl_hls.hls import generate

    graph = _graph("spmm", *SHAPE)
    hw = _hw("hbm", 2, 0, 1)
    assert generate(graph.with_buffers({}), hw=hw).files == generate(graph, hw=hw).files
    assert "onchip" not in generate(graph, hw=hw).files[f"{_top(graph)}.cpp"]


def _top(graph) -> str:
    from rtl_hls.hls._design import ident

    return f"{ident(graph.name)}_top"


def test_rtl_deadlock_window_outlasts_the_fills():
    """The bench calls a run deadlocked after a window without FIFO writes; a fill moves
    no token, so the window covers every fill's lines on the channel."""
    from rtl_hls.rtl.bench import idle_window

    graph = _graph("spmv", 40, 4000).with_buffers({"c": True})
    hw = _hw("tight", 1, 0, 1)
    fill = -(-4000 * 4 // hw.dram.line_bytes) * hw.dram.line_bytes // hw.dram.bytes_per_cycle
    assert idle_window(graph, hw) > fill + hw.dram.latency_cycles
    assert idle_window(graph, hw) > idle_window(_graph("spmv", 40, 4000), hw) + fill


# -- materialised intermediates (docs/fusion.md): a buffer an earlier kernel wrote ----------

#: GCN's A·(X·W) with X·W on chip, on the narrow channel with one buffer port, latency 2
MATERIALISED = {"producer": 0, "consumer": 1}
MAT_SHAPE = (7, 4, 3)


def _materialised(which: str, density: float = 0.3, seed: int = 5):
    compiled, inputs, _ = gcn_chain(*MAT_SHAPE, 0.3, 5)
    graph, _, _ = kernel_cases(compiled, inputs)[MATERIALISED[which]]
    # other operands through the same built graph: the netlist depends on shapes only
    _, inputs, _ = gcn_chain(*MAT_SHAPE, density, seed)
    _, ins, gold = kernel_cases(compiled, inputs)[MATERIALISED[which]]
    return graph, ins, gold


def _check_materialised(under: Under, graph, ins, gold) -> None:
    """As :func:`_check_buffers`, at float32 tolerance against the float64 gold."""
    hw = _hw("tight", 1, 2, 4)
    (got,) = under.check(graph, ins, gold, configs={under.name: [(2, hw)]}, rtol=1e-4,
                         atol=1e-4)
    if under.name in RTL:
        from _backends import python_run

        assert got.buffers == python_run(graph, ins, 2, hw).buffers


@pytest.mark.parametrize(("backend", "which"), over([(w,) for w in MATERIALISED],
                                                    list(MATERIALISED),
                                                    backends=("python", *RTL)),
                         indirect=["backend"])
def test_materialised_chain_agrees(backend, which):
    """The producer writes T on chip (no write port), the consumer reads it from a buffer
    with no load phase (``FILL 0``): cycle for cycle with the model."""
    _check_materialised(backend, *_materialised(which))


@pytest.mark.cosim
@settings(max_examples=4, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(which=st.sampled_from(sorted(MATERIALISED)), density=st.floats(0.0, 0.8),
       seed=st.integers(0, 2**16))
def test_materialised_random_inputs_agree_on_icarus(which, density, seed):
    from cosim.backends._rtl import RtlBackend

    _check_materialised(Under("rtl-icarus", RtlBackend("icarus")),
                        *_materialised(which, density, seed))


def test_materialised_netlist_has_no_load_phase(tmp_path):
    """The consumer's buffer of T: FILL 0, on no channel (the channel serves A alone)."""
    from rtl_hls.rtl.netlist import generate

    graph, _, _ = _materialised("consumer")
    hw = _hw("tight", 1, 2, 4)
    net = generate(graph, hw=hw)
    (buf,) = _elab_buffers(graph, hw)
    assert (buf.name, buf.fills) == ("T.vals", False)
    assert ".FILL(1'b0)" in net.text and "buf0_fill_nlines" not in re.search(
        r"\.nlines\(\{([^}]*)\}\)", net.text).group(1)
    assert_lint_clean(net, tmp_path)


@pytest.mark.parametrize(("backend", "which"), over([(w,) for w in MATERIALISED],
                                                    list(MATERIALISED), backends=("hls",)),
                         indirect=["backend"])
def test_hls_runs_materialised_kernels_on_hbm(backend, which):
    """On ``hbm2-u280`` T is an on-chip array argument of each top (the producer's writer
    stores into it, the consumer reads it with no fill): token for token with the model,
    the outputs against numpy."""
    graph, ins, gold = _materialised(which)
    backend.check(graph, ins, gold, configs={"hls": [(2, load_hw("hbm2-u280"))]},
                  rtol=1e-4, atol=1e-4)


@pytest.mark.cosim
@settings(max_examples=4, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much])
@given(which=st.sampled_from(sorted(MATERIALISED)), density=st.floats(0.3, 0.9),
       seed=st.integers(0, 2**16))
def test_materialised_random_inputs_agree_in_hls(hls, which, density, seed):
    """Random operands through the tops built above (a run, no build, each). The
    consumer's A keeps a nonzero in every row: an empty row leaves a fiber of the dense
    output Y empty, which a top with memory does not write (docs/hls.md, "Writers")."""
    graph, ins, gold = _materialised(which, density, seed)
    assume(which == "producer" or np.diff(ins["A"].indptr).all())
    Under("hls", hls).check(graph, ins, gold, configs={"hls": [(2, load_hw("hbm2-u280"))]},
                            rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("backend", over([()], ["sddmm-B-X"], backends=("python", "hls")),
                         indirect=True)
def test_compressed_onchip_tensors_agree(backend):
    """The compiler materialises dense tensors only, but a graph may mark any tensor
    ``onchip``: SDDMM with its csr operand B and its csr result X on chip, each of their
    seg, crd and vals arrays an on-chip argument of the HLS top."""
    graph = _graph("sddmm", *SHAPE).with_onchip({"B", "X"})
    inputs, gold = _inputs("sddmm", *SHAPE, 0.3, 11)
    backend.check(graph, inputs, gold, configs={backend.name: [(2, load_hw("hbm2-u280"))]})


def test_hls_materialised_tensor_is_an_onchip_array_argument():
    """T is no m_axi port in either top: a sized array argument on a bram interface, the
    producer's value writer storing into it and the consumer's array reading it, with no
    local copy, fill or length; the other tensors keep their m_axi ports, one per
    ``ir.memory_ports`` port. A top with bram ports exports an IP, not a Vitis kernel."""
    from ir import array_capacity, memory_ports
    from rtl_hls.hls import generate

    hw = _hw("hbm", 1, 2, 1)
    words = array_capacity(_materialised("producer")[0], "T", "vals", None)
    for which, decl, kind in (("producer", "uint32_t c_T_vals", "ram_1p"),
                              ("consumer", "const uint32_t c2_T_vals", "rom_1p")):
        graph, _, _ = _materialised(which)
        design = generate(graph, hw=hw)
        src, tcl = design.files[design.top_source], design.files["run_hls.tcl"]
        name = decl.split()[-1]
        assert f"    {decl}[{words}]," in src, which
        assert (f"#pragma HLS interface bram port={name} storage_type={kind} latency=2\n"
                in src), which
        assert not re.search(r"m_axi port=\w*_T_", src), which
        # no local copy, no fill, no fill length
        assert f"{name}_buf" not in src and "fill_onchip" not in src, which
        assert f"{name}_len" not in src, which
        assert re.search(rf"samfuse_(value_writer|array)\(\w+, [^;]*\b{name}\b", src), which
        ported = [p.no for p in memory_ports(graph, hw) if p.tensor != "T"]
        assert sorted(int(n) for n in re.findall(r"m_axi port=m(\d+)_", src)) == ported
        assert "-flow_target vivado" in tcl and "-format ip_catalog" in tcl, which


@pytest.mark.parametrize(("backend", "which"), over([(w,) for w in MATERIALISED],
                                                    list(MATERIALISED), backends=("hls",)),
                         indirect=["backend"])
def test_hls_runs_materialised_kernels_on_ideal_memory(backend, which):
    """On ideal memory nothing is off chip: token for token with the model."""
    graph, ins, gold = _materialised(which)
    backend.check(graph, ins, gold, configs={"hls": [(2, None)]}, rtol=1e-4, atol=1e-4)
