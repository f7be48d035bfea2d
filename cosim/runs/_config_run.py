"""One run: a configuration's graph or model compiled, run on each of its backends, checked
against numpy or torch, and flattened into one result row per backend.

Everything here decides a run's result, so it lives under ``cosim/runs`` and is part of
the cache key (:func:`code_version`); the study machinery only schedules these runs.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ir import Hardware

from ._config import (
    RunConfig,
    Workload,
    code_version,
    graph_dataset,
    hw_set_label,
    par_label,
    schedule_name,
)
from ._hw_spec import hw_label

__all__ = ["run_config", "config_columns", "estimate_run", "predicted_seconds", "OverBudget",
           "short_error", "random_inputs", "compile_config"]

#: simulated stream tokens per second, for the ETA (measured with scripts/bench_sim.py)
_TOKEN_RATE = {"python": 5e5, "systemc": 5e6, "rtl": 2e5, "hls-csim": 2e6}
#: fixed cost of one kernel on a backend (compile, process start), seconds
_KERNEL_COST = {"python": 0.01, "systemc": 0.5, "rtl": 5.0, "hls-csim": 3.0}


def random_inputs(w: Workload, graph_inputs: dict[str, tuple[int, ...]], seed: int,
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
    inputs = random_inputs(w, ins, cfg.seed, cfg.dtype)
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

    from ..backends._compare import compare_backends
    from ._lanes import lane_report
    from ._model_run import storage_bytes

    t0 = time.perf_counter()
    graph, inputs, gold = (_kernel_graph if cfg.workload.kernel else _expr_graph)(cfg)
    if cfg.buffer != "none":  # docs/timing.md, "On-chip buffers"
        from compiler import buffer_graph, parse_buffer

        graph = buffer_graph(graph, cfg.hardware(), parse_buffer(cfg.buffer, "buffer"),
                             inputs)
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
                     "error": None if run.error is None else short_error(run.error),
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


def _program_frontend(cfg: RunConfig, gold: bool = True
                      ) -> tuple[Any, dict[str, Any], dict[str, np.ndarray]]:
    """The program, its bound tensors and the gold outputs by name: a bundled model's eager
    torch output, or an MLIR file's numpy oracle of every result (tensors generated from
    the seed); no gold (``{}``) unless ``gold`` (a prediction: OGB-MAG's GCN output is
    1 GB)."""
    w = cfg.workload
    if w.mlir is not None:
        from compiler import evaluate, mlir_tensors, read_mlir

        mlir = read_mlir(w.mlir)
        binds = mlir_tensors(mlir, cfg.seed)
        if not gold:
            return mlir.program, binds, {}
        values = evaluate(mlir.program, binds)
        return mlir.program, binds, {name: values[name] for name in mlir.program.outputs}
    from ._model_run import bundled_model

    program, binds, want, _ = bundled_model(w.model, w.config, cfg.seed, gold=gold)
    return program, binds, want


def compile_config(cfg: RunConfig, program: Any, binds: Mapping[str, Any]) -> Any:
    """The workload's program compiled as a run of ``cfg`` compiles it: its schedule
    (named, or given as JSON) with the run's lanes, blocks and association, priced on
    the run's data and memory system (``compile_for_run``), with the run's on-chip
    buffers. A run and a prediction of it (``scripts/fuseflow_eval.py --predict``)
    compile the same graphs."""
    from compiler import NAMED_SCHEDULES, buffer_model, parse_buffer
    from compiler._blocks import seed_blocks
    from ir import Schedule

    from ._model_run import compile_for_run

    schedule = NAMED_SCHEDULES[cfg.schedule](program) \
        if cfg.schedule in NAMED_SCHEDULES else Schedule.from_dict(json.loads(cfg.schedule))
    if cfg.par:
        # the schedule's lanes reach every region that sets none of its own; balanced
        # partitions measure the bound inputs and weights
        schedule = dataclasses.replace(schedule, par=dict(cfg.par), partition=cfg.partition,
                                       lane_buffer=cfg.lane_buffer)
    if cfg.block > 1:  # the model's sparse tensors seed the blocks
        schedule = dataclasses.replace(schedule, block=seed_blocks(program, cfg.block))
    if cfg.assoc != "as-written":  # the schedule's own; regions may still set theirs
        schedule = dataclasses.replace(schedule, assoc=cfg.assoc)
    hw = cfg.hardware()
    buffer = parse_buffer(cfg.buffer, "buffer")
    compiled = compile_for_run(program, schedule, hw, buffer, binds, depth=cfg.depth)
    if cfg.buffer != "none" or schedule.buffer is not None or \
            any(r.buffer is not None for r in schedule.regions):
        compiled = buffer_model(compiled, hw, buffer, binds)
    return compiled


def _model_run(cfg: RunConfig) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from compiler import estimate

    from ._lanes import lane_report
    from ._model_run import check_lanes_used, compare_outputs, kernel_values, run_model

    w = cfg.workload
    program, binds, gold = _program_frontend(cfg)
    t0 = time.perf_counter()
    compiled = compile_config(cfg, program, binds)
    compile_s = time.perf_counter() - t0
    check_lanes_used(compiled, dict(cfg.par), w.label)
    values = kernel_values(compiled, binds)  # re-associated: its own
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
                         "error": short_error(exc), "wall_seconds": time.perf_counter() - t0})
            outs.append(None)
            continue
        got = run.outputs[program.outputs[0]]
        outs.append((run.cycles, got))
        correct = compare_outputs(run.outputs, gold)[1]
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
                     "correct": correct,
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
    from ..backends._backend import get_backend
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
    base = {"key": cfg.key(code_version()), **config_columns(cfg)}
    from compiler import CompileError

    t0 = time.perf_counter()
    try:
        rows, shared = (_model_run if cfg.workload.is_program else _graph_run)(cfg)
    except Exception as exc:  # noqa: BLE001 - every failure is a row of the table
        # an order that does not lower is an expected outcome of an order sweep
        status = "compile-error" if isinstance(exc, CompileError) else \
            "skipped" if isinstance(exc, OverBudget) else "error"
        err = short_error(exc)
        return [{**base, "backend": b, "status": status, "error": err, "agree": False,
                 "run_seconds": round(time.perf_counter() - t0, 4)} for b in cfg.backends]
    out = []
    for r in rows:
        status = "error" if r["error"] else "wrong" if r["correct"] is False else \
            "mismatch" if not shared["agree"] else "ok"
        out.append({**base, **r, **shared, "status": status,
                    "run_seconds": round(time.perf_counter() - t0, 4)})
    return out


def config_columns(cfg: RunConfig) -> dict[str, Any]:
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
            "block": cfg.block, "assoc": cfg.assoc, "buffer": cfg.buffer,
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
    from ..backends._backend import BACKENDS, get_backend

    if backend not in BACKENDS:
        get_backend(backend)  # registers the optional backends
    return BACKENDS[backend].counts_firings


def short_error(exc: BaseException, n: int = 300) -> str:
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


