"""Running a study: one cached, atomic result per run, on a process pool or Dask.

A run's result rows (one per backend) are written to ``<out>/runs/<key>.json`` the moment
it finishes, under a key that hashes the configuration *and* the sources that compute it,
so a killed study loses nothing finished and a re-run with nothing changed is read back
from the cache. The collected rows become one columnar table (Parquet; CSV on request).
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import functools
import hashlib
import json
import math
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ir import Hardware

from ._files import atomic_path, write_atomic
from ._progress import Progress, clock
from ._study_spec import (
    RunConfig,
    StudySpec,
    Workload,
    check_models,
    graph_dataset,
    hw_label,
    hw_set_label,
    par_label,
    schedule_name,
)

__all__ = ["code_version", "run_config", "run_configs", "run_study", "StudyResult",
           "estimate_run", "write_table"]

_ROOT = Path(__file__).resolve().parent.parent
#: the packages whose sources decide a run's result (the CLI and study code do not)
_CODE_DIRS = ("ir", "compiler", "sim_models", "rtl_hls", "cosim")
_CODE_SUFFIXES = {".py", ".h", ".sv", ".cpp", ".in", ".json"}
_NOT_RESULT_CODE = {"cli.py", "_cli_model.py", "_cli_study.py", "_study_spec.py",
                    "_study_run.py", "_plot.py", "_nightly.py",
                    # the autoscheduler chooses runs; it does not compute them
                    "_cli_tune.py", "_tune.py", "_tune_bo.py", "_tune_report.py",
                    "_tune_run.py", "_tune_space.py"}

#: simulated stream tokens per second, for the ETA (measured with scripts/bench_sim.py)
_TOKEN_RATE = {"python": 5e5, "systemc": 5e6, "rtl": 2e5, "hls-csim": 2e6}
#: fixed cost of one kernel on a backend (compile, process start), seconds
_KERNEL_COST = {"python": 0.01, "systemc": 0.5, "rtl": 5.0, "hls-csim": 3.0}


@functools.cache
def code_version() -> str:
    """Hash of every source file that can change a run's result."""
    h = hashlib.sha256()
    for d in _CODE_DIRS:
        for path in sorted((_ROOT / d).rglob("*")):
            if path.suffix in _CODE_SUFFIXES and path.name not in _NOT_RESULT_CODE and \
                    "__pycache__" not in path.parts:
                h.update(str(path.relative_to(_ROOT)).encode())
                h.update(path.read_bytes())
    return h.hexdigest()[:16]


# -- one run ---------------------------------------------------------------------------

def _random_inputs(w: Workload, graph_inputs: dict[str, tuple[int, ...]], seed: int,
                   dtype: str) -> dict[str, np.ndarray]:
    """Seeded small non-zero integers (exact in float32 and int32); tensors the
    workload stores compressed at its density, dense ones full."""
    rng = np.random.default_rng(seed)
    formats, data = dict(w.formats), dict(w.datasets)
    out = {}
    for name, shape in graph_inputs.items():
        vals = rng.integers(1, 8, size=shape) * rng.choice([-1, 1], size=shape)
        if name in data:
            out[name] = graph_dataset(data[name]).toarray().astype(
                np.float32 if dtype == "float32" else np.int32)
            continue
        if any(c in formats.get(name, "") for c in ("c", "csr", "csc", "coo")):
            vals = vals * (rng.random(shape) < w.density)
        out[name] = vals.astype(np.float32 if dtype == "float32" else np.int32)
    return out


def _expr_graph(cfg: RunConfig) -> tuple[Any, dict[str, np.ndarray], np.ndarray]:
    """The expression's graph, its seeded inputs and the numpy reference. The inputs come
    first: a balanced lane partition measures the work on them when compiling."""
    from compiler import compile_expression, einsum_program, evaluate
    from compiler._blocks import seed_blocks, statement_blocks

    w = cfg.workload
    shapes = {k: list(v) for k, v in w.shapes}
    program = einsum_program([w.expr], shapes, dict(w.formats))
    ins = {n: tuple(program.tensors[n].shape) for n in program.inputs}
    inputs = _random_inputs(w, ins, cfg.seed, cfg.dtype)
    # with lanes the compiler sees the data (a one-lane run compiles as it always has)
    lanes = {"par": dict(cfg.par), "partition": cfg.partition,
             "lane_buffer": cfg.lane_buffer, "stats": inputs} if cfg.par else {}
    if cfg.block > 1:  # the sparse operands' indices are blocked (docs/blocks.md)
        lanes.update(stats=inputs, block=statement_blocks(program,
                                                          seed_blocks(program, cfg.block)))
    graph = compile_expression(w.expr, dict(w.formats), shapes, depth=cfg.depth,
                               dtype=cfg.dtype,
                               order=None if cfg.order == "default" else cfg.order,
                               assoc=cfg.assoc, **lanes)
    return graph, inputs, evaluate(program, inputs)[program.outputs[0]]


class OverBudget(Exception):
    """A run the heuristic predicts to take longer than the study's ``budget``."""


def predicted_seconds(tokens: float, kernels: int, backends: Sequence[str]) -> float:
    """Seconds a run of ``tokens`` stream tokens in ``kernels`` kernels should take."""
    return sum(tokens / _TOKEN_RATE.get(b, 1e5) + kernels * _KERNEL_COST.get(b, 1.0)
               for b in backends)


def _kernel_graph(cfg: RunConfig) -> tuple[Any, dict[str, np.ndarray], np.ndarray]:
    from ._sweep import SWEEP_KERNELS, kernel_graph

    w = cfg.workload
    graph, inputs = kernel_graph(w.kernel, w.size, w.density, cfg.depth, cfg.dtype, cfg.seed)
    gold = SWEEP_KERNELS[w.kernel].reference({k: v.astype(np.float64)
                                              for k, v in inputs.items()})
    return graph, inputs, gold


def _graph_run(cfg: RunConfig) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One graph (an expression or an example kernel) on every backend, traces compared,
    the output checked against numpy."""
    from compiler import estimate

    from ._compare import compare_backends
    from ._lanes import lane_report
    from ._model_run import storage_bytes

    t0 = time.perf_counter()
    graph, inputs, gold = (_kernel_graph if cfg.workload.kernel else _expr_graph)(cfg)
    compile_s = time.perf_counter() - t0
    est = estimate(graph, inputs)
    read = sum(storage_bytes(_tree(graph, t, v)) for t, v in inputs.items())
    hw = cfg.hardware()
    report = compare_backends(graph, inputs, list(cfg.backends), trace=True, hw=hw)
    agree = _verdict(report)
    rows = []
    for name, run in report.runs.items():
        res = run.result
        correct = nbytes = None
        if res is not None and res.outputs:
            tree = next(iter(res.outputs.values()))
            correct = bool(np.allclose(tree.to_dense(), gold, rtol=1e-4, atol=1e-4))
            nbytes = read + storage_bytes(tree)
        rows.append({"backend": name, "order_used": ",".join(graph.meta.get("order", [])),
                     "cycles": res.cycles if res else None,
                     "firings": res.firings if res and res.nodes and _counted(name)
                     else None,
                     "bytes_moved": nbytes, "correct": correct,
                     "imbalance": _imbalance([lane_report(graph, res)] if res else []),
                     **(_memory_columns(res.dram_read_bytes, res.dram_write_bytes,
                                        sum(n.mem_requests for n in res.nodes.values()),
                                        res.cycles, hw) if res else {}),
                     "error": None if run.error is None else _short(run.error),
                     "wall_seconds": run.wall_seconds})
    return rows, {"agree": agree, "compile_seconds": compile_s, "est_flops": est.flops,
                  "est_bytes": est.bytes, "est_tokens": sum(est.tokens.values()),
                  "lanes": _graph_lanes(graph)}


def _graph_lanes(graph: Any) -> int:
    """The lanes a compiled graph has: the product of its parallel indices' lanes."""
    return math.prod(graph.meta.get("parallel", {}).get("par", {}).values())


def _imbalance(reports: list[Any]) -> float | None:
    """Largest lane's work over the mean lane's; over several kernels the mean of theirs
    weighted by their lanes' work. None without lanes (or a backend without firings)."""
    reports = [r for r in reports if r.work and sum(r.work.values())]
    if not reports:
        return None
    total = sum(sum(r.work.values()) for r in reports)
    return sum(r.imbalance * sum(r.work.values()) for r in reports) / total


def _memory_columns(read: int, write: int, bursts: int, cycles: int | None,
                    hw: Any) -> dict[str, Any]:
    """A run's DRAM traffic and its simulated time at the hardware's clock."""
    seconds = None if cycles is None else hw.seconds(cycles)
    return {"seconds": seconds, "dram_read_bytes": read, "dram_write_bytes": write,
            "mem_requests": bursts,
            "achieved_gbps": (read + write) / seconds / 1e9 if seconds else None}


def _tree(graph: Any, name: str, value: np.ndarray) -> Any:
    from ir import FiberTree

    return FiberTree.from_any(value, graph.tensors[name].format)


def _verdict(report: Any) -> bool:
    """All backends finished and agree on outputs, cycles and traces."""
    return all(r.error is None and r.result is not None for r in report.runs.values()) \
        and bool(report.ok)


def _program_frontend(cfg: RunConfig) -> tuple[Any, dict[str, Any], np.ndarray]:
    """The program, its bound tensors and the gold output: a bundled model's eager torch
    output, or an MLIR file's numpy oracle (tensors generated from the seed)."""
    w = cfg.workload
    if w.mlir is not None:
        from compiler import evaluate, mlir_tensors, read_mlir

        mlir = read_mlir(w.mlir)
        binds = mlir_tensors(mlir, cfg.seed)
        return mlir.program, binds, evaluate(mlir.program, binds)[mlir.program.outputs[0]]
    import torch

    from compiler import from_torch, torch_inputs, torch_weights
    from compiler.models import MODELS

    model = MODELS[w.model].from_config(w.config, seed=cfg.seed).eval()
    example = model.example_inputs(seed=cfg.seed)
    program = from_torch(model, example, formats=model.sparse_formats)
    binds = {**torch_weights(model, program), **torch_inputs(program, example)}
    with torch.no_grad():
        want = model(*example)
    return program, binds, want.to_dense().numpy() if want.is_sparse else want.numpy()


def _model_run(cfg: RunConfig) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from compiler import compile_model, estimate, evaluate
    from compiler._blocks import seed_blocks
    from ir import Schedule

    from ._cli_model import SCHEDULES
    from ._lanes import lane_report
    from ._model_run import check_lanes_used, run_model

    w = cfg.workload
    program, binds, want_np = _program_frontend(cfg)
    t0 = time.perf_counter()
    schedule = SCHEDULES[cfg.schedule](program) if cfg.schedule in SCHEDULES else \
        Schedule.from_dict(json.loads(cfg.schedule))
    if cfg.par:
        # the schedule's lanes reach every region that sets none of its own; balanced
        # partitions measure the bound inputs and weights
        schedule = dataclasses.replace(schedule, par=dict(cfg.par), partition=cfg.partition,
                                       lane_buffer=cfg.lane_buffer)
    if cfg.block > 1:  # the model's sparse tensors seed the blocks
        schedule = dataclasses.replace(schedule, block=seed_blocks(program, cfg.block))
    if cfg.assoc != "as-written":  # the schedule's own; regions may still set theirs
        schedule = dataclasses.replace(schedule, assoc=cfg.assoc)
    priced = schedule.has_lanes or schedule.block or schedule.prices_assoc
    compiled = compile_model(program, schedule, depth=cfg.depth,
                             stats=binds if priced else None)
    compile_s = time.perf_counter() - t0
    check_lanes_used(compiled, dict(cfg.par), w.label)
    values = {**binds, **evaluate(compiled.program, binds)}  # re-associated: its own
    flops = nbytes = tokens = 0.0
    for reg in compiled.regions:
        for k in reg.kernels:
            est = estimate(k.graph, {t: values[k.source(t)] for t in k.inputs})
            flops, nbytes, tokens = flops + est.flops, nbytes + est.bytes, \
                tokens + sum(est.tokens.values())
    n_kernels = sum(len(reg.kernels) for reg in compiled.regions)
    need = predicted_seconds(tokens, n_kernels, cfg.backends)
    if cfg.budget is not None and need > cfg.budget:
        raise OverBudget(f"predicted {need:,.0f} s ({tokens:.3g} stream tokens) > budget "
                         f"{cfg.budget:g} s")
    rows, outs = [], []
    hw = cfg.hardware()
    for backend in cfg.backends:
        t0 = time.perf_counter()
        try:
            run = run_model(compiled, binds, backend=backend, hw=hw)
        except Exception as exc:  # noqa: BLE001 - a failed backend is a result row
            rows.append({"backend": backend, "order_used": None, "cycles": None,
                         "firings": None, "bytes_moved": None, "correct": None,
                         "error": _short(exc), "wall_seconds": time.perf_counter() - t0})
            outs.append(None)
            continue
        got = run.outputs[program.outputs[0]]
        outs.append((run.cycles, got))
        reports = [lane_report(k.graph, rr.results[k.target])
                   for reg, rr in zip(compiled.regions, run.regions, strict=True)
                   for k in reg.kernels]
        rows.append({**_work_columns(compiled, run, backend),
                     "backend": backend, "order_used": None, "cycles": run.cycles,
                     "firings": sum(r.firings for reg in run.regions
                                    for r in reg.results.values())
                     if _counted(backend) else None,
                     "bytes_moved": run.bytes_moved,
                     **_memory_columns(run.dram_read_bytes, run.dram_write_bytes,
                                       run.mem_requests, run.cycles, hw),
                     "correct": bool(np.allclose(got, want_np, rtol=1e-4, atol=1e-5)),
                     "imbalance": _imbalance(reports), "error": None,
                     "wall_seconds": time.perf_counter() - t0})
    agree = all(o is not None for o in outs) and all(
        o[0] == outs[0][0] and np.array_equal(o[1], outs[0][1]) for o in outs)
    # a kernel gets those of the parallel indices it outputs: the widest one's lanes
    lanes = max(_graph_lanes(k.graph) for reg in compiled.regions for k in reg.kernels)
    return rows, {"agree": agree, "compile_seconds": compile_s, "est_flops": flops,
                  "est_bytes": nbytes, "est_tokens": tokens, "lanes": lanes}


def _work_columns(compiled: Any, run: Any, backend: str) -> dict[str, Any]:
    """The simulator's work counts (FuseFlow's Fig. 14) and, per region, measured beside
    the heuristic (its Table 3), as ``samfuse model --json`` reports them; empty on a
    backend that counts work only from traces."""
    from ._backend import get_backend
    from ._model_json import model_json

    if not get_backend(backend).counts_work:
        return {}
    summary = model_json(compiled, run)
    return {"flops": summary["flops"], "mem_accesses": summary["mem_accesses"],
            "fuseflow_mem_accesses": summary["fuseflow_mem_accesses"],
            "est_cycles": sum(r["est_cycles"] for r in summary["regions"]),
            "regions_json": json.dumps(summary["regions"])}


def run_config(cfg: RunConfig) -> list[dict[str, Any]]:
    """Run one configuration on its backends: one result row per backend.

    Never raises for a failing run: compile errors, backend errors and wrong results are
    columns of the rows, so a study always finishes with a full table.
    """
    base = {"key": cfg.key(code_version()), **_config_columns(cfg)}
    from compiler import CompileError

    t0 = time.perf_counter()
    try:
        rows, shared = (_model_run if cfg.workload.is_program else _graph_run)(cfg)
    except Exception as exc:  # noqa: BLE001 - every failure is a row of the table
        # an order that does not lower is an expected outcome of an order sweep
        status = "compile-error" if isinstance(exc, CompileError) else \
            "skipped" if isinstance(exc, OverBudget) else "error"
        err = _short(exc)
        return [{**base, "backend": b, "status": status, "error": err, "agree": False,
                 "run_seconds": round(time.perf_counter() - t0, 4)} for b in cfg.backends]
    out = []
    for r in rows:
        status = "error" if r["error"] else "wrong" if r["correct"] is False else \
            "mismatch" if not shared["agree"] else "ok"
        out.append({**base, **r, **shared, "status": status,
                    "run_seconds": round(time.perf_counter() - t0, 4)})
    return out


def _config_columns(cfg: RunConfig) -> dict[str, Any]:
    w = cfg.workload
    return {"study": cfg.study, "workload": w.label, "kind": w.kind,
            "model": w.model or w.mlir, "config": w.config if w.model else None,
            "expr": w.expr,
            "kernel": w.kernel, "size": w.size if w.kernel else None,
            "density": None if w.is_program else w.density,
            "schedule": schedule_name(cfg.schedule),
            "schedule_spec": cfg.schedule if cfg.schedule.startswith("{") else None,
            "order": cfg.order, "depth": cfg.depth, "seed": cfg.seed, "dtype": cfg.dtype,
            "backends": ",".join(cfg.backends), "hw": hw_label(cfg.hw),
            "hw_set": hw_set_label(cfg.hw_set),
            "hw_spec": cfg.hw if cfg.hw.startswith("{") else None,
            "par": par_label(cfg.par), "lanes": cfg.lanes,
            "partition": cfg.partition if cfg.par else None,
            "lane_buffer": cfg.lane_buffer if cfg.par else None,
            "block": cfg.block, "assoc": cfg.assoc,
            **_hw_columns(cfg.hardware())}


def _hw_columns(hw: Hardware) -> dict[str, Any]:
    """The memory knobs a figure sweeps, as numbers (None on ideal memory)."""
    d = hw.dram
    on = hw.memory
    return {"dram_bytes_per_cycle": d.bytes_per_cycle if on else None,
            "dram_latency_cycles": d.latency_cycles if on else None,
            "dram_channels": d.channels if on else None,
            "peak_gbps": round(hw.peak_gbps(), 3) if on else None}


def _counted(backend: str) -> bool:
    """Whether ``backend`` counts firings (a row of one that does not has none)."""
    from ._backend import BACKENDS, get_backend

    if backend not in BACKENDS:
        get_backend(backend)  # registers the optional backends
    return BACKENDS[backend].counts_firings


def _short(exc: BaseException, n: int = 300) -> str:
    text = f"{type(exc).__name__}: {exc}".splitlines()[0]
    return text if len(text) <= n else text[: n - 1] + "…"


def estimate_run(cfg: RunConfig) -> float:
    """Seconds the run should take, from the heuristic's stream tokens (for the ETA).

    A graph is built and estimated here (milliseconds); a model's size is not known
    without exporting it, so its runs count as the mean of the study's others (NaN).
    """
    if cfg.workload.is_program:
        return math.nan
    from compiler import estimate

    try:
        graph, inputs, _ = (_kernel_graph if cfg.workload.kernel else _expr_graph)(cfg)
    except Exception:  # noqa: BLE001 - the run itself will report it
        return 0.0
    tokens = sum(estimate(graph, inputs).tokens.values())
    return predicted_seconds(tokens, 1, cfg.backends)


# -- the study -------------------------------------------------------------------------

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


def _json_default(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"not JSON-serialisable: {type(x).__name__}")


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
    digest = hashlib.sha256(json.dumps(rows, sort_keys=True, default=_json_default)
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


def _local_pool(workers: int) -> Callable[[list[RunConfig]], Iterator[tuple[RunConfig, Any]]]:
    def run(todo: list[RunConfig]) -> Iterator[tuple[RunConfig, Any]]:
        # forkserver, not fork: a process that has used torch (its thread pools) can hang
        # a forked worker; the server starts clean and forks workers from there
        import multiprocessing

        ctx = multiprocessing.get_context("forkserver")
        pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx)
        try:
            futures = {pool.submit(run_config, c): c for c in todo}
            for fut in cf.as_completed(futures):
                yield futures[fut], fut
        except BaseException:  # interrupted (Ctrl-C, SIGTERM): stop, do not drain the queue
            workers_now = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for proc in workers_now:
                proc.terminate()
            for proc in workers_now:
                proc.join(timeout=5)
            raise
        pool.shutdown()
    return run


def _serial(todo: list[RunConfig]) -> Iterator[tuple[RunConfig, Any]]:
    """One worker is this process: no pool to fork (safe after torch started threads)."""
    for cfg in todo:
        fut: cf.Future = cf.Future()
        try:
            fut.set_result(run_config(cfg))
        except Exception as exc:  # noqa: BLE001 - reported like a crashed worker
            fut.set_exception(exc)
        yield cfg, fut


def _dask(address: str, workers: int) -> Callable[[list[RunConfig]],
                                                   Iterator[tuple[RunConfig, Any]]]:
    def run(todo: list[RunConfig]) -> Iterator[tuple[RunConfig, Any]]:
        import dask
        from distributed import Client, LocalCluster, as_completed

        cluster = None
        if address == "local":
            # non-daemonic workers: the SystemC backend runs each simulation in a forked
            # child, which a daemonic process may not have (docs/studies.md, "Executors")
            with dask.config.set({"distributed.worker.daemon": False}):
                cluster = LocalCluster(n_workers=workers, threads_per_worker=1,
                                       dashboard_address=None)
        try:
            with Client(cluster if cluster is not None else address) as client:
                futures = {client.submit(run_config, c, pure=False): c for c in todo}
                for fut in as_completed(futures):
                    yield futures[fut], fut
        finally:
            if cluster is not None:
                cluster.close()
    return run


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
        rows = _cached_rows(cache / f"{c.key(version)}.json", c, version)
        if rows is not None:
            rows_of[c] = rows
        else:
            todo.append(c)
    check_models({c.workload: None for c in todo})
    bar = _Progress(label, todo, len(rows_of), enabled=progress, workers=workers)
    try:
        if todo:
            runner = _dask(dask, workers) if dask else \
                _local_pool(workers) if workers > 1 else _serial
            for cfg, fut in runner(todo):
                try:
                    rows = fut.result()
                except Exception as exc:  # noqa: BLE001 - a crashed worker is a result too
                    rows = [{"key": cfg.key(version), **_config_columns(cfg), "backend": b,
                             "status": "error", "error": _short(exc), "agree": False}
                            for b in cfg.backends]
                write_atomic(cache / f"{cfg.key(version)}.json",
                             json.dumps(rows, indent=1, default=_json_default))
                rows_of[cfg] = json.loads(json.dumps(rows, default=_json_default))
                bar.tick(cfg, rows)
                if on_done is not None:
                    on_done(cfg, rows_of[cfg])
    finally:
        bar.close()
    return rows_of, len(todo)


def _cached_rows(path: Path, cfg: RunConfig, version: str) -> list[dict[str, Any]] | None:
    """The rows cached for ``cfg``, or None to run it: no entry, or one that is damaged
    (truncated, emptied, edited: not one row per backend with this run's key and a
    status), which is run again rather than dropped from the table or crashing it."""
    if not path.exists():
        return None
    try:
        rows = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        rows = None
    key = cfg.key(version)
    if not isinstance(rows, list) or not all(
            isinstance(r, dict) and r.get("key") == key and isinstance(r.get("status"), str)
            for r in rows) or {r.get("backend") for r in rows} != set(cfg.backends):
        print(f"samfuse: cache entry {path} is damaged; running it again", file=sys.stderr)
        return None
    return rows


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
    on stderr (``cosim._progress``: redrawn every second on a terminal, a line every 30 s
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
