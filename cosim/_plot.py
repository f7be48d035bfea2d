"""Figures from a study's result table (matplotlib, PNG and PDF).

Each kind reproduces one of FuseFlow's figures (or a memory what-if) from the columns a
study writes; a kind whose axis samfuse cannot run yet says so instead of drawing an
empty plot.
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
    if p.suffix not in (".csv", ".parquet"):
        raise PlotError(f"{p}: expected a .parquet or .csv results table")
    try:
        return pd.read_csv(p) if p.suffix == ".csv" else pd.read_parquet(p)
    except Exception as exc:  # noqa: BLE001 - pyarrow and pandas raise many types
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise PlotError(f"{p}: not a readable results table ({why})") from None


#: columns a figure reads as numbers
_NUMERIC = ("cycles", "depth", "lanes", "block", "imbalance", "bytes_moved", "est_bytes",
            "dram_bytes_per_cycle", "dram_latency_cycles", "dram_read_bytes",
            "dram_write_bytes")


def _ok(frame: Any, needs: list[str], kind: str) -> Any:
    """The successful runs of a table holding ``needs`` (and ``status``, ``cycles``)."""
    import pandas as pd

    missing = [c for c in dict.fromkeys([*needs, "status", "cycles"])
               if c not in frame.columns]
    if missing:
        raise PlotError(f"--kind {kind}: the table has no column(s) {missing}")
    frame = frame.copy()
    for col in (c for c in _NUMERIC if c in frame.columns):
        values = pd.to_numeric(frame[col], errors="coerce")
        wrong = frame[col][values.isna() & frame[col].notna()]
        if len(wrong):
            raise PlotError(f"--kind {kind}: column {col!r} holds {wrong.iloc[0]!r}, not a "
                            "number")
        frame[col] = values
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


#: the columns that make two runs the same configuration apart from their lanes
_SAME_RUN = ["workload", "schedule", "order", "depth", "dtype", "seed", "backend", "hw",
             "hw_set"]
#: what one line of the lanes figure holds fixed (seeds and backends are averaged)
_LANE_LINE = ["workload", "schedule", "order", "depth", "dtype", "hw", "hw_set",
              "partition", "lane_buffer", "par_on"]


def _key(frame: Any, cols: list[str]) -> Any:
    """One string per row naming its values of ``cols`` (missing values included)."""
    import pandas as pd

    return pd.Series(["|".join(map(str, t)) for t in frame[cols].itertuples(index=False)],
                     index=frame.index, dtype=object)


def _lanes(frame: Any, ax: Any) -> None:
    """FuseFlow Fig. 16: speed-up over the one-lane run of the same configuration against
    the number of lanes, one line per workload, partition and hardware (and whichever
    other axis varies); the ideal linear speed-up dashed."""
    rows = _ok(frame, ["lanes", "par", "partition", "lane_buffer", "cycles", *_SAME_RUN],
               "lanes").copy()
    if not (rows["lanes"] > 1).any():
        raise PlotError("--kind lanes: no successful run has more than one lane (set the "
                        "study's par axis)")
    rows["_same"] = _key(rows, _SAME_RUN)
    base = rows[rows["lanes"] == 1].groupby("_same")["cycles"].min()
    multi = rows[rows["lanes"] > 1].copy()
    multi["speedup"] = multi["_same"].map(base) / multi["cycles"]
    multi = multi[multi["speedup"].notna()]
    if multi.empty:
        raise PlotError("--kind lanes: no run with lanes has a one-lane run of the same "
                        "configuration to compare with (add par: none to the study)")
    # the parallel indices, without their counts: i=2 and i=8 lie on one line
    multi["par_on"] = multi["par"].map(lambda p: ",".join(x.split("=")[0]
                                                        for x in str(p).split(",")))
    varying = [c for c in _LANE_LINE if multi[c].map(str).nunique() > 1]
    shown = ["workload", *[c for c in varying if c != "workload"]]
    for i, (_, line) in enumerate(multi.groupby(_key(multi, _LANE_LINE))):
        first = line.iloc[0]
        g = line.groupby("lanes").agg(speedup=("speedup", "mean"),
                                      imbalance=("imbalance", "mean")).sort_index()
        label = " ".join(x for x in (_shown(c, first[c]) for c in shown) if x != "-")
        top = g.iloc[-1]
        if top["imbalance"] == top["imbalance"]:  # not NaN
            label += f" (imbalance {top['imbalance']:.2f} at {g.index[-1]})"
        ax.plot([1, *g.index], [1.0, *g["speedup"]], marker="o", color=f"C{i % 10}",
                label=label)
    most = int(multi["lanes"].max())
    ax.plot([1, most], [1, most], color="gray", ls="--", lw=0.8, label="ideal (linear)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ticks = sorted({1, *map(int, multi["lanes"])})
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.set_yticks(ticks, [str(t) for t in ticks])
    ax.set_xlabel("lanes")
    ax.set_ylabel("speed-up over one lane (cycles)")
    ax.legend(fontsize="x-small")
    ax.set_title("Parallel lanes (cf. FuseFlow Fig. 16)")


def _blocks(frame: Any, ax: Any) -> None:
    """FuseFlow Fig. 17: speed-up of block values over scalar values (block 1) of the
    same configuration against the block size, one line per workload, schedule and
    hardware; the legend gives the DRAM bytes at the largest block over scalar's."""
    same = [*_SAME_RUN, "par", "partition"]
    rows = _ok(frame, ["block", "cycles", *same], "block").copy()
    if not (rows["block"] > 1).any():
        raise PlotError("--kind block: no successful run has a block size above 1 (set the "
                        "study's block axis)")
    rows["_same"] = _key(rows, same)
    scalar = rows[rows["block"] == 1].groupby("_same")[["cycles", "dram_read_bytes",
                                                       "dram_write_bytes"]].min()
    blocked = rows[rows["block"] > 1].copy()
    blocked = blocked[blocked["_same"].isin(scalar.index)]
    if blocked.empty:
        raise PlotError("--kind block: no blocked run has a scalar run (block 1) of the same "
                        "configuration to compare with (add 1 to the block axis)")
    blocked["speedup"] = blocked["_same"].map(scalar["cycles"]) / blocked["cycles"]
    dram = blocked["dram_read_bytes"].fillna(0) + blocked["dram_write_bytes"].fillna(0)
    base = (scalar["dram_read_bytes"].fillna(0) + scalar["dram_write_bytes"].fillna(0))
    blocked["dram_ratio"] = dram / blocked["_same"].map(base).where(lambda x: x > 0)
    line = ["workload", "schedule", "hw", "hw_set", "order", "depth"]
    for i, (_, g) in enumerate(blocked.groupby(_key(blocked, line))):
        first = g.iloc[0]
        s = g.groupby("block").agg(speedup=("speedup", "mean"),
                                   dram=("dram_ratio", "mean")).sort_index()
        label = " ".join(str(first[c]) for c in ("workload", "schedule", "hw")
                         if str(first[c]) not in ("-", "None"))
        if s["dram"].iloc[-1] == s["dram"].iloc[-1]:  # not NaN: a memory system
            label += f" (DRAM ×{s['dram'].iloc[-1]:.2f} at {s.index[-1]})"
        ax.plot([1, *s.index], [1.0, *s["speedup"]], marker="o", color=f"C{i % 10}",
                label=label)
    ticks = sorted({1, *map(int, blocked["block"])})
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.axhline(1.0, color="gray", lw=0.8)
    ax.set_xlabel("block size (values per block along each blocked index)")
    ax.set_ylabel("speed-up over scalar values (cycles)")
    ax.legend(fontsize="x-small")
    ax.set_title("Block sparsity (cf. FuseFlow Fig. 17)")


def _shown(col: str, value: Any) -> str:
    """A line label's part: the workload as is, other axes as ``name value``."""
    if col == "workload":
        return str(value)
    if col == "par_on":
        return f"par {value}"
    return str(value) if col in ("partition", "hw", "schedule") else f"{col} {value}"


def _latency(frame: Any, ax: Any) -> None:
    """Cycles against the DRAM round trip (``hw_set: dram.latency_cycles``), one line per
    workload and schedule; ideal-memory runs dashed (the floor no latency reaches). The
    legend gives each line's slope: the round trips the run waits for one after another."""
    rows = _ok(frame, ["dram_latency_cycles", "cycles", "workload", "schedule"], "latency")
    if rows["dram_latency_cycles"].notna().sum() == 0:
        raise PlotError("--kind latency: no successful run has a memory (every run is on "
                        "ideal hardware; sweep hw_set dram.latency_cycles on a preset)")
    for i, ((label, sched), group) in enumerate(rows.groupby(["workload", "schedule"])):
        name = f"{label} {sched}".rstrip(" -")
        color = f"C{i % 10}"
        swept = group[group["dram_latency_cycles"].notna()]
        if not swept.empty:
            g = swept.groupby("dram_latency_cycles")["cycles"].min().sort_index()
            if len(g) > 1:
                slope = (g.iloc[-1] - g.iloc[0]) / (g.index[-1] - g.index[0])
                name += f" (+{slope:,.0f} cycles per latency cycle)"
            ax.plot(g.index, g.values, marker="o", color=color, label=name)
        ideal = group[group["dram_latency_cycles"].isna()]
        if not ideal.empty:
            ax.axhline(float(ideal["cycles"].min()), color=color, ls="--", lw=0.8)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("DRAM latency (cycles per round trip); dashed: ideal memory")
    ax.set_ylabel("cycles")
    ax.legend(fontsize="small")
    ax.set_title("Off-chip latency")


#: kind -> drawing function
KINDS: dict[str, Callable[[Any, Any], None]] = {
    "speedup": _speedup,
    "orders": _orders,
    "heuristic": _heuristic,
    "depth": _depth,
    "lanes": _lanes,
    "block": _blocks,
    "bandwidth": _bandwidth,
    "latency": _latency,
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
