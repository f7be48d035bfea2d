"""The memory system on the reference model (docs/timing.md, "Memory").

Gold values come from the stored arrays (scipy's indptr/indices/data lengths) and from
the rules' arithmetic (bytes / bandwidth, round trips), never from the model itself.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import compile_expression
from cosim.runs._sweep import SWEEP_KERNELS, kernel_graph
from ir import load_hw, memory_ports
from sim_models.python import SimulationError, simulate


def _csr(m: int, n: int, density: float, seed: int) -> sp.csr_matrix:
    return sp.random(m, n, density=density, format="csr", random_state=seed,
                     dtype=np.float32)


def _rowsum(m: int, n: int, depth: int | None = 2):
    return compile_expression("y(i) = A(i,j)", formats={"A": "csr", "y": "d"},
                              shapes={"A": (m, n)}, depth=depth)


def _hw(**keys):
    return load_hw("hbm2-u280", {f"dram.{k}": v for k, v in keys.items()})


def _lines(words: int, line_bytes: int = 64) -> int:
    return math.ceil(words * 4 / line_bytes)


def test_ideal_is_the_contract_without_memory():
    a = _csr(30, 40, 0.2, 1)
    x = np.arange(40, dtype=np.float32)
    g = compile_expression("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"},
                           shapes={"A": (30, 40)})
    plain = simulate(g, {"A": a, "x": x}, trace=True)
    ideal = simulate(g, {"A": a, "x": x}, trace=True, hw=load_hw("ideal"))
    assert ideal.cycles == plain.cycles
    assert ideal.nodes == plain.nodes
    for name, edge in plain.trace.edges.items():
        assert ideal.trace.edges[name].cycles == edge.cycles
    assert ideal.dram_read_bytes == ideal.dram_write_bytes == 0
    assert memory_ports(g, load_hw("ideal")) == []


def test_a_streaming_kernel_reads_each_stored_line_once():
    m, n = 300, 500
    a = _csr(m, n, 0.03, 2)
    res = simulate(_rowsum(m, n), {"A": a}, hw=_hw(channels=4))
    expected_read = (_lines(m + 1) + 2 * _lines(a.nnz)) * 64   # seg, crd, vals
    assert res.dram_read_bytes == expected_read
    assert res.dram_write_bytes == _lines(m) * 64              # dense y: values only
    np.testing.assert_allclose(res.dense(), np.asarray(a.sum(axis=1)).ravel(), rtol=1e-5)


def test_a_bandwidth_bound_kernel_runs_at_the_roofline():
    m, n = 1000, 1000
    a = _csr(m, n, 0.01, 3)
    hw = _hw(channels=1, bytes_per_cycle=4, outstanding=16)
    res = simulate(_rowsum(m, n), {"A": a}, hw=hw)
    roof = (res.dram_read_bytes + res.dram_write_bytes) / 4
    assert roof <= res.cycles <= 1.15 * roof


def test_one_outstanding_line_is_latency_bound():
    m, n = 200, 400
    a = _csr(m, n, 0.05, 4)
    latency, bpc = 40, 48
    hw = _hw(channels=32, bytes_per_cycle=bpc, latency_cycles=latency, outstanding=1)
    res = simulate(_rowsum(m, n), {"A": a}, hw=hw)
    round_trip = latency + math.ceil(64 / bpc)
    busiest = _lines(a.nnz)  # crd and vals each stream this many lines, one at a time
    assert res.cycles >= busiest * round_trip
    # and no worse than every line's round trip one after another, on top of the
    # memory-free schedule (FIFOs of depth 2 couple the crd and vals streams)
    every_line = (res.dram_read_bytes + res.dram_write_bytes) // 64
    ideal = simulate(_rowsum(m, n), {"A": a}).cycles
    assert res.cycles <= every_line * (round_trip + 1) + ideal
    deep = simulate(_rowsum(m, n), {"A": a}, hw=_hw(channels=32, latency_cycles=latency,
                                                    bytes_per_cycle=bpc, outstanding=16))
    assert deep.cycles * 3 < res.cycles


def test_ports_sharing_a_channel_share_its_bandwidth():
    m, n = 400, 400
    a = _csr(m, n, 0.03, 5)
    shared = simulate(_rowsum(m, n), {"A": a}, hw=_hw(channels=1, bytes_per_cycle=8))
    apart = simulate(_rowsum(m, n), {"A": a}, hw=_hw(channels=8, bytes_per_cycle=8))
    assert shared.cycles >= (shared.dram_read_bytes + shared.dram_write_bytes) / 8
    assert apart.cycles < shared.cycles
    assert len([b for b in apart.channel_bytes if b]) == 4  # seg, crd, vals, y


def test_the_run_ends_when_the_last_write_is_acknowledged():
    a = _csr(4, 4, 0.5, 6)
    res = simulate(_rowsum(4, 4), {"A": a}, hw=_hw(latency_cycles=500))
    writer = next(s for s in res.nodes.values() if s.op == "value_writer")
    assert res.cycles >= writer.done_cycle + 500


def test_accumulators_must_fit_on_chip():
    b = _csr(20, 30, 0.3, 7)
    c = _csr(30, 25, 0.3, 8)
    g = compile_expression("X(i,j) = B(i,k) * C(k,j)",
                           formats={"B": "csr", "C": "csr", "X": "csr"},
                           shapes={"B": (20, 30), "C": (30, 25)}, order="i,k,j")
    assert any(n.op == "spacc" for n in g.nodes.values())
    ok = simulate(g, {"B": b, "C": c}, hw=load_hw("hbm2-u280"))
    np.testing.assert_allclose(ok.dense(), (b @ c).toarray(), rtol=1e-5)
    with pytest.raises(SimulationError, match=r"spacc.*onchip\.bytes"):
        simulate(g, {"B": b, "C": c}, hw=load_hw("hbm2-u280", ["onchip.bytes=16"]))


HW = st.fixed_dictionaries({
    "dram.channels": st.integers(1, 4),
    "dram.bytes_per_cycle": st.sampled_from([1, 4, 16, 64]),
    "dram.latency_cycles": st.integers(1, 60),
    "dram.line_bytes": st.sampled_from([4, 16, 64]),
    "dram.outstanding": st.integers(1, 8),
})
EXPRS = {
    "spmv": ("y(i) = A(i,j) * x(j)", {"A": "csr", "x": "d", "y": "d"}),
    "spmv_sparse_x": ("y(i) = A(i,j) * x(j)", {"A": "csr", "x": "c", "y": "d"}),
    "rowsum": ("y(i) = A(i,j)", {"A": "dcsr", "y": "c"}),
}


@settings(max_examples=40, deadline=None)
@given(kernel=st.sampled_from(sorted(EXPRS)), m=st.integers(1, 12), n=st.integers(1, 12),
       density=st.sampled_from([0.0, 0.2, 0.6, 1.0]), seed=st.integers(0, 999),
       depth=st.sampled_from([2, 4, None]), keys=HW)
def test_memory_only_delays_and_accounts_for_every_byte(kernel, m, n, density, seed, depth,
                                                        keys):
    expr, formats = EXPRS[kernel]
    g = compile_expression(expr, formats=formats, shapes={"A": (m, n)}, depth=depth)
    a = _csr(m, n, density, seed)
    rng = np.random.default_rng(seed)
    inputs = {"A": a}
    if "x" in formats:
        inputs["x"] = (rng.random(n) * (rng.random(n) < 0.6)).astype(np.float32)
    hw = load_hw("ideal", {"dram.enabled": True, **keys})
    res = simulate(g, inputs, hw=hw, mem_trace=True)
    base = simulate(g, inputs)
    gold = a @ inputs["x"] if "x" in inputs else np.asarray(a.sum(axis=1)).ravel()
    np.testing.assert_allclose(res.dense(), gold, rtol=1e-5, atol=1e-6)
    assert res.cycles >= base.cycles                       # memory only ever waits
    lb = keys["dram.line_bytes"]
    assert res.cycles >= max(res.channel_bytes) / keys["dram.bytes_per_cycle"]
    moved = sum(r.lines for r in res.mem_requests) * lb
    assert moved == res.dram_read_bytes + res.dram_write_bytes == sum(res.channel_bytes)
    last: dict[int, int] = defaultdict(int)
    for r in res.mem_requests:                             # each port issues in order
        assert r.cycle >= last[r.port]
        last[r.port] = r.cycle
    ports = memory_ports(g, hw)
    assert {r.port for r in res.mem_requests} <= {p.no for p in ports}
    for r in res.mem_requests:
        assert r.write == ports[r.port].write


@pytest.mark.parametrize("kernel", sorted(SWEEP_KERNELS))
def test_ideal_reproduces_every_kernels_cycles_and_traces(kernel):
    """The whole sweep of example kernels: hardware ``ideal`` is the contract without
    memory, token for token and cycle for cycle (and hbm2-u280 only ever adds cycles)."""
    graph, inputs = kernel_graph(kernel, 8, 0.3, 2, "float32", 1)
    plain = simulate(graph, inputs, trace=True)
    ideal = simulate(graph, inputs, trace=True, hw=load_hw("ideal"))
    assert (ideal.cycles, ideal.nodes, ideal.max_occupancy) == (plain.cycles, plain.nodes,
                                                                plain.max_occupancy)
    for name, edge in plain.trace.edges.items():
        assert ideal.trace.edges[name].tokens == edge.tokens
        assert ideal.trace.edges[name].cycles == edge.cycles
    hbm = simulate(graph, inputs, hw=load_hw("hbm2-u280"))
    assert hbm.cycles > plain.cycles and hbm.dram_read_bytes > 0
