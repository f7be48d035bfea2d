"""Sweeps: results cached by configuration hash, atomic writes, resume after a kill."""

from __future__ import annotations

import concurrent.futures as cf
import json

from cosim import _sweep
from cosim._sweep import Job, job_key, run_sweep


def _jobs():
    return [Job(k, 5, 0.4, 2, "int32", seed=1, backends=("python",)) for k in ("spmv", "mul")]


def test_sweep_caches_by_hash_and_resumes(tmp_path, monkeypatch):
    calls = []
    real = _sweep.run_job

    def counting(job):
        calls.append(job.kernel)
        return real(job)

    monkeypatch.setattr(_sweep, "run_job", counting)
    with cf.ThreadPoolExecutor(2) as pool:
        first = run_sweep(_jobs(), tmp_path, executor=pool, progress=False)
    assert sorted(calls) == ["mul", "spmv"] and all(r["ok"] for r in first)
    assert {p.stem for p in tmp_path.glob("*.json")} == {job_key(j) for j in _jobs()}
    # a killed sweep left one result: only the other one runs again
    (tmp_path / f"{job_key(_jobs()[1])}.json").unlink()
    calls.clear()
    with cf.ThreadPoolExecutor(2) as pool:
        again = run_sweep(_jobs(), tmp_path, executor=pool, progress=False)
    assert calls == ["mul"]
    timing_free = [{k: v for k, v in r.items() if k not in ("wall", "seconds")}
                   for r in (*first, *again)]
    assert timing_free[:2] == timing_free[2:]
    assert not list(tmp_path.glob(".tmp-*"))


def test_job_results_report_cycles_and_agreement(tmp_path):
    (res,) = run_sweep(_jobs()[:1], tmp_path, executor=cf.ThreadPoolExecutor(1), progress=False)
    assert res["ok"] and res["cycles"]["python"] > 0
    assert json.loads((tmp_path / f"{res['key']}.json").read_text()) == res
