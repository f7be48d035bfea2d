"""Association as a study axis, an autoscheduler knob and a CLI option (docs/studies.md,
docs/tune.md, docs/cli.md): values checked in one line, runs correct against numpy."""

from __future__ import annotations

import random

import numpy as np
import pytest

from compiler import compile_model, einsum_program
from cosim import Point, TuneError, TuneSpace, run_model, search
from cosim._study_run import run_study
from cosim._study_spec import StudyError, load_study
from cosim.cli import main

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


@pytest.fixture(scope="module")
def chain():
    p = einsum_program(["T1(i,j) = X(i,k) * W(k,j)", "T2(i,j) = A(i,k) * T1(k,j)",
                        "H(i,j) = relu(T2(i,j))"],
                       {"X": (6, 4), "W": (4, 3), "A": (6, 6)}, {"A": "csr"}, name="chain")
    rng = np.random.default_rng(0)
    inputs = {"X": rng.normal(size=(6, 4)), "W": rng.normal(size=(4, 3)),
              "A": rng.normal(size=(6, 6)) * (rng.random((6, 6)) < 0.3)}
    return p, inputs


def test_assoc_is_a_knob_that_reaches_the_schedule(chain):
    pytest.importorskip("botorch")
    program, inputs = chain
    plain = TuneSpace.build(program, stats=inputs)
    space = TuneSpace.build(program, stats=inputs, assocs=("as-written", "left"))
    one = space.default_point(space.hand_cuts()["partial"])
    left = Point(one.cuts, (None,) * len(one.orders), one.depth, one.hw, assoc="left")
    assert space.valid(left) and not plain.valid(left)
    assert left in space.neighbours(one)
    assert space.size() > plain.size()
    assert 0 < space.heuristic(left) < float("inf")
    assert "assoc=left" in space.describe(left)
    sched = space.schedule(left)
    assert sched.assoc == "left"
    cm = compile_model(program, sched, stats=inputs)
    assert any("A(i,k) * X(k" in st.text for st in cm.program.statements)
    want = np.maximum(inputs["A"] @ inputs["X"] @ inputs["W"], 0)
    np.testing.assert_allclose(run_model(cm, inputs).outputs["H"], want, rtol=1e-4,
                               atol=1e-5)
    assert any(p.assoc == "left" for p in space.all_points())
    seen = search(space, lambda ps: [_outcome(space, inputs, p) for p in ps], 6, seed=0)
    assert all(space.valid(t.point) for t in seen)
    assert {space.sample(random.Random(s)).assoc for s in range(20)} == {"as-written",
                                                                        "left"}
    with pytest.raises(TuneError, match="assocs \\['cost'\\]: expected some of"):
        TuneSpace.build(program, assocs=("cost",))


def _outcome(space, inputs, p):
    from cosim import Outcome

    cm = compile_model(space.program, space.schedule(p), depth=p.depth)
    return Outcome(float(run_model(cm, inputs).cycles), "ok")


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
