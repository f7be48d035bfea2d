"""One-level against two-level position lanes on the power-law ``hubs`` graph.

The ``hubs`` SpMM of ``scripts/bench_lanes.py`` (2,000 nodes, the heaviest row 10 % of the
arcs, × dense 8, order i,k,j, ideal memory) at 8 and 16 lanes: position lanes on ``i``
alone, and ``i`` lanes holding ``j`` lanes that cut ``B``'s positions (docs/parallel.md,
"Hierarchical"); round-robin at the same lane counts for reference. Prints cycles, the
imbalance and the range of the innermost lanes' work.

    .venv/bin/python scripts/bench_position_levels.py [--lanes 8 16]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_lanes import SPMM, hub_graph, run  # noqa: E402

#: lane count -> the nestings measured: one level, then two
NESTINGS = {8: ({"i": 8}, {"i": 4, "j": 2}, {"i": 2, "j": 4}),
            16: ({"i": 16}, {"i": 8, "j": 2}, {"i": 4, "j": 4})}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lanes", type=int, nargs="+", default=[8, 16], choices=sorted(NESTINGS))
    args = ap.parse_args()
    A = hub_graph()
    B = np.random.default_rng(2).random((A.shape[0], 8), dtype=np.float32)
    deg = np.diff(A.indptr)
    print(f"hubs SpMM x dense 8 (i,k,j), {A.shape[0]} nodes, {A.nnz} arcs, heaviest row "
          f"{deg.max() / A.nnz:.1%}, ideal memory")
    for lanes in args.lanes:
        for par in NESTINGS[lanes]:
            for part in ("round-robin", "position"):
                r = run(SPMM, {"A": A, "B": B}, "i,k,j", par, part, "ideal")
                shown = ",".join(f"{k}={v}" for k, v in par.items())
                work = r["work"].values()
                print(f"  {lanes:>2} lanes {shown:<9} {part:<12} cycles {r['cycles']:>7}  "
                      f"imbalance {r['imbalance']:.3f}  lane work {min(work)}..{max(work)}"
                      f"  wall {r['wall']:.1f} s", flush=True)


if __name__ == "__main__":
    main()
