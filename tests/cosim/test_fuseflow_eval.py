"""scripts/fuseflow_eval.py's ``--predict``: the heuristic's cycles for a study's runs
without simulating them are the ones a simulated run reports beside its measurement —
exactly where every kernel reads inputs or intermediates as the values give them, within
a few per cent where an unfused kernel's written intermediate stores computed zeros
(a run prices the tree it wrote, the prediction the values)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from cosim.runs._config_run import run_config
from cosim.studies._spec import load_study

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "fuseflow_eval.py"


def _script():
    spec = importlib.util.spec_from_file_location("fuseflow_eval", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("model,config,schedule,assoc,block,rel", [
    ("gcn", "small-fuseflow", "partial", "left", 1, 1e-9),
    ("bigbird", "small", "partial", "as-written", 4, 1e-9),
    ("graphsage", "small-fuseflow", "unfused", "left", 1, 0.05),
])
def test_predict_prices_a_run_as_its_simulation_reports(model, config, schedule, assoc,
                                                        block, rel):
    doc = {"name": "t", "workloads": [{"model": model, "config": config}],
           "axes": {"schedule": [schedule], "assoc": [assoc], "hw": ["fuseflow"],
                    "backends": [["python"]], "block": [block]}}
    (cfg,) = load_study(doc).expand()
    (row,) = run_config(cfg)
    assert row["status"] == "ok" and row["correct"], row.get("error")
    got = _script().predict(cfg)
    assert got["est_cycles"] == pytest.approx(row["est_cycles"], rel=rel)
    assert got["est_cycles"] > 0


def test_ogb_mag_is_a_study_of_its_own():
    """``--studies mag`` runs ``fig12-mag``: GCN and GraphSAGE on ``mag-fuseflow`` under
    FuseFlow's machine, unfused and partial as FuseFlow wrote them and full fusion priced
    on its association, each run under a budget that is the study's own."""
    import yaml

    from cosim import study_path

    mod = _script()
    assert mod.STUDIES["mag"] == "fig12-mag"
    assert "mag" not in {c["config"].split("-fuseflow")[0] for c in
                         yaml.safe_load(study_path("fig12-gnn").read_text())["workloads"]}
    cfgs = load_study(yaml.safe_load(study_path("fig12-mag").read_text())).expand()
    assert {(c.workload.model, c.workload.config, c.schedule, c.assoc, c.hw) for c in cfgs} == {
        (m, "mag-fuseflow", s, "cost" if s == "full" else "left", "fuseflow")
        for m in ("gcn", "graphsage") for s in ("unfused", "partial", "full")}
    assert {c.budget for c in cfgs} == {12000}
