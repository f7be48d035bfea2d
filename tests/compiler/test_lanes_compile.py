"""The lane transform's graph (docs/parallel.md), its cost rule, its CLI and schedule forms,
and the R-MAT generator the load-balance measurements use."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from compiler import compile_expression, order_cost
from cosim.cli import main
from ir import Region, Schedule, ScheduleError
from ir.datasets import rmat_graph

SPMM = "X(i,j) = A(i,k) * B(k,j)"


def _spmm(par, order="i,k,j", **kw):
    A = sp.random(16, 12, density=0.3, format="csr", random_state=1, dtype=np.float32)
    B = np.ones((12, 5), np.float32)
    return compile_expression(SPMM, {"A": "csr", "X": "csr"}, {"A": A.shape, "B": B.shape},
                              order=order, par=par, stats={"A": A, "B": B}, **kw)


def test_every_node_is_copied_per_lane_and_merged_by_a_binary_tree():
    one, four = _spmm({}), _spmm({"i": 4})
    ops1, ops4 = Counter(n.op for n in one.nodes.values()), \
        Counter(n.op for n in four.nodes.values())
    writers = {"level_writer", "value_writer"}
    for op, n in ops1.items():
        assert ops4[op] == (n if op in writers else 4 * n), op
    # one split per joined stream at i (A's crd with its ref), three two-level merges
    assert ops4["lane_split"] == 4 and ops4["lane_merge2"] == 3
    lanes = four.meta["parallel"]
    assert lanes["par"] == {"i": 4} and lanes["partition"] == "round-robin"
    assert sorted(set(lanes["lane_of"].values())) == ["i0", "i1", "i2", "i3"]
    # the merge inputs are lane buffers: 1024 tokens per lane below them
    depths = sorted({e.depth for e in four.edges if four.nodes[e.dst_node].op == "lane_merge2"})
    assert depths == [1024, 2048]


def test_nested_lanes_label_inner_lanes_under_outer_ones():
    g = _spmm({"i": 2, "j": 3}, order="i,j,k")
    labels = set(g.meta["parallel"]["lane_of"].values())
    assert {f"i{a}.j{b}" for a in range(2) for b in range(3)} <= labels
    ops = Counter(n.op for n in g.nodes.values())
    assert ops["lane_merge"] == 2 * 2 and ops["lane_merge2"] == 1  # j trees per i lane


def test_the_cost_model_prices_lanes():
    """The busiest node of a lane sees a quarter of the rows: a ~4x lower estimate."""
    one, four = order_cost(_spmm({})).cycles, order_cost(_spmm({"i": 4})).cycles
    assert 3.0 < one / four <= 4.0, (one, four)


def test_schedule_lanes_round_trip_and_validate():
    s = Schedule([Region("r", ["X"], par={"i": 4}, partition="balanced", lane_buffer=64)],
                 par={"j": 2})
    back = Schedule.from_dict(json.loads(json.dumps(s.to_dict())))
    assert back.regions[0].par == {"i": 4} and back.regions[0].partition == "balanced"
    assert back.regions[0].lane_buffer == 64 and back.par == {"j": 2}
    assert back.lanes_of(Region("q", ["Y"]), ["i", "j"]).par == {"j": 2}
    assert back.lanes_of(back.regions[0], ["j"]).par == {"i": 4}  # its own wins
    with pytest.raises(ScheduleError, match="partition 'fast' is not one of"):
        Region("r", ["X"], partition="fast")
    with pytest.raises(ScheduleError, match=r"par i=65: expected an index name"):
        Region("r", ["X"], par="i=65")
    with pytest.raises(ScheduleError, match="lane_buffer 1 must be"):
        Region("r", ["X"], lane_buffer=1)


def test_compile_and_sim_with_lanes_on_the_command_line(tmp_path, capsys):
    A = sp.random(12, 12, density=0.3, format="csr", random_state=2, dtype=np.float32)
    scipy.io.mmwrite(tmp_path / "a.mtx", A)
    np.save(tmp_path / "b.npy", np.ones((12, 3), np.float32))
    graph = tmp_path / "g.json"
    args = ["compile", SPMM, "--format", "A=csr", "--format", "X=csr", "--input",
            f"A={tmp_path / 'a.mtx'}", "--input", f"B={tmp_path / 'b.npy'}", "--par", "i=3",
            "--partition", "balanced", "-o", str(graph)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "lanes      i=3, balanced, buffer 1024 tokens" in out
    assert main(["sim", str(graph), "--input", f"A={tmp_path / 'a.mtx'}", "--input",
                 f"B={tmp_path / 'b.npy'}", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(doc["lanes"]) == ["i0", "i1", "i2"] and doc["imbalance"] >= 1.0
    assert main([*args[:-2], "--par", "k=2"]) == 1
    assert "'k' is not an index of the output X(i,j)" in capsys.readouterr().err


def test_rmat_graph_is_power_law_and_reproducible():
    a = rmat_graph(12, 24, seed=1)
    assert a.shape == (4096, 4096) and a.diagonal().sum() == 0
    assert np.all(a.data == 1.0)
    deg = np.diff(a.indptr)
    assert deg.max() / deg[deg > 0].min() >= 1000  # three orders of magnitude
    assert (rmat_graph(12, 24, seed=1) != a).nnz == 0
    with pytest.raises(ValueError, match="probs"):
        rmat_graph(4, probs=(0.5, 0.5, 0.5, 0.5))


def test_balanced_lanes_get_buffers_that_hold_a_lane_s_output():
    A = sp.random(64, 64, density=0.5, format="csr", random_state=3, dtype=np.float32)
    B = np.ones((64, 64), np.float32)

    def buffer(**kw):
        g = compile_expression(SPMM, {"A": "csr", "X": "csr"}, {"A": A.shape, "B": B.shape},
                               order="i,k,j", par={"i": 2}, stats={"A": A, "B": B}, **kw)
        return g.meta["parallel"]["lane_buffer"]

    assert buffer(partition="round-robin") == 1024
    # the heuristic expects ~64 x 64 output entries: 2,048 per lane, plus a quarter
    assert 2400 <= buffer(partition="balanced") <= 2700
    assert buffer(partition="balanced", lane_buffer=16) == 16


def test_expected_imbalance_predicts_the_measured_one():
    """Measured on the data when compiling; the run's lane report agrees within 10 %."""
    from cosim.runs._lanes import lane_report
    from sim_models.python import simulate

    A = rmat_graph(9, 8, seed=2)
    B = np.ones((A.shape[0], 3), np.float32)
    for part in ("round-robin", "balanced"):
        g = compile_expression(SPMM, {"A": "csr", "X": "csr"}, {"A": A.shape, "B": B.shape},
                               order="i,k,j", par={"i": 8}, partition=part,
                               stats={"A": A, "B": B})
        want = g.meta["parallel"]["expected_imbalance"]["i"]
        got = lane_report(g, simulate(g, {"A": A, "B": B})).imbalance
        assert abs(want - got) / got < 0.1, (part, want, got)
    assert _spmm({"i": 2}).meta["parallel"]["expected_imbalance"]["i"] >= 1.0
    no_data = compile_expression(SPMM, {"A": "csr"}, {"A": (8, 8), "B": (8, 2)}, par={"i": 2})
    assert no_data.meta["parallel"]["expected_imbalance"] == {}


def test_a_region_on_one_lane_compiles_as_without_lanes():
    """``par: {i: 1}`` asks for no lanes (it used to fail looking up the lanes' meta)."""
    from compiler import compile_model, einsum_program

    p = einsum_program([SPMM], {"A": (6, 5), "B": (5, 4)}, {"A": "csr"})
    one = compile_model(p, Schedule([Region("r", ["X"], par={"i": 1})]))
    plain = compile_model(p, Schedule([Region("r", ["X"])]))
    (k1,), (k0,) = one.regions[0].kernels, plain.regions[0].kernels
    assert "parallel" not in k1.graph.meta and k1.order == k0.order
    assert len(k1.graph.nodes) == len(k0.graph.nodes)
