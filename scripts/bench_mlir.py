#!/usr/bin/env python
"""Compile time of the MLIR path for every bundled model (target: < 750 ms each), and
whether it computes what the torch.export path computes.

Each model, at its evaluation size (``bench_models.COMPILE_CONFIGS``), is written as
linalg-on-tensors MLIR by torch-mlir's FX importer (``compiler.torch_to_mlir``; not
timed: the file is the MLIR path's input). Timed, best of ``--repeat`` in a warm
process: ``compiler.read_mlir`` (parse with the MLIR bindings + translation to an einsum
program) and ``compiler.compile_model`` of that program under each schedule; "total" is
their sum, in wall and in CPU time (this process's and its children's: ``read_mlir``
parses in a forked child first; the wall time on a machine shared with other jobs
overstates it; the target applies to CPU time). The torch.export program's
``compile_model`` time under the same schedule is shown beside it (same process, same
load). ``--elide`` reads files whose weights are elided (``dense_resource`` without a
blob), as large models are shared. The check evaluates both programs with the numpy
oracle on the same tensors and reports the largest difference. Exits 1 if a model
misses the target or the outputs differ.

    .venv/bin/python scripts/bench_mlir.py
    .venv/bin/python scripts/bench_mlir.py --models gcn --configs gcn=tiny --schedules unfused
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # bench_models
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import _bench_workloads as bm  # noqa: E402

from compiler import (  # noqa: E402
    compile_model,
    evaluate,
    mlir_tensors,
    read_mlir,
    to_array,
    torch_inputs,
    torch_to_mlir,
    torch_weights,
)


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (``read_mlir`` parses
    each file once in a forked child first)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _best(fn, repeat: int) -> tuple[float, float, object]:
    """Best wall and best CPU milliseconds of ``repeat`` calls, and the last result."""
    wall = cpu = float("inf")
    out = None
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), _cpu()
        out = fn()
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, _cpu() - c0)
    return wall * 1e3, cpu * 1e3, out


def bench(name: str, config: str, schedules: list[str], repeat: int, elide: bool,
          target_ms: float) -> bool:
    w = bm.named_workload(name, config)
    formats = dict(w.formats or {})
    exported = torch_to_mlir(w.module, w.args, elide=elide, lift=list(formats))
    read_ms, read_cpu, model = _best(lambda: read_mlir(exported.text, formats=formats),
                                     repeat)
    program = model.program
    ref, _ = bm.frontend(w)
    given = {n: to_array(a) for n, a in zip(exported.names, exported.args, strict=True)}
    if elide:  # same weights on both sides: bind the MLIR constants from the torch ones
        diff = "n/a (elided)"
    else:
        got = evaluate(program, mlir_tensors(model, given=given))[program.outputs[0]]
        want = evaluate(ref, {**torch_weights(w.module, ref),
                              **torch_inputs(ref, w.args)})[ref.outputs[0]]
        diff = f"{float(np.max(np.abs(got - want))):.2g}"
    ok = diff == "n/a (elided)" or float(diff) <= 1e-4
    for sname in schedules:
        schedule = bm.SCHEDULES[sname](program)
        compile_ms, compile_cpu, cm = _best(lambda s=schedule: compile_model(program, s),
                                            repeat)
        ref_schedule = bm.SCHEDULES[sname](ref)
        ref_ms, ref_cpu, _ = _best(lambda s=ref_schedule: compile_model(ref, s), repeat)
        kernels = sum(len(r.kernels) for r in cm.regions)
        total, total_cpu = read_ms + compile_ms, read_cpu + compile_cpu
        ok = ok and total_cpu < target_ms
        print(f"| {name} | {config} | {len(exported.text) // 1024} | "
              f"{len(program.statements)} ({len(ref.statements)}) | {read_ms:.0f} "
              f"({read_cpu:.0f}) | {sname} | {len(cm.regions)}/{kernels} | {compile_ms:.0f} "
              f"({compile_cpu:.0f}) | {total:.0f} ({total_cpu:.0f}) | {ref_ms:.0f} "
              f"({ref_cpu:.0f}) | {'yes' if total_cpu < target_ms else 'NO'} | {diff} |",
              flush=True)
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="gcn,graphsage,autoencoder,bigbird,gpt")
    ap.add_argument("--configs", default="", help="NAME=CONFIG,... (default: evaluation "
                    "sizes)")
    ap.add_argument("--schedules", default="unfused,full",
                    help="an MLIR program has no layer scopes: partial is one region (full)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--elide", action="store_true", help="files without weight values")
    ap.add_argument("--target-ms", type=float, default=750.0)
    args = ap.parse_args()
    warnings.filterwarnings("ignore", message=".*[Ss]parse CSR tensor support is in beta")
    configs = dict(bm.COMPILE_CONFIGS)
    configs.update(dict(p.split("=", 1) for p in args.configs.split(",") if p))
    print("| model | config | file KiB | statements (torch.export) | read ms (cpu) | schedule "
          "| regions/kernels | compile ms (cpu) | total ms (cpu) | torch.export program's "
          "compile ms (cpu) | < target (cpu) | max diff |")
    print("|---|---|---:|---|---:|---|---|---:|---:|---:|---|---|")
    ok = True
    for name in [m for m in args.models.split(",") if m]:
        ok = bench(name, configs[name], args.schedules.split(","), args.repeat, args.elide,
                   args.target_ms) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
