"""``samfuse study`` and ``samfuse plot``: declarative what-if studies and their figures."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..runs._files import path_arg
from ._args import check_workers

__all__ = ["add_study_parsers"]


def add_study_parsers(sub: argparse._SubParsersAction, error: type[Exception]) -> None:
    """Register ``study`` and ``plot``; ``error`` is the CLI's user-error class."""
    s = sub.add_parser("study", help="run a declarative what-if study (YAML; "
                       "see docs/studies.md)")
    s.add_argument("study", help="a study YAML file, or a bundled study by name: "
                   "smoke, fig12-fusion, fig18-orders, fifo-depth, bandwidth, latency, "
                   "lanes, blocks, nightly-quick, nightly (docs/studies.md)")
    s.add_argument("--out", metavar="DIR", type=path_arg,
                   help="results folder (default studies/out/NAME); "
                   "finished runs are cached there and not run again")
    s.add_argument("--workers", type=int, default=2, help="parallel runs (default 2)")
    s.add_argument("--dask", metavar="local|ADDRESS", help="run on Dask: 'local' starts a "
                   "LocalCluster of --workers processes, tcp://HOST:PORT joins a scheduler")
    s.add_argument("--csv", action="store_true", help="also write results.csv")
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.set_defaults(func=lambda args: cmd_study(args, error))

    p = sub.add_parser("plot", help="draw a figure from a study's results")
    p.add_argument("results", help="results.parquet/.csv or a study's output folder")
    p.add_argument("--kind", required=True, help="speedup, fig12 (FuseFlow's Fig. 12 "
                   "side by side, a panel per hardware), orders, heuristic, depth, "
                   "bandwidth, latency, lanes, block")
    p.add_argument("-o", "--output", metavar="FILE", type=path_arg,
                   help="figure file (.png/.pdf/.svg; "
                   "no suffix: both PNG and PDF); default <results folder>/<kind>")
    p.set_defaults(func=lambda args: cmd_plot(args, error))


def cmd_study(args: argparse.Namespace, error: type[Exception]) -> int:
    from ..runs._files import OutputPathError, writable_dir
    from ..studies._runner import run_study
    from ..studies._spec import StudyError, load_study, study_path

    check_workers(args.workers, error)
    try:
        path = study_path(args.study)
        spec = load_study(path, models=False)  # run_study checks the models it runs
    except StudyError as exc:
        raise error(f"{args.study}: {exc}") from None
    try:
        out = writable_dir(args.out or Path("studies") / "out" / spec.name, "--out")
    except OutputPathError as exc:
        raise error(str(exc)) from None
    try:
        result = run_study(spec, out, workers=args.workers, dask=args.dask, csv=args.csv,
                           progress=not args.quiet)
    except StudyError as exc:
        raise error(f"{args.study}: {exc}") from None
    failed = result.failed
    print(f"study {spec.name}: {len(result.rows)} rows from {result.ran + result.cached} "
          f"runs ({result.ran} run, {result.cached} from the cache) in "
          f"{result.seconds:.1f} s -> {out / 'results.parquet'}")
    skipped = {(r["workload"], r["schedule"], r["hw"]) for r in result.skipped}
    if skipped:
        print(f"  {len(skipped)} run(s) skipped: predicted over the study's budget of "
              f"{spec.budget:g} s (status skipped; the 'error' column gives the prediction)")
    unlowered = {(r["workload"], r["order"]) for r in failed if r["status"] == "compile-error"}
    if unlowered:
        print(f"  {len(unlowered)} configuration(s) did not compile (status compile-error; "
              "the table's 'error' column says why)")
    failed = [r for r in failed if r["status"] != "compile-error"]
    for row in failed[:10]:
        why = row.get("error") or ("backends disagree" if row["status"] == "mismatch"
                                   else "result differs from the numpy/torch reference")
        print(f"  {row['status']}: {row['workload']} schedule={row['schedule']} "
              f"order={row['order']} depth={row['depth']} backend={row['backend']}: {why}")
    if len(failed) > 10:
        print(f"  ... and {len(failed) - 10} more (see the table's 'status' column)")
    # an order that does not lower is a finding of the study; anything else is a failure
    return 1 if failed else 0


def cmd_plot(args: argparse.Namespace, error: type[Exception]) -> int:
    from ..runs._files import OutputPathError, writable_dir
    from ..studies._plot import PlotError, plot

    results = Path(args.results)
    folder = results if results.is_dir() else results.parent
    out = Path(args.output) if args.output else folder / args.kind
    if out.is_dir():  # -o FOLDER: the figure goes inside it, named after its kind
        out = out / args.kind
    elif not out.suffix and out.exists():  # -o /dev/null would write /dev/null.png
        raise error(f"-o {str(out)!r} is an existing file without a suffix; give a figure "
                    "file (.png, .pdf, .svg), a new name without suffix (PNG and PDF) or a "
                    "folder")
    try:
        writable_dir(out.parent, "-o")
    except OutputPathError as exc:
        raise error(str(exc)) from None
    try:
        written = plot(results, args.kind, out)
    except PlotError as exc:
        raise error(str(exc)) from None
    for w in written:
        print(f"wrote {w}")
    return 0
