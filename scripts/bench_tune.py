"""Benchmark the autoscheduler on spaces small enough to enumerate (docs/tune.md).

For each model (tiny GCN, GraphSAGE and BigBird; fusion boundaries between module
scopes, the heuristic's cheapest orders per region): simulate every point once through
the study runner (cached in --out), which gives the exhaustive optimum and FuseFlow's
hand schedules; then replay random search (without replacement), optuna's TPE and
the autoscheduler on that table over several seeds, at equal budgets. Replaying is
exact — a simulation is deterministic — and counts distinct evaluations only (a repeat
is a cache hit). Prints a table: the median evaluations each method needs to get
within 5 % of the optimum, and the median best found at the budget against the best
hand schedule.

    .venv/bin/python scripts/bench_tune.py            # ~10 min on 2 cores
    .venv/bin/python scripts/bench_tune.py --models gcn --seeds 2 --budget 20
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from cosim import Outcome, Point, StudyEvaluator, TuneSpace, model_space, search
from cosim.studies._spec import Workload

#: orders kept per region: enough to make orders matter, few enough to enumerate
MAX_ORDERS = {"gcn": 2, "graphsage": 2, "bigbird": 3}
WITHIN = 1.05


def exhaustive(space: TuneSpace, label: str, out: Path, workers: int
               ) -> dict[Point, Outcome]:
    """Every point of the space, simulated (or read from the cache)."""
    model, config = label.rsplit("-", 1)
    ev = StudyEvaluator(space, Workload(label, model=model, config=config), "cycles", out,
                        workers=workers, study=f"bench-{label}", hw="ideal")
    points = space.all_points()
    return dict(zip(points, ev(points), strict=True))


def evals_to(trace: list[float | None], target: float) -> int | None:
    """1-based index of the first evaluation at or below ``target``."""
    return next((n + 1 for n, v in enumerate(trace) if v is not None and v <= target), None)


def best_at(trace: list[float | None], budget: int) -> float:
    return min(v for v in trace[:budget] if v is not None)


def run_random(space: TuneSpace, table: dict[Point, Outcome], seed: int, budget: int
               ) -> list[float | None]:
    points = list(table)
    random.Random(seed).shuffle(points)
    return [table[p].value for p in points]  # the whole permutation: its hit is exact


def run_tpe(space: TuneSpace, table: dict[Point, Outcome], seed: int, budget: int
            ) -> list[float | None]:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    listed = space.groupings()
    seen: dict[Point, float | None] = {}

    def objective(trial: optuna.Trial) -> float:
        cuts = listed[trial.suggest_categorical("grouping", list(range(len(listed))))]
        orders = []
        for a, b in space.regions(cuts):
            opts = space.options(a, b)
            pick = trial.suggest_categorical(f"order{a}-{b}", list(range(len(opts))))
            orders.append(opts[pick])
        p = Point(cuts, tuple(orders), space.depths[0])
        v = table[p].value
        seen.setdefault(p, v)
        if len(seen) >= budget:
            trial.study.stop()
        return v if v is not None else float("inf")

    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))
    study.optimize(objective, n_trials=20 * budget)
    return list(seen.values())


def run_ours(space: TuneSpace, table: dict[Point, Outcome], seed: int, budget: int,
             hand: bool = True) -> list[float | None]:
    trials = search(space, lambda ps: [table[p] for p in ps], budget, seed=seed, hand=hand)
    return [t.outcome.value for t in trials]


def run_ours_no_hand(space: TuneSpace, table: dict[Point, Outcome], seed: int, budget: int
                     ) -> list[float | None]:
    """Without FuseFlow's hand schedules in the initial design: the heuristic's and
    random points only, so the hand schedules' head start is not counted."""
    return run_ours(space, table, seed, budget, hand=False)


Method = Callable[[TuneSpace, dict[Point, Outcome], int, int], list[float | None]]
METHODS: dict[str, Method] = {"random": run_random, "tpe": run_tpe, "ours": run_ours,
                              "ours-nohand": run_ours_no_hand}


def median_or_miss(values: list[int | None], budget: int) -> str:
    """The median of the hits, misses counting as beyond the budget."""
    big = 10**9
    m = statistics.median([big if v is None else v for v in values])
    return f">{budget}" if m >= big else f"{m:g}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="gcn,graphsage,bigbird")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--budget", type=int, default=30)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default="tune/out/bench", help="cache of the simulations")
    args = ap.parse_args()
    rows = []
    for model in args.models.split(","):
        t0 = time.perf_counter()
        label = f"{model}-tiny"
        space = model_space(Workload(label, model=model, config="tiny"),
                            max_orders=MAX_ORDERS.get(model, 2))
        table = exhaustive(space, label, Path(args.out) / label, args.workers)
        ok = {p: o.value for p, o in table.items() if o.value is not None}
        opt = min(ok.values())
        hand = {n: table[space.default_point(c)].value for n, c in space.hand_cuts().items()
                if space.default_point(c) in table}
        good = sum(v <= WITHIN * opt for v in ok.values())
        sim_s = time.perf_counter() - t0
        for name, run in METHODS.items():
            t1 = time.perf_counter()
            traces = [run(space, table, s, args.budget) for s in range(args.seeds)]
            hits = [evals_to(t, WITHIN * opt) for t in traces]
            exact = [evals_to(t, opt) for t in traces]
            rows.append({"model": label, "points": len(table), "failed": len(table) - len(ok),
                         "good": good, "optimum": opt, "hand": min(v for v in hand.values()
                                                                   if v is not None),
                         "method": name, "evals": median_or_miss(hits, len(table)),
                         "evals_opt": median_or_miss(exact, max(map(len, traces))),
                         "hits": sum(h is not None and h <= args.budget for h in hits),
                         "best": statistics.median(best_at(t, args.budget) for t in traces),
                         "seconds": time.perf_counter() - t1})
            print(f"  {label} {name}: evals to 5 % {hits}  ({rows[-1]['seconds']:.0f} s)",
                  file=sys.stderr, flush=True)
        print(f"  {label}: {len(table)} points simulated/cached in {sim_s:.0f} s; hand "
              f"{hand}", file=sys.stderr, flush=True)
    print(f"\nbudget {args.budget}, {args.seeds} seeds (0..{args.seeds - 1}), hardware: ideal, "
          "objective: cycles; 'evals' = median evaluations to within 5 % of the optimum "
          "(random: sampling without replacement over the whole space), 'evals_opt' the same "
          "to the optimum itself, 'hits' seeds within 5 % at the budget, 'best' the median "
          "best cycles at the budget, 'good' points within 5 %, 'hand' the best hand "
          "schedule\n")
    head = ("model", "points", "failed", "good", "optimum", "hand", "method", "evals",
            "evals_opt", "hits", "best")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(f"{r[h]:g}" if isinstance(r[h], float) else str(r[h])
                                for h in head) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
