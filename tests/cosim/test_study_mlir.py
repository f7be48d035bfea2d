"""A study workload ``mlir: FILE.mlir``: an MLIR file under fusion schedules, checked
against the numpy oracle, its cache key following the file's content."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

pytest.importorskip("torch_mlir")

from cosim.studies._runner import code_version, run_study  # noqa: E402
from cosim.studies._spec import StudyError, load_study  # noqa: E402

MLIR = Path(__file__).parents[1] / "compiler" / "mlir"


def _study(tmp_path: Path, **workload) -> Path:
    shutil.copy(MLIR / "gcn_layer.mlir", tmp_path / "gcn_layer.mlir")
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump({
        "name": "mlir", "workloads": [workload or {"mlir": "gcn_layer.mlir"}],
        "axes": {"schedule": ["unfused", "full"], "seed": [0, 1]}}))
    return path


def test_mlir_workload_runs_every_schedule_and_checks_it(tmp_path):
    spec = load_study(_study(tmp_path))
    (w,) = spec.workloads
    assert w.kind == "mlir" and w.label == "gcn_layer"
    res = run_study(spec, tmp_path / "out", workers=1, progress=False)
    frame = pd.read_parquet(tmp_path / "out" / "results.parquet")
    assert res.ran == 4 and len(frame) == 4
    assert set(frame["status"]) == {"ok"} and frame["correct"].all()
    assert set(frame["kind"]) == {"mlir"} and set(frame["schedule"]) == {"unfused", "full"}
    assert frame["model"].str.endswith("gcn_layer.mlir").all()
    assert (frame["cycles"] > 0).all()


def test_cache_key_follows_the_file_content(tmp_path):
    first = load_study(_study(tmp_path)).expand()[0].key(code_version())
    path = tmp_path / "gcn_layer.mlir"
    path.write_text(path.read_text().replace("5.000000e-01", "7.500000e-01"))
    second = load_study(tmp_path / "study.yaml").expand()[0].key(code_version())
    assert first != second


def test_other_workloads_keep_their_cache_keys():
    spec = load_study({"name": "s", "workloads": [{"model": "gcn"}]})
    assert "mlir" not in spec.expand()[0].to_json()["workload"]


@pytest.mark.parametrize(("workload", "match"), [
    ({"mlir": "absent.mlir"}, "expected an existing .mlir file"),
    ({"mlir": "gcn_layer.mlir", "model": "gcn"}, "exactly one of"),
    ({"mlir": "bad.mlir"}, r"bad.mlir:\d+:\d+: math.log"),
])
def test_bad_mlir_workloads_are_rejected_at_load(tmp_path, workload, match):
    (tmp_path / "bad.mlir").write_text(
        (MLIR / "softmax.mlir").read_text().replace("math.exp", "math.log"))
    with pytest.raises(StudyError, match=match):
        load_study(_study(tmp_path, **workload))
