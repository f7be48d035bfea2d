"""Studies with parallel lanes: the par/partition/lane_buffer axes, R-MAT data sets, the
lanes and imbalance columns (checked against a direct compile and simulation), models on
lanes, and the lanes and latency figures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from compiler import compile_expression
from cosim.runs._config_run import random_inputs
from cosim.runs._lanes import lane_report
from cosim.studies._plot import PlotError, plot
from cosim.studies._runner import run_study
from cosim.studies._spec import StudyError, load_study
from ir import load_hw
from ir.datasets import rmat_graph
from sim_models.python import simulate

SPMM = {"label": "spmm", "expr": "X(i,j) = A(i,k) * B(k,j)",
        "formats": {"A": "csr", "B": "csr"}, "shapes": {"A": [8, 7], "B": [7, 5]},
        "density": 0.4}


def _study(workloads=None, **axes) -> dict:
    return {"name": "t", "workloads": workloads or [SPMM], "axes": axes}


def test_par_spellings_become_sorted_pairs_and_one_lane_is_one_run():
    runs = load_study(_study(par=[None, "none", {}, {"i": 1}, "j=2, i=4", {"i": 4, "j": 2}],
                             partition=["round-robin", "balanced"])).expand()
    # every spelling of one lane is one run (no partition applies), i=4,j=2 two runs
    assert [(r.par, r.partition, r.lanes) for r in runs] == [
        ((), "round-robin", 1),
        ((("i", 4), ("j", 2)), "round-robin", 8),
        ((("i", 4), ("j", 2)), "balanced", 8)]


def test_lanes_reach_the_cache_key_but_a_one_lane_run_keeps_its_key():
    one, rr, bal, buf = load_study({**_study(), "mode": "list", "runs": [
        {}, {"par": "i=2"}, {"par": "i=2", "partition": "balanced"},
        {"par": "i=2", "lane_buffer": 4}]}).expand()
    assert "par" not in one.to_json() and "partition" not in one.to_json()
    assert len({c.key("v") for c in (one, rr, bal, buf)}) == 4


@pytest.mark.parametrize("axes, match", [
    ({"par": ["i=x"]}, r"par 'i=x': expected none, a mapping"),
    ({"par": [4]}, r"par 4: expected none, a mapping"),
    ({"par": [{"i": 0}]}, r"'i'=0: expected an index name and a number of lanes from 1 "),
    ({"par": [{"i": 65}]}, r"lanes from 1 to 64"),
    ({"par": [{"i": True}]}, r"lanes from 1 to 64"),
    ({"par": ["i=2,i=4"]}, r"an index is named twice"),
    ({"par": [{"q": 2}]}, r"'q' is not an index of the output \(lanes split output "
                          r"indices: i, j\)"),
    ({"par": ["k=2"]}, r"'k' is not an index of the output"),
    ({"partition": ["random"]}, r"partition 'random': expected one of round-robin, "
                                r"balanced"),
    ({"lane_buffer": [1]}, r"lane_buffer 1: expected an int >= 2"),
    ({"lane_buffer": [True]}, r"lane_buffer True"),
])
def test_bad_lane_axes_are_one_line_errors(axes, match):
    with pytest.raises(StudyError, match=match) as err:
        load_study(_study(**axes))
    assert "\n" not in str(err.value)


def test_a_hand_built_kernel_cannot_take_lanes():
    with pytest.raises(StudyError, match=r"workload 'spmv-8-0.5': par 'i=2' needs an "
                                         "expression or a model; the example kernel"):
        load_study(_study([{"kernel": "spmv", "size": 8, "density": 0.5}], par=["i=2"]))


@pytest.mark.parametrize("data, match", [
    ("rmat:13:8", r"rmat:13:8': expected 1 <= SCALE <= 12"),
    ("rmat:4", r"expected rmat:SCALE:EDGE_FACTOR"),
    ("rmat:a:b", r"expected rmat:SCALE:EDGE_FACTOR"),
    ("facebook", r"data set 'facebook': expected one of karate, cora, rmat"),
    ("rmat:5:4", r"holds the rmat:5:4 adjacency, so its shape must be \[32, 32\]"),
    ("rmat", r"shape must be \[1024, 1024\]"),
])
def test_rmat_data_set_names_are_checked(data, match):
    w = {"expr": "y(i) = A(i,j) * x(j)", "formats": {"A": "csr"},
         "shapes": {"A": [16, 16], "x": [16]}, "datasets": {"A": data}}
    with pytest.raises(StudyError, match=match):
        load_study(_study([w]))


def test_expression_rows_match_a_direct_compile_and_simulation(tmp_path):
    spec = load_study({**_study(hw=["ideal"], order=["i,j,k"]), "mode": "list", "runs": [
        {"par": None}, {"par": "i=2"}, {"par": "i=2", "partition": "balanced"}]})
    res = run_study(spec, tmp_path, workers=1, progress=False)
    frame = pd.read_parquet(tmp_path / "results.parquet")
    assert list(frame["status"]) == ["ok"] * 3 and frame["correct"].all()
    assert list(frame["lanes"]) == [1, 2, 2] and frame["par"].isna().tolist() == \
        [True, False, False]  # the table round-trips through Parquet
    assert [(r["par"], r["partition"], r["lane_buffer"]) for r in res.rows] == [
        (None, None, None), ("i=2", "round-robin", None), ("i=2", "balanced", None)]
    for cfg, row in zip(spec.expand(), res.rows, strict=True):
        inputs = random_inputs(cfg.workload, {"A": (8, 7), "B": (7, 5)}, 0, "float32")
        graph = compile_expression(SPMM["expr"], SPMM["formats"], SPMM["shapes"],
                                   order="i,j,k", par=dict(cfg.par) or None,
                                   partition=cfg.partition, stats=inputs)
        sim = simulate(graph, inputs, hw=load_hw("ideal"))
        np.testing.assert_array_equal(sim.dense(), inputs["A"] @ inputs["B"])
        assert row["cycles"] == sim.cycles
        lanes = lane_report(graph, sim)
        if cfg.par:
            assert len(lanes.work) == 2 and row["imbalance"] == pytest.approx(lanes.imbalance)
        else:
            assert row["imbalance"] is None and not lanes.work
    one, rr, _ = res.rows
    assert rr["cycles"] < one["cycles"]


def test_an_rmat_tensor_is_the_generated_graph_and_balanced_beats_round_robin(tmp_path):
    w = {"label": "rmat", "expr": "y(i) = A(i,j) * x(j)", "formats": {"A": "csr"},
         "shapes": {"A": [64, 64], "x": [64]}, "datasets": {"A": "rmat:6:8"}}
    spec = load_study({**_study([w], hw=["ideal"]), "mode": "list", "runs": [
        {"par": "i=4"}, {"par": "i=4", "partition": "balanced"}]})
    cfg = spec.expand()[0]
    inputs = random_inputs(cfg.workload, {"A": (64, 64), "x": (64,)}, 0, "float32")
    np.testing.assert_array_equal(inputs["A"], rmat_graph(6, 8, seed=0).toarray())
    rows = run_study(spec, tmp_path, workers=1, progress=False).rows
    assert [r["status"] for r in rows] == ["ok", "ok"] and all(r["correct"] for r in rows)
    rr, bal = rows
    # an R-MAT row is heavier the more 0 bits its id has: round-robin lane 0 (ids = 0 mod 4)
    # gets the heavy rows, balanced ranges even the work out
    assert bal["imbalance"] < rr["imbalance"] and bal["imbalance"] < 1.5


def test_a_model_runs_on_the_schedules_lanes(tmp_path):
    spec = load_study({"name": "m", "workloads": [{"model": "gcn", "config": "tiny"}],
                       "axes": {"par": [None, "i=2", "zz=2"], "hw": ["ideal"]}})
    rows = run_study(spec, tmp_path, workers=1, progress=False).rows
    one, two, bad = rows
    assert one["status"] == two["status"] == "ok" and one["correct"] and two["correct"]
    assert (one["lanes"], one["imbalance"]) == (1, None)
    assert two["lanes"] == 2 and two["par"] == "i=2" and 1.0 <= two["imbalance"] < 2.0
    assert bad["status"] == "compile-error" and "no kernel of gcn-tiny" in bad["error"]


def _frame(**rows) -> pd.DataFrame:
    base = {"status": "ok", "workload": "w", "kind": "expr", "schedule": "-",
            "order": "i,j,k", "depth": 2, "dtype": "float32", "seed": 0,
            "backend": "python", "hw": "ideal", "hw_set": None, "lane_buffer": None,
            "imbalance": None, "partition": None, "par": None, "lanes": 1,
            "dram_latency_cycles": None}
    return pd.DataFrame([{**base, **r} for r in rows["rows"]])


def test_the_lanes_and_latency_figures_are_drawn(tmp_path):
    lanes = _frame(rows=[
        {"cycles": 800}, {"cycles": 420, "par": "i=2", "lanes": 2, "imbalance": 1.05,
                          "partition": "round-robin", "lane_buffer": 1024},
        {"cycles": 230, "par": "i=4", "lanes": 4, "imbalance": 1.1,
         "partition": "round-robin", "lane_buffer": 1024},
        {"cycles": 1600, "hw": "hbm2-u280"}])  # a 1-lane run without lanes to compare
    assert plot(lanes, "lanes", tmp_path / "lanes.png") == [tmp_path / "lanes.png"]
    assert (tmp_path / "lanes.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(PlotError, match="par axis"):
        plot(lanes[lanes["lanes"] == 1], "lanes", tmp_path / "x.png")
    with pytest.raises(PlotError, match="one-lane run of the same configuration"):
        plot(lanes[lanes["lanes"] > 1], "lanes", tmp_path / "x.png")
    latency = _frame(rows=[{"cycles": 500, "hw": "hbm2-u280", "dram_latency_cycles": 16},
                           {"cycles": 900, "hw": "hbm2-u280", "dram_latency_cycles": 48},
                           {"cycles": 300}])
    plot(latency, "latency", tmp_path / "latency.png")
    assert (tmp_path / "latency.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(PlotError, match="ideal hardware"):
        plot(latency[latency["dram_latency_cycles"].isna()], "latency", tmp_path / "y.png")
