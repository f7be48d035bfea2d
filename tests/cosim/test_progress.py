"""Progress of long commands (issue 25: ``tune`` was silent for 25 s, a study's ETA sat at
0:01 while its model runs were still to come)."""

from __future__ import annotations

import io

import pytest

from cosim.studies._progress import Progress
from cosim.studies._runner import _Progress
from cosim.studies._spec import load_study, study_path


def test_a_log_gets_plain_lines_not_redraws():
    state = {"n": 0}
    log = io.StringIO()
    line = Progress(lambda: f"status {state['n']}", stream=log, tty=False, plain_every=3600)
    with line:
        for state["n"] in range(1, 4):
            line.refresh()  # no line yet: the last one is less than an hour old
        line.event("an event")
    assert log.getvalue() == "an event\nstatus 3\n"  # the event, then the final status
    assert "\r" not in log.getvalue()


def test_a_log_gets_the_status_every_plain_every_seconds():
    log = io.StringIO()
    line = Progress(lambda: "alive", stream=log, tty=False, plain_every=0.0)
    line.refresh()
    line.refresh()
    line.close()
    assert log.getvalue() == "alive\nalive\nalive\n"


def test_a_terminal_gets_one_line_redrawn_and_events_above_it():
    screen = io.StringIO()
    text = {"s": "long status line"}
    line = Progress(lambda: text["s"], stream=screen, tty=True)
    line.refresh()
    text["s"] = "short"
    line.refresh()  # padded over the longer line before it
    line.event("event")
    line.close()
    out = screen.getvalue()
    assert out.startswith("\rlong status line\rshort" + " " * 11)
    assert "event\n" in out and out.endswith("short\n")


def _smoke_runs() -> tuple[list, list]:
    configs = load_study(study_path("smoke")).expand()
    exprs = [c for c in configs if c.workload.model is None]
    models = [c for c in configs if c.workload.model is not None]
    assert len(exprs) == 12 and len(models) == 3
    return exprs, models


def test_the_study_eta_counts_model_runs_it_cannot_price_yet(capsys):
    """The smoke study's ETA said 0:01 after its twelve quick expression runs, with three
    GCN runs of seconds each still to come."""
    exprs, models = _smoke_runs()
    bar = _Progress("smoke", exprs + models, 0, enabled=True, workers=1)
    for c in exprs:
        bar.tick(c, [{"status": "ok", "run_seconds": 0.05}])
    assert bar.untimed == 3
    assert "ETA >= " in bar._status() and "(3 model run(s) not timed yet)" in bar._status()
    bar.tick(models[0], [{"status": "ok", "run_seconds": 10.0}])
    assert bar.untimed == 0
    assert bar.eta == pytest.approx(20.0)  # two GCN runs of 10 s left, one at a time
    assert "ETA 0:20" in bar._status() or "ETA 0:19" in bar._status()
    for c in models[1:]:
        bar.tick(c, [{"status": "ok", "run_seconds": 10.0}])
    bar.close()
    assert capsys.readouterr().err.rstrip("\n").endswith("0 failed, " + bar._status()
                                                          .split("0 failed, ")[1])


def test_the_study_eta_scales_the_estimates_by_what_runs_measured():
    exprs, _ = _smoke_runs()
    bar = _Progress("smoke", exprs, 0, enabled=True, workers=1)
    first, rest = exprs[0], exprs[1:]
    bar.tick(first, [{"status": "ok", "run_seconds": bar.est[first] * 50}])
    assert bar.eta == pytest.approx(50 * sum(bar.est[c] for c in rest))
    bar.close()


def _without_heartbeats(lines: list[str]) -> list[str]:
    """Drop the lines a long phase repeats every 30 s (its text, then ``, m:ss elapsed``):
    how many there are depends on the machine's load, not on the code under test."""
    kept: list[str] = []
    for ln in lines:
        phase = kept[-1].rstrip("…") if kept else None
        if phase and ln.startswith(phase + ", ") and ln.endswith(" elapsed"):
            continue
        kept.append(ln)
    return kept


@pytest.mark.slow
def test_tune_prints_its_phases_and_every_evaluation(tmp_path, capsys):
    from cosim import tune

    tune("gcn", tmp_path, config="tiny", budget=2, progress=True)
    err = _without_heartbeats(capsys.readouterr().err.splitlines())
    assert err[0] == "tune gcn-tiny: exporting the model and building the search space…"
    assert err[1].startswith("tune gcn-tiny: search space of 11 statements, ")
    evals = [ln for ln in err if ": evaluation " in ln]
    assert [ln.split(": ")[1] for ln in evals] == ["evaluation 1/2", "evaluation 2/2"]
    assert all(" (best " in ln and " elapsed" in ln for ln in evals)
    tune("gcn", tmp_path, config="tiny", budget=2, progress=True)  # replayed from cache
    assert sum("(cached)" in ln for ln in capsys.readouterr().err.splitlines()) == 2
