"""Figures a reader can use (issue 25): order names on the orders axis, labels on the
heuristic scatter, swept axes kept apart in the depth and bandwidth figures, integer
ticks and a title on the tuner's best-so-far plot."""

from __future__ import annotations

import itertools

import matplotlib
import pandas as pd
import pytest

from cosim.studies._plot import _figure

matplotlib.use("Agg")

ORDERS = ["i,j,k", "i,k,j", "k,i,j"]


def _row(**kw) -> dict:
    base = {"status": "ok", "kind": "expr", "workload": "spmm", "schedule": "-",
            "order": "default", "order_used": "i,j,k", "depth": 2, "dtype": "float32",
            "seed": 0, "backend": "python", "hw": "hbm2-u280", "hw_set": None, "par": None,
            "partition": "round-robin", "lane_buffer": None, "block": 1,
            "dram_bytes_per_cycle": 48.0, "cycles": 100, "bytes_moved": 10.0,
            "est_bytes": 12.0}
    return {**base, **kw}


@pytest.fixture
def sweep() -> pd.DataFrame:
    """Three orders x three depths x three bandwidths; cycles differ by every axis."""
    rows = []
    for (n, o), d, bw in itertools.product(enumerate(ORDERS), (2, 4, 8), (4, 16, 64)):
        rows.append(_row(order=o, order_used=o, depth=d, dram_bytes_per_cycle=float(bw),
                         hw_set=f"dram.bytes_per_cycle={bw}",
                         cycles=1000 * (n + 1) + 100 * d + 1000 // bw,
                         bytes_moved=50.0 * (n + 1), est_bytes=60.0 * (n + 1)))
    return pd.DataFrame(rows)


def _lines(ax) -> dict[str, list]:
    return {ln.get_label(): list(ln.get_ydata()) for ln in ax.get_lines()
            if not ln.get_label().startswith("_") and ln.get_label() != "ideal (linear)"}


def test_the_orders_axis_names_the_orders(sweep):
    rows = sweep[(sweep["depth"] == 2) & (sweep["dram_bytes_per_cycle"] == 4)]
    ax = _figure(rows, "orders").axes[0]
    want = list(rows.groupby("order_used")["cycles"].min().sort_values().index)
    assert [t.get_text() for t in ax.get_xticklabels()] == want


@pytest.mark.parametrize("kind, x", [("depth", "depth"), ("bandwidth", "dram_bytes_per_cycle")])
def test_swept_axes_are_lines_of_their_own_not_a_minimum(sweep, kind, x):
    """Depth was a minimum over orders and bandwidths; bandwidth over orders and depths."""
    ax = _figure(sweep, kind).axes[0]
    lines = _lines(ax)
    other = "dram_bytes_per_cycle" if x == "depth" else "depth"
    assert len(lines) == len(ORDERS) * 3
    for (o, v), group in sweep.groupby(["order", other]):
        shown = f"{other} {v}" if other == "depth" else f"dram.bytes_per_cycle={int(v)}"
        label = next(lb for lb in lines if f"order {o}" in lb and lb.endswith(shown))
        assert lines[label] == list(group.sort_values(x)["cycles"])


def test_depth_ticks_are_the_swept_depths(sweep):
    ax = _figure(sweep, "depth").axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2", "4", "8"]


def test_the_heuristic_scatter_labels_its_points(sweep):
    rows = sweep[(sweep["depth"] == 2) & (sweep["dram_bytes_per_cycle"] == 4)]
    ax = _figure(rows, "heuristic").axes[0]
    assert sorted(t.get_text() for t in ax.texts) == ORDERS
    assert "spmm" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_best_so_far_has_integer_ticks_and_a_title(tmp_path, monkeypatch):
    import matplotlib.image
    import matplotlib.pyplot as plt

    from cosim.tuning._report import plot_history

    frame = pd.DataFrame({"eval": [1, 2, 3], "source": ["hand:unfused", "random", "bo"],
                          "cycles": [30.0, 20.0, 25.0], "best_so_far": [30.0, 20.0, 20.0]})
    seen = {}
    real = plt.Figure.savefig

    def keep(fig, *a, **kw):  # the figure as it is saved
        seen["title"] = fig.axes[0].get_title()
        seen["ticks"] = [t for t in fig.axes[0].get_xticks() if 1 <= t <= 3]
        return real(fig, *a, **kw)

    monkeypatch.setattr(plt.Figure, "savefig", keep)
    plot_history(frame, "cycles", tmp_path / "b.png", "tune GCN: cycles")
    assert seen["title"] == "tune GCN: cycles"
    assert seen["ticks"] == [1.0, 2.0, 3.0]
    assert matplotlib.image.imread(tmp_path / "b.png").shape[2] in (3, 4)
