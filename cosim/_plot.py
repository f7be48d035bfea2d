"""Figures from a study's result table (matplotlib, PNG and PDF).

Each kind reproduces one of FuseFlow's figures from the columns a study writes; a kind
whose axis samfuse cannot run yet (lanes, blocks) says so instead of drawing
an empty plot.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["KINDS", "plot", "plot_to", "PlotError", "load_results"]


class PlotError(ValueError):
    """The table cannot make the requested figure (missing columns or no usable rows)."""


def load_results(path: str | Path) -> Any:
    """A study's table: ``results.parquet``/``.csv`` or the study's output folder."""
    import pandas as pd

    p = Path(path)
    if p.is_dir():
        p = p / "results.parquet"
    if not p.exists():
        raise PlotError(f"{p}: no such results table (run `samfuse study` first)")
    if p.suffix == ".csv":
        return pd.read_csv(p)
    if p.suffix != ".parquet":
        raise PlotError(f"{p}: expected a .parquet or .csv results table")
    return pd.read_parquet(p)


def _ok(frame: Any, needs: list[str], kind: str) -> Any:
    missing = [c for c in needs if c not in frame.columns]
    if missing:
        raise PlotError(f"--kind {kind}: the table has no column(s) {missing}")
    rows = frame[(frame["status"] == "ok") & frame["cycles"].notna()]
    if rows.empty:
        raise PlotError(f"--kind {kind}: no successful runs in the table")
    return rows


def _speedup(frame: Any, ax: Any) -> None:
    """FuseFlow Fig. 12: speed-up of each fusion schedule over unfused, per model."""
    rows = _ok(frame, ["workload", "schedule", "cycles"], "speedup")
    rows = rows[rows["kind"] == "model"]
    cycles = rows.groupby(["workload", "schedule"])["cycles"].min().unstack()
    if "unfused" not in cycles.columns:
        raise PlotError("--kind speedup: needs runs with schedule 'unfused' (the baseline)")
    speed = cycles.rdiv(cycles["unfused"], axis=0)
    schedules = [s for s in ("unfused", "partial", "full") if s in speed.columns]
    speed[schedules].plot.bar(ax=ax, rot=0)
    ax.axhline(1.0, color="gray", lw=0.8)
    ax.set_ylabel("speed-up over unfused (cycles)")
    ax.set_xlabel("model")
    ax.set_title("Fusion schedules (cf. FuseFlow Fig. 12)")


def _orders(frame: Any, ax: Any) -> None:
    """FuseFlow Fig. 18: cycles of every dataflow order, sorted, per workload."""
    rows = _ok(frame, ["workload", "order_used", "cycles"], "orders")
    rows = rows[rows["kind"] == "expr"]
    for (label, depth), group in rows.groupby(["workload", "depth"], dropna=False):
        cyc = sorted(group.groupby("order_used")["cycles"].min())
        ax.plot(range(len(cyc)), cyc, marker="o",
                label=f"{label}, depth {depth} (worst/best {cyc[-1] / cyc[0]:.1f}×)")
    ax.set_yscale("log")
    ax.set_xlabel("dataflow order (sorted by cycles)")
    ax.set_ylabel("cycles")
    ax.legend(fontsize="small")
    ax.set_title("Dataflow orders (cf. FuseFlow Fig. 18)")


def _heuristic(frame: Any, ax: Any) -> None:
    """FuseFlow Table 3 as a scatter: the heuristic's bytes against the bytes moved."""
    rows = _ok(frame, ["est_bytes", "bytes_moved"], "heuristic")
    rows = rows[rows["bytes_moved"].notna()]
    ax.scatter(rows["bytes_moved"], rows["est_bytes"])
    hi = float(max(rows["bytes_moved"].max(), rows["est_bytes"].max()))
    ax.plot([0, hi], [0, hi], color="gray", lw=0.8)
    ax.set_xlabel("bytes moved (simulated)")
    ax.set_ylabel("bytes estimated (heuristic)")
    ax.set_title("Heuristic vs measured (cf. FuseFlow Table 3)")


def _depth(frame: Any, ax: Any) -> None:
    """Cycles against FIFO depth, per workload and schedule."""
    rows = _ok(frame, ["depth", "cycles"], "depth")
    rows = rows[rows["depth"].notna()]
    for (label, sched), group in rows.groupby(["workload", "schedule"]):
        g = group.groupby("depth")["cycles"].min().sort_index()
        ax.plot(g.index, g.values, marker="o", label=f"{label} {sched}".rstrip(" -"))
    ax.set_xscale("log", base=2)
    ax.set_xlabel("FIFO depth")
    ax.set_ylabel("cycles")
    ax.legend(fontsize="small")
    ax.set_title("FIFO depth")


def _bandwidth(frame: Any, ax: Any) -> None:
    """Cycles against off-chip bandwidth per channel; ideal-memory runs as dashed lines
    (the cycles no bandwidth can beat)."""
    rows = _ok(frame, ["dram_bytes_per_cycle", "cycles"], "bandwidth")
    for i, ((label, sched), group) in enumerate(rows.groupby(["workload", "schedule"])):
        name = f"{label} {sched}".rstrip(" -")
        swept = group[group["dram_bytes_per_cycle"].notna()]
        color = f"C{i % 10}"
        if not swept.empty:
            g = swept.groupby("dram_bytes_per_cycle")["cycles"].min().sort_index()
            ax.plot(g.index, g.values, marker="o", color=color, label=name)
        ideal = group[group["dram_bytes_per_cycle"].isna()]
        if not ideal.empty:
            ax.axhline(float(ideal["cycles"].min()), color=color, ls="--", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("DRAM bandwidth per channel (bytes/cycle); dashed: ideal memory")
    ax.set_ylabel("cycles")
    ax.legend(fontsize="small")
    ax.set_title("Off-chip bandwidth")


def _unbuilt(what: str) -> Callable[[Any, Any], None]:
    def draw(frame: Any, ax: Any) -> None:
        raise PlotError(f"this figure needs {what}, which samfuse does not model yet")
    return draw


#: kind -> drawing function
KINDS: dict[str, Callable[[Any, Any], None]] = {
    "speedup": _speedup,
    "orders": _orders,
    "heuristic": _heuristic,
    "depth": _depth,
    "lanes": _unbuilt("parallel lanes (FuseFlow Fig. 16)"),
    "block": _unbuilt("block-sparse values (FuseFlow Fig. 17)"),
    "bandwidth": _bandwidth,
}


def _figure(frame: Any, kind: str) -> Any:
    """A drawn matplotlib figure of ``kind`` (the caller closes it)."""
    if kind not in KINDS:
        raise PlotError(f"--kind {kind!r}: expected one of {', '.join(KINDS)}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    try:
        KINDS[kind](frame, ax)
        fig.tight_layout()
    except BaseException:
        plt.close(fig)
        raise
    return fig


def plot_to(frame: Any, kind: str, fh: Any) -> None:
    """Draw ``kind`` as PNG into an open binary file (for reports that embed figures)."""
    import matplotlib.pyplot as plt

    fig = _figure(frame, kind)
    try:
        fig.savefig(fh, format="png", dpi=100)
    finally:
        plt.close(fig)


def plot(results: str | Path | Any, kind: str, out: str | Path) -> list[Path]:
    """Draw ``kind`` from a results table into ``out`` (its suffix, or PNG and PDF when
    ``out`` has none); returns the files written."""
    out = Path(out)
    suffixes = [out.suffix] if out.suffix else [".png", ".pdf"]
    for s in suffixes:
        if s not in (".png", ".pdf", ".svg"):
            raise PlotError(f"{out}: figures are written as .png, .pdf or .svg")
    frame = load_results(results) if isinstance(results, str | Path) else results
    import matplotlib.pyplot as plt

    fig = _figure(frame, kind)
    try:
        written = []
        for s in suffixes:
            target = out.with_suffix(s)
            fig.savefig(target, dpi=120)
            written.append(target)
        return written
    finally:
        plt.close(fig)
