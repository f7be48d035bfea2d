"""Wall time of the bundled studies: local process pool against a Dask LocalCluster,
and a re-run read back from the cache; the two executors' rows must be identical (up to
the timing columns).

    python scripts/bench_studies.py [--workers 2] [--studies smoke,lanes,...]

Prints one Markdown table row per study as it finishes.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from cosim import bundled_studies, load_study, run_study  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
STUDIES = ("smoke", "lanes", "latency", "fifo-depth", "bandwidth", "fig18-orders",
           "fig12-fusion", "blocks")
#: columns that measure the machine running the study, not the simulated one
TIMING = ("wall_seconds", "run_seconds", "compile_seconds", "key")


def _timed(spec, out: Path, **kw) -> tuple[float, object]:
    t0 = time.perf_counter()
    result = run_study(spec, out, progress=False, **kw)
    return time.perf_counter() - t0, result


def _rows(result) -> list[tuple]:
    frame = result.frame()
    frame = frame.drop(columns=[c for c in TIMING if c in frame.columns])
    return sorted(tuple(map(str, r)) for r in frame.itertuples(index=False))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--studies", default=",".join(STUDIES))
    args = ap.parse_args()
    print("| study | runs | local pool s | Dask LocalCluster s | cached re-run s | rows equal |")
    print("|---|---:|---:|---:|---:|---|")
    for name in args.studies.split(","):
        spec = load_study(bundled_studies()[name])
        with tempfile.TemporaryDirectory() as tmp:
            local_s, local = _timed(spec, Path(tmp) / "local", workers=args.workers)
            cached_s, _ = _timed(spec, Path(tmp) / "local", workers=args.workers)
            dask_s, dask = _timed(spec, Path(tmp) / "dask", workers=args.workers,
                                  dask="local")
        same = _rows(local) == _rows(dask)
        print(f"| {name} | {len(spec.expand())} | {local_s:.1f} | {dask_s:.1f} | "
              f"{cached_s:.1f} | {'yes' if same else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
