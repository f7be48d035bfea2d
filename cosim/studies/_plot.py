"""Figures from a study's result table (matplotlib, PNG and PDF).

Each kind reproduces one of FuseFlow's figures (or a memory what-if) from the columns a
study writes; a kind whose axis samfuse cannot run yet says so instead of drawing an
empty plot.
"""

from __future__ import annotations

import re
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


def _checked(frame: Any, needs: list[str], kind: str) -> Any:
    """A copy of a table holding ``needs`` (and ``status``, ``cycles``) whose numeric
    columns hold numbers: a hand-edited table is one line, not a traceback."""
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
    return frame


def _ok(frame: Any, needs: list[str], kind: str) -> Any:
    """The successful runs of a table holding ``needs`` (and ``status``, ``cycles``)."""
    frame = _checked(frame, needs, kind)
    rows = frame[(frame["status"] == "ok") & frame["cycles"].notna()]
    if rows.empty:
        raise PlotError(f"--kind {kind}: no successful runs in the table")
    return rows


def _speedup(frame: Any, ax: Any) -> None:
    """FuseFlow Fig. 12: speed-up of each fusion schedule over unfused, per model."""
    rows = _ok(frame, ["workload", "kind", "schedule", "cycles"], "speedup")
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


def published_key(model: str, config: Any, block: Any) -> tuple[str, str]:
    """The (model, data set) key of FuseFlow's Figure 12 a study row stands for: a GNN's
    config names its data set (a ``-fuseflow`` suffix marks the artifact's settings),
    BigBird's block extent is its data point, the autoencoder has one."""
    if model == "bigbird":
        return model, f"block{int(block) if block and block == block else 1}"
    if model == "autoencoder":
        return model, "-"
    return model, str(config).removesuffix("-fuseflow")


def _fig12(frame: Any, fig: Any) -> None:
    """FuseFlow Fig. 12 side by side: samfuse's speed-up of partial and full fusion over
    unfused per model and data set (one panel per hardware), FuseFlow's hatched beside;
    a run skipped over budget or that does not lower is named where its bar would be."""
    import matplotlib
    import matplotlib.ticker

    from ._published import FIG12_SPEEDUP

    frame = _checked(frame, ["kind", "model", "config", "schedule", "hw"], "fig12")
    rows = frame[frame["kind"] == "model"].copy()
    if "block" not in rows.columns:
        rows["block"] = 1
    rows["point"] = [published_key(m, c, b) for m, c, b in
                     zip(rows["model"], rows["config"], rows["block"], strict=True)]
    ok = rows[(rows["status"] == "ok") & rows["cycles"].notna()]
    if ok.empty or "unfused" not in set(ok["schedule"]):
        raise PlotError("--kind fig12: needs successful runs with schedule 'unfused'")
    hws = sorted(set(rows["hw"]))
    points = sorted(set(rows["point"]), key=lambda p: (p[0], _DATASET_ORDER.get(p[1], 99),
                                                       p[1]))
    axes = fig.subplots(len(hws), 1, squeeze=False)[:, 0]
    width = 0.2
    for ax, hw in zip(axes, hws, strict=True):
        mine = ok[ok["hw"] == hw].groupby(["point", "schedule"])["cycles"].min()
        missing = {status: set(rows[(rows["hw"] == hw) & (rows["status"] == status)]
                               .groupby(["point", "schedule"]).groups)
                   for status in ("skipped", "compile-error")}
        for n, sched in enumerate(("partial", "full")):
            for x, point in enumerate(points):
                mine_x, paper_x = x + (2 * n - 1.5) * width, x + (2 * n - 0.5) * width
                base = mine.get((point, "unfused"))
                got = mine.get((point, sched))
                if base is not None and got is not None:
                    ax.bar(mine_x, base / got, width, color=f"C{n}",
                           label=f"samfuse {sched}" if x == 0 else None)
                    ax.text(mine_x, base / got, f"{base / got:.2g}", ha="center",
                            va="bottom", fontsize=6)
                for status, label in (("skipped", "skipped"),
                                      ("compile-error", "does not lower")):
                    if (got is None or base is None) and (point, sched) in missing[status]:
                        ax.text(mine_x, 1.0, label, rotation=90, ha="center",
                                va="bottom", fontsize=6)
                # a scaled copy of a data set (collab-s16) beside FuseFlow's full size
                model, data = point
                paper = FIG12_SPEEDUP.get((model, re.sub(r"-s\d+$", "", data)),
                                          (None, None))[n]
                if paper is not None:
                    ax.bar(paper_x, paper, width, color=f"C{n}", alpha=0.35, hatch="//",
                           edgecolor=f"C{n}",
                           label=f"FuseFlow {sched}" if x == 0 else None)
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.set_xticks(range(len(points)))
        ax.set_xlim(-0.5, len(points) - 0.5)  # a group's absent bars keep their room
        ax.set_xticklabels([f"{m}\n{d}" if d != "-" else m for m, d in points],
                           fontsize="small")
        ax.set_ylabel("speed-up over unfused")
        ax.set_title(f"Fusion schedules on {hw} (cf. FuseFlow Fig. 12; hatched: FuseFlow)")
        handles, labels = ax.get_legend_handles_labels()
        if handles:
            ax.legend(fontsize="x-small", ncol=4)


#: FuseFlow's data sets in the order of its Table 2
_DATASET_ORDER = {"cora": 0, "cora-ml": 1, "dblp": 2, "collab": 3, "mag": 4}


def _orders(frame: Any, ax: Any) -> None:
    """FuseFlow Fig. 18: cycles of every dataflow order, per workload (and every other
    axis that varies); the orders on the x axis by name, sorted by the first line."""
    rows = _ok(frame, ["workload", "kind", "order_used", "cycles"], "orders")
    rows = rows[(rows["kind"] == "expr") & rows["order_used"].notna()]
    if rows.empty:
        raise PlotError("--kind orders: no successful expression run in the table")
    lines = list(_lines(rows, ["order", "order_used"]))
    first = lines[0][1].groupby("order_used")["cycles"].min().sort_values()
    names = list(first.index) + sorted(set(rows["order_used"]) - set(first.index))
    at = {name: n for n, name in enumerate(names)}
    for i, (label, group) in enumerate(lines):
        cyc = group.groupby("order_used")["cycles"].min()
        xs = sorted(cyc.index, key=at.__getitem__)
        ax.plot([at[x] for x in xs], [cyc[x] for x in xs], marker="o", color=f"C{i % 10}",
                label=f"{label} (worst/best {cyc.max() / cyc.min():.1f}×)")
    ax.set_xticks(range(len(names)), names, rotation=45 if len(names) > 8 else 0,
                  ha="right" if len(names) > 8 else "center", fontsize="small")
    ax.set_yscale("log")
    ax.set_xlabel("dataflow order (sorted by the first line's cycles)")
    ax.set_ylabel("cycles")
    _legend(ax)
    ax.set_title("Dataflow orders (cf. FuseFlow Fig. 18)")


#: the axes a study sweeps; a figure's line holds all but its x axis fixed
_AXES = ["workload", "schedule", "order", "depth", "dtype", "seed", "backend", "hw",
         "hw_set", "par", "partition", "lane_buffer", "block", "buffer"]


def _lines(rows: Any, x: list[str]) -> Any:
    """(label, rows) per line: one line for each combination of the swept axes other
    than ``x`` that vary in ``rows``, labelled by the workload and the values of those
    axes, so no swept axis is silently folded into a minimum or a mean. Memory overrides
    on hardware without memory change nothing, so those runs share one line."""
    if "hw_set" in rows.columns and "dram_bytes_per_cycle" in rows.columns:
        rows = rows.copy()
        rows.loc[rows["dram_bytes_per_cycle"].isna(), "hw_set"] = None
    cols = [c for c in _AXES if c in rows.columns and c not in x]
    varying = [c for c in cols if c != "workload" and rows[c].map(str).nunique() > 1]
    for _, group in rows.groupby(_key(rows, cols), sort=True):
        first = group.iloc[0]
        parts = [str(first.get("workload", ""))] + [_shown(c, first[c]) for c in varying]
        yield " ".join(p for p in parts if p not in ("-", "None", "nan")), group


def _heuristic(frame: Any, ax: Any) -> None:
    """FuseFlow Table 3 as a scatter: the heuristic's bytes against the bytes moved, one
    colour per workload and schedule; each point names its order or schedule."""
    rows = _ok(frame, ["est_bytes", "bytes_moved"], "heuristic")
    rows = rows[rows["bytes_moved"].notna() & rows["est_bytes"].notna()]
    if rows.empty:
        raise PlotError("--kind heuristic: no successful run has both byte counts")
    by = [c for c in ("workload", "schedule") if c in rows.columns]
    for i, (key, group) in enumerate(rows.groupby(by, sort=True)):
        name = " ".join(str(k) for k in (key if isinstance(key, tuple) else (key,))
                        if str(k) != "-")
        ax.scatter(group["bytes_moved"], group["est_bytes"], color=f"C{i % 10}", label=name)
        if len(rows) <= 40:
            for r in group.itertuples():
                order = getattr(r, "order_used", None)
                tag = order if getattr(r, "kind", "") == "expr" and isinstance(order, str) \
                    else getattr(r, "schedule", None)
                if tag is not None:
                    ax.annotate(str(tag), (r.bytes_moved, r.est_bytes), fontsize=6,
                                xytext=(3, 3), textcoords="offset points")
    lo = float(min(rows["bytes_moved"].min(), rows["est_bytes"].min()))
    hi = float(max(rows["bytes_moved"].max(), rows["est_bytes"].max()))
    if lo > 0 and hi / lo > 10:  # a decade apart: a linear axis crowds the small ones
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.plot([max(lo, 1e-9), hi], [max(lo, 1e-9), hi], color="gray", lw=0.8,
            label="estimate = measured")
    ax.set_xlabel("bytes moved (simulated)")
    ax.set_ylabel("bytes estimated (heuristic)")
    _legend(ax)
    ax.set_title("Heuristic vs measured (cf. FuseFlow Table 3)")


def _depth(frame: Any, ax: Any) -> None:
    """Cycles against FIFO depth, one line per workload and every other axis that varies
    (order, schedule, hardware, …)."""
    rows = _ok(frame, ["depth", "cycles"], "depth")
    rows = rows[rows["depth"].notna()]
    if rows.empty:
        raise PlotError("--kind depth: no successful run has a bounded FIFO depth")
    for i, (label, group) in enumerate(_lines(rows, ["depth"])):
        g = group.groupby("depth")["cycles"].min().sort_index()
        ax.plot(g.index, g.values, marker="o", color=f"C{i % 10}", label=label)
    _int_ticks(ax, rows["depth"])
    ax.set_xlabel("FIFO depth")
    ax.set_ylabel("cycles")
    _legend(ax)
    ax.set_title("FIFO depth")


def _legend(ax: Any) -> None:
    """Inside the axes for a few lines; to the right of them for many (never over the
    data)."""
    n = len(ax.get_legend_handles_labels()[0])
    if n <= 6:
        ax.legend(fontsize="small")
    else:
        ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  borderaxespad=0.0)
        ax.figure.set_size_inches(10.5, max(4.2, 0.16 * n + 1.0))


def _int_ticks(ax: Any, values: Any) -> None:
    """A log2 x axis ticked at the swept values, written as plain integers."""
    ticks = sorted({int(v) for v in values})
    ax.set_xscale("log", base=2)
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()


def _bandwidth(frame: Any, ax: Any) -> None:
    """Cycles against off-chip bandwidth per channel, one line per workload and every
    other axis that varies; ideal-memory runs as dashed lines of the same colour (the
    cycles no bandwidth can beat)."""
    rows = _ok(frame, ["dram_bytes_per_cycle", "cycles"], "bandwidth")
    ideal_rows = rows[rows["dram_bytes_per_cycle"].isna()]
    swept = rows[rows["dram_bytes_per_cycle"].notna()]
    if swept.empty:
        raise PlotError("--kind bandwidth: no successful run has a memory system (sweep "
                        "hw_set dram.bytes_per_cycle on a preset)")
    # the ideal runs carry no bandwidth and no memory overrides: match them by the rest
    same = ["workload", "schedule", "order", "depth", "dtype", "seed", "backend", "par",
            "block"]
    same = [c for c in same if c in rows.columns]
    ideal = ideal_rows.groupby(_key(ideal_rows, same))["cycles"].min() \
        if not ideal_rows.empty else {}
    for i, (label, group) in enumerate(_lines(swept, ["dram_bytes_per_cycle", "hw_set"])):
        color = f"C{i % 10}"
        g = group.groupby("dram_bytes_per_cycle")["cycles"].min().sort_index()
        ax.plot(g.index, g.values, marker="o", color=color, label=label)
        floor = _key(group.iloc[:1], same).iloc[0]
        if floor in ideal:
            ax.axhline(float(ideal[floor]), color=color, ls="--", lw=0.8)
    _int_ticks(ax, swept["dram_bytes_per_cycle"])
    ax.set_yscale("log")
    ax.set_xlabel("DRAM bandwidth per channel (bytes/cycle); dashed: ideal memory")
    ax.set_ylabel("cycles")
    _legend(ax)
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
    return str(value) if col in ("partition", "hw", "schedule", "hw_set") \
        else f"{col} {value}"


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
#: kind -> drawing function that lays out its own panels on the figure
PANEL_KINDS: dict[str, Callable[[Any, Any], None]] = {
    "fig12": _fig12,
}


def _figure(frame: Any, kind: str) -> Any:
    """A drawn matplotlib figure of ``kind`` (the caller closes it)."""
    if kind not in KINDS and kind not in PANEL_KINDS:
        raise PlotError(f"--kind {kind!r}: expected one of "
                        f"{', '.join([*KINDS, *PANEL_KINDS])}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if kind in PANEL_KINDS:
        panels = max(1, frame["hw"].nunique()) if "hw" in frame.columns else 1
        fig = plt.figure(figsize=(10, 3.6 * panels))
    else:
        fig, ax = plt.subplots(figsize=(7, 4.2))
    try:
        if kind in PANEL_KINDS:
            PANEL_KINDS[kind](frame, fig)
        else:
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
