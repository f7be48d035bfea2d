#!/usr/bin/env python
"""Reference-model throughput on SpMM: a 2,000 x 2,000 matrix at 1 % density times a dense
2,000 x 16 matrix (Gustavson order, sparse accumulator). Prints simulated cycles,
primitive firings, wall and CPU time, firings/s and cycles/s (of wall time) with and
without traces, and the untimed functional mode, on the core this process runs
(``SAMFUSE_SIM_CORE``: the compiled core when built, else pure Python).

    .venv/bin/python scripts/bench_sim.py [--n 2000] [--density 0.01] [--cols 16]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
import scipy.sparse as sp

from ir import Graph, examples, load_hw
from sim_models.python import CORE, simulate


def add_workload_args(ap: argparse.ArgumentParser) -> None:
    """The SpMM workload's options, shared with scripts/bench_systemc.py."""
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--density", type=float, default=0.01)
    ap.add_argument("--cols", type=int, default=16)
    ap.add_argument("--order", choices=["ikj", "ijk"], default="ikj")


def spmm_workload(args: argparse.Namespace) -> tuple[Graph, dict[str, Any]]:
    """The seeded SpMM graph and inputs; prints a one-line description."""
    rng = np.random.default_rng(0)
    B = sp.random(args.n, args.n, args.density, format="csr", dtype=np.float32,
                  random_state=rng)
    C = rng.random((args.n, args.cols), dtype=np.float32)
    if args.order == "ikj":
        graph = examples.spmm_ikj(args.n, args.n, args.cols, "dc", "dd")
    else:
        graph = examples.spmm_ijk(args.n, args.n, args.cols, "dc")
    print(f"SpMM {args.order}: B {args.n}x{args.n} nnz={B.nnz} ({args.density:.2%}), "
          f"C {args.n}x{args.cols} dense; {len(graph.nodes)} nodes, {len(graph.edges)} edges")
    return graph, {"B": B, "C": C}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_workload_args(ap)
    ap.add_argument("--hw", default="hbm2-u280",
                    help="hardware for the memory rows (preset or YAML; default %(default)s)")
    args = ap.parse_args()
    hw = load_hw(args.hw)
    graph, inputs = spmm_workload(args)
    gold = inputs["B"] @ inputs["C"]
    print(f"Python model, {CORE} core")
    print(f"{'mode':<22}{'cycles':>12}{'firings':>12}{'wall s':>9}{'cpu s':>8}"
          f"{'firings/s':>13}{'cycles/s':>12}")
    for label, kw in [("timed", {}), ("timed + trace", {"trace": True}),
                      ("functional (untimed)", {"functional": True}),
                      (f"timed, {hw.name}"[:21], {"hw": hw}),
                      ("timed, memory + log", {"hw": hw, "mem_trace": True})]:
        t0, c0 = time.perf_counter(), time.process_time()
        res = simulate(graph, inputs, **kw)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        np.testing.assert_allclose(res.dense("X"), gold, rtol=1e-4, atol=1e-4)
        cyc = res.cycles
        print(f"{label:<22}{cyc if cyc is not None else '-':>12}{res.firings:>12,}"
              f"{wall:>9.2f}{cpu:>8.2f}{res.firings / wall:>13,.0f}"
              f"{(f'{cyc / wall:,.0f}' if cyc else '-'):>12}")


if __name__ == "__main__":
    main()
