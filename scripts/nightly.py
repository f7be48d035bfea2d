#!/usr/bin/env python
"""Nightly co-simulation regression: every example kernel, at two sizes and densities,
FIFO depths 2 and 4, float32 and int32, on every backend available here; then every
bundled model (tiny size, sparse storage) under unfused and per-layer fusion on the
timed backends, every kernel's graph compared across backends and the output against
eager PyTorch. Writes ``results.json`` and ``report.md``; exits non-zero on any
disagreement.

    .venv/bin/python scripts/nightly.py [--out nightly/] [--backends python,systemc,...]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

from cosim import backend_names
from cosim._backend import BACKENDS
from cosim._sweep import SWEEP_KERNELS, Job, run_sweep


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="nightly")
    ap.add_argument("--backends", default="")
    ap.add_argument("--sizes", default="6,24")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-models", action="store_true", help="skip the model section")
    args = ap.parse_args()
    names = args.backends.split(",") if args.backends else [
        n for n in ["python", "systemc", "hls-csim", "rtl"]
        if n in backend_names() and not BACKENDS[n].unavailable()]
    jobs = [Job(k, size, dens, depth, dtype, seed=7, backends=tuple(names))
            for k, size, dens, depth, dtype in itertools.product(
                SWEEP_KERNELS, [int(s) for s in args.sizes.split(",")], [0.1, 0.5], [2, 4],
                ["float32", "int32"])]
    out = Path(args.out)
    results = run_sweep(jobs, out / "cache", max_workers=args.workers)
    lines = [f"# samfuse nightly: {len(results)} runs on {', '.join(names)}", "",
             "| kernel | size | density | depth | dtype | ok | cycles |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        j = r["job"]
        cyc = ", ".join(f"{b}={c}" for b, c in (r.get("cycles") or {}).items())
        lines.append(f"| {j['kernel']} | {j['size']} | {j['density']} | {j['depth']} | "
                     f"{j['dtype']} | {'yes' if r['ok'] else '**NO**'} | {cyc} |")
    bad = [r for r in results if not r["ok"]]
    for r in bad:
        lines += ["", f"## {r['job']['kernel']} {r['key']}", "```",
                  json.dumps({k: r.get(k) for k in ("errors", "mismatches", "outputs_agree")},
                             indent=1), "```"]
    model_rows = [] if args.no_models else model_regression(names)
    if model_rows:
        lines += ["", "## Models (tiny, sparse storage)", "",
                  "| model | schedule | kernels | ok | cycles |", "|---|---|---|---|---|"]
        lines += [f"| {r['model']} | {r['schedule']} | {r['kernels']} | "
                  f"{'yes' if r['ok'] else '**NO** ' + r['why']} | {r['cycles']} |"
                  for r in model_rows]
    (out / "results.json").write_text(json.dumps({"kernels": results, "models": model_rows},
                                                 indent=1))
    (out / "report.md").write_text("\n".join(lines) + "\n")
    bad_models = [r for r in model_rows if not r["ok"]]
    print(f"{len(results) - len(bad)}/{len(results)} kernel runs agree, "
          f"{len(model_rows) - len(bad_models)}/{len(model_rows)} model runs agree; "
          f"report in {out / 'report.md'}")
    return 1 if bad or bad_models else 0


def model_regression(backends: list[str]) -> list[dict]:
    """Each model under unfused and per-layer fusion: every kernel agrees across
    ``backends`` (outputs, cycles, traces) and the model's output equals eager torch."""
    import numpy as np
    import torch

    from compiler import compile_model, from_torch, torch_inputs, torch_weights
    from compiler.models import MODELS
    from cosim import compare_backends, run_model
    from ir import Schedule

    rows = []
    for name, cls in MODELS.items():
        model = cls.from_config("tiny").eval()
        args = model.example_inputs()
        program = from_torch(model, args, formats=model.sparse_formats)
        tensors = {**torch_weights(model, program), **torch_inputs(program, args)}
        with torch.no_grad():
            gold = model(*args).numpy()
        for sched in (Schedule.unfused, Schedule.by_scope):
            compiled = compile_model(program, sched(program))
            run = run_model(compiled, tensors)  # python: memory between kernels
            why = "" if np.allclose(run.outputs[program.outputs[0]], gold, rtol=1e-5,
                                    atol=1e-6) else "output differs from eager torch"
            kernels = [(reg, k) for reg in compiled.regions for k in reg.kernels]
            for reg, k in kernels:
                inputs = {t: run.memory[t] for t in k.inputs}
                rep = compare_backends(k.graph, inputs, backends)
                if not rep.ok and not why:
                    why = f"{reg.name}/{k.target} disagrees across {', '.join(backends)}"
            rows.append({"model": name, "schedule": sched.__name__, "kernels": len(kernels),
                         "ok": not why, "why": why, "cycles": run.cycles})
    return rows


if __name__ == "__main__":
    sys.exit(main())
