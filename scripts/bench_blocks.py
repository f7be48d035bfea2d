"""Block sparsity at FuseFlow's evaluation size: BigBird attention (sequence 1,024,
d_model 768, 16x16 mask blocks) with block values against scalar values, per fusion
schedule and hardware: cycles, DRAM bytes, firings, wall time (docs/blocks.md).

    python scripts/bench_blocks.py --backend systemc --what core --blocks 1,16
    python scripts/bench_blocks.py --backend systemc --what model --seeds all --blocks 16

``--what core`` runs the attention core (an SDDMM, exp, row sum, normalisation and the
SpMM with V, as ``scripts/bench_models.py``'s ``attn_core``) whose blocks the mask seeds
(i and j blocked, d scalar); ``--what model`` runs the whole BigBirdAttention module,
its blocks seeded by the mask (``--seeds sparse``) or by every tensor (``--seeds all``:
the projections become 16x16 block products too). Each line is one JSON object; every
output is checked against the numpy oracle.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from compiler import (  # noqa: E402
    compile_model,
    evaluate,
    from_torch,
    models,
    torch_inputs,
    torch_weights,
)
from compiler._blocks import seed_blocks  # noqa: E402
from cosim import run_model  # noqa: E402
from ir import Schedule  # noqa: E402

SCHEDULES = {"unfused": Schedule.unfused, "partial": Schedule.by_scope,
             "full": Schedule.fused}


def model(config: str, seed: int = 0):
    m = models.BigBirdAttention(**models.BigBirdAttention.default_config[config])
    prog = from_torch(m, m.example_inputs(seed), formats={"mask": "csr"})
    return prog, {**torch_weights(m, prog), **torch_inputs(prog, m.example_inputs(seed))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="systemc")
    ap.add_argument("--what", choices=("core", "model"), default="core")
    ap.add_argument("--config", default="bigbird16", help="BigBirdAttention config")
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--d", type=int, default=768)
    ap.add_argument("--blocks", default="1,16")
    ap.add_argument("--seeds", choices=("sparse", "all"), default="sparse")
    ap.add_argument("--schedules", default="unfused,partial,full")
    ap.add_argument("--hw", default="ideal,hbm2-u280")
    args = ap.parse_args()
    prog, binds = models.attention_core(args.seq, args.d, 16, n_random=3, n_global=2) \
        if args.what == "core" else model(args.config)
    gold = evaluate(prog, binds)
    out = prog.outputs[0]
    for b in map(int, args.blocks.split(",")):
        for sname in args.schedules.split(","):
            sched = SCHEDULES[sname](prog)
            sched.block = seed_blocks(prog, b, args.seeds)
            t0 = time.perf_counter()
            cm = compile_model(prog, sched, stats=binds)
            compile_s = time.perf_counter() - t0
            for hw in args.hw.split(","):
                t0 = time.perf_counter()
                run = run_model(cm, binds, backend=args.backend, hw=hw)
                wall = time.perf_counter() - t0
                ok = bool(np.allclose(run.outputs[out], gold[out], rtol=1e-3, atol=1e-4))
                print(json.dumps({
                    "what": args.what, "block": b, "seeds": args.seeds if b > 1 else None,
                    "schedule": sname, "hw": hw, "backend": args.backend,
                    "cycles": run.cycles,
                    "dram_bytes": sum(r.dram_read_bytes + r.dram_write_bytes
                                      for r in run.regions),
                    "firings": sum(r.firings for rr in run.regions
                                   for r in rr.results.values()),
                    "correct": ok, "compile_s": round(compile_s, 2),
                    "wall_s": round(wall, 1)}), flush=True)


if __name__ == "__main__":
    main()
