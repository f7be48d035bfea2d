"""Studies: expansion, validation, cached/resumable runs, Dask, figures and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from compiler import compile_expression
from cosim.studies._runner import code_version, run_study
from cosim.studies._spec import UNBUILT_AXES, StudyError, load_study
from ir import DEFAULT_HW, load_hw
from sim_models.python import simulate

ROOT = Path(__file__).resolve().parents[2]
SPMM = {"label": "spmm", "expr": "X(i,j) = A(i,k) * B(k,j)",
        "formats": {"A": "csr", "B": "csr"}, "shapes": {"A": [8, 7], "B": [7, 5]},
        "density": 0.4}
#: columns that measure the machine running the study, not the simulated one
TIMING = ["wall_seconds", "run_seconds", "compile_seconds"]


def _study(**axes) -> dict:
    return {"name": "t", "workloads": [SPMM], "axes": axes}


def test_order_all_expands_to_every_permutation():
    spec = load_study(_study(order=["all"], depth=[2, None]))
    runs = spec.expand()
    assert sorted({r.order for r in runs}) == sorted(
        ",".join(p) for p in __import__("itertools").permutations("ikj"))
    assert len(runs) == 12 and {r.depth for r in runs} == {2, None}


def test_every_axis_is_built():
    assert UNBUILT_AXES == {}


def test_block_axis_values_are_checked():
    with pytest.raises(StudyError, match="block 0: expected a block extent"):
        load_study(_study(block=[0]))
    assert {r.block for r in load_study(_study(block=[1, 2])).expand()} == {1, 2}


@pytest.mark.parametrize("doc, match", [
    ({"name": "../x", "workloads": [SPMM]}, "study name"),
    ({"name": "/abs", "workloads": [SPMM]}, "study name"),
    ({"name": "a/b", "workloads": [SPMM]}, "study name"),
    ({"name": "a\0b", "workloads": [SPMM]}, "study name"),
    ({"name": "t", "workloads": [{**SPMM, "label": "../w"}]}, "label"),
    ({"name": "t", "workloads": [SPMM], "axes": {"depth": [True]}}, "depth"),
    ({"name": "t", "workloads": [SPMM], "axes": {"schedule": ["fast"]}}, "schedule"),
    ({"name": "t", "workloads": [SPMM], "axes": {"backends": [["nosuch"]]}}, "backends"),
    ({"name": "t", "workloads": [SPMM], "axes": {"colour": [1]}}, "unknown axis"),
    ({"name": "t", "workloads": [{**SPMM, "shapes": {"A": [-1, 7], "B": [7, 5]}}]},
     "positive ints"),
    ({"name": "t", "workloads": [{"model": "gcn"}], "axes": {"order": ["i,j"]}},
     "applies to expressions"),
    ({"name": "t", "workloads": [{"model": "nosuch"}]}, "bundled models"),
])
def test_bad_studies_are_rejected_with_a_message(doc, match):
    with pytest.raises(StudyError, match=match):
        load_study(doc)


def test_study_rows_match_direct_simulation_and_numpy(tmp_path):
    spec = load_study(_study(order=["all"]))
    res = run_study(spec, tmp_path, workers=1, progress=False)
    frame = pd.read_parquet(tmp_path / "results.parquet")
    assert len(frame) == 6 and res.ran == 6 and res.cached == 0
    assert set(frame["status"]) == {"ok"} and frame["correct"].all()
    for row in frame.itertuples():
        graph = compile_expression(SPMM["expr"], SPMM["formats"], SPMM["shapes"],
                                   order=row.order)
        rng = np.random.default_rng(0)  # the study's input recipe, seed 0
        a = rng.integers(1, 8, size=(8, 7)) * rng.choice([-1, 1], size=(8, 7))
        a = (a * (rng.random((8, 7)) < 0.4)).astype(np.float32)
        b = rng.integers(1, 8, size=(7, 5)) * rng.choice([-1, 1], size=(7, 5))
        b = (b * (rng.random((7, 5)) < 0.4)).astype(np.float32)
        sim = simulate(graph, {"A": a, "B": b}, hw=load_hw(DEFAULT_HW))  # the default
        assert row.hw == DEFAULT_HW and row.cycles == sim.cycles
        assert row.dram_read_bytes == sim.dram_read_bytes > 0
        np.testing.assert_array_equal(sim.dense(), a @ b)


def test_rerun_comes_from_the_cache_and_a_lost_run_is_redone(tmp_path):
    spec = load_study(_study(depth=[1, 2, 3]))
    first = run_study(spec, tmp_path, workers=2, progress=False)
    again = run_study(spec, tmp_path, workers=2, progress=False)
    assert (again.ran, again.cached) == (0, 3)
    assert [{k: v for k, v in r.items() if k not in TIMING} for r in again.rows] == \
        [{k: v for k, v in r.items() if k not in TIMING} for r in first.rows]
    victim = sorted((tmp_path / "runs").glob("*.json"))[0]
    victim.unlink()  # as if the study had been killed before this run finished
    resumed = run_study(spec, tmp_path, workers=2, progress=False)
    assert (resumed.ran, resumed.cached) == (1, 2) and victim.exists()
    assert not [p for p in (tmp_path / "runs").iterdir() if p.name.startswith(".")]


def test_cache_key_covers_configuration_and_code():
    a, b = load_study(_study(depth=[2, 4])).expand()
    assert a.key("v1") != b.key("v1") and a.key("v1") != a.key("v2")
    assert a.key(code_version()) == a.key(code_version())


def test_dask_local_cluster_gives_the_same_rows(tmp_path):
    """Including SystemC, whose simulations run in forked children: the LocalCluster's
    workers must not be daemonic (they were, and every SystemC row was an error)."""
    spec = load_study(_study(depth=[2, 4], backends=[["python", "systemc"]]))
    local = run_study(spec, tmp_path / "pool", workers=2, progress=False)
    dask = run_study(spec, tmp_path / "dask", workers=2, dask="local", progress=False)
    strip = [{k: v for k, v in r.items() if k not in TIMING} for r in local.rows]
    assert strip == [{k: v for k, v in r.items() if k not in TIMING} for r in dask.rows]
    assert {r["status"] for r in dask.rows} == {"ok"}
    assert {r["backend"] for r in dask.rows} == {"python", "systemc"}


def test_failing_orders_are_rows_not_crashes(tmp_path):
    doc = _study(order=["i,k,j", "k,x,j"])
    run = run_study(load_study(doc), tmp_path, workers=1, progress=False)
    assert {r["status"] for r in run.rows} == {"ok", "compile-error"}
    frame = pd.read_parquet(tmp_path / "results.parquet")
    bad = frame[frame["order"] == "k,x,j"].iloc[0]
    assert bad["status"] == "compile-error" and "not an index" in bad["error"]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cosim.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})


def test_cli_runs_the_bundled_smoke_study_and_plots_it(tmp_path):
    out = tmp_path / "smoke"
    run = _cli("study", "smoke", "--out", str(out), "--csv",
               "--quiet", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    frame = pd.read_csv(out / "results.csv")
    assert set(frame["status"]) == {"ok"}
    assert set(frame[frame["kind"] == "model"]["schedule"]) == {"unfused", "partial", "full"}
    # a re-run from the cache imports neither the models (torch) nor scipy.stats, and
    # leaves the unchanged table alone (no pandas)
    argv = ["study", "smoke", "--out", str(out), "--csv",
            "--quiet"]
    probe = ("import sys; from cosim.cli import main; code = main(" + repr(argv) + "); "
             "print(sorted(m for m in ('torch', 'scipy.stats', 'pandas') if m in "
             "sys.modules)); sys.exit(code)")
    again = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                           text=True, timeout=600,
                           env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert again.returncode == 0, again.stderr
    assert "(0 run, 15 from the cache)" in again.stdout
    assert again.stdout.strip().splitlines()[-1] == "[]"
    assert pd.read_csv(out / "results.csv").drop(columns=TIMING).equals(
        frame.drop(columns=TIMING))
    for kind in ("speedup", "orders", "heuristic", "depth", "bandwidth"):
        made = _cli("plot", str(out), "--kind", kind, cwd=tmp_path)
        assert made.returncode == 0, made.stderr
        assert (out / f"{kind}.png").read_bytes()[:4] == b"\x89PNG"
    block = _cli("plot", str(out), "--kind", "block", cwd=tmp_path)  # no run has blocks
    assert block.returncode != 0 and "block axis" in block.stderr
    assert "Traceback" not in block.stderr
    lanes = _cli("plot", str(out), "--kind", "lanes", cwd=tmp_path)  # no run has lanes
    assert lanes.returncode != 0 and "par axis" in lanes.stderr
    assert "Traceback" not in lanes.stderr


def test_cli_rejects_an_unknown_model_in_one_line(tmp_path):
    study = tmp_path / "s.yaml"
    study.write_text(json.dumps({"name": "t", "workloads": [{"model": "nosuch"}]}))
    run = _cli("study", str(study), "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert run.returncode != 0 and "model 'nosuch'; bundled models: " in run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_cli_rejects_an_unknown_axis_in_one_line(tmp_path):
    study = tmp_path / "s.yaml"
    study.write_text(json.dumps(_study(colour=[4])))
    run = _cli("study", str(study), "--out", str(tmp_path / "o"), cwd=tmp_path)
    assert run.returncode != 0 and "unknown axis 'colour'" in run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_block_axis_runs_an_expression_in_blocks_and_plots_it(tmp_path):
    """``block: [1, 2]`` on a SpMM: the blocked run's graph has block tensors (its
    compile is told the sparse operands' blocks), both runs equal numpy, and the block
    figure draws the speed-up over the scalar run."""
    spmm = {**SPMM, "shapes": {"A": [8, 6], "B": [6, 4]}}
    doc = {"name": "b", "workloads": [spmm], "axes": {"block": [1, 2], "order": ["i,k,j"]}}
    study = tmp_path / "b.yaml"
    study.write_text(json.dumps(doc))
    out = tmp_path / "o"
    run = _cli("study", str(study), "--out", str(out), "--csv", "--quiet", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    frame = pd.read_csv(out / "results.csv")
    assert set(frame["status"]) == {"ok"} and sorted(frame["block"]) == [1, 2]
    made = _cli("plot", str(out), "--kind", "block", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert (out / "block.png").read_bytes()[:4] == b"\x89PNG"


def test_kernel_and_dataset_workloads_check_against_numpy(tmp_path):
    doc = {"name": "k", "workloads": [
        {"kernel": "ttv", "size": 4, "density": 0.5},
        {"label": "karate", "expr": "y(i) = A(i,j) * x(j)", "formats": {"A": "csr"},
         "shapes": {"A": [34, 34], "x": [34]}, "datasets": {"A": "karate"}}],
        "axes": {"dtype": ["float32", "int32"]}}
    res = run_study(load_study(doc), tmp_path, workers=1, progress=False)
    assert len(res.rows) == 4 and {r["status"] for r in res.rows} == {"ok"}
    karate = [r for r in res.rows if r["workload"] == "karate"]
    # 156 directed edges (78 undirected): the SpMV reads every one of them
    assert all(r["est_flops"] > 0 and r["cycles"] > 156 for r in karate)


def test_dataset_shapes_must_match():
    doc = {"name": "k", "workloads": [
        {"expr": "y(i) = A(i,j) * x(j)", "formats": {"A": "csr"},
         "shapes": {"A": [30, 30], "x": [30]}, "datasets": {"A": "karate"}}]}
    with pytest.raises(StudyError, match=r"shape must be \[34, 34\]"):
        load_study(doc)


def test_a_schedule_file_runs_like_the_named_schedule_it_spells_out(tmp_path):
    from compiler import from_torch
    from compiler.models import MODELS
    from ir import Schedule

    model = MODELS["gcn"].from_config("tiny")
    program = from_torch(model, model.example_inputs(), formats=model.sparse_formats)
    spelled = Schedule.by_scope(program)
    spelled.name = "per-layer"
    (tmp_path / "per-layer.yaml").write_text(spelled.to_yaml())
    (tmp_path / "s.yaml").write_text(
        "name: s\nworkloads: [{model: gcn, config: tiny}]\n"
        "axes: {schedule: [partial, per-layer.yaml]}\n")
    res = run_study(load_study(tmp_path / "s.yaml"), tmp_path / "out", workers=1,
                    progress=False)
    by_name = {r["schedule"]: r for r in res.rows}
    assert set(by_name) == {"partial", "per-layer"}
    assert by_name["per-layer"]["status"] == "ok" and by_name["per-layer"]["correct"]
    assert by_name["per-layer"]["cycles"] == by_name["partial"]["cycles"]
    assert json.loads(by_name["per-layer"]["schedule_spec"])["name"] == "per-layer"


def test_a_bad_schedule_is_rejected_at_load(tmp_path):
    with pytest.raises(StudyError, match="schedule"):
        load_study({"name": "s", "workloads": [{"model": "gcn"}],
                    "axes": {"schedule": [{"regions": "nope"}]}})
    with pytest.raises(StudyError, match="not found"):
        load_study({"name": "s", "workloads": [{"model": "gcn"}],
                    "axes": {"schedule": ["missing.yaml"]}})


def test_a_model_run_over_the_budget_is_skipped_not_failed(tmp_path):
    """FuseFlow skips full fusion where it would not finish: a study's ``budget``."""
    doc = {"name": "b", "workloads": [{"model": "gcn", "config": "tiny"}],
           "axes": {"schedule": ["unfused", "full"], "hw": ["ideal"]}}
    free = run_study(load_study(doc), tmp_path / "free", workers=1, progress=False)
    assert {r["status"] for r in free.rows} == {"ok"}
    tokens = {r["schedule"]: r["est_tokens"] for r in free.rows}
    # a budget between the two predictions (docs/studies.md: the Python model streams
    # 5e5 tokens/s and pays 10 ms per kernel; unfused has 11 kernels, full one)
    need = {"unfused": tokens["unfused"] / 5e5 + 0.11, "full": tokens["full"] / 5e5 + 0.01}
    budget = sum(need.values()) / 2
    run = run_study(load_study({**doc, "budget": budget}), tmp_path / "b", workers=1,
                    progress=False)
    status = {r["schedule"]: r["status"] for r in run.rows}
    slow = max(need, key=need.get)
    assert status[slow] == "skipped" and status[min(need, key=need.get)] == "ok"
    assert "budget" in next(r["error"] for r in run.rows if r["schedule"] == slow)
    assert run.failed == [] and len(run.skipped) == 1


@pytest.mark.parametrize("budget", [0, -1, "x", True, float("nan")])
def test_a_bad_budget_is_one_line(budget):
    with pytest.raises(StudyError, match="budget"):
        load_study({"name": "b", "workloads": [SPMM], "budget": budget})


def test_fig12_draws_each_speedup_beside_fuseflows():
    """The fig12 kind: one panel per hardware, samfuse's unfused/schedule ratio and
    FuseFlow's published one as bars; a skipped run is marked, not drawn as a bar."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from cosim.studies._plot import _figure

    rows = [{"kind": "model", "model": "gcn", "config": "cora", "block": 1, "hw": hw,
             "schedule": s, "cycles": c, "status": st}
            for hw in ("fuseflow", "hbm2-u280")
            for s, c, st in (("unfused", 1000.0, "ok"), ("partial", 400.0, "ok"),
                             ("full", None, "skipped"))]
    fig = _figure(pd.DataFrame(rows), "fig12")
    try:
        assert len(fig.axes) == 2
        for ax in fig.axes:
            heights = sorted(round(p.get_height(), 4) for p in ax.patches)
            assert heights == [0.29, 1.63, 2.5]  # FuseFlow full and partial; 1000/400
            assert any(t.get_text() == "skipped" for t in ax.texts)
    finally:
        plt.close(fig)
