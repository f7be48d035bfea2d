"""The deep-epilogue order search never picks a graph that needs FIFOs deeper than
compiled (compiler/_fifo_hazard.py, docs/compiler.md rule 5): every graph it picks for
random association chains runs on the Python model at the compiled depths without
deadlock and equals scipy's product; the static check flags the graphs that deadlock."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import compile_expression, compile_model
from compiler._fifo_hazard import fifo_hazard
from cosim import run_model
from sim_models.python import DeadlockError, simulate
from tests.compiler.test_assoc import _SCHEDULES, _chain_program, _gold, _operands, chains

warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")

#: a chain the withdrawn search fused in orders that deadlock at depth 2
CHAIN = "P(i,j) = sum(k) (sum(k2) F0(k2,i) * F1(k,k2)) * sum(k3) F2(k3,k) * F3(k3,j)"
CHAIN_FORMATS = {"F0": "dense", "F1": "csr", "F2": "dense", "F3": "dcsr"}


def _chain_operands(seed: int, n: int = 4) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {t: (rng.integers(1, 4, (n, n)) * (rng.random((n, n)) < 0.7)).astype(np.float32)
            for t in ("F0", "F1", "F2", "F3")}


def test_a_deadlocking_deep_order_is_flagged_and_unbounded_fifos_clear_it():
    """``i,k3,k,k2,j`` (a deep epilogue whose accumulator's rows wait for a reduction fed
    by the accumulator's own outer crds) deadlocks at depth 2; the check says so before
    any run, and the same order with unbounded FIFOs is safe and correct."""
    ops = _chain_operands(3)
    shapes = {t: x.shape for t, x in ops.items()}
    g = compile_expression(CHAIN, CHAIN_FORMATS, shapes, order="i,k3,k,k2,j")
    assert fifo_hazard(g) is not None
    with pytest.raises(DeadlockError):
        simulate(g, ops)
    want = (ops["F0"].T @ ops["F1"].T) @ (ops["F2"].T @ ops["F3"])
    free = compile_expression(CHAIN, CHAIN_FORMATS, shapes, order="i,k3,k,k2,j", depth=None)
    assert fifo_hazard(free) is None
    np.testing.assert_allclose(simulate(free, ops).dense("P"), want, rtol=1e-5)


@pytest.mark.parametrize("order", ["j,k2,k,k3,i", "i,k3,k,k2,j"])
@pytest.mark.parametrize("f0", ["dense", "csr"])
def test_a_hoisted_operand_repeats_over_the_drained_rows(order, f0):
    """``sum(k3) F2·F3`` is hoisted out of the rows the ``k2`` accumulator drains and
    repeated over their crds (not over the loop's crds before the accumulator, whose
    stops are of another level): with unbounded FIFOs every such order equals numpy."""
    ops = _chain_operands(3)
    g = compile_expression(CHAIN, {**CHAIN_FORMATS, "F0": f0},
                           {t: x.shape for t, x in ops.items()}, order=order, depth=None)
    want = (ops["F0"].T @ ops["F1"].T) @ (ops["F2"].T @ ops["F3"])
    np.testing.assert_allclose(simulate(g, ops).dense("P"), want, rtol=1e-5)


def test_the_searched_chain_is_safe_and_equals_numpy():
    ops = _chain_operands(7)
    g = compile_expression(CHAIN, CHAIN_FORMATS, {t: x.shape for t, x in ops.items()},
                           stats=ops)
    assert fifo_hazard(g) is None
    want = (ops["F0"].T @ ops["F1"].T) @ (ops["F2"].T @ ops["F3"])
    np.testing.assert_allclose(simulate(g, ops).dense("P"), want, rtol=1e-5)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chains().filter(lambda case: case[4] != "unfused"),
       st.sampled_from(["cost", "as-written"]))
def test_every_picked_graph_runs_at_compiled_depths(case, assoc):
    """Chains fused into one region (or by scope) and priced on their data, where the
    deep-epilogue pass picks orders: no picked graph is flagged, every one runs at the
    compiled depths without deadlock, and the result equals scipy's product."""
    dims, flips, fmts, tree, sched_name, _, seed = case
    program = _chain_program(dims, flips, fmts, tree)
    schedule = _SCHEDULES[sched_name](program)
    schedule.assoc = assoc
    ops = _operands(dims, flips, fmts, seed)
    compiled = compile_model(program, schedule, stats=ops)
    for region in compiled.regions:
        for kernel in region.kernels:
            assert fifo_hazard(kernel.graph) is None, kernel.order
    run = run_model(compiled, ops)  # at the depths compiled in
    np.testing.assert_allclose(run.outputs[program.outputs[0]], _gold(ops, flips),
                               rtol=1e-5, atol=1e-5)


def test_a_deep_order_that_runs_at_depth_two_is_not_flagged():
    """GraphSAGE's layer in ``j,k2,k3,i,k``: the neighbour rows' accumulator drains one
    row per ``i`` into the self term's inner product over ``k``, which sits inside it,
    so no bypass holds more than a token; the check passes it and it runs at depth 2."""
    rng = np.random.default_rng(1)
    n, f, h = 12, 7, 4
    a = {"A": (rng.random((n, n)) < 0.3).astype(np.float32),
         "X": rng.uniform(-1, 1, (n, f)).astype(np.float32),
         "S": (rng.uniform(-1, 1, (h, f)) * (rng.random((h, f)) < 0.4)).astype(np.float32),
         "N": (rng.uniform(-1, 1, (h, f)) * (rng.random((h, f)) < 0.4)).astype(np.float32),
         "b": rng.uniform(-1, 1, (h,)).astype(np.float32)}
    a["Z"] = a["X"].copy()
    expr = ("Y(i,j) = relu(sum(k) X(i,k) * S(j,k) + b(j) + "
            "sum(k2) (sum(k3) A(i,k3) * Z(k3,k2)) * N(j,k2))")
    g = compile_expression(expr, {"A": "csr", "S": "csr", "N": "csr"},
                           {t: x.shape for t, x in a.items()}, order="j,k2,k3,i,k")
    assert fifo_hazard(g) is None
    want = np.maximum(a["X"] @ a["S"].T + a["b"] + (a["A"] @ a["X"]) @ a["N"].T, 0)
    np.testing.assert_allclose(simulate(g, a).dense("Y"), want, rtol=1e-4, atol=1e-4)
