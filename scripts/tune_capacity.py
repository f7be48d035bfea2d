"""How the best fusion plan changes as the on-chip buffer shrinks (docs/tune.md).

Tunes one model at each ``onchip.bytes`` capacity (the sparse accumulators' buffer;
plans whose accumulators outgrow it fail with an on-chip overflow, which the tuner's
feasibility model learns) and draws the best cycles per capacity, labelled with the
plan, to docs/figures/tune-capacity.png.

    .venv/bin/python scripts/tune_capacity.py                  # tiny GCN, ~3 min
    .venv/bin/python scripts/tune_capacity.py --model graphsage --budget 15
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cosim import tune

CAPACITIES = (1 << 20, 64, 32, 16, 8, 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="gcn")
    ap.add_argument("--config", default="tiny")
    ap.add_argument("--budget", type=int, default=20)
    ap.add_argument("--out", default="tune/out/capacity")
    ap.add_argument("--figure", default="docs/figures/tune-capacity.png")
    args = ap.parse_args()
    rows = []
    for cap in CAPACITIES:
        res = tune(args.model, Path(args.out) / f"{args.model}-{args.config}-{cap}",
                   config=args.config, budget=args.budget, hw="ideal",
                   hw_set=[("onchip.bytes", str(cap))])
        best = res.best
        failed = sum(t.outcome.value is None for t in res.trials)
        hand = {t.source[5:]: t.outcome.value for t in res.trials
                if t.source.startswith("hand")}
        plan = res.space.describe(best.point) if best else "-"
        rows.append((cap, best.outcome.value if best else None, failed, hand, plan,
                     len(res.space.regions(best.point.cuts)) if best else 0))
        print(f"onchip.bytes={cap}: best {rows[-1][1]} ({failed} of {len(res.trials)} "
              f"failed; hand {hand})\n    {plan}", flush=True)
    draw(rows, args, Path(args.figure))
    return 0


def draw(rows: list[tuple], args: argparse.Namespace, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.8))
    xs = [str(r[0]) for r in rows]
    ax.plot(xs, [r[1] for r in rows], "o-", color="black", label="tuned")
    for name, marker in (("unfused", "s"), ("partial", "D"), ("full", "^")):
        ax.plot(xs, [r[3].get(name) for r in rows], marker, alpha=0.6, label=name)
    for x, r in zip(xs, rows, strict=True):
        ax.annotate(f"{r[5]} regions\n{r[2]} failed", (x, r[1]), fontsize=7,
                    textcoords="offset points", xytext=(4, 6))
    ax.set_xlabel("onchip.bytes (sparse accumulators' buffer)")
    ax.set_ylabel("cycles (ideal memory)")
    ax.set_title(f"{args.model} {args.config}: best plan per on-chip capacity "
                 f"(budget {args.budget})", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


if __name__ == "__main__":
    sys.exit(main())
