"""HLS under the timing knobs (docs/timing.md, docs/hls.md "Timing knobs"): every process
carries its node's ``ii``, ``latency`` and ``startup`` (template arguments ``II``, ``LAT``,
``START`` of its timing shell: the loop's ``pipeline II`` and ``latency min`` pragmas and
the counted start-up wait), each stream's storage is bound as a Vitis user binds it, nothing
is added at the defaults, and C-simulation stays token-exact against the Python model
(which runs the same knobs timed).

The expected knobs are worked out here from the drawn settings (node parameter, else the
hardware key, else the default), not read from ``ir.elaborate``; the csim run reports the
values each process template was instantiated with (``timing.txt``)."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import compile_expression
from cosim.backends._backend import get_backend
from cosim.runs._calibrate import bundled_suite
from ir import CATALOGUE, Graph, at_run_depth, block_cycles, compare_traces, load_hw
from rtl_hls.hls import TEMPLATE_DIR, generate, write_inputs
from sim_models.python import bind_inputs

SUITE = {k.name: k for k in bundled_suite("small")}
KERNELS = ("spmv", "spmm_ikj", "spmm_kij", "elementwise_max", "ttv", "fused0", "fused2")
DEFAULTS = {"latency": 1, "ii": 1, "startup": 0}
SETTINGS = settings(max_examples=8, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def _top(graph: Graph, hw) -> str:
    design = generate(at_run_depth(graph, "graph", hw), hw=hw)
    return design.files[f"{design.top}.cpp"]


@st.composite
def timed(draw, graph: Graph):
    """(graph with per-node knobs, hardware overrides, the expected knobs per node)."""
    ops = sorted({n.op for n in graph.nodes.values()})
    keys = {}
    for op in draw(st.lists(st.sampled_from(ops), unique=True, max_size=4)):
        knob = draw(st.sampled_from(sorted(DEFAULTS)))
        keys[(op, knob)] = draw(st.integers(0 if knob == "startup" else 1, 5))
    nodes = draw(st.lists(st.sampled_from(sorted(graph.nodes)), unique=True, max_size=3))
    params = {n: {draw(st.sampled_from(sorted(DEFAULTS))): draw(st.integers(2, 4))}
              for n in nodes}
    doc = graph.to_dict()
    for node in doc["nodes"]:
        node["params"] = {**node["params"], **params.get(node["id"], {})}
    expected = {nid: {k: params.get(nid, {}).get(k, keys.get((n.op, k), DEFAULTS[k]))
                      for k in DEFAULTS} for nid, n in graph.nodes.items()}
    fifo = draw(st.sampled_from(["1", "2", "vitis"]))
    sets = [f"fifo.latency={fifo}"] + [f"timing.{op}.{k}={v}" for (op, k), v in keys.items()]
    return Graph.from_dict(doc), sets, expected


def _want(graph: Graph, hw, expected: dict) -> dict[str, tuple[int, int, int]]:
    """Per node (II, LAT, START): a block firing longer than ii keeps its own interval."""
    cycles = block_cycles(graph, hw)
    return {nid: (max(k["ii"], cycles.get(nid, 1)), k["latency"], k["startup"])
            for nid, k in expected.items()}


_CALL = re.compile(r"^    samfuse_\w+.*;  // (?P<note>.*)$", re.M)


@settings(max_examples=40, deadline=None)
@given(kernel=st.sampled_from(KERNELS), data=st.data())
def test_each_call_names_its_nodes_knobs(kernel, data):
    """The generated top's call of every process names the knobs its node elaborates to
    (the comment the timing shell writes), and a default node's call is unchanged."""
    graph, sets, expected = data.draw(timed(SUITE[kernel].graph))
    hw = load_hw("ideal", sets)
    want = _want(graph, hw, expected)
    notes = {m["note"].split(",")[0].split(":")[0]: m["note"] for m in _CALL.finditer(
        _top(graph, hw))}
    assert set(notes) == set(graph.nodes)
    for nid, (ii, lat, start) in want.items():
        named = dict(re.findall(r"(II|latency|startup)=(\d+)", notes[nid]))
        assert named == {k: str(v) for k, v, d in (("II", ii, 1), ("latency", lat, 1),
                                                   ("startup", start, 0)) if v != d}, nid


def test_default_knobs_add_nothing():
    plain = _top(SUITE["spmv"].graph, load_hw("ideal"))
    explicit = _top(SUITE["spmv"].graph, load_hw("ideal", [
        "fifo.latency=1", "timing.alu.latency=1", "timing.alu.ii=1", "timing.array.startup=0"]))
    assert plain == explicit
    assert "bind_storage" not in plain and "latency=" not in plain and "startup=" not in plain


def test_every_process_template_has_the_timing_shell():
    """Every catalogue primitive's template opens with the shell's start-up and loops
    under SAMFUSE_PIPELINE; no template writes its own pipeline pragma any more."""
    for op in CATALOGUE:
        text = (TEMPLATE_DIR / f"{op}.h").read_text()
        assert "process_start<II, LAT, START>()" in text, op
        assert "int II = 1, int LAT = 1, int START = 0" in text, op
    for path in TEMPLATE_DIR.glob("*.h"):
        assert "#pragma HLS pipeline II" not in path.read_text(), path.name
    shell = (TEMPLATE_DIR / "samfuse_hls.h").read_text()
    assert "HLS pipeline II = II" in shell and "HLS latency min = LAT" in shell


def test_vitis_fifo_latency_binds_srl_and_bram_by_depth():
    spmv = SUITE["spmv"].graph
    shallow = _top(spmv, load_hw("ideal", ["fifo.latency=vitis", "fifo.depth=2"]))
    deep = _top(spmv, load_hw("ideal", ["fifo.latency=vitis", "fifo.depth=4"]))
    assert "type=fifo impl=srl" in shallow and "impl=bram" not in shallow
    assert "type=fifo impl=bram" in deep and "impl=srl" not in deep
    assert "#pragma HLS stream variable=s0 depth=4" in deep


def _csim_timings(hls, graph: Graph, inputs, hw, tmp_path) -> list[tuple[int, ...]]:
    """Each process's (II, LAT, START) as the compiled C-simulation instantiated it."""
    design, exe = hls.build(at_run_depth(graph, "graph", hw), hw)
    write_inputs(design, bind_inputs(graph, inputs), tmp_path / "in")
    (tmp_path / "out").mkdir()
    subprocess.run([str(exe), str(tmp_path / "in"), str(tmp_path / "out"), "0"], check=True)
    return [tuple(int(x) for x in line.split())
            for line in (tmp_path / "out" / "timing.txt").read_text().splitlines()]


@pytest.mark.cosim
@SETTINGS
@given(kernel=st.sampled_from(KERNELS), data=st.data())
def test_csim_processes_are_instantiated_with_their_knobs(hls, tmp_path_factory, kernel,
                                                          data):
    """The values reach each process's template (not only the call's text): the csim's
    record of (II, LAT, START), in call (topological) order, is each node's knobs."""
    graph, sets, expected = data.draw(timed(SUITE[kernel].graph))
    hw = load_hw("ideal", sets)
    want = _want(graph, hw, expected)
    got = _csim_timings(hls, graph, SUITE[kernel].inputs, hw, tmp_path_factory.mktemp("t"))
    assert got == [want[n] for n in graph.topological_order()]


@pytest.mark.cosim
@SETTINGS
@given(kernel=st.sampled_from(KERNELS), data=st.data())
def test_csim_is_token_exact_under_random_knobs(hls, kernel, data):
    graph, sets, _ = data.draw(timed(SUITE[kernel].graph))
    k = SUITE[kernel]
    hw = load_hw(data.draw(st.sampled_from(["ideal", "hbm2-u280"])), sets)
    ref = get_backend("python").run(graph, k.inputs, hw=hw, trace=True)
    got = hls.run(graph, k.inputs, hw=hw, trace=True)
    assert not compare_traces(ref.trace, got.trace, timed=False), (kernel, sets)
    for name, tree in ref.outputs.items():
        np.testing.assert_array_equal(got.outputs[name].to_dense(), tree.to_dense())


def _position_spmv() -> tuple[Graph, dict]:
    """SpMV on two position lanes: ``position_split`` nodes and a ``lane_combine``."""
    rng = np.random.default_rng(28)
    A = sp.random(12, 10, 0.4, format="csr", dtype=np.float32, random_state=rng)
    x = rng.random(10, dtype=np.float32)
    graph = compile_expression("y(i) = A(i,k) * x(k)", {"A": "csr"},
                               {"A": A.shape, "x": x.shape}, order="i,k", par={"i": 2},
                               partition="position", stats={"A": A, "x": x})
    assert any(n.op == "position_split" for n in graph.nodes.values())
    return graph, {"A": A, "x": x}


@pytest.mark.cosim
@pytest.mark.parametrize("knobs", [{"ii": 2}, {"latency": 3}, {"startup": 2},
                                   {"ii": 3, "latency": 2, "startup": 1}])
def test_position_split_knobs_trail_its_windows(hls, tmp_path, knobs):
    """A position split's windows are one template argument (``samfuse::Windows<...>``, a
    constant table), so its timing arguments trail them as in every template: the csim
    instantiates each split with its knobs and stays token-exact against the model."""
    graph, inputs = _position_spmv()
    hw = load_hw("ideal", [f"timing.position_split.{k}={v}" for k, v in knobs.items()])
    want = {nid: tuple(knobs.get(k, DEFAULTS[k]) if n.op == "position_split" else DEFAULTS[k]
                       for k in ("ii", "latency", "startup"))
            for nid, n in graph.nodes.items()}
    got = _csim_timings(hls, graph, inputs, hw, tmp_path)
    assert got == [want[n] for n in graph.topological_order()]
    ref = get_backend("python").run(graph, inputs, hw=hw, trace=True)
    out = hls.run(graph, inputs, hw=hw, trace=True)
    assert not compare_traces(ref.trace, out.trace, timed=False), knobs
    np.testing.assert_array_equal(out.outputs["y"].to_dense(), ref.outputs["y"].to_dense())
