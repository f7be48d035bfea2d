#!/usr/bin/env python
"""Compile time of every kernel the einsum compiler supports (target: < 50 ms each) and
of every bundled model under every schedule (target: < 750 ms each).

Each kernel row is the best of ``--repeat`` runs of ``compiler.compile_expression`` —
parse, normalize, order search (lowering and costing the candidate orders when no order
is given), layouts, lowering and graph validation — so it is what a user waits for.
Each model row is the best of ``--model-repeat`` runs of ``compiler.compile_model`` on
the program ``from_torch`` made (the frontend is not timed), at the model's evaluation
size (``scripts/bench_models.py``'s ``COMPILE_CONFIGS``), with its best CPU time (the
wall time on a machine shared with other jobs overstates it). Exits 1 if anything
misses its target.

    .venv/bin/python scripts/bench_compile.py [--repeat 20] [--target-ms 50]
    .venv/bin/python scripts/bench_compile.py --no-kernels --models gpt --schedules full
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # bench_models
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from compiler import compile_expression  # noqa: E402

SPMM = "X(i,j) = B(i,k) * C(k,j)"
MAT = {"B": (1000, 800), "C": (800, 64)}

#: label → (expression, formats, shapes, order or None for the compiler's choice)
KERNELS = {
    "spmv": ("x(i) = B(i,j) * c(j)", {"B": "csr"}, {"B": (1000, 800), "c": (800,)}, None),
    "spmm ijk": (SPMM, {"B": "csr", "C": "csc"}, MAT, "ijk"),
    "spmm ikj (spacc)": (SPMM, {"B": "csr", "C": "csr"}, MAT, "ikj"),
    "spmm jik": (SPMM, {"B": "csr", "C": "csc", "X": "dd:1,0"}, MAT, "jik"),
    "spmm jki (spacc)": (SPMM, {"B": "csc", "C": "csc", "X": "dc:1,0"}, MAT, "jki"),
    "spmm kij (spacc2)": (SPMM, {"B": "csc", "C": "csr", "X": "cc"}, MAT, "kij"),
    "spmm kji (spacc2)": (SPMM, {"B": "csc", "C": "csr", "X": "cc:1,0"}, MAT, "kji"),
    "spmm default order": (SPMM, {"B": "csr", "C": "csr"}, MAT, None),
    "sddmm": ("X(i,j) = B(i,j) * C(i,k) * D(k,j)", {"B": "csr", "X": "dc"},
              {"B": (1000, 1000), "C": (1000, 64), "D": (64, 1000)}, None),
    "add (union, dcsr out)": ("X(i,j) = B(i,j) + C(i,j)", {"B": "csr", "C": "csr",
                                                          "X": "dcsr"},
                              {"B": (1000, 800), "C": (1000, 800)}, None),
    "mul (intersect)": ("X(i,j) = B(i,j) * C(i,j)", {"B": "dcsr", "C": "csr", "X": "dcsr"},
                        {"B": (1000, 800), "C": (1000, 800)}, None),
    "mttkrp": ("A(i,j) = B(i,k,l) * C(k,j) * D(l,j)", {"B": "dcc"},
               {"B": (100, 80, 60), "C": (80, 16), "D": (60, 16)}, None),
    "ttv": ("X(i,j) = B(i,j,k) * c(k)", {"B": "dcc", "X": "dc"},
            {"B": (100, 80, 60), "c": (60,)}, None),
    "inner product": ("x = a(i) * b(i)", {"a": "sv", "b": "sv"},
                      {"a": (10000,), "b": (10000,)}, None),
    "transposed operand (csr, j,i)": ("x(i) = B(i,j) * c(j)", {"B": "csr"},
                                      {"B": (1000, 800), "c": (800,)}, "ji"),
    "max reduction": ("x(i) = max(j) B(i,j)", {"B": "csr"}, {"B": (1000, 800)}, None),
    "spmm + bias (gcn-like)": ("X(i,j) = A(i,k) * H(k,j) + b(j) * 0.5",
                                    {"A": "csr"},
                                    {"A": (2708, 2708), "H": (2708, 16), "b": (16,)}, None),
}


def model_times(names: list[str], schedules: list[str], repeat: int, target_ms: float
                ) -> float:
    """Print compile time per model and schedule; return the slowest (ms)."""
    import warnings

    import _bench_workloads as bm

    from compiler import compile_model

    warnings.filterwarnings("ignore", message=".*[Ss]parse CSR tensor support is in beta")
    print(f"\n{'model':<13}{'schedule':<10}{'regions':>8}{'kernels':>8}{'nodes':>7}"
          f"{'costed':>7}{'best ms':>9}{'mean ms':>9}{'cpu ms':>8}  within target")
    worst = 0.0
    for name in names:
        prog, _ = bm.frontend(bm.named_workload(name, bm.COMPILE_CONFIGS[name]))
        for sname in schedules:
            schedule = bm.SCHEDULES[sname](prog)
            times, cpu = [], []
            for _ in range(repeat):
                t0, c0 = time.perf_counter(), time.process_time()
                cm = compile_model(prog, schedule)
                times.append((time.perf_counter() - t0) * 1e3)
                cpu.append((time.process_time() - c0) * 1e3)
            kernels = [k for r in cm.regions for k in r.kernels]
            costed = sum(1 for k in kernels
                         for c in k.graph.meta.get("order_search", {}).get("candidates", [])
                         if "cost" in c)
            best, mean = min(times), sum(times) / len(times)
            worst = max(worst, best)
            print(f"{name:<13}{sname:<10}{len(cm.regions):>8}{len(kernels):>8}"
                  f"{sum(len(k.graph.nodes) for k in kernels):>7}{costed:>7}{best:>9.1f}"
                  f"{mean:>9.1f}{min(cpu):>8.1f}  {'yes' if best < target_ms else 'NO'}")
    print(f"slowest model: {worst:.1f} ms (target {target_ms:g} ms)")
    return worst


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--target-ms", type=float, default=50.0)
    ap.add_argument("--no-kernels", action="store_true", help="skip the kernel table")
    ap.add_argument("--models", default="gcn,graphsage,autoencoder,bigbird,gpt",
                    help="comma-separated models ('' for none)")
    ap.add_argument("--schedules", default="unfused,partial,full,epilogue")
    ap.add_argument("--model-repeat", type=int, default=5)
    ap.add_argument("--model-target-ms", type=float, default=750.0)
    args = ap.parse_args()
    ok = True
    if not args.no_kernels:
        ok = kernel_times(args.repeat, args.target_ms)
    models = [m for m in args.models.split(",") if m]
    if models:
        worst = model_times(models, [s for s in args.schedules.split(",") if s],
                            args.model_repeat, args.model_target_ms)
        ok = ok and worst < args.model_target_ms
    return 0 if ok else 1


def kernel_times(repeat: int, target_ms: float) -> bool:
    """Print the kernel table; True if every kernel is within ``target_ms``."""
    print(f"{'kernel':<32}{'order':>9}{'nodes':>7}{'best ms':>9}{'mean ms':>9}  within target")
    worst = 0.0
    for label, (expr, fmts, shapes, order) in KERNELS.items():
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            graph = compile_expression(expr, fmts, shapes, order=order)
            times.append((time.perf_counter() - t0) * 1e3)
        best, mean = min(times), sum(times) / len(times)
        worst = max(worst, best)
        print(f"{label:<32}{','.join(graph.meta['order']):>9}{len(graph.nodes):>7}"
              f"{best:>9.2f}{mean:>9.2f}  {'yes' if best < target_ms else 'NO'}")
    print(f"slowest: {worst:.2f} ms (target {target_ms:g} ms)")
    return worst < target_ms


if __name__ == "__main__":
    sys.exit(main())
