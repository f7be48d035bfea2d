#!/usr/bin/env python
"""Compile time of every kernel the einsum compiler supports (target: < 50 ms each).

Each row is the best of ``--repeat`` runs of ``compiler.compile_expression`` — parse,
normalize, order search (when no order is given), layouts, lowering and graph
validation — so it is what a user waits for. Exits 1 if any kernel misses the target.

    .venv/bin/python scripts/bench_compile.py [--repeat 20] [--target-ms 50]
"""

from __future__ import annotations

import argparse
import sys
import time

from compiler import compile_expression

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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--target-ms", type=float, default=50.0)
    args = ap.parse_args()
    print(f"{'kernel':<32}{'order':>9}{'nodes':>7}{'best ms':>9}{'mean ms':>9}  within target")
    worst = 0.0
    for label, (expr, fmts, shapes, order) in KERNELS.items():
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            graph = compile_expression(expr, fmts, shapes, order=order)
            times.append((time.perf_counter() - t0) * 1e3)
        best, mean = min(times), sum(times) / len(times)
        worst = max(worst, best)
        print(f"{label:<32}{','.join(graph.meta['order']):>9}{len(graph.nodes):>7}"
              f"{best:>9.2f}{mean:>9.2f}  {'yes' if best < args.target_ms else 'NO'}")
    print(f"slowest: {worst:.2f} ms (target {args.target_ms:g} ms)")
    return 0 if worst < args.target_ms else 1


if __name__ == "__main__":
    sys.exit(main())
