"""``samfuse tune``: the autoscheduler on the command line (docs/tune.md)."""

from __future__ import annotations

import argparse
import math

from ..runs._files import path_arg
from ._args import check_workers
from ._model import seed_arg

__all__ = ["add_tune_parser"]


def add_tune_parser(sub: argparse._SubParsersAction, error: type[Exception]) -> None:
    """Register ``tune``; ``error`` is the CLI's user-error class."""
    t = sub.add_parser("tune", help="search fusion, dataflow orders and knobs of a model by "
                       "Bayesian optimisation (docs/tune.md)")
    t.add_argument("target", metavar="MODEL|STUDY.yaml",
                   help="a bundled model (gcn, graphsage, autoencoder, bigbird, gpt) or a "
                   "study file with one model workload")
    t.add_argument("--config", default="small", help="model size (default small)")
    t.add_argument("--budget", type=int, default=30, help="evaluations (default 30)")
    t.add_argument("--objective", default="cycles",
                   help="cycles, bytes_moved, dram_bytes or seconds (default cycles)")
    t.add_argument("--out", metavar="DIR", type=path_arg,
                   help="results folder (default tune/out/TARGET); evaluations are cached "
                   "there, so a re-run resumes")
    t.add_argument("--seed", type=seed_arg, help="model and input seed (default 0)")
    t.add_argument("--tune-seed", type=seed_arg, default=0,
                   help="the search's seed (default 0)")
    t.add_argument("--units", default="scope", choices=("scope", "statement"),
                   help="fusion boundaries between module scopes (default) or statements")
    t.add_argument("--max-orders", type=int, default=4, metavar="N",
                   help="orders per region: the heuristic's N cheapest (default 4)")
    t.add_argument("--depth", metavar="D,D,…",
                   help="FIFO depths to search (default: the hardware's fifo.depth where it "
                   "sets one, e.g. inf on fuseflow; else 2)")
    t.add_argument("--hw", help="hardware preset or YAML file (default: the studies')")
    t.add_argument("--hw-set", action="append", default=[], metavar="KEY=VALUE",
                   help="fixed hardware override (repeatable)")
    t.add_argument("--hw-knob", action="append", default=[], metavar="KEY=V1,V2,…",
                   help="a hardware key to search over these values (repeatable), e.g. "
                   "onchip.bytes=4096,65536")
    t.add_argument("--lanes", metavar="N,N,…", default="1",
                   help="parallel lane counts to search, on every kernel's outermost output "
                   "index (default 1; docs/parallel.md)")
    t.add_argument("--partitions", metavar="P,P,…", default="round-robin",
                   help="lane partitions to search: round-robin, balanced, position "
                   "(default round-robin)")
    t.add_argument("--blocks", metavar="B,B,…", default="1",
                   help="block extents of the model's sparse tensors to search (default 1: "
                   "scalar values; docs/blocks.md)")
    t.add_argument("--block-tensors", choices=("sparse", "all"), default="sparse",
                   help="what a block size blocks: the model's sparse tensors and what they "
                   "meet (default), or every tensor the extent divides (dense projections "
                   "become block products)")
    t.add_argument("--assocs", metavar="A,A,…", default="as-written",
                   help="associations of the model's chains of products to search: "
                   "as-written, left, right (default as-written; docs/fusion.md)")
    t.add_argument("--buffers", metavar="B,B", default="none",
                   help="on-chip buffer choices to search: none, auto or none,auto "
                   "(default none; docs/timing.md, 'On-chip buffers')")
    t.add_argument("--batch", type=int, default=1, help="points per round (default 1)")
    t.add_argument("--workers", type=int, default=1, help="parallel runs (default 1)")
    t.add_argument("--dask", metavar="local|ADDRESS", help="evaluate on Dask")
    t.add_argument("--backend", help="backend of the evaluations (default python; auto: "
                   "SystemC for large graphs)")
    t.add_argument("--prune", type=float, default=100.0, metavar="F",
                   help="never evaluate a point the heuristic prices above F times the "
                   "space's cheapest (default 100; 0: off)")
    t.add_argument("--quiet", action="store_true",
                   help="no progress on stderr (phases, each evaluation, a status line)")
    t.add_argument("--no-hand", action="store_true",
                   help="leave FuseFlow's hand schedules out of the initial design")
    t.set_defaults(func=lambda args: cmd_tune(args, error))


def _pairs(items: list[str], option: str, error: type[Exception]) -> list[tuple[str, str]]:
    out = []
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise error(f"{option} {item!r}: expected KEY=VALUE")
        out.append((key.strip(), value.strip()))
    return out


def cmd_tune(args: argparse.Namespace, error: type[Exception]) -> int:
    from pathlib import Path

    from ..runs._files import OutputPathError, writable_dir
    from ..tuning._run import tune
    from ..tuning._space import TuneError

    for name in ("budget", "batch", "max_orders"):
        if getattr(args, name) < 1:
            raise error(f"--{name.replace('_', '-')} {getattr(args, name)}: expected >= 1")
    check_workers(args.workers, error)
    if not (args.prune == 0 or 1 <= args.prune < math.inf):
        raise error(f"--prune {args.prune:g}: expected 0 (off) or a factor >= 1 (a point "
                    "priced above F times the cheapest is skipped; below 1 would skip every "
                    "point, the hand schedules too)")
    try:
        depths = None if args.depth is None else tuple(
            None if d.strip().lower() in ("inf", "none", "null") else int(d)
            for d in args.depth.split(","))
    except ValueError:
        raise error(f"--depth {args.depth!r}: expected depths like 2,4 (inf: unbounded)"
                    ) from None
    knobs = {k: v.split(",") for k, v in _pairs(args.hw_knob, "--hw-knob", error)}
    try:
        lanes = tuple(int(n) for n in args.lanes.split(","))
    except ValueError:
        raise error(f"--lanes {args.lanes!r}: expected lane counts like 1,2,4") from None
    partitions = tuple(p.strip() for p in args.partitions.split(",") if p.strip())
    try:
        blocks = tuple(int(n) for n in args.blocks.split(","))
    except ValueError:
        raise error(f"--blocks {args.blocks!r}: expected block extents like 1,4,16") from None
    from ir import DEFAULT_HW, HwError, load_hw

    from ._hw import check_overrides_apply

    fixed = [f"{k}={v}" for k, v in _pairs(args.hw_set, "--hw-set", error)]
    try:
        check_overrides_apply(load_hw(args.hw or DEFAULT_HW, fixed), fixed)
    except HwError as exc:
        raise error(str(exc)) from None
    label = Path(args.target).stem if args.target.endswith((".yaml", ".yml")) else \
        f"{args.target}-{args.config}"
    try:
        out = writable_dir(args.out or Path("tune") / "out" / label, "--out")
        result = tune(args.target, out, budget=args.budget, objective=args.objective,
                      config=args.config, seed=args.seed, tune_seed=args.tune_seed,
                      units=args.units, max_orders=args.max_orders, depths=depths,
                      hw=args.hw, hw_set=_pairs(args.hw_set, "--hw-set", error),
                      hw_knobs=knobs, batch=args.batch, workers=args.workers,
                      dask=args.dask, backend=args.backend, hand=not args.no_hand,
                      prune=args.prune or None, lanes=lanes, partitions=partitions,
                      blocks=blocks, block_tensors=args.block_tensors,
                      assocs=tuple(a.strip() for a in args.assocs.split(",") if a.strip()),
                      buffers=tuple(b.strip() for b in args.buffers.split(",") if b.strip()),
                      progress=not args.quiet)
    except (TuneError, OutputPathError) as exc:
        raise error(str(exc)) from None
    best = result.best
    failed = sum(t.outcome.value is None for t in result.trials)
    print(f"tune {label}: {len(result.trials)} evaluations ({failed} failed) in {out}")
    if best is None:
        print("  no configuration ran")
        return 1
    print(f"  best {result.objective} {best.outcome.value:g} at evaluation {best.n + 1}: "
          f"{result.space.describe(best.point)}")
    hand = {t.source: t.outcome.value for t in result.trials if t.source.startswith("hand")}
    for name, v in hand.items():
        print(f"  {name[5:]:<10} {'failed' if v is None else f'{v:g}'}")
    print(f"  -> {out / 'best.yaml'}, {out / 'history.csv'}, {out / 'best_so_far.png'}")
    return 0
