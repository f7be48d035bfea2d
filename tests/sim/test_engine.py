"""Engine behaviour: cycle counts, statistics, traces, deadlocks, input errors."""

from __future__ import annotations

import numpy as np
import pytest

from ir import GraphBuilder, Trace, compare_traces, examples
from sim_models.python import DeadlockError, InputError, simulate


def _dense_row_graph(n: int, depth: int):
    """1xn dense matrix copied to the output: root -> scanners -> array -> writers."""
    g = GraphBuilder("copy", depth=depth)
    g.tensor("A", (1, n), "dd")
    g.tensor("X", (1, n), "dd", role="output")
    g.node("r", "root")
    g.node("Ai", "scan_dense", tensor="A", level=0)
    g.node("Aj", "scan_dense", tensor="A", level=1)
    g.node("Av", "array", tensor="A")
    g.node("Xi", "level_writer", tensor="X", level=0)
    g.node("Xj", "level_writer", tensor="X", level=1)
    g.node("Xv", "value_writer", tensor="X")
    for s, d in [("r.ref", "Ai.ref_in"), ("Ai.ref", "Aj.ref_in"), ("Ai.crd", "Xi.crd"),
                 ("Aj.crd", "Xj.crd"), ("Aj.ref", "Av.ref"), ("Av.val", "Xv.val")]:
        g.edge(s, d)
    return g.build()


def test_pipeline_cycle_count_is_exact():
    # root writes 0 @0; Ai pops @1, writes crd 0 @1; Aj pops ref @2 ... the last of Aj's
    # n+2 tokens (n crds, S1, D) is written @ 2+n+1; Av passes it @ +1, Xv consumes @ +1.
    n = 8
    res = simulate(_dense_row_graph(n, 2), {"A": np.ones((1, n), np.float32)})
    assert res.cycles == 2 + (n + 1) + 1 + 1 + 1
    np.testing.assert_array_equal(res.dense("X"), np.ones((1, n)))


def test_depth_one_halves_the_rate():
    n = 32
    fast = simulate(_dense_row_graph(n, 2), {"A": np.ones((1, n), np.float32)})
    slow = simulate(_dense_row_graph(n, 1), {"A": np.ones((1, n), np.float32)})
    assert slow.cycles - fast.cycles == pytest.approx(n, abs=4)
    assert fast.nodes["Aj"].fires == n + 2  # ref+first crd, n-1 crds, S1, D
    assert max(slow.max_occupancy.values()) == 1
    assert slow.nodes["Aj"].stall_out > 0 and fast.nodes["Aj"].stall_out == 0


def test_traces_round_trip_through_text_and_compare_equal():
    g = examples.spmv(5, 6)
    rng = np.random.default_rng(0)
    inputs = {"B": (rng.random((5, 6)) < 0.4).astype(np.float32),
              "c": rng.random(6).astype(np.float32)}
    res = simulate(g, inputs, trace=True)
    text = res.trace.to_text()
    again = Trace.from_text(text)
    assert compare_traces(res.trace, again) == []
    assert again.to_text() == text
    # a changed cycle is reported with the edge, index and both sides
    name = sorted(again.edges)[0]
    again.edges[name].cycles[1] += 1
    (mismatch,) = compare_traces(res.trace, again)
    assert mismatch.edge == name and mismatch.index == 1 and "cycle differs" in str(mismatch)


def test_traces_do_not_depend_on_being_recorded():
    g = examples.spmm_ikj(6, 5, 4)
    rng = np.random.default_rng(3)
    inputs = {"B": (rng.random((6, 5)) < 0.5).astype(np.float32),
              "C": (rng.random((5, 4)) < 0.5).astype(np.float32)}
    a, b = simulate(g, inputs, trace=True), simulate(g, inputs)
    assert a.cycles == b.cycles and a.firings == b.firings


def test_deadlock_is_reported_with_cycle_nodes_and_edges():
    with pytest.raises(DeadlockError) as info:
        simulate(examples.reconvergent_fork(), {"A": np.ones((1, 8), np.float32)})
    err = info.value
    text = str(err)
    assert text.startswith(f"deadlock at cycle {err.cycle}")
    blocked = {node: (edge, why) for node, edge, why in err.blocked}
    assert blocked["Av"] == ("Av.val->alu.a", "output full (2/2 tokens unread)")
    assert blocked["alu"][0] == "acc.val->alu.b" and blocked["alu"][1] == "input empty"
    assert "acc" in blocked
    assert err.wait_cycle and err.wait_cycle[0] == err.wait_cycle[-1]


def test_missing_extra_and_misshaped_inputs_are_clear_errors():
    g = examples.spmv(3, 4)
    c = np.ones(4, np.float32)
    with pytest.raises(InputError, match=r"needs input tensor\(s\) \['B'\]"):
        simulate(g, {"c": c})
    with pytest.raises(InputError, match=r"has no input tensor\(s\) \['Z'\]"):
        simulate(g, {"B": np.ones((3, 4)), "c": c, "Z": c})
    with pytest.raises(InputError, match=r"tensor 'B': shape \(4, 3\) but the graph expects"):
        simulate(g, {"B": np.ones((4, 3)), "c": c})
