"""Factored iteration: a subexpression holding a reduction is computed once, in its own
loops, and broadcast over the later loops it does not depend on (``compiler/_factor.py``).
Gold values come from numpy; work is counted by the reference model's firings."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import compile_expression, compile_model, einsum_program, factor, order_graph, parse
from cosim import run_model
from ir import Schedule
from sim_models.python import simulate

ROW_SCALE = "Y(i,j) = X(i,j) * sum(k) B(i,k) * c(k)"
SOFTMAX = "Y(i,j) = exp(Z(i,j) - max(j2) Z(i,j2)) / sum(j3) exp(Z(i,j3) - max(j4) Z(i,j4))"


def _rand(rng, shape, density):
    vals = rng.uniform(-2, 2, size=shape) * (rng.random(shape) < density)
    return vals.astype(np.float32)


def _broadcasts(graph) -> list[str]:
    return sorted(n for n, node in graph.nodes.items() if node.op == "broadcast")


def test_plan_hoists_a_row_reduction_out_of_the_later_output_loop():
    rhs = parse(ROW_SCALE).rhs
    plan = factor(rhs, ["i", "j"], ["i", "k", "j"])
    red = rhs.right
    assert plan.hoisted == {id(red): ["j"]}
    assert plan.context[id(red.body)] == ("i", "k")  # not ("i", "k", "j")
    assert factor(rhs, ["i", "j"], ["i", "j", "k"]).hoisted == {}  # k innermost: no need


def test_plan_hoists_a_max_out_of_the_sum_whose_body_holds_it():
    rhs = parse(SOFTMAX).rhs
    plan = factor(rhs, ["i", "j"], ["i", "j2", "j4", "j3", "j"])
    later = sorted(plan.hoisted.values())
    assert later == [["j"], ["j"], ["j3"]]  # max j2 and sum j3 over j; max j4 over j3


@settings(max_examples=25, deadline=None)
@given(m=st.integers(1, 5), n=st.integers(1, 5), p=st.integers(1, 5),
       fmt_b=st.sampled_from(["dense", "csr", "dcsr"]),
       fmt_x=st.sampled_from(["dense", "csr", "dcsr"]),
       density=st.sampled_from([0.0, 0.3, 0.8, 1.0]), seed=st.integers(0, 2**16))
def test_hoisted_row_reduction_matches_numpy_and_recomputed_order(m, n, p, fmt_b, fmt_x,
                                                                  density, seed):
    rng = np.random.default_rng(seed)
    arrays = {"X": _rand(rng, (m, n), density), "B": _rand(rng, (m, p), density),
              "c": _rand(rng, (p,), 1.0)}
    fmts = {"X": fmt_x, "B": fmt_b}
    shapes = {k: v.shape for k, v in arrays.items()}
    hoisted = compile_expression(ROW_SCALE, fmts, shapes, order="i,k,j")
    nested = compile_expression(ROW_SCALE, fmts, shapes, order="i,j,k")
    assert _broadcasts(hoisted) == ["bcast_j"] and _broadcasts(nested) == []
    gold = arrays["X"] * (arrays["B"] @ arrays["c"])[:, None]
    got = simulate(hoisted, arrays)
    np.testing.assert_allclose(got.dense("Y"), gold, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(simulate(nested, arrays).dense("Y"), gold, rtol=1e-5,
                               atol=1e-5)


def test_hoisting_does_less_work_than_recomputing():
    rng = np.random.default_rng(1)
    arrays = {"X": _rand(rng, (8, 16), 1.0), "B": _rand(rng, (8, 16), 0.5),
              "c": _rand(rng, (16,), 1.0)}
    shapes = {k: v.shape for k, v in arrays.items()}
    runs = {o: simulate(compile_expression(ROW_SCALE, {"B": "csr"}, shapes, order=o),
                        arrays) for o in ("i,k,j", "i,j,k")}
    # once per row against once per (row, column): the reduction's loop runs 16x less
    assert runs["i,k,j"].firings * 4 < runs["i,j,k"].firings
    assert runs["i,k,j"].cycles * 4 < runs["i,j,k"].cycles


def test_default_order_hoists_softmax_statistics():
    rng = np.random.default_rng(2)
    z = _rand(rng, (4, 6), 1.0)
    graph = compile_expression(SOFTMAX, {}, {"Z": z.shape})
    assert graph.meta["order"] == ["i", "j2", "j4", "j3", "j"]
    assert _broadcasts(graph) == ["bcast_j", "bcast_j3", "bcast_j_2"]
    e = np.exp(z - z.max(axis=1, keepdims=True))
    np.testing.assert_allclose(simulate(graph, {"Z": z}).dense("Y"),
                               e / e.sum(axis=1, keepdims=True), rtol=1e-5)


def test_factored_orders_place_ready_reductions_first():
    assign = parse(SOFTMAX)
    graph = order_graph(assign, {"Z": "dense"})
    first = graph.factored_orders(assign.rhs, ["i", "j"])[0]
    # once i is placed every row statistic is ready: its loops go before the output's j,
    # the max inside the sum's body (the deepest) before the sum's own loop
    assert first == ["i", "j4", "j2", "j3", "j"]
    assert all(graph.is_valid(o) for o in graph.factored_orders(assign.rhs, ["i", "j"]))


def test_fused_model_picks_the_factored_order():
    """A fused softmax head: the model compiler ranks orders by factored cost too (W is
    stored column-major, so every inner matmul can sum innermost)."""
    p = einsum_program(["T(i,j) = A(i,k) * W(k,j)", "M(i) = max(j) T(i,j)",
                        "E(i,j) = exp(T(i,j) - M(i))", "S(i) = sum(j) E(i,j)",
                        "Y(i,j) = E(i,j) / S(i)"],
                       {"A": (5, 3), "W": (3, 4)}, {"W": "dd:1,0"}, name="head")
    cm = compile_model(p, Schedule.fused(p))
    (kernel,) = cm.regions[0].kernels
    assert _broadcasts(kernel.graph), kernel.order
    rng = np.random.default_rng(3)
    a, w = _rand(rng, (5, 3), 1.0), _rand(rng, (3, 4), 1.0)
    t = a @ w
    e = np.exp(t - t.max(axis=1, keepdims=True))
    run = run_model(cm, {"A": a, "W": w})
    np.testing.assert_allclose(run.outputs["Y"], e / e.sum(axis=1, keepdims=True),
                               rtol=1e-4)
