#!/usr/bin/env python
"""Nightly co-simulation regression: every example kernel, at two sizes and densities,
FIFO depths 2 and 4, float32 and int32, on every backend available here; writes
``results.json`` and ``report.md`` and exits non-zero on any disagreement.

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
    (out / "results.json").write_text(json.dumps(results, indent=1))
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
    (out / "report.md").write_text("\n".join(lines) + "\n")
    print(f"{len(results) - len(bad)}/{len(results)} runs agree; report in {out / 'report.md'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
