"""Sweeps and the nightly regression: many (kernel, size, density, depth, dtype) runs.

Runs go to any ``concurrent.futures``-style executor (a local process pool by default; a
``dask.distributed.Client`` works the same way and reaches Slurm/PBS through
dask-jobqueue). Each result is cached under the hash of its configuration and written
atomically, so a killed sweep resumes where it stopped.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ir import Graph, examples

__all__ = ["Job", "job_key", "run_job", "run_sweep", "kernel_graph", "SWEEP_KERNELS"]

#: kernel name -> graph factory from (size, depth, dtype)
SWEEP_KERNELS = {
    "spmv": lambda s, d, t: examples.spmv(s, s, "dc", d, t),
    "spmm_ijk": lambda s, d, t: examples.spmm_ijk(s, s, 8, "dc", d, t),
    "spmm_ikj": lambda s, d, t: examples.spmm_ikj(s, s, 8, "dc", "dc", d, t),
    "spmm_kij": lambda s, d, t: examples.spmm_kij(s, s, 8, d, t),
    "sddmm": lambda s, d, t: examples.sddmm(s, s, 8, "dc", d, t),
    "add": lambda s, d, t: examples.elementwise(s, s, "add", depth=d, dtype=t),
    "mul": lambda s, d, t: examples.elementwise(s, s, "mul", out_fmt="cc", depth=d, dtype=t),
    "ttv": lambda s, d, t: examples.ttv(s, s, 6, "dcc", d, t),
}


@dataclass(frozen=True)
class Job:
    kernel: str
    size: int
    density: float
    depth: int | None
    dtype: str
    seed: int
    backends: tuple[str, ...]


def job_key(job: Job) -> str:
    """Stable hash of a job's configuration: its cache file name."""
    return hashlib.sha256(json.dumps(asdict(job), sort_keys=True).encode()).hexdigest()[:16]


def kernel_graph(job: Job) -> tuple[Graph, dict[str, np.ndarray]]:
    """The job's graph and seeded random inputs (sparse operands at ``job.density``)."""
    graph = SWEEP_KERNELS[job.kernel](job.size, job.depth, job.dtype)
    rng = np.random.default_rng(job.seed)
    inputs = {}
    for t in graph.tensors.values():
        if t.role != "input":
            continue
        vals = rng.integers(1, 8, size=t.shape) * rng.choice([-1, 1], size=t.shape)
        density = job.density if "c" in t.format.split(":")[0] else 1.0
        vals = vals * (rng.random(t.shape) < density)
        inputs[t.name] = vals.astype(np.float32 if job.dtype == "float32" else np.int32)
    return graph, inputs


def run_job(job: Job) -> dict[str, Any]:
    """Run one job on every backend it names; a JSON-ready summary of the agreement."""
    from ._compare import compare_backends

    graph, inputs = kernel_graph(job)
    start = time.perf_counter()
    report = compare_backends(graph, inputs, list(job.backends), trace=True)
    return {
        "key": job_key(job), "job": asdict(job), "ok": report.ok,
        "cycles": report.cycles,
        "firings": {n: (r.result.firings if r.result else None) for n, r in report.runs.items()},
        "wall": {n: round(r.wall_seconds, 4) for n, r in report.runs.items()},
        "errors": {n: str(r.error) for n, r in report.runs.items() if r.error is not None},
        "outputs_agree": report.outputs_agree,
        "mismatches": {n: [str(m) for m in ms] for n, ms in report.mismatches.items() if ms},
        "seconds": round(time.perf_counter() - start, 3),
    }


def _write_atomic(path: Path, data: dict[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh, indent=1)
    os.replace(tmp, path)


def run_sweep(jobs: Iterable[Job], cache_dir: str | Path, executor: Any = None,
              max_workers: int = 2, progress: bool = True) -> list[dict[str, Any]]:
    """Run ``jobs`` (skipping cached ones) on ``executor``; results in job order."""
    cache = Path(cache_dir)
    cache.mkdir(parents=True, exist_ok=True)
    jobs = list(jobs)
    results: dict[str, dict[str, Any]] = {}
    todo = []
    for job in jobs:
        path = cache / f"{job_key(job)}.json"
        if path.exists():
            results[job_key(job)] = json.loads(path.read_text())
        else:
            todo.append(job)
    own = executor is None
    if own:
        executor = cf.ProcessPoolExecutor(max_workers=max_workers)
    bar = _progress(len(jobs), len(jobs) - len(todo), progress)
    try:
        futures = {executor.submit(run_job, job): job for job in todo}
        done_iter = cf.as_completed(futures) if all(
            isinstance(f, cf.Future) for f in futures) else iter(futures)
        for fut in done_iter:
            job = futures[fut]
            try:
                res = fut.result()
            except Exception as exc:  # noqa: BLE001 - a crashed job is a result too
                res = {"key": job_key(job), "job": asdict(job), "ok": False,
                       "errors": {"sweep": f"{type(exc).__name__}: {exc}"}}
            _write_atomic(cache / f"{job_key(job)}.json", res)
            results[job_key(job)] = json.loads(json.dumps(res))  # as a resumed run sees it
            bar(res)
    finally:
        if own:
            executor.shutdown()
    return [results[job_key(j)] for j in jobs]


def _progress(total: int, done: int, enabled: bool):
    """A one-line progress counter on stderr (tqdm when present)."""
    state = {"done": done, "failed": 0}

    def tick(res: dict[str, Any]) -> None:
        state["done"] += 1
        state["failed"] += not res.get("ok", False)
        if enabled:
            print(f"\r{state['done']}/{total} runs, {state['failed']} mismatch(es)",
                  end="" if state["done"] < total else "\n", file=sys.stderr, flush=True)

    return tick
