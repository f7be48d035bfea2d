"""scripts/bench_cost.py's capped order simulation: a capped SystemC run is reported as
capped (never as a number), an uncapped or roomy one gives the Python model's exact
cycles, and the capped search still finds the best order exactly."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cosim import SystemCBackend
from ir import examples, load_hw
from sim_models.python import simulate

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_cost.py"
_spec = importlib.util.spec_from_file_location("bench_cost", SCRIPT)
bench_cost = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_cost)

needs_systemc = pytest.mark.skipif(SystemCBackend.unavailable() is not None,
                                   reason=str(SystemCBackend.unavailable()))


@needs_systemc
@pytest.mark.parametrize("hw_name", ["ideal", "hbm2-u280"])
def test_cap_stops_the_run_and_a_roomy_cap_is_exact(hw_name):
    hw = None if hw_name == "ideal" else load_hw(hw_name)
    rng = np.random.default_rng(3)
    b = sp.random(12, 9, density=0.3, format="csr", random_state=rng, dtype=np.float32)
    inputs = {"B": b.toarray(), "c": rng.random(9).astype(np.float32)}
    graph = examples.spmv(12, 9)
    gold = simulate(graph, inputs, hw=hw).cycles  # the Python model: no cap
    assert bench_cost.simulate_capped(graph, inputs, hw, "systemc") == gold
    assert bench_cost.simulate_capped(graph, inputs, hw, "systemc", gold + 1) == gold
    assert bench_cost.simulate_capped(graph, inputs, hw, "systemc", gold // 2) is None
    assert bench_cost.simulate_capped(graph, inputs, hw, "python") == gold


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 10_000), min_size=1, max_size=12),
       st.lists(st.integers(0, 500), min_size=12, max_size=12),
       st.sets(st.integers(0, 11), max_size=2), st.sampled_from([1.0, 1.5, 2.0]))
def test_capped_search_finds_the_best_exactly(sims, resorts, picks, factor):
    orders = [f"o{i}" for i in range(len(sims))]
    true = dict(zip(orders, sims, strict=True))
    extra = dict(zip(orders, resorts, strict=False))
    must = {orders[i] for i in picks if i < len(orders)}
    asked: list[tuple[str, int]] = []

    def cycles_of(order: str, cap: int) -> int | None:  # a run that stops at ``cap``
        asked.append((order, cap))
        return None if cap and true[order] >= cap else true[order]

    got = bench_cost.capped_cycles(orders, must, cycles_of, extra, factor)
    totals = {o: true[o] + extra[o] for o in orders}
    assert list(got) == orders
    assert min(c for c in got.values() if c is not None) == min(totals.values())
    for o, c in got.items():
        assert c is None or c == totals[o]
        if c is None:
            assert o not in must and totals[o] >= min(totals.values())
    assert all(cap == 0 for o, cap in asked if o in must)
    assert [o for o, _ in asked][:len(must)] == [o for o in orders if o in must]
