"""The SystemC memory system against the Python reference model (docs/timing.md, "Memory").

With memory on, every run must agree with the Python model on the per-edge traces (tokens,
write and read cycles), the cycle count, every node's statistics including ``stall_mem``,
bytes and bursts, the per-channel bytes and the burst log (issue cycle, port, first line,
lines, write). The configurations of one graph run as one batch (one forked child).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
import scipy.sparse as sp
from _parity import assert_same_result
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import compile_expression
from cosim import SystemCBackend, SystemCRun
from ir import Hardware, compare_traces, examples, load_hw
from sim_models.python import SimulationError, simulate
from sim_models.python import _memory as _pymem

pytestmark = pytest.mark.cosim

HBM = load_hw("hbm2-u280")
#: the memory regimes every kernel is checked in
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



def _csr(m: int, n: int, density: float, seed: int) -> sp.csr_matrix:
    return sp.random(m, n, density=density, format="csr", random_state=seed, dtype=np.float32)


def _spmv(m: int, n: int, x_format: str = "d", depth: int | None = 2):
    return compile_expression("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": x_format,
                                                               "y": "d"},
                              shapes={"A": (m, n)}, depth=depth)


def _spmm(m: int, k: int, n: int, order: str | None = None):
    return compile_expression("X(i,j) = B(i,k) * C(k,j)",
                              formats={"B": "csr", "C": "csr", "X": "csr"},
                              shapes={"B": (m, k), "C": (k, n)}, order=order)


@contextmanager
def _grant_order() -> Iterator[list[tuple[int, int, int]]]:
    """Record the Python model's channel grants as (channel, issue cycle, port)."""
    grants: list[tuple[int, int, int]] = []
    original = _pymem._Channel.grant

    def grant(channel, burst):
        grants.append((channel.no, burst.cycle, burst.port.spec.no))
        original(channel, burst)

    _pymem._Channel.grant = grant
    try:
        yield grants
    finally:
        _pymem._Channel.grant = original


def _out_of_order(grants: list[tuple[int, int, int]]) -> bool:
    """Did some channel serve a burst before an earlier-issued (cycle, port) one?"""
    last: dict[int, tuple[int, int]] = {}
    for ch, cycle, port in grants:
        if ch in last and (cycle, port) < last[ch]:
            return True
        last[ch] = (cycle, port)
    return False


def _python(graph, inputs, depth, hw):
    """The Python result; its channels must serve bursts in (issue cycle, port) order,
    which the engine's grants after the fact have to get right."""
    with _grant_order() as grants:
        try:
            res = simulate(graph, inputs, trace=True, depth=depth, hw=hw, mem_trace=True)
        except SimulationError as exc:
            res = exc
    assert not _out_of_order(grants), f"{graph.name}: the Python model granted out of order"
    return res


def _assert_same(graph, inputs, depth, hw, sc) -> None:
    py = _python(graph, inputs, depth, hw)
    assert_same_result(py, sc, f"{graph.name} (depth={depth}, hw={hw.name if hw else None})")


def _check(systemc, graph, inputs, configs) -> None:
    """Every (depth, hw) of ``configs`` in one SystemC batch, each against Python."""
    results = systemc.run_batch([SystemCRun(graph, inputs, trace=True, depth=d, hw=hw,
                                            mem_trace=True) for d, hw in configs])
    for (depth, hw), sc in zip(configs, results, strict=True):
        _assert_same(graph, inputs, depth, hw, sc)


def _regimes(depths=(2,)) -> list[tuple[int | None, Hardware]]:
    return [(d, hw) for hw in REGIMES.values() for d in depths]


# -- kernels in every regime ------------------------------------------------------------

def test_spmv_dense_x(systemc):
    a = _csr(30, 40, 0.2, 1)
    x = np.arange(40, dtype=np.float32) / 7
    _check(systemc, _spmv(30, 40), {"A": a, "x": x}, _regimes(DEPTHS))


def _sparse_x_case():
    a = _csr(25, 60, 0.15, 2)
    x = _csr(1, 60, 0.3, 3).toarray().ravel()
    return _spmv(25, 60, "c"), {"A": a, "x": x}


#: a case where a blocked-graph grant once served a younger burst first in the Python
#: model (a scanner blocked on output space issued its access late)
FCFS_CASE = (2, REGIMES["line64-k2"])


def test_spmv_sparse_x(systemc):
    """x compressed: an intersection, so x_j re-scans x once per row (jumps back)."""
    g, inputs = _sparse_x_case()
    _check(systemc, g, inputs, _regimes(DEPTHS))


@pytest.mark.parametrize("backend", ["python", "systemc"])
def test_channels_serve_bursts_in_issue_order(systemc, backend):
    """A case from the contract alone: on channel 1 (B = 16, 64-byte lines, latency 48),
    A_j's line issued at 2462 occupies byte-time [2462*16, 2466*16), so x_j's line 1
    issued at 2465 ends at 2470*16 and is ready at 2518: crd position 16 goes out then."""
    g, inputs = _sparse_x_case()
    depth, hw = FCFS_CASE
    run = systemc.run if backend == "systemc" else simulate
    res = run(g, inputs, trace=True, depth=depth, hw=hw, mem_trace=True)
    ch1 = [r for r in res.mem_requests if r.port % hw.dram.channels == 1]
    assert (2462, 1, 11, 1, False) in [(r.cycle, r.port, r.line, r.lines, r.write) for r in ch1]
    assert (2465, 3, 1, 1, False) in [(r.cycle, r.port, r.line, r.lines, r.write) for r in ch1]
    edge = res.trace.edges["x_j.ref->isect_j.ref_b"]
    after = [c for t, c in zip(edge.tokens, edge.cycles, strict=True) if t == 16 and c > 2465]
    assert after[0] == 2518


def test_spmm_inner_product(systemc):
    b, c = _csr(12, 15, 0.3, 4), _csr(15, 10, 0.3, 5)
    _check(systemc, _spmm(12, 15, 10), {"B": b, "C": c}, _regimes((2, None)))


def test_spmm_gustavson_spacc(systemc):
    b, c = _csr(14, 18, 0.25, 6), _csr(18, 12, 0.3, 7)
    g = _spmm(14, 18, 12, "i,k,j")
    assert any(n.op == "spacc" for n in g.nodes.values())
    _check(systemc, g, {"B": b, "C": c}, _regimes((1, 2, 4, None)))


def test_spmm_outer_product_spacc2(systemc):
    rng = np.random.default_rng(8)
    b = np.where(rng.random((6, 7)) < 0.4, rng.standard_normal((6, 7)), 0).astype(np.float32)
    c = np.where(rng.random((7, 5)) < 0.4, rng.standard_normal((7, 5)), 0).astype(np.float32)
    _check(systemc, examples.spmm_kij(6, 7, 5), {"B": b, "C": c}, _regimes((2, None)))


def test_per_module_processes_serve_bursts_in_port_order():
    """Modules evaluated in SystemC's own order still give the FCFS order of the ports."""
    if SystemCBackend.unavailable():
        pytest.skip(SystemCBackend.unavailable())
    a = _csr(20, 30, 0.2, 9)
    x = np.ones(30, np.float32)
    _check(SystemCBackend(per_module_processes=True), _spmv(20, 30), {"A": a, "x": x},
           [(2, REGIMES["contention"]), (2, REGIMES["line4"])])


# -- ideal memory, the run's end, the on-chip rule --------------------------------------

def test_ideal_hardware_reproduces_the_memoryless_run(systemc):
    a = _csr(30, 40, 0.2, 10)
    x = np.arange(40, dtype=np.float32)
    g = _spmv(30, 40)
    plain, ideal = systemc.run_batch([SystemCRun(g, {"A": a, "x": x}, trace=True),
                                      SystemCRun(g, {"A": a, "x": x}, trace=True,
                                                 hw=load_hw("ideal"), mem_trace=True)])
    assert ideal.cycles == plain.cycles
    assert ideal.nodes == plain.nodes
    assert not compare_traces(plain.trace, ideal.trace)
    assert ideal.hw == "ideal" and ideal.channel_bytes == [] and ideal.mem_requests is None
    assert ideal.dram_read_bytes == ideal.dram_write_bytes == 0
    _assert_same(g, {"A": a, "x": x}, "graph", load_hw("ideal"), ideal)


def test_the_last_write_acknowledgement_ends_the_run(systemc):
    a = _csr(4, 4, 0.5, 11)
    hw = load_hw("hbm2-u280", {"dram.latency_cycles": 500})
    g = _spmv(4, 4)
    res = systemc.run(g, {"A": a, "x": np.ones(4, np.float32)}, hw=hw)
    writer = next(s for s in res.nodes.values() if s.op == "value_writer")
    assert res.cycles >= writer.done_cycle + 500
    assert res.cycles == simulate(g, {"A": a, "x": np.ones(4, np.float32)}, hw=hw).cycles


def test_accumulators_beyond_the_onchip_buffer_fail_as_in_python(systemc):
    b, c = _csr(20, 30, 0.3, 12), _csr(30, 25, 0.3, 13)
    g = _spmm(20, 30, 25, "i,k,j")
    small = load_hw("hbm2-u280", ["onchip.bytes=16"])
    with pytest.raises(SimulationError, match=r"spacc.*onchip\.bytes") as sc:
        systemc.run(g, {"B": b, "C": c}, hw=small)
    with pytest.raises(SimulationError) as py:
        simulate(g, {"B": b, "C": c}, hw=small)
    assert str(sc.value) == str(py.value)
    ok = systemc.run(g, {"B": b, "C": c}, hw=HBM)
    np.testing.assert_allclose(ok.dense(), (b @ c).toarray(), rtol=1e-5)


# -- random inputs and hardware ---------------------------------------------------------

HW_KEYS = st.fixed_dictionaries({
    "dram.channels": st.integers(1, 4),
    "dram.bytes_per_cycle": st.sampled_from([1, 4, 16, 64]),
    "dram.latency_cycles": st.integers(1, 60),
    "dram.line_bytes": st.sampled_from([4, 8, 16, 64]),
    "dram.outstanding": st.integers(1, 8),
})
KERNELS = {
    "spmv": ("y(i) = A(i,j) * x(j)", {"A": "csr", "x": "d", "y": "d"}, None),
    "spmv_sparse_x": ("y(i) = A(i,j) * x(j)", {"A": "csr", "x": "c", "y": "d"}, None),
    "rowsum": ("y(i) = A(i,j)", {"A": "dcsr", "y": "c"}, None),
    "spmm_gustavson": ("X(i,j) = A(i,k) * B(k,j)", {"A": "csr", "B": "csr", "X": "csr"},
                       "i,k,j"),
}


@settings(max_examples=8, deadline=None)
@given(kernel=st.sampled_from(sorted(KERNELS)), m=st.integers(1, 10), n=st.integers(1, 10),
       density=st.sampled_from([0.0, 0.2, 0.6, 1.0]), seed=st.integers(0, 999), keys=HW_KEYS)
def test_random_inputs_and_hardware(systemc, kernel, m, n, density, seed, keys):
    expr, formats, order = KERNELS[kernel]
    shapes = {"A": (m, n), "B": (n, m)} if "B" in formats else {"A": (m, n)}
    g = compile_expression(expr, formats=formats, shapes=shapes, order=order)
    inputs = {"A": _csr(m, n, density, seed)}
    if "x" in formats:
        rng = np.random.default_rng(seed)
        inputs["x"] = (rng.random(n) * (rng.random(n) < 0.6)).astype(np.float32)
    if "B" in formats:
        inputs["B"] = _csr(n, m, density, seed + 1)
    hw = load_hw("ideal", {"dram.enabled": True, **keys})
    _check(systemc, g, inputs, [(d, hw) for d in (2, 4, None)])
