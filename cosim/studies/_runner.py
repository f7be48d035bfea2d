"""Running a study: one cached, atomic result per run, on a process pool or Dask.

A run's result rows (one per backend) are written to ``<out>/runs/<key>.json`` the moment
it finishes, under a key that hashes the configuration *and* the sources that compute it,
so a killed study loses nothing finished and a re-run with nothing changed is read back
from the cache. The collected rows become one columnar table (Parquet; CSV on request).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..runs._config import RunConfig, code_version
from ..runs._config_run import config_columns, estimate_run, run_config, short_error
from ..runs._files import atomic_path, write_atomic
from ._cache import cached_rows, json_default, store_rows
from ._executors import executor
from ._progress import Progress, clock
from ._spec import StudySpec, check_models

__all__ = ["code_version", "run_config", "run_configs", "run_study", "StudyResult",
           "estimate_run", "write_table"]

class StudyResult:
    """The rows of a finished study, and how many runs came from the cache."""

    def __init__(self, rows: list[dict[str, Any]], ran: int, cached: int,
                 seconds: float) -> None:
        self.rows, self.ran, self.cached, self.seconds = rows, ran, cached, seconds

    def frame(self) -> Any:
        import pandas as pd

        return pd.DataFrame(self.rows)

    @property
    def failed(self) -> list[dict[str, Any]]:
        """Rows that did not finish correctly; a run skipped over budget is not a failure."""
        return [r for r in self.rows if r["status"] not in ("ok", "skipped")]

    @property
    def skipped(self) -> list[dict[str, Any]]:
        """Rows of runs the study's budget skipped (the 'error' column says why)."""
        return [r for r in self.rows if r["status"] == "skipped"]


#: the result columns of a run that did not fail (numbers, then text and flags), which a
#: table has even when every run failed: one schema whatever the outcome
RESULT_NUMBERS = ("cycles", "firings", "bytes_moved", "imbalance", "seconds",
                  "dram_read_bytes", "dram_write_bytes", "mem_requests", "achieved_gbps",
                  "wall_seconds", "compile_seconds", "est_flops", "est_bytes", "est_tokens",
                  "run_seconds")
RESULT_OTHERS = ("order_used", "correct", "error", "agree", "status")


def write_table(rows: list[dict[str, Any]], out: Path, csv: bool = False) -> list[Path]:
    """``results.parquet`` (and ``results.csv``) in ``out``, each written atomically.

    A digest of the rows beside them (``.results.sha256``) lets an unchanged table stay
    as it is: a re-run from the cache then needs neither pandas nor pyarrow."""
    paths = [out / "results.parquet", *([out / "results.csv"] if csv else [])]
    digest = hashlib.sha256(json.dumps(rows, sort_keys=True, default=json_default)
                            .encode()).hexdigest()
    stamp = out / ".results.sha256"
    if all(p.exists() for p in paths) and stamp.exists() and stamp.read_text() == digest:
        return paths
    import pandas as pd

    frame = pd.DataFrame(rows)
    stamp.unlink(missing_ok=True)  # stale until the tables are written
    for col in RESULT_NUMBERS:  # one schema whatever fails
        if col not in frame.columns:
            frame[col] = pd.Series(np.nan, index=frame.index, dtype="float64")
    for col in RESULT_OTHERS:
        if col not in frame.columns:
            frame[col] = pd.Series(None, index=frame.index, dtype="object")
    for path in paths:
        with atomic_path(path) as tmp:
            (frame.to_parquet if path.suffix == ".parquet" else frame.to_csv)(tmp, index=False)
    write_atomic(stamp, digest)
    return paths


def run_configs(configs: Sequence[RunConfig], out: str | Path, *, workers: int = 2,
                dask: str | None = None, progress: bool = True, label: str = "study",
                on_done: Callable[[RunConfig, list[dict[str, Any]]], None] | None = None
                ) -> tuple[dict[RunConfig, list[dict[str, Any]]], int]:
    """Rows of each configuration, run (in parallel) or read from ``out/runs``; and how
    many were run. The building block of studies and of the autoscheduler's batches.
    ``on_done`` sees each run's rows as it finishes (the autoscheduler's progress).

    ``dask`` is ``None`` (a local process pool of ``workers``), ``"local"`` (a Dask
    ``LocalCluster`` of ``workers`` processes) or a scheduler address (``tcp://host:port``).
    """
    cache = Path(out) / "runs"
    cache.mkdir(parents=True, exist_ok=True)
    version = code_version()
    rows_of: dict[RunConfig, list[dict[str, Any]]] = {}
    todo = []
    for c in dict.fromkeys(configs):
        rows = cached_rows(cache / f"{c.key(version)}.json", c, version)
        if rows is not None:
            rows_of[c] = rows
        else:
            todo.append(c)
    check_models({c.workload: None for c in todo})
    bar = _Progress(label, todo, len(rows_of), enabled=progress, workers=workers)
    try:
        if todo:
            for cfg, fut in executor(workers, dask)(todo):
                try:
                    rows = fut.result()
                except Exception as exc:  # noqa: BLE001 - a crashed worker is a result too
                    rows = [{"key": cfg.key(version), **config_columns(cfg), "backend": b,
                             "status": "error", "error": short_error(exc), "agree": False}
                            for b in cfg.backends]
                rows_of[cfg] = store_rows(cache / f"{cfg.key(version)}.json", rows)
                bar.tick(cfg, rows)
                if on_done is not None:
                    on_done(cfg, rows_of[cfg])
    finally:
        bar.close()
    return rows_of, len(todo)


def run_study(spec: StudySpec, out: str | Path, *, workers: int = 2,
              dask: str | None = None, csv: bool = False,
              progress: bool = True) -> StudyResult:
    """Run every configuration of ``spec`` not already cached in ``out``; write the table
    (``results.parquet``, and ``results.csv`` when ``csv``)."""
    start = time.perf_counter()
    configs = spec.expand()
    rows_of, ran = run_configs(configs, out, workers=workers, dask=dask, progress=progress,
                               label=spec.name)
    rows = [r for c in configs for r in rows_of[c]]
    write_table(rows, Path(out), csv)
    return StudyResult(rows, ran, len(configs) - ran, time.perf_counter() - start)


class _Progress:
    """``study NAME [#####.....] 12/40 runs (0 cached), 2 failed, 0:31 elapsed, ETA 1:05``
    on stderr (``cosim.studies._progress``: redrawn every second on a terminal, a line every 30 s
    in a log).

    The ETA prices each run left by what the finished runs measured: an expression or
    kernel run by the heuristic's estimate scaled by the measured/estimated ratio of the
    finished ones, a model run by the mean time of the finished runs of its model (a
    model's size is unknown without exporting it). Until a model's first run finishes,
    the ETA is a lower bound and says how many runs it leaves out. It counts down between
    finished runs."""

    def __init__(self, name: str, todo: Sequence[RunConfig], cached: int,
                 enabled: bool, workers: int = 1) -> None:
        self.name, self.cached, self.workers = name, cached, max(workers, 1)
        self.total, self.done, self.failed = len(todo), 0, 0
        est = {c: estimate_run(c) for c in todo} if enabled and todo else {}
        self.est = {c: (math.nan if math.isnan(v) else v or 1e-3) for c, v in est.items()}
        self.left = set(todo)
        self.took: dict[RunConfig, float] = {}
        self.start = self.last = time.perf_counter()
        self.eta, self.untimed = self._estimate()
        self.line = Progress(self._status, enabled=enabled and bool(todo))
        self.line.__enter__()

    def tick(self, cfg: RunConfig, rows: list[dict[str, Any]]) -> None:
        self.done += 1
        self.failed += any(r.get("status") not in ("ok", "skipped") for r in rows)
        self.left.discard(cfg)
        taken = [r.get("run_seconds") for r in rows if r.get("run_seconds") is not None]
        self.took[cfg] = float(taken[0]) if taken else math.nan
        self.last = time.perf_counter()
        self.eta, self.untimed = self._estimate()
        self.line.refresh()

    def _estimate(self) -> tuple[float, int]:
        """Seconds left at the last finished run, and runs that cannot be priced yet."""
        timed = {c: t for c, t in self.took.items() if not math.isnan(t)}
        known = [c for c in timed if not math.isnan(self.est.get(c, math.nan))]
        est_sum = sum(self.est[c] for c in known)
        ratio = sum(timed[c] for c in known) / est_sum if known and est_sum > 0 else 1.0
        by_model: dict[str, list[float]] = {}
        for c, t in timed.items():
            if c.workload.model is not None:
                by_model.setdefault(c.workload.model, []).append(t)
        seconds, untimed = 0.0, 0
        for c in self.left:
            e = self.est.get(c, math.nan)
            if not math.isnan(e):
                seconds += e * ratio
            elif by_model.get(c.workload.model):
                seconds += sum(by_model[c.workload.model]) / len(by_model[c.workload.model])
            else:
                untimed += 1
        elapsed = self.last - self.start
        busy = sum(timed.values())
        parallel = min(max(busy / elapsed if elapsed > 0 else 1.0, 1.0), self.workers)
        return seconds / parallel, untimed

    def _status(self) -> str:
        width = 24
        fill = round(width * self.done / self.total) if self.total else width
        now = time.perf_counter()
        if not self.left:
            eta = "done"
        else:
            left = clock(max(self.eta - (now - self.last), 0.0))
            eta = f"ETA >= {left} ({self.untimed} model run(s) not timed yet)" \
                if self.untimed else f"ETA {left}"
        return (f"study {self.name} [{'#' * fill}{'.' * (width - fill)}] "
                f"{self.done}/{self.total} runs ({self.cached} cached), {self.failed} failed, "
                f"{clock(now - self.start)} elapsed, {eta}")

    def close(self) -> None:
        self.line.close()
