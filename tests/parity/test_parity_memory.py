"""The memory system (docs/timing.md, "Memory") on every backend against the Python model
and numpy: kernels in every memory regime (HBM, DDR, one contended channel, latency- and
bandwidth-bound, short and long lines), with every token's cycles, every burst, the bytes
per channel and per node and each memory node's stall cycles; channels serving bursts in
issue order; the run ending at the last write's acknowledgement; ideal hardware giving
the memoryless run; the on-chip buffer rule; random inputs on random hardware. What each
backend is held to is in ``_backends.py``.

The Python model's channels must grant bursts in (issue cycle, port) order in every run
here (the engine's grants after the fact have to get it right). HLS and RTL build the
graphs they built before the suites were merged (``only=``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import pytest
import scipy.sparse as sp
from _backends import RTL, over
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import compile_expression
from ir import Graph, Hardware, compare_traces, examples, load_hw
from sim_models.python import SimulationError, simulate
from sim_models.python import _memory as _pymem
from tests._kernel_graphs import compiled_case

HBM = load_hw("hbm2-u280")
#: the memory regimes every kernel is checked in on the cheap backends
REGIMES: dict[str, Hardware] = {
    "hbm2-u280": HBM,
    "ddr4-u250": load_hw("ddr4-u250"),
    "contention": load_hw("hbm2-u280", {"dram.channels": 1}),
    "latency-bound": load_hw("hbm2-u280", {"dram.outstanding": 1, "dram.latency_cycles": 50}),
    "bandwidth-bound": load_hw("hbm2-u280", {"dram.channels": 1, "dram.bytes_per_cycle": 4}),
    "line4": load_hw("hbm2-u280", {"dram.line_bytes": 4, "dram.outstanding": 3}),
    "line64-k2": load_hw("hbm2-u280", {"dram.line_bytes": 64, "dram.outstanding": 2,
                                       "dram.channels": 2, "dram.bytes_per_cycle": 16}),
}
DEPTHS = (1, 2, 4, None)
TOOLCHAINS = ("hls", *RTL)


@contextmanager
def _grants_in_issue_order(where: str) -> Iterator[None]:
    """Every Python run inside grants each channel's bursts in (issue cycle, port)
    order."""
    grants: list[tuple[object, int, int]] = []  # the channel itself: one per run
    original = _pymem._Channel.grant

    def grant(channel, burst):
        grants.append((channel, burst.cycle, burst.port.spec.no))
        original(channel, burst)

    _pymem._Channel.grant = grant
    try:
        yield
    finally:
        _pymem._Channel.grant = original
    last: dict[int, tuple[int, int]] = {}
    for channel, cycle, port in grants:
        key = id(channel)
        assert key not in last or (cycle, port) >= last[key], \
            f"{where}: the Python model granted out of order"
        last[key] = (cycle, port)


def _check(backend, graph: Graph, inputs: dict, want, configs) -> list:
    with _grants_in_issue_order(graph.name):
        return backend.check(graph, inputs, want, configs=configs)


def _csr(m: int, n: int, density: float, seed: int) -> sp.csr_matrix:
    return sp.random(m, n, density=density, format="csr", random_state=seed, dtype=np.float32)


def _spmv(m: int, n: int, x_format: str = "d", depth: int | None = 2) -> Graph:
    return compile_expression("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": x_format,
                                                               "y": "d"},
                              shapes={"A": (m, n)}, depth=depth)


def _spmm(m: int, k: int, n: int, order: str | None = None) -> Graph:
    return compile_expression("X(i,j) = B(i,k) * C(k,j)",
                              formats={"B": "csr", "C": "csr", "X": "csr"},
                              shapes={"B": (m, k), "C": (k, n)}, order=order)


def _dense(x) -> np.ndarray:
    return x.toarray() if sp.issparse(x) else np.asarray(x)


# -- kernels in every regime ------------------------------------------------------------

def _spmv_dense_x():
    a, x = _csr(30, 40, 0.2, 1), np.arange(40, dtype=np.float32) / 7
    return _spmv(30, 40), {"A": a, "x": x}, {"y": a @ x}


def _spmv_sparse_x():
    """x compressed: an intersection, so x_j re-scans x once per row (jumps back)."""
    a = _csr(25, 60, 0.15, 2)
    x = _csr(1, 60, 0.3, 3).toarray().ravel()
    return _spmv(25, 60, "c"), {"A": a, "x": x}, {"y": a @ x}


def _spmm_case(m, k, n, order, seeds):
    b, c = _csr(m, k, 0.3 if order is None else 0.25, seeds[0]), _csr(k, n, 0.3, seeds[1])
    return _spmm(m, k, n, order), {"B": b, "C": c}, {"X": _dense(b @ c)}


def _spmm_outer():
    rng = np.random.default_rng(8)
    b = np.where(rng.random((6, 7)) < 0.4, rng.standard_normal((6, 7)), 0).astype(np.float32)
    c = np.where(rng.random((7, 5)) < 0.4, rng.standard_normal((7, 5)), 0).astype(np.float32)
    return examples.spmm_kij(6, 7, 5), {"B": b, "C": c}, {"X": b @ c}


def _compiled(kernel: str) -> Callable:
    def make():
        graph, inputs = compiled_case(kernel, "float32")
        return graph, inputs, None
    return make


def _regimes(depths) -> list[tuple[int | None, Hardware]]:
    return [(d, hw) for hw in REGIMES.values() for d in depths]


#: case → (graph, inputs, numpy's result), the cheap backends' runs, and the RTL's
#: hardware overrides on hbm2-u280 (RTL cases run once on that hardware everywhere)
KERNELS: dict[str, tuple[Callable, list | None, list[str] | None]] = {
    "spmv_dense_x": (_spmv_dense_x, _regimes(DEPTHS), None),
    "spmv_sparse_x": (_spmv_sparse_x, _regimes(DEPTHS), None),
    "spmm_inner": (lambda: _spmm_case(12, 15, 10, None, (4, 5)), _regimes((2, None)), None),
    "spmm_gustavson": (lambda: _spmm_case(14, 18, 12, "i,k,j", (6, 7)),
                       _regimes((1, 2, 4, None)), None),
    "spmm_outer_spacc2": (_spmm_outer, _regimes((2, None)), None),
    "rtl_spmv": (_compiled("spmv"), None, []),
    "rtl_spmm_spacc": (_compiled("spmm_ikj"), None, []),  # Gustavson: i,k,j with spacc
    "rtl_spmm_spacc2": (_compiled("spmm_kij"), None, []),
    "rtl_contention": (_compiled("sddmm"), None, ["dram.channels=1"]),  # one channel
    "rtl_latency_bound": (_compiled("spmm_ikj"), None,
                          ["dram.outstanding=1", "dram.latency_cycles=20"]),
    "rtl_bandwidth_bound": (_compiled("spmv"), None,
                            ["dram.bytes_per_cycle=4", "dram.channels=1"]),
    # lines of two words: seg[r] and seg[r+1] often straddle lines (two bursts a cycle)
    "rtl_short_lines": (_compiled("spmm_kij"), None, [
        "dram.line_bytes=8", "dram.outstanding=2", "dram.channels=1",
        "dram.bytes_per_cycle=3"]),
    # a scanner blocked on output space still reads its IN_FIBER crd at its own next
    # cycle, ahead of a burst another port issues later (the case that once made the
    # Python model grant out of order)
    "rtl_fcfs_scanner_waits": (_compiled("sddmm"), None, [
        "dram.line_bytes=4", "dram.outstanding=3", "dram.channels=2",
        "dram.bytes_per_cycle=2"]),
}
RTL_CASES = [c for c, (_, _, rtl) in KERNELS.items() if rtl is not None]
VERILATOR_CASES = ["rtl_spmm_spacc", "rtl_contention", "rtl_latency_bound"]


@pytest.mark.parametrize("backend,case", over([(c,) for c in KERNELS], list(KERNELS), backends=(
    "python", "systemc", *RTL), only={"rtl-icarus": RTL_CASES,
                                      "rtl-verilator": VERILATOR_CASES}),
    indirect=["backend"])
def test_kernels_match_model_in_every_regime(backend, case):
    make, cheap, rtl = KERNELS[case]
    graph, inputs, want = make()
    runs = cheap or [("graph", load_hw("hbm2-u280", rtl))]
    results = _check(backend, graph, inputs, want, {
        name: runs for name in ("python", "systemc", *RTL)})
    if rtl is not None:  # the RTL cases move bytes both ways
        (res,) = results
        assert res.dram_read_bytes > 0 and res.dram_write_bytes > 0


#: graphs whose tensors live off-chip in C-simulation: SpMV, SpMM in three orders (ikj
#: is Gustavson's, with spacc; kij needs the matrix accumulator spacc2)
HLS_GRAPHS: dict[str, tuple[Callable[[str], Graph], dict[str, tuple[int, ...]]]] = {
    "spmv": (lambda dt: examples.spmv(6, 7, dtype=dt), {"B": (6, 7), "c": (7,)}),
    "spmm_ijk": (lambda dt: examples.spmm_ijk(5, 6, 4, dtype=dt), {"B": (5, 6), "C": (6, 4)}),
    "spmm_ikj": (lambda dt: examples.spmm_ikj(5, 6, 4, dtype=dt), {"B": (5, 6), "C": (6, 4)}),
    "spmm_kij": (lambda dt: examples.spmm_kij(5, 6, 4, dtype=dt), {"B": (5, 6), "C": (6, 4)}),
}


def _hls_inputs(shapes: dict[str, tuple[int, ...]], density: float, dtype: str,
                seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in shapes.items():
        vals = rng.integers(1, 9, shape) if dtype == "int32" else rng.standard_normal(shape)
        out[name] = (vals * (rng.random(shape) < density)).astype(dtype)
    return out


ON_HBM = {name: [("graph", HBM)] for name in ("python", "systemc", *TOOLCHAINS)}


@pytest.mark.parametrize("backend,case,dtype", over(
    [(c, d) for c in sorted(HLS_GRAPHS) for d in ("float32", "int32")],
    backends=("python", "systemc", "hls")), indirect=["backend"])
def test_example_kernels_on_hbm_at_three_densities(backend, case, dtype):
    make, shapes = HLS_GRAPHS[case]
    graph = make(dtype)
    for k, density in enumerate((0.0, 0.4, 1.0)):
        (res,) = _check(backend, graph, _hls_inputs(shapes, density, dtype, seed=k), None,
                        ON_HBM)
        assert res.hw == HBM.name


@pytest.mark.parametrize("backend", over([()], ["fcfs"], backends=("python", "systemc")),
                         indirect=True)
def test_channels_serve_bursts_in_issue_order(backend):
    """A case from the contract alone: on channel 1 (B = 16, 64-byte lines, latency 48),
    A_j's line issued at 2462 occupies byte-time [2462*16, 2466*16), so x_j's line 1
    issued at 2465 ends at 2470*16 and is ready at 2518: crd position 16 goes out then."""
    g, inputs, _ = _spmv_sparse_x()
    hw = REGIMES["line64-k2"]
    res = backend.run(g, inputs, 2, hw)
    ch1 = [r for r in res.mem_requests if r.port % hw.dram.channels == 1]
    assert (2462, 1, 11, 1, False) in [(r.cycle, r.port, r.line, r.lines, r.write) for r in ch1]
    assert (2465, 3, 1, 1, False) in [(r.cycle, r.port, r.line, r.lines, r.write) for r in ch1]
    edge = res.trace.edges["x_j.ref->isect_j.ref_b"]
    after = [c for t, c in zip(edge.tokens, edge.cycles, strict=True) if t == 16 and c > 2465]
    assert after[0] == 2518


# -- the run's end, ideal memory, the on-chip rule ---------------------------------------

#: the run ends at a write's ack, long after the last D: a level whose only write is the
#: seg line its D flushes (no crds at that level), acknowledged ~50 cycles later
LATE_ACKS = [("spmm_ikj", 2), ("spmm_kij", 2), ("spmm_kij", 4)]


@pytest.mark.parametrize("backend,kernel,depth", over(LATE_ACKS, backends=(
    "python", "systemc", *RTL), only={"rtl-verilator": ["spmm_ikj-2"]}), indirect=["backend"])
def test_memory_run_ends_at_the_last_ack(backend, kernel, depth):
    """docs/timing.md, "End of run": cycles = max(1 + last D, largest ack). The RTL
    writers' `done` was `fin && now >= last_ack` from registers set at one edge: under
    Icarus it glitched high for a delta cycle at the D firing and the bench stopped at
    1 + last D (193 instead of 242 for spmm_ikj)."""
    from cosim.runs._sweep import kernel_graph

    graph, inputs = kernel_graph(kernel, 6, 0.1, depth, "float32", 0)
    ref = simulate(graph, inputs, hw=HBM, mem_trace=True)
    last_write = max(r.cycle for r in ref.mem_requests if r.write)
    assert ref.cycles > last_write + 1  # the case still ends at an ack, not at D
    (res,) = _check(backend, graph, inputs, None, ON_HBM)
    assert res.dram_read_bytes > 0 and res.dram_write_bytes > 0


@pytest.mark.parametrize("backend", over([()], ["ack500"], backends=("python", "systemc")),
                         indirect=True)
def test_the_last_write_acknowledgement_ends_the_run(backend):
    a = _csr(4, 4, 0.5, 11)
    hw = load_hw("hbm2-u280", {"dram.latency_cycles": 500})
    g = _spmv(4, 4)
    (res,) = _check(backend, g, {"A": a, "x": np.ones(4, np.float32)},
                    {"y": a @ np.ones(4, np.float32)}, {backend.name: [("graph", hw)]})
    writer = next(s for s in res.nodes.values() if s.op == "value_writer")
    assert res.cycles >= writer.done_cycle + 500


def _spmv_40() -> tuple[Graph, dict]:
    return _spmv(30, 40), {"A": _csr(30, 40, 0.2, 10), "x": np.arange(40, dtype=np.float32)}


#: case → (graph, inputs)
IDEAL = {"spmv_30x40": _spmv_40, "compiled_spmv": lambda: compiled_case("spmv", "float32")}


@pytest.mark.parametrize("backend,case", over([(c,) for c in IDEAL], backends=(
    "python", "systemc", "rtl-icarus"), only={"rtl-icarus": ["compiled_spmv"]}),
    indirect=["backend"])
def test_ideal_hardware_reproduces_the_memoryless_run(backend, case):
    g, inputs = IDEAL[case]()
    ideal = load_hw("ideal")
    plain, got = backend.check(g, inputs, configs={backend.name: [("graph", None),
                                                                  ("graph", ideal)]})
    assert got.cycles == plain.cycles == simulate(g, inputs).cycles
    assert got.hw == "ideal" and got.channel_bytes == []
    if backend.name in RTL:
        assert got.nodes == {}  # the RTL reports node statistics only with memory
        return
    assert got.nodes == plain.nodes
    assert not compare_traces(plain.trace, got.trace)
    assert got.mem_requests is None
    assert got.dram_read_bytes == got.dram_write_bytes == 0


def _gustavson_20() -> tuple[Graph, dict, dict]:
    b, c = _csr(20, 30, 0.3, 12), _csr(30, 25, 0.3, 13)
    return _spmm(20, 30, 25, "i,k,j"), {"B": b, "C": c}, {"X": _dense(b @ c)}


def _example_spmm(kernel: str) -> Callable:
    def make():
        make_graph, shapes = HLS_GRAPHS[kernel]
        inputs = _hls_inputs(shapes, 0.6, "float32", seed=3)
        return make_graph("float32"), inputs, {"X": inputs["B"] @ inputs["C"]}
    return make


def _compiled_spmm(kernel: str) -> Callable:
    def make():
        graph, inputs = compiled_case(kernel, "float32")
        return graph, inputs, {"X": inputs["B"] @ inputs["C"]}
    return make


#: accumulators (spacc for Gustavson's order, spacc2 for k,i,j) over a tiny buffer
ONCHIP = {"gustavson_20x30x25": _gustavson_20,
          "example_spmm_ikj": _example_spmm("spmm_ikj"), "example_spmm_kij": _example_spmm(
              "spmm_kij"),
          "compiled_spmm_ikj": _compiled_spmm("spmm_ikj"),
          "compiled_spmm_kij": _compiled_spmm("spmm_kij")}


@pytest.mark.parametrize("backend,case", over([(c,) for c in ONCHIP], backends=(
    "python", "systemc", "hls", "rtl-icarus"), only={
        "hls": ["example_spmm_ikj", "example_spmm_kij"],
        "rtl-icarus": ["compiled_spmm_ikj", "compiled_spmm_kij"]}), indirect=["backend"])
def test_onchip_buffer_is_enforced_as_the_model(backend, case):
    """Each accumulator's peak entry count (C-simulation's count, the RTL core's peak
    register) goes through the model's own check: the same error (naming every
    accumulator and its bytes) over onchip.bytes, and a normal run under the default
    buffer."""
    graph, inputs, want = ONCHIP[case]()
    small = load_hw("hbm2-u280", ["onchip.bytes=16"])
    res = backend.run(graph, inputs, "graph", small, trace=False)
    assert isinstance(res, SimulationError), res
    with pytest.raises(SimulationError, match=r"spacc.*onchip\.bytes") as py:
        simulate(graph, inputs, hw=small)
    assert str(res) == str(py.value)
    _check(backend, graph, inputs, want, ON_HBM)


# -- random inputs and hardware ---------------------------------------------------------

HW_KEYS = st.fixed_dictionaries({
    "dram.channels": st.integers(1, 4),
    "dram.bytes_per_cycle": st.sampled_from([1, 4, 16, 64]),
    "dram.latency_cycles": st.integers(1, 60),
    "dram.line_bytes": st.sampled_from([4, 8, 16, 64]),
    "dram.outstanding": st.integers(1, 8),
})
RANDOM_KERNELS = {
    "spmv": ("y(i) = A(i,j) * x(j)", {"A": "csr", "x": "d", "y": "d"}, None),
    "spmv_sparse_x": ("y(i) = A(i,j) * x(j)", {"A": "csr", "x": "c", "y": "d"}, None),
    "rowsum": ("y(i) = A(i,j)", {"A": "dcsr", "y": "c"}, None),
    "spmm_gustavson": ("X(i,j) = A(i,k) * B(k,j)", {"A": "csr", "B": "csr", "X": "csr"},
                       "i,k,j"),
}


@pytest.mark.parametrize("backend", over([()], ["random"], backends=("python", "systemc")),
                         indirect=True)
@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kernel=st.sampled_from(sorted(RANDOM_KERNELS)), m=st.integers(1, 10),
       n=st.integers(1, 10), density=st.sampled_from([0.0, 0.2, 0.6, 1.0]),
       seed=st.integers(0, 999), keys=HW_KEYS)
def test_random_inputs_and_hardware(backend, kernel, m, n, density, seed, keys):
    expr, formats, order = RANDOM_KERNELS[kernel]
    shapes = {"A": (m, n), "B": (n, m)} if "B" in formats else {"A": (m, n)}
    g = compile_expression(expr, formats=formats, shapes=shapes, order=order)
    inputs = {"A": _csr(m, n, density, seed)}
    if "x" in formats:
        rng = np.random.default_rng(seed)
        inputs["x"] = (rng.random(n) * (rng.random(n) < 0.6)).astype(np.float32)
    if "B" in formats:
        inputs["B"] = _csr(n, m, density, seed + 1)
    A = _dense(inputs["A"])
    want = {"y": A @ inputs["x"] if "x" in formats else A.sum(axis=1)} if "B" not in formats \
        else {"X": A @ _dense(inputs["B"])}
    hw = load_hw("ideal", {"dram.enabled": True, **keys})
    _check(backend, g, inputs, want, {backend.name: [(d, hw) for d in (2, 4, None)]})
