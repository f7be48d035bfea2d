#!/usr/bin/env python
"""SystemC against the Python model on a block-sparse SpMM (docs/blocks.md): Gustavson
ikj, B and C n x n with a random pattern of b x b blocks at the given block density.

Prints cycles, firings, wall time and cycles/s per backend, the SystemC block pool's
handles, and checks that both backends agree on cycles, statistics and outputs.

    .venv/bin/python scripts/bench_systemc_blocks.py [--n 256] [--block 16]
        [--density 0.1] [--hw ideal|hbm2-u280] [--skip-python]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import ir.examples as ex
from cosim import SystemCBackend
from ir import load_hw
from sim_models.python import simulate


def _sparse(rng: np.random.Generator, n: int, b: int, density: float) -> np.ndarray:
    pattern = rng.random((n // b, n // b)) < density
    return (np.kron(pattern, np.ones((b, b))) * rng.standard_normal((n, n))).astype(np.float32)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--block", type=int, default=16)
    ap.add_argument("--density", type=float, default=0.1, help="fraction of stored blocks")
    ap.add_argument("--hw", default="ideal")
    ap.add_argument("--skip-python", action="store_true")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n, b = args.n, args.block
    B, C = _sparse(rng, n, b, args.density), _sparse(rng, n, b, args.density)
    graph, inputs, hw = ex.spmm_ikj(n, n, n, block=b), {"B": B, "C": C}, load_hw(args.hw)
    print(f"block SpMM ikj: {n}x{n} at {args.density:.0%} of {b}x{b} blocks, hw {hw.name}")

    backend = SystemCBackend()
    backend.run(graph, inputs, hw=hw)  # load + JIT warm-up, not timed below
    start = time.perf_counter()
    sc = backend.run(graph, inputs, hw=hw)
    wall = time.perf_counter() - start
    t = backend.last_timings
    fires = sum(s.fires for s in sc.nodes.values())
    print(f"{'backend':<22}{'cycles':>10}{'firings':>11}{'wall s':>9}{'cycles/s':>12}")
    print(f"{'systemc: simulate':<22}{sc.cycles:>10,}{fires:>11,}{t['simulate']:>9.3f}"
          f"{sc.cycles / t['simulate']:>12,.0f}")
    print(f"{'systemc: per run':<22}{sc.cycles:>10,}{fires:>11,}{wall:>9.3f}"
          f"{sc.cycles / wall:>12,.0f}")
    np.testing.assert_allclose(sc.dense("X"), B @ C, rtol=1e-4, atol=1e-3)
    if not args.skip_python:
        start = time.perf_counter()
        py = simulate(graph, inputs, hw=hw)
        pw = time.perf_counter() - start
        print(f"{'python':<22}{py.cycles:>10,}{fires:>11,}{pw:>9.3f}{py.cycles / pw:>12,.0f}")
        assert py.cycles == sc.cycles and py.nodes == sc.nodes, "backends disagree"
        np.testing.assert_array_equal(py.dense("X"), sc.dense("X"))
        print(f"SystemC / Python: {pw / wall:.1f}x per run, {pw / t['simulate']:.1f}x simulate")
    return 0


if __name__ == "__main__":
    sys.exit(main())
