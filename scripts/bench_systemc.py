#!/usr/bin/env python
"""SystemC backend against the Python reference model on SpMM: a 2,000 x 2,000 matrix at
1 % density times a dense 2,000 x 16 matrix (the inputs of scripts/bench_sim.py).

Prints, per backend, simulated cycles, primitive firings, wall time, firings/s and
cycles/s, the SystemC/Python ratio, and the SystemC fixed costs separately: loading the
compiled models (cppyy; building them first if the cache is cold), the warm-up run that
compiles cppyy's call wrappers, the fork, the elaboration and the result transfer. Both
backends must agree on outputs and cycles.

    .venv/bin/python scripts/bench_systemc.py [--n 2000] [--density 0.01] [--cols 16]
        [--order ikj|ijk] [--per-module] [--skip-python] [--hw ideal|hbm2-u280|FILE.yaml]
        [--hw-set KEY=VALUE ...]

``--hw`` picks the simulated hardware (default ideal: no memory system); with memory the
table also shows the off-chip bytes and the stall_mem cycles.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from bench_sim import add_workload_args, spmm_workload

from cosim import SystemCBackend
from ir import load_hw
from sim_models.python import simulate


def _row(label: str, cycles: int, firings: int, wall: float) -> str:
    return (f"{label:<26}{cycles:>12,}{firings:>13,}{wall:>9.2f}{firings / wall:>13,.0f}"
            f"{cycles / wall:>12,.0f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_workload_args(ap)
    ap.add_argument("--per-module", action="store_true",
                    help="one SC_METHOD per primitive instead of one per clock edge")
    ap.add_argument("--skip-python", action="store_true", help="SystemC only")
    ap.add_argument("--hw", default="ideal", help="simulated hardware: a preset or a .yaml file")
    ap.add_argument("--hw-set", action="append", default=[], metavar="KEY=VALUE",
                    help="override a hardware key (repeatable)")
    args = ap.parse_args()
    graph, inputs = spmm_workload(args)
    hw = load_hw(args.hw, args.hw_set)

    backend = SystemCBackend(per_module_processes=args.per_module)
    t0 = time.perf_counter()
    first = backend.run(graph, inputs, hw=hw)
    first_wall = time.perf_counter() - t0
    fixed = dict(backend.last_timings)
    t0 = time.perf_counter()
    sc = backend.run(graph, inputs, hw=hw)  # warm: what every further run in this process costs
    sc_wall = time.perf_counter() - t0
    t = backend.last_timings
    np.testing.assert_allclose(sc.dense("X"), inputs["B"] @ inputs["C"], rtol=1e-4, atol=1e-4)
    assert first.cycles == sc.cycles

    print(f"{'backend':<26}{'cycles':>12}{'firings':>13}{'wall s':>9}{'firings/s':>13}"
          f"{'cycles/s':>12}")
    py_rate = None
    if not args.skip_python:
        t0 = time.perf_counter()
        py = simulate(graph, inputs, hw=hw)
        py_wall = time.perf_counter() - t0
        print(_row("python (reference)", py.cycles, py.firings, py_wall))
        py_rate = py.firings / py_wall
        assert py.cycles == sc.cycles and py.firings == sc.firings, "backends disagree"
        assert py.nodes == sc.nodes, "backends disagree on node statistics"
        np.testing.assert_array_equal(py.dense("X"), sc.dense("X"))
    mode = "per-module" if args.per_module else "fused"
    print(f"hardware {hw.name}: off-chip {sc.dram_read_bytes:,} B read, "
          f"{sc.dram_write_bytes:,} B written, "
          f"stall_mem {sum(s.stall_mem for s in sc.nodes.values()):,} node-cycles")
    print(_row(f"systemc {mode}: simulate", sc.cycles, sc.firings, t["simulate"]))
    print(_row(f"systemc {mode}: per run", sc.cycles, sc.firings, sc_wall))
    print(_row(f"systemc {mode}: first run", sc.cycles, sc.firings, first_wall))
    if py_rate:
        print(f"ratio (firings/s, systemc / python): simulate "
              f"{sc.firings / t['simulate'] / py_rate:.1f}x, per run "
              f"{sc.firings / sc_wall / py_rate:.1f}x, first run incl. fixed costs "
              f"{sc.firings / first_wall / py_rate:.1f}x")
    print("systemc fixed costs (s):")
    print(f"  once per process: load the compiled models {fixed['load']:.2f}, "
          f"warm-up {fixed['warm_up']:.2f}")
    print(f"  per run: fork {t['fork']:.3f}, elaborate {t['elaborate']:.3f}, "
          f"extract {t['extract']:.3f}, transfer {t['transfer']:.3f}, "
          f"decode {t['decode']:.3f}, plan {t['plan']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
