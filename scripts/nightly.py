#!/usr/bin/env python
"""Nightly co-simulation regression: a bundled study on every backend, checked against
the stored baselines, the numpy/torch references and across backends.

    .venv/bin/python scripts/nightly.py [--quick] [--out nightly/] [--update-baselines]

``--quick`` (cosim/studies/bundled/nightly-quick.yaml, ≤ 5 minutes on 2 cores) covers every
backend and every bundled model; the full run (cosim/studies/bundled/nightly.yaml) sweeps every
example kernel over
sizes, densities, FIFO depths and dtypes on all four backends, and every model under
unfused and per-layer fusion. Writes ``junit.xml`` and ``report.html`` into ``--out``;
exits 1 when any run fails (disagreement, wrong result, error, or a cycle or byte count
that moved beyond ``--tolerance`` since the baselines were stored).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this clone's packages, not another installed copy

from cosim import bundled_studies, run_nightly  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the ≤ 5 minute version")
    ap.add_argument("--study", type=Path, help="another study file (default: bundled)")
    ap.add_argument("--baselines", type=Path, help="baseline JSON (default: "
                    "baselines/<study name>.json)")
    ap.add_argument("--out", type=Path, default=Path("nightly"))
    ap.add_argument("--update-baselines", action="store_true",
                    help="accept this run's cycles and bytes as the new baselines")
    ap.add_argument("--tolerance", type=float, default=0.0,
                    help="relative change of cycles/bytes reported as a failure (default "
                    "0: the backends are cycle-exact, so any change is shown)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--dask", metavar="local|ADDRESS")
    args = ap.parse_args(argv)
    name = "nightly-quick" if args.quick else "nightly"
    study = args.study or bundled_studies()[name]
    baselines = args.baselines or ROOT / "baselines" / f"{study.stem}.json"
    res = run_nightly(study, args.out, baselines, update=args.update_baselines,
                      tolerance=args.tolerance, workers=args.workers, dask=args.dask)
    for run, why in list(res.failures.items())[:20]:
        print(f"FAIL {run}: {why}")
    print(f"{len(res.rows) - len(res.failures)}/{len(res.rows)} runs pass, "
          f"{len(res.changes)} change(s) since the baselines, {len(res.new)} new; "
          f"{res.seconds:.0f} s; reports: {', '.join(str(p) for p in res.reports)}"
          + (f"; baselines rewritten: {baselines}" if args.update_baselines else ""))
    return 0 if res.ok else 1


if __name__ == "__main__":
    sys.exit(main())
