"""Association as a study axis and a CLI option (docs/studies.md, docs/cli.md): values
checked in one line, runs correct against numpy (the tuner's knob: tests/cosim/test_tune.py)."""

from __future__ import annotations

import pytest

from cosim.cli import main
from cosim.studies._runner import run_study
from cosim.studies._spec import StudyError, load_study

CHAIN = {"label": "chain", "expr": "X(i,j) = A(i,k) * B(k,l) * C(l,j)",
         "formats": {"A": "csr"}, "shapes": {"A": [6, 5], "B": [5, 4], "C": [4, 3]},
         "density": 0.4}


def test_assoc_axis_values_are_checked_and_expand():
    with pytest.raises(StudyError, match="assoc 'up': expected one of as-written, left"):
        load_study({"name": "t", "workloads": [CHAIN], "axes": {"assoc": ["up"]}})
    spec = load_study({"name": "t", "workloads": [CHAIN],
                       "axes": {"assoc": ["as-written", "left", "cost"]}})
    runs = spec.expand()
    assert [r.assoc for r in runs] == ["as-written", "left", "cost"]
    assert "assoc" not in runs[0].to_json() and runs[1].to_json()["assoc"] == "left"
    with pytest.raises(StudyError, match="kernel 'spmv' is built by hand"):
        load_study({"name": "t", "workloads": [{"kernel": "spmv", "size": 8}],
                    "axes": {"assoc": ["left"]}}).expand()


def test_assoc_axis_runs_an_expression_in_every_association(tmp_path):
    spec = load_study({"name": "t", "workloads": [CHAIN],
                       "axes": {"assoc": ["as-written", "left", "right", "cost"]}})
    res = run_study(spec, tmp_path, workers=1, progress=False)
    rows = res.frame()
    assert list(rows["assoc"]) == ["as-written", "left", "right", "cost"]
    assert rows["correct"].all(), rows[["assoc", "error"]]
    assert rows["cycles"].nunique() > 1  # the associations are different graphs


def test_assoc_axis_runs_a_model(tmp_path):
    spec = load_study({"name": "t", "workloads": [{"model": "gcn", "config": "tiny"}],
                       "axes": {"schedule": ["partial"], "assoc": ["left", "cost"]}})
    rows = run_study(spec, tmp_path, workers=1, progress=False).frame()
    assert rows["correct"].all(), rows[["assoc", "error"]]


@pytest.mark.parametrize("argv", [
    ["compile", "X(i,j) = A(i,k)*B(k,j)", "--assoc", "lft"],
    ["model", "gcn", "--assoc", "Left"],
])
def test_cli_rejects_a_bad_assoc_in_one_line(argv, capsys):
    assert main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert err.startswith("samfuse: error: --assoc: assoc ") and \
        "is not one of as-written, left, right, cost" in err
