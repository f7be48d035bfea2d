"""Loads in flight (docs/timing.md, "Loads in flight"): a value array with ``dram.load_queue``
= 1, 4, 16 on the Python model, SystemC and the RTL, cycle for cycle (timed traces,
statistics, bursts; ``_backends.py`` says what each is held to), with contention (one
channel shared by every port), against scipy; a deeper queue makes a gather-bound SpMV
faster; only arrays with a memory port get a queue.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _backends import RTL, assert_lint_clean, over
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import compile_expression
from ir import HwError, elaborate, load_hw
from sim_models.python import simulate

QUEUES = (1, 4, 16)
#: memory regimes: the preset, every port on one channel, a latency-bound port, few bytes
REGIMES = {
    "hbm": {},
    "contention": {"dram.channels": 1},
    "latency": {"dram.outstanding": 1, "dram.latency_cycles": 50},
    "bandwidth": {"dram.channels": 1, "dram.bytes_per_cycle": 4},
}


def _hw(q: int, regime: str):
    return load_hw("hbm2-u280", {**REGIMES[regime], "dram.load_queue": q})


def _configs(regime: str, depths=(1, 2, None)):
    """Python and SystemC at every queue and depth; RTL (a build each) at depth 2."""
    configs = [(d, _hw(q, regime)) for q in QUEUES for d in depths]
    rtl = [(2, _hw(q, regime)) for q in QUEUES]
    return {"python": configs, "systemc": configs, "rtl-icarus": rtl, "rtl-verilator": rtl,
            "hls": [(2, _hw(16, regime))]}


def _csr(m: int, n: int, density: float, seed: int) -> sp.csr_matrix:
    return sp.random(m, n, density=density, format="csr", random_state=seed, dtype=np.float32)


def _spmv(m: int, n: int):
    return compile_expression("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"},
                              shapes={"A": (m, n)})


def _spmm(m: int, k: int, n: int):
    return compile_expression("X(i,j) = B(i,k) * C(k,j)",
                              formats={"B": "csr", "C": "csr", "X": "csr"},
                              shapes={"B": (m, k), "C": (k, n)}, order="ikj")


@pytest.mark.parametrize(("backend", "regime"), over(
    [(r,) for r in REGIMES], list(REGIMES), backends=("python", "systemc", *RTL),
    only={sim: ["contention", "latency"] for sim in RTL}), indirect=["backend"])
def test_spmv_gathers(backend, regime):
    a = _csr(40, 300, 0.05, 3)
    x = np.random.default_rng(3).standard_normal(300).astype(np.float32)
    backend.check(_spmv(40, 300), {"A": a, "x": x}, {"y": a @ x}, configs=_configs(regime))


@pytest.mark.parametrize(("backend", "regime"), over([("hbm",), ("contention",)],
                                                     ["hbm", "contention"],
                                                     backends=("python", "systemc")),
                         indirect=["backend"])
def test_spmm_gustavson(backend, regime):
    b, c = _csr(12, 16, 0.3, 5), _csr(16, 20, 0.3, 6)
    backend.check(_spmm(12, 16, 20), {"B": b, "C": c}, {"X": (b @ c).toarray()},
                  configs=_configs(regime, depths=(2,)))


@pytest.mark.parametrize("backend", over([()], ["empty_rows"],
                                        backends=("python", "systemc", "hls", *RTL)),
                         indirect=True)
def test_empty_rows_pass_the_queue(backend):
    """Rows without entries: stops pass through the queue between the gathers."""
    a = sp.csr_matrix(np.array([[0, 2, 0, 0], [0, 0, 0, 0], [1, 0, 0, 3], [0, 0, 0, 0]],
                               np.float32))
    x = np.arange(1, 5, dtype=np.float32)
    backend.check(_spmv(4, 4), {"A": a, "x": x}, {"y": a @ x},
                  configs=_configs("contention", depths=(1, 2)))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(1, 12), n=st.integers(1, 40), density=st.floats(0.0, 0.6),
       seed=st.integers(0, 2**16), q=st.sampled_from((2, 3, 4, 16)),
       regime=st.sampled_from(sorted(REGIMES)), depth=st.sampled_from((2, 4, None)))
def test_random_spmv_matches_scipy(m, n, density, seed, q, regime, depth):
    a = _csr(m, n, density, seed)
    x = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
    res = simulate(_spmv(m, n), {"A": a, "x": x}, depth=depth, hw=_hw(q, regime))
    np.testing.assert_allclose(res.dense("y"), a @ x, rtol=1e-5, atol=1e-5)


def test_a_deeper_queue_overlaps_the_gathers():
    a = _csr(60, 400, 0.05, 7)
    x = np.ones(400, np.float32)
    g = _spmv(60, 400)
    cycles = [simulate(g, {"A": a, "x": x}, hw=_hw(q, "hbm")).cycles for q in QUEUES]
    assert cycles[0] > cycles[1] > cycles[2]


def test_the_queue_is_elaborated_on_arrays_with_a_port_only():
    g = _spmv(4, 4)
    ideal = elaborate(g, load_hw(None, {"dram.load_queue": 8}))
    hbm = elaborate(g, _hw(8, "hbm"))
    arrays = [nid for nid, n in g.nodes.items() if n.op == "array"]
    assert {ideal.nodes[nid].load_queue for nid in arrays} == {1}
    assert {hbm.nodes[nid].load_queue for nid in arrays} == {8}
    assert {n.load_queue for nid, n in hbm.nodes.items() if nid not in arrays} == {1}


@pytest.mark.parametrize("value", ["0", "-2", "1.5", "5000"])
def test_bad_queue_is_one_line(value):
    with pytest.raises(HwError, match="dram.load_queue") as err:
        load_hw("hbm2-u280", [f"dram.load_queue={value}"])
    assert "\n" not in str(err.value)


@pytest.mark.cosim
@pytest.mark.parametrize("q", [2, 16])
def test_queued_netlist_is_lint_clean(q, tmp_path):
    from rtl_hls.rtl.netlist import generate

    net = generate(_spmv(4, 8), hw=_hw(q, "contention"))
    assert f".LQ({q})" in net.text
    assert_lint_clean(net, tmp_path)
