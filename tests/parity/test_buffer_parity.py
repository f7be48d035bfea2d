"""On-chip buffers (docs/timing.md, "On-chip buffers"): the Python model and SystemC cycle
for cycle, token for token, with equal bursts, DRAM bytes and buffer statistics, over
SpMV, SpMM, SDDMM and lanes with buffered operands, buffer ports 1/2/8, latency 0/3,
load queues 1/8, on ``hbm2-u280`` and on one narrow channel where the fills contend;
outputs against numpy/scipy. Plus the contract's own promises on the Python model: a
buffer moves its array once, and a buffered read with latency 0 and enough ports costs
what an ideal-memory read costs.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _backends import assert_same_result, python_run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import compile_expression
from ir import GraphError, HwError, compare_traces, examples, load_hw, stored_arrays
from sim_models.python import SimulationError, simulate
from tests._materialised import gcn_chain, kernel_cases

#: hardware regimes: the preset, and one narrow channel every fill and port shares
REGIMES = {"hbm": {}, "tight": {"dram.channels": 1, "dram.bytes_per_cycle": 4}}


def _hw(regime: str, ports: int = 2, latency: int = 0, q: int = 1):
    return load_hw("hbm2-u280", {**REGIMES[regime], "onchip.ports": ports,
                                 "onchip.latency": latency, "dram.load_queue": q})


def _csr(m: int, n: int, density: float, seed: int) -> sp.csr_matrix:
    return sp.random(m, n, density=density, format="csr", random_state=seed, dtype=np.float32)


def _dense(rng, *shape) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _case(kernel: str, m: int, n: int, density: float, seed: int):
    """(graph, inputs, gold outputs) of one kernel on random operands."""
    rng = np.random.default_rng(seed)
    if kernel == "spmv":
        a, x = _csr(m, n, density, seed), _dense(rng, n)
        return examples.spmv(m, n), {"B": a, "c": x}, {"x": a @ x}
    if kernel == "spmm":  # A·X with X dense, the dense operand gathered per nonzero
        a, x = _csr(m, n, density, seed), _dense(rng, n, 3)
        g = compile_expression("Y(i,j) = A(i,k) * X(k,j)",
                               formats={"A": "csr", "X": "dense", "Y": "dense"},
                               shapes={"A": (m, n), "X": (n, 3)}, order="ikj")
        return g, {"A": a, "X": x}, {"Y": a @ x}
    if kernel == "sddmm":
        b, c, d = _csr(m, n, density, seed), _dense(rng, m, 3), _dense(rng, 3, n)
        return (examples.sddmm(m, n, 3), {"B": b, "C": c, "D": d},
                {"X": b.toarray() * (c @ d)})
    assert kernel == "lanes"  # SpMV on 2 lanes: every lane's array reads one buffer
    a, x = _csr(m, n, density, seed), _dense(rng, n)
    g = compile_expression("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"},
                           shapes={"A": (m, n)}, par={"i": 2})
    return g, {"A": a, "x": x}, {"y": a @ x}


def _buffered(graph, pick: list[bool]):
    """``graph`` with the inputs' arrays ``pick`` selects (in declaration order) buffered."""
    arrays = [(t.name, a) for t in graph.tensors.values() if t.role == "input"
              for a in stored_arrays(t)]
    chosen: dict[str, list[str]] = {}
    for (name, array), keep in zip(arrays, pick, strict=False):
        if keep:
            chosen.setdefault(name, []).append(array)
    return graph.with_buffers({n: tuple(a) for n, a in chosen.items()})


def _check(graph, inputs, gold, hw, py, sc, where: str) -> None:
    assert_same_result(py, sc, where)
    assert sc.buffers == py.buffers, where
    for name, want in gold.items():
        np.testing.assert_allclose(py.dense(name), want, rtol=1e-4, atol=1e-4, err_msg=where)


@pytest.mark.cosim
@settings(max_examples=12, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(kernel=st.sampled_from(("spmv", "spmm", "sddmm", "lanes")), m=st.integers(1, 10),
       n=st.integers(1, 24), density=st.floats(0.0, 0.6), seed=st.integers(0, 2**16),
       pick=st.lists(st.booleans(), min_size=12, max_size=12),
       regime=st.sampled_from(sorted(REGIMES)))
def test_python_and_systemc_agree(systemc, kernel, m, n, density, seed, pick, regime):
    """Every port count, latency and load queue in one SystemC child per example."""
    from cosim import SystemCRun

    graph, inputs, gold = _case(kernel, m, n, density, seed)
    graph = _buffered(graph, pick)
    hws = [_hw(regime, p, lat, q) for p in (1, 2, 8) for lat in (0, 3) for q in (1, 8)]
    runs = [SystemCRun(graph, inputs, trace=True, depth=2, hw=hw, mem_trace=True)
            for hw in hws]
    for hw, sc in zip(hws, systemc.run_batch(runs), strict=True):
        py = python_run(graph, inputs, 2, hw)
        _check(graph, inputs, gold, hw, py, sc, f"{kernel} {hw.name}")


@pytest.mark.cosim
@pytest.mark.parametrize("kernel", ["spmv", "spmm", "sddmm", "lanes"])
def test_every_array_buffered_agrees(systemc, kernel):
    """All inputs on chip, at FIFO depths 1, 2 and unbounded, fills contending."""
    from cosim import SystemCRun

    graph, inputs, gold = _case(kernel, 9, 20, 0.3, 11)
    graph = graph.with_buffers({t.name: True for t in graph.tensors.values()
                                if t.role == "input"})
    todo = [(d, _hw(r, p, lat, 8)) for d in (1, 2, None) for r in REGIMES
            for p, lat in ((1, 3), (8, 0))]
    runs = [SystemCRun(graph, inputs, trace=True, depth=d, hw=hw, mem_trace=True)
            for d, hw in todo]
    for (d, hw), sc in zip(todo, systemc.run_batch(runs), strict=True):
        py = python_run(graph, inputs, d, hw)
        if isinstance(py, SimulationError) and d == 1:
            continue  # a reconvergent fork can need two slots on an edge
        _check(graph, inputs, gold, hw, py, sc, f"{kernel} depth={d} {hw.name}")


def test_a_buffer_moves_its_array_once():
    """DRAM read bytes = the fills' bytes plus the unbuffered ports' bytes; the buffered
    gathers of the vector leave DRAM, and each fill is one burst at cycle 0."""
    graph, inputs, gold = _case("spmv", 30, 200, 0.1, 4)
    hw = _hw("hbm")
    plain = simulate(graph, inputs, hw=hw, mem_trace=True)
    buffered = simulate(graph.with_buffers({"c": True}), inputs, hw=hw, mem_trace=True)
    np.testing.assert_allclose(buffered.dense("x"), gold["x"], rtol=1e-4, atol=1e-4)
    lb = hw.dram.line_bytes
    assert buffered.buffers["c.vals"].fill_bytes == -(-200 * 4 // lb) * lb
    assert buffered.nodes["cv"].dram_read_bytes == buffered.buffers["c.vals"].fill_bytes
    assert buffered.buffers["c.vals"].reads == inputs["B"].nnz
    assert plain.nodes["cv"].dram_read_bytes > 5 * buffered.nodes["cv"].dram_read_bytes
    fill = [r for r in buffered.mem_requests if r.lines == -(-200 * 4 // lb)]
    assert [(r.cycle, r.line) for r in fill] == [(0, 0)]
    assert buffered.cycles < plain.cycles


@pytest.mark.parametrize("kernel", ["spmv", "spmm", "sddmm"])
def test_latency_0_with_enough_ports_is_ideal_memory(kernel):
    """Everything on chip, fills done before the first read (every root starts at
    cycle 2000): every token is written and read in the cycle the ideal-memory run
    writes and reads it (only the final writes' acknowledgement differs)."""
    graph, inputs, _ = _case(kernel, 8, 16, 0.3, 2)
    graph = graph.with_buffers({t.name: True for t in graph.tensors.values()
                                if t.role == "input"})
    late = {"timing.root.startup": 2000}
    ideal = simulate(graph, inputs, trace=True, hw=load_hw(None, late))
    hw = load_hw("hbm2-u280", {**late, "onchip.ports": 64})
    onchip = simulate(graph, inputs, trace=True, hw=hw)
    assert max(b.filled for b in onchip.buffers.values()) < 2000
    assert not compare_traces(ideal.trace, onchip.trace)
    assert all(b.conflict_cycles == 0 for b in onchip.buffers.values())


def test_one_port_serializes_a_cycle_s_reads():
    """Two seg reads a fiber on a one-port buffer: the second waits a cycle each time."""
    graph, inputs, _ = _case("spmv", 12, 30, 0.2, 5)
    graph = graph.with_buffers({"B": ("seg1",)})
    one = simulate(graph, inputs, hw=_hw("hbm", ports=1))
    two = simulate(graph, inputs, hw=_hw("hbm", ports=2))
    assert one.buffers["B.seg1"].conflict_cycles == 12
    assert two.buffers["B.seg1"].conflict_cycles == 0


def test_buffer_field_round_trips_and_is_checked():
    g = examples.spmv(4, 6).with_buffers({"c": True, "B": ("crd1", "vals")})
    assert type(g).from_json(g.to_json()).tensors["B"].buffer == ("crd1", "vals")
    for bad, words in [({"x": True}, "only an input"), ({"B": ("seg0",)}, "dense"),
                       ({"B": ("nope",)}, "no such array")]:
        with pytest.raises(GraphError, match=words) as err:
            examples.spmv(4, 6).with_buffers(bad)
        assert "\n" not in str(err.value)


def test_buffers_that_do_not_fit_are_one_error_naming_them():
    graph, inputs, _ = _case("spmv", 8, 100, 0.2, 1)
    graph = graph.with_buffers({"c": True})
    with pytest.raises(GraphError, match=r"c\.vals 400 bytes") as err:
        simulate(graph, inputs, hw=load_hw("hbm2-u280", {"onchip.bytes": 399}))
    assert "\n" not in str(err.value)
    res = simulate(graph, inputs, hw=load_hw("hbm2-u280", {"onchip.bytes": 400}))
    assert res.buffers["c.vals"].reads > 0


def test_buffers_count_with_the_accumulators():
    graph, inputs, _ = _case("spmm", 8, 30, 0.3, 1)
    graph = graph.with_buffers({"X": True})
    need = 30 * 3 * 4
    with pytest.raises(SimulationError, match="buffer X.vals 360 bytes"):
        simulate(graph, inputs, hw=load_hw("hbm2-u280", {"onchip.bytes": need}))


@pytest.mark.parametrize(("key", "value"), [("onchip.ports", "0"), ("onchip.latency", "-1"),
                                            ("onchip.ports", "1.5")])
def test_bad_onchip_keys_are_one_line(key, value):
    with pytest.raises(HwError, match=key) as err:
        load_hw("hbm2-u280", [f"{key}={value}"])
    assert "\n" not in str(err.value)


def test_ideal_memory_ignores_buffers():
    graph, inputs, gold = _case("spmv", 6, 10, 0.3, 3)
    plain = simulate(graph, inputs, trace=True)
    marked = simulate(graph.with_buffers({"c": True, "B": True}), inputs, trace=True)
    assert marked.cycles == plain.cycles and not marked.buffers
    assert not compare_traces(plain.trace, marked.trace)


@pytest.mark.cosim
def test_per_module_systemc_refuses_buffers():
    """Per-module processes evaluate in the kernel's order, not port order: refused."""
    from cosim import SystemCBackend, SystemCRun
    from cosim.backends._systemc import SystemCError

    if SystemCBackend.unavailable():
        pytest.skip(SystemCBackend.unavailable())
    graph, inputs, _ = _case("spmv", 4, 6, 0.5, 1)
    run = SystemCRun(graph.with_buffers({"c": True}), inputs, trace=False, depth=2,
                     hw=_hw("hbm"), mem_trace=False)
    with pytest.raises(SystemCError, match="fused evaluation"):
        SystemCBackend(per_module_processes=True).run_batch([run])


# -- materialised intermediates (docs/fusion.md): a buffer an earlier kernel wrote ----------


@pytest.mark.cosim
@settings(max_examples=6, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 9), f=st.integers(1, 5), h=st.integers(1, 4),
       density=st.floats(0.0, 0.7), seed=st.integers(0, 2**16),
       a_format=st.sampled_from(("csr", "dcsr")), x_format=st.sampled_from(("dense", "csr")),
       regime=st.sampled_from(sorted(REGIMES)))
def test_materialised_chain_agrees(systemc, n, f, h, density, seed, a_format, x_format,
                                   regime):
    """GCN's A·(X·W) with X·W on chip: the producer (writing T on chip) and the consumer
    (gathering T's rows from a buffer with no fill), every port count and latency."""
    from cosim import SystemCRun

    compiled, inputs, _ = gcn_chain(n, f, h, density, seed, a_format=a_format,
                                    x_format=x_format)
    hws = [_hw(regime, p, lat, 4) for p in (1, 2) for lat in (0, 3)]
    for graph, ins, gold in kernel_cases(compiled, inputs):
        runs = [SystemCRun(graph, ins, trace=True, depth=2, hw=hw, mem_trace=True)
                for hw in hws]
        for hw, sc in zip(hws, systemc.run_batch(runs), strict=True):
            py = python_run(graph, ins, 2, hw)
            _check(graph, ins, gold, hw, py, sc, f"{graph.name} {hw.name}")
            if "T" in graph.tensors and graph.tensors["T"].role == "input":
                assert py.buffers["T.vals"].fill_bytes == 0 and py.buffers["T.vals"].filled == 0
            else:
                assert py.dram_write_bytes == 0  # T written on chip


def test_a_materialised_buffer_is_a_buffer_without_its_fill():
    """The consumer reading T materialised and reading T from a buffer it fills from
    DRAM: the same reads of T, DRAM bytes apart by exactly that fill, ready from cycle 0
    and never slower."""
    from dataclasses import replace

    compiled, inputs, _ = gcn_chain(8, 4, 3, 0.3, 2)
    graph, ins, gold = kernel_cases(compiled, inputs)[1]
    filled = type(graph)(graph.name, graph.nodes.values(), graph.edges,
                         [replace(t, onchip=False, buffer=True) if t.name == "T" else t
                          for t in graph.tensors.values()], graph.dtype, graph.meta)
    hw = _hw("hbm", ports=2)
    mat, dram = simulate(graph, ins, hw=hw), simulate(filled, ins, hw=hw)
    np.testing.assert_allclose(mat.dense("Y"), gold["Y"], rtol=1e-4, atol=1e-4)
    one, two = mat.buffers["T.vals"], dram.buffers["T.vals"]
    assert (one.fill_bytes, one.filled) == (0, 0) and two.fill_bytes > 0 and two.filled > 0
    assert one.reads == two.reads
    assert mat.dram_read_bytes == dram.dram_read_bytes - two.fill_bytes
    assert mat.cycles <= dram.cycles
