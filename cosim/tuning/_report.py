"""What a tuning run leaves in its folder: the history, the best schedule, the plot.

``history.csv`` and ``history.parquet`` (one row per evaluation, in order, with the
best-so-far), ``best.yaml`` (the best schedule, which ``samfuse model --schedule``
accepts; its depth and knob values are in a comment and in ``best.json``) and
``best_so_far.png``. Every file is written atomically, after every batch, so a killed
run leaves a consistent folder.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..runs._files import atomic_path, write_atomic
from ._search import Trial, best_trial
from ._space import TuneSpace

__all__ = ["history_rows", "write_outputs", "plot_history"]


def history_rows(space: TuneSpace, trials: Sequence[Trial], objective: str
                 ) -> list[dict[str, Any]]:
    """One row per evaluation: what was tried, where it came from, how it went."""
    rows, best = [], None
    for t in trials:
        v = t.outcome.value
        best = v if v is not None and (best is None or v < best) else best
        r = t.outcome.row
        rows.append({
            "eval": t.n + 1, "source": t.source, "status": t.outcome.status,
            objective: v, "best_so_far": best, "cycles": r.get("cycles"),
            "bytes_moved": r.get("bytes_moved"),
            "dram_bytes": None if r.get("dram_read_bytes") is None else
            r["dram_read_bytes"] + r["dram_write_bytes"],
            "regions": len(space.regions(t.point.cuts)), "depth": t.point.depth,
            "lanes": t.point.lanes, "partition": t.point.partition, "block": t.point.block,
            "assoc": t.point.assoc,
            **{f"hw:{k}": val for k, val in t.point.hw},
            "heuristic": t.heuristic, "log_ei": t.log_ei, "p_feasible": t.p_feasible,
            "schedule": space.describe(t.point), "key": r.get("key"),
            "error": r.get("error"),
        })
    return rows


def write_outputs(space: TuneSpace, trials: Sequence[Trial], objective: str,
                  out: Path) -> Trial | None:
    """History, best schedule and plot in ``out``; returns the best trial."""
    import pandas as pd

    out.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(history_rows(space, trials, objective))
    for suffix, writer in (("csv", frame.to_csv), ("parquet", frame.to_parquet)):
        with atomic_path(out / f"history.{suffix}") as tmp:
            writer(tmp, index=False)
    best = best_trial(trials)
    if best is not None:
        sched = space.schedule(best.point, name="tuned")
        note = (f"# samfuse tune: best {objective} {best.outcome.value:g} after "
                f"{len(trials)} evaluations (evaluation {best.n + 1}); depth "
                f"{best.point.depth}" + "".join(f", {k}={v}" for k, v in best.point.hw)
                + "\n")
        write_atomic(out / "best.yaml", note + sched.to_yaml())
        write_atomic(out / "best.json", json.dumps({
            "objective": objective, "value": best.outcome.value, "eval": best.n + 1,
            "depth": best.point.depth, "hw_set": dict(best.point.hw),
            "lanes": best.point.lanes, "partition": best.point.partition,
            "block": best.point.block, "assoc": best.point.assoc,
            "schedule": sched.to_dict(),
            "row": best.outcome.row}, indent=1, default=str))
    title = f"tune {space.program.name}: {objective} of {len(trials)} evaluations" + (
        "" if best is None else f", best {best.outcome.value:g} at evaluation {best.n + 1}")
    plot_history(frame, objective, out / "best_so_far.png", title)
    return best


def plot_history(frame: Any, objective: str, path: Path, title: str = "") -> None:
    """Every evaluation's objective (failures marked) and the best so far; evaluations
    are counted in whole numbers on the x axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(6, 3.6))
    ok = frame[frame[objective].notna()]
    bad = frame[frame[objective].isna()]
    for source, marker in (("hand", "s"), ("heuristic", "D"), ("random", "o"), ("bo", ".")):
        sel = ok[ok["source"].str.startswith(source)]
        if len(sel):
            ax.scatter(sel["eval"], sel[objective], marker=marker, s=18, alpha=0.6,
                       label=source)
    if len(bad):
        ax.scatter(bad["eval"], [ok[objective].max() if len(ok) else 1] * len(bad),
                   marker="x", color="red", s=18, label="failed")
    ax.step(frame["eval"], frame["best_so_far"], where="post", color="black",
            label="best so far")
    ax.set_xlabel("evaluation")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel(objective)
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    ax.set_title(title or f"{objective} per evaluation", fontsize=10)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=120)
    plt.close(fig)
