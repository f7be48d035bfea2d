"""The autoscheduler's loop: an initial design, then batches proposed by the surrogate.

The initial design is what a researcher would try first: FuseFlow's hand schedules
(unfused, one region per layer, fully fused, with the compiler's orders; on one lane and,
when lanes are a knob, on the most lanes), the points
the FLOPs/bytes heuristic likes best, and a few random ones. Then each batch comes from
:func:`cosim.tuning._bo.propose`. Evaluations go through a callable, so the same loop
runs real simulations through the study runner (:class:`StudyEvaluator`: cached by
configuration, so a killed tuning run resumes where it stopped, and parallel or on
Dask) or replays a table in a benchmark. Given a seed, the loop is deterministic.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ._space import Point, TuneError, TuneSpace

__all__ = ["Outcome", "Trial", "search", "StudyEvaluator", "OBJECTIVES", "initial_design"]

#: objective name -> how to read it from a study row (all minimised)
OBJECTIVES: dict[str, Callable[[dict[str, Any]], float | None]] = {
    "cycles": lambda r: r.get("cycles"),
    "bytes_moved": lambda r: r.get("bytes_moved"),
    "dram_bytes": lambda r: None if r.get("dram_read_bytes") is None else
    r["dram_read_bytes"] + r["dram_write_bytes"],
    "seconds": lambda r: r.get("seconds"),
}


@dataclass(frozen=True)
class Outcome:
    """One evaluation: the objective (None when the run failed), status and row."""

    value: float | None
    status: str
    row: dict[str, Any] = field(default_factory=dict)


Evaluate = Callable[[list[Point]], list[Outcome]]


@dataclass(frozen=True)
class Trial:
    """An evaluated point, in evaluation order, and where it came from."""

    n: int
    point: Point
    source: str  # hand:NAME, heuristic, random or bo
    outcome: Outcome
    heuristic: float
    log_ei: float | None = None
    p_feasible: float | None = None


def initial_design(space: TuneSpace, rng: random.Random, *, hand: bool = True,
                   n_heuristic: int = 2, n_random: int = 2) -> list[tuple[Point, str]]:
    """Hand schedules (also on the most lanes), the heuristic's favourites (one per
    grouping), random points."""
    out: dict[Point, str] = {}
    if hand:
        wide = space.lanes[-1] if len(space.lanes) > 1 else None
        for name, cuts in space.hand_cuts().items():
            p = space.default_point(cuts)
            if not space.grouping_compiles(cuts) or space.pruned(p):
                continue
            out.setdefault(p, f"hand:{name}")
            if wide is not None and not space.pruned(replace(p, lanes=wide)):
                # what a researcher tries next: the same plan on every lane
                out.setdefault(replace(p, lanes=wide), f"hand:{name}x{wide}")
    pool = space.all_points() if space.enumerable() else \
        [space.sample(rng) for _ in range(512)]
    ranked = sorted(pool, key=space.heuristic)
    groupings = {p.cuts for p in out}
    for p in ranked:
        if sum(s == "heuristic" for s in out.values()) >= n_heuristic:
            break
        if p.cuts not in groupings and p not in out:
            out[p] = "heuristic"
            groupings.add(p.cuts)
    for _ in range(50 * max(n_random, 1)):
        if sum(s == "random" for s in out.values()) >= n_random:
            break
        p = space.sample(rng)
        if not space.pruned(p):
            out.setdefault(p, "random")
    return list(out.items())


def search(space: TuneSpace, evaluate: Evaluate, budget: int, *, seed: int = 0,
           batch: int = 1, hand: bool = True, n_heuristic: int = 2, n_random: int = 2,
           on_batch: Callable[[list[Trial]], None] | None = None) -> list[Trial]:
    """Evaluate at most ``budget`` distinct points and return them as trials.
    ``on_batch`` sees the trials so far after every batch (to write the history)."""
    from ._bo import propose

    if budget < 1 or batch < 1:
        raise TuneError(f"budget {budget!r} and batch {batch!r} must be >= 1")
    rng = random.Random(seed)
    trials: list[Trial] = []

    def run(items: Sequence[tuple[Point, str, float | None, float | None]]) -> None:
        outcomes = evaluate([p for p, *_ in items])
        for (p, source, log_ei, pf), o in zip(items, outcomes, strict=True):
            trials.append(Trial(len(trials), p, source, o, space.heuristic(p), log_ei, pf))
        if on_batch is not None:
            on_batch(trials)

    init = initial_design(space, rng, hand=hand, n_heuristic=n_heuristic,
                          n_random=n_random)[:budget]
    run([(p, s, None, None) for p, s in init])
    while len(trials) < budget:
        observed = [(t.point, t.outcome.value) for t in trials]
        props = propose(space, observed, rng, min(batch, budget - len(trials)))
        if not props:
            break  # the space is exhausted
        run([(q.point, "bo", q.log_ei, q.p_feasible) for q in props])
    return trials


def best_trial(trials: Sequence[Trial]) -> Trial | None:
    """The feasible trial with the smallest objective (the earliest on a tie)."""
    ok = [t for t in trials if t.outcome.value is not None]
    return min(ok, key=lambda t: (t.outcome.value, t.n)) if ok else None


class StudyEvaluator:
    """Evaluate points as study runs of one model workload: each point is a
    :class:`RunConfig` (its schedule inline, its depth, its knobs as ``hw_set``), run by
    :func:`run_configs` and cached in ``out/runs`` — which is what makes a killed tuning
    run resume without repeating an evaluation."""

    def __init__(self, space: TuneSpace, workload: Any, objective: str, out: str | Path, *,
                 seed: int = 0, backend: str = "python", hw: str | None = None,
                 hw_set: Sequence[tuple[str, str]] = (), workers: int = 1,
                 dask: str | None = None, study: str = "tune",
                 on_eval: Callable[[float | None, dict[str, Any], bool], None] | None = None
                 ) -> None:
        if objective not in OBJECTIVES:
            raise TuneError(f"objective {objective!r}: expected one of "
                            f"{', '.join(OBJECTIVES)}")
        self.space, self.workload, self.objective = space, workload, objective
        self.out, self.seed, self.backend = Path(out), seed, backend
        self.hw, self.hw_set = hw, tuple(hw_set)
        self.workers, self.dask, self.study = workers, dask, study
        #: sees each evaluation as it finishes: (objective or None, its row, from cache)
        self.on_eval = on_eval

    def config(self, p: Point) -> Any:
        """The study run of ``p``."""
        from ..studies._spec import RunConfig

        sched = json.dumps(self.space.schedule(p).to_dict(), sort_keys=True)
        extra: dict[str, Any] = {} if self.hw is None else {"hw": self.hw}
        return RunConfig(self.study, self.workload, sched, "default", p.depth, self.seed,
                         "float32", (self.backend,), **extra,
                         hw_set=tuple(sorted({**dict(self.hw_set), **dict(p.hw)}.items())))

    def __call__(self, points: list[Point]) -> list[Outcome]:
        from ..studies._runner import run_configs

        configs = [self.config(p) for p in points]
        ran: set[Any] = set()

        def done(cfg: Any, rows: list[dict[str, Any]]) -> None:
            ran.add(cfg)
            if self.on_eval is not None:
                self.on_eval(self._value(rows[0]), rows[0], False)

        rows_of, _ = run_configs(configs, self.out, workers=self.workers, dask=self.dask,
                                 progress=False, label=self.study, on_done=done)
        out = []
        for c in configs:
            row = rows_of[c][0]
            value = self._value(row)
            if c not in ran and self.on_eval is not None:
                self.on_eval(value, row, True)
            out.append(Outcome(value, row.get("status", "error"), row))
        return out

    def _value(self, row: dict[str, Any]) -> float | None:
        """The objective of a run's row; None when it failed or has no such number."""
        value = OBJECTIVES[self.objective](row) if row.get("status") == "ok" else None
        bad = value is None or (isinstance(value, float) and math.isnan(value))
        return None if bad else float(value)
