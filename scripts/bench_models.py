#!/usr/bin/env python
"""Compile time of whole programs under each fusion schedule (and, with ``--run``, their
cycles and bytes moved on the Python model).

Each row is the best of ``--repeat`` runs of ``compiler.compile_model``: fusion, the
partial order graph, the order search and every kernel's lowering. The programs are
hand-written einsum programs; models from the torch frontend can be added to
``PROGRAMS``.

    .venv/bin/python scripts/bench_models.py [--repeat 5] [--run]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from compiler import compile_model, einsum_program
from cosim import run_model
from ir import Program, Schedule


def gcn(n: int = 16, f: int = 8, h: int = 6, c: int = 3) -> Program:
    """Two GCN layers: relu(A (X W1) + b1), then A (H1 W2)."""
    return einsum_program(
        ["T1(i,j) = X(i,k) * W1(k,j)", "T2(i,j) = A(i,k) * T1(k,j)",
         "H1(i,j) = relu(T2(i,j) + b1(j))", "T3(i,j) = H1(i,k) * W2(k,j)",
         "H2(i,j) = A(i,k) * T3(k,j)"],
        {"X": (n, f), "W1": (f, h), "A": (n, n), "b1": (h,), "W2": (h, c)}, {"A": "csr"},
        scopes=["layer0"] * 3 + ["layer1"] * 2, name="gcn")


def spmm_chain(n: int = 16) -> Program:
    """Three sparse matmuls in a row: ((A B) C) D."""
    return einsum_program(
        ["T1(i,j) = A(i,k) * B(k,j)", "T2(i,j) = T1(i,k) * C(k,j)",
         "Y(i,j) = T2(i,k) * D(k,j)"],
        {"A": (n, n), "B": (n, n), "C": (n, n), "D": (n, 4)},
        {"A": "csr", "B": "csr", "C": "csr"}, scopes=["a", "a", "b"], name="spmm_chain")


def nested(n: int = 16) -> Program:
    """The nested matmul A (B C)."""
    return einsum_program(["T(i,j) = B(i,k) * C(k,j)", "Y(i,j) = A(i,l) * T(l,j)"],
                          {"A": (n, n), "B": (n, n), "C": (n, 4)}, {"A": "csr", "B": "csr"},
                          name="nested")


PROGRAMS: dict[str, Callable[[], Program]] = {"gcn": gcn, "spmm_chain": spmm_chain,
                                              "nested": nested}
SCHEDULES: dict[str, Callable[[Program], Schedule]] = {
    "unfused": Schedule.unfused, "by_scope": Schedule.by_scope, "fused": Schedule.fused}


def inputs_for(p: Program, seed: int = 0) -> dict[str, object]:
    rng = np.random.default_rng(seed)
    out: dict[str, object] = {}
    for name in p.inputs:
        decl = p.tensors[name]
        if decl.format == "csr":
            out[name] = sp.random(*decl.shape, density=0.2, random_state=seed,
                                  format="csr", dtype=np.float32)
        else:
            out[name] = rng.standard_normal(decl.shape).astype(np.float32)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--run", action="store_true", help="also simulate (Python model)")
    args = ap.parse_args()
    head = f"{'program':<12}{'schedule':<10}{'kernels':>8}{'orders':>8}{'compile ms':>12}"
    print(head + (f"{'cycles':>10}{'bytes':>10}" if args.run else ""))
    for pname, build in PROGRAMS.items():
        p = build()
        for sname, make in SCHEDULES.items():
            best, cm = float("inf"), None
            for _ in range(args.repeat):
                start = time.perf_counter()
                cm = compile_model(p, make(p))
                best = min(best, time.perf_counter() - start)
            assert cm is not None
            kernels = [k for r in cm.regions for k in r.kernels]
            tried = sum(len(k.tried) + 1 for k in kernels)
            row = f"{pname:<12}{sname:<10}{len(kernels):>8}{tried:>8}{best * 1e3:>12.1f}"
            if args.run:
                run = run_model(cm, inputs_for(p))
                row += f"{run.cycles:>10}{run.bytes_moved:>10}"
            print(row)


if __name__ == "__main__":
    main()
