#!/usr/bin/env python
"""Parallel lanes on the reference model (docs/parallel.md): what issue 13 asks to measure.

1. Scaling: SpMM ``X(i,j) = A(i,k) * B(k,j)`` with ``A`` uniform random, 1-16 lanes on
   ``i`` and nested 4x4 (``i`` and ``j``), under ``ideal`` and ``hbm2-u280``.
2. Load balance: an R-MAT graph (degrees spanning three orders of magnitude) at 8 lanes,
   every partition, on SpMM and on a three-operand masked product (SDDMM
   ``X(i,j) = A(i,j) * U(i,k) * V(k,j)``), with per-lane work and imbalance.
3. Hubs (issue 28): a 2,000-node power-law graph whose heaviest row holds a tenth of the
   nonzeros, SpMM and SDDMM at 8 lanes under every partition (position splits the heavy
   row across lanes), and the position partition's goals checked; then like for like:
   round-robin with the FIFOs after the key's scanner as deep as position's window FIFOs
   (part of position's SDDMM gain is that depth, which relieves the kernel's inner loop).

Prints one line per run: cycles, speed-up over one lane, imbalance, wall time.

    .venv/bin/python scripts/bench_lanes.py [--quick] [--only scaling|balance|hubs]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp

from compiler import compile_expression
from compiler._parallel import WINDOW_FIFO
from cosim.runs._lanes import lane_report
from ir import PARTITIONS, Edge, Graph, load_hw
from ir.datasets import chung_lu_graph, rmat_graph
from sim_models.python import simulate

SPMM = "X(i,j) = A(i,k) * B(k,j)"
SDDMM = "X(i,j) = A(i,j) * U(i,k) * V(k,j)"


def run(expr: str, tensors: Mapping[str, Any], order: str, par: dict[str, int],
        partition: str, hw: str, deep_scan: str = "") -> dict[str, Any]:
    """One run; ``deep_scan``: the FIFOs out of that scanner's lane copies are made
    :data:`WINDOW_FIFO` deep (as a position lane's after its window split)."""
    formats = {"A": "csr", "X": "csr"}
    shapes = {n: t.shape for n, t in tensors.items()}
    graph = compile_expression(expr, formats, shapes, order=order, par=par,
                               partition=partition, stats=dict(tensors))
    if deep_scan:
        edges = [Edge(e.src, e.dst, max(e.depth, WINDOW_FIFO))
                 if e.src_node.startswith(deep_scan + "_") else e for e in graph.edges]
        graph = Graph(graph.name, list(graph.nodes.values()), edges,
                      list(graph.tensors.values()), graph.dtype, graph.meta)
    start = time.perf_counter()
    res = simulate(graph, tensors, hw=load_hw(hw))
    lanes = lane_report(graph, res)
    return {"cycles": res.cycles, "imbalance": lanes.imbalance, "work": lanes.work,
            "wall": time.perf_counter() - start, "nodes": len(graph.nodes),
            "dram": res.dram_read_bytes + res.dram_write_bytes}


def scaling(quick: bool) -> None:
    n, cols, per_row = (128, 16, 24) if quick else (256, 32, 32)
    rng = np.random.default_rng(0)
    A = sp.random(n, n, per_row / n, format="csr", dtype=np.float32, random_state=rng)
    B = rng.random((n, cols), dtype=np.float32)
    print(f"scaling: SpMM {n}x{n} uniform ({A.nnz} nnz, {per_row}/row) x dense {n}x{cols}, "
          "round-robin; orders i,j,k (inner product) and i,k,j (Gustavson)")
    for order in ("i,j,k", "i,k,j"):
        for hw in ("ideal", "hbm2-u280"):
            base = None
            for par in ({}, {"i": 2}, {"i": 4}, {"i": 8}, {"i": 16}, {"i": 4, "j": 4}):
                r = run(SPMM, {"A": A, "B": B}, order, par, "round-robin", hw)
                base = base or r["cycles"]
                shown = "x".join(f"{k}={v}" for k, v in par.items()) or "1 lane"
                print(f"  {order} {hw:<10} {shown:<10} cycles {r['cycles']:>9}  speed-up "
                      f"{base / r['cycles']:5.2f}x  imbalance {r['imbalance']:.3f}  DRAM "
                      f"{r['dram']:>9} B  {r['nodes']:>4} nodes  wall {r['wall']:.1f} s")


def kernels(A: sp.csr_matrix, seed: int) -> tuple[tuple[str, str, dict, str], ...]:
    """SpMM by a dense ``n x 8`` (Gustavson) and SDDMM with ``k = 4`` on graph ``A``:
    (name, expression, tensors, order) each."""
    n = A.shape[0]
    rng = np.random.default_rng(seed)
    B = rng.random((n, 8), dtype=np.float32)
    U = rng.random((n, 4), dtype=np.float32)
    V = rng.random((4, n), dtype=np.float32)
    return (("SpMM x dense 8", SPMM, {"A": A, "B": B}, "i,k,j"),
            ("SDDMM k=4", SDDMM, {"A": A, "U": U, "V": V}, "i,j,k"))


def partition_table(name: str, expr: str, tensors: Mapping[str, Any], order: str,
                    one: int | None = None) -> dict[str, dict[str, Any]]:
    """A row per partition at 8 lanes on ``i`` (ideal memory): cycles, the speed-up over
    ``one`` lane's cycles when given, imbalance, lane work; the runs by partition."""
    got = {}
    for part in PARTITIONS:
        r = got[part] = run(expr, tensors, order, {"i": 8}, part, "ideal")
        speed = f"  speed-up {one / r['cycles']:5.2f}x" if one else ""
        print(f"  {name:<15} {part:<12} cycles {r['cycles']:>9}{speed}  imbalance "
              f"{r['imbalance']:.3f}  lane work {min(r['work'].values())}.."
              f"{max(r['work'].values())}  wall {r['wall']:.1f} s")
    return got


def balance(quick: bool) -> None:
    scale, factor = (10, 8) if quick else (12, 24)
    A = rmat_graph(scale, factor, seed=1)
    deg = np.diff(A.indptr)
    print(f"balance: R-MAT scale {scale} ({A.shape[0]} nodes, {A.nnz} edges, degrees "
          f"{deg[deg > 0].min()}..{deg.max()}), 8 lanes on i, ideal memory")
    for name, expr, tensors, order in kernels(A, seed=1):
        one = run(expr, tensors, order, {}, "round-robin", "ideal")["cycles"]
        got = partition_table(name, expr, tensors, order, one)
        gain = got["round-robin"]["cycles"] / got["balanced"]["cycles"]
        print(f"  {name:<15} balanced is {gain:.2f}x faster than round-robin, position "
              f"{got['round-robin']['cycles'] / got['position']['cycles']:.2f}x (1 lane: "
              f"{one} cycles)")


def hub_graph() -> sp.csr_matrix:
    """2,000 nodes, 10,000 arcs, power law; the heaviest row holds 10 % of the arcs."""
    return chung_lu_graph(2000, 10_000, 1.6, seed=1, directed=True).astype(np.float32)


def hubs(quick: bool) -> None:
    A = hub_graph()
    deg = np.diff(A.indptr)
    print(f"hubs: power-law graph ({A.shape[0]} nodes, {A.nnz} arcs, heaviest row "
          f"{deg.max()} = {deg.max() / A.nnz:.1%} of them), 8 lanes on i, ideal memory")
    # the key operand's scanner whose FIFOs a position lane's window split deepens
    for (name, expr, tensors, order), scan in zip(kernels(A, seed=2), ("A_k", "A_j"),
                                                  strict=True):
        got = partition_table(name, expr, tensors, order)
        gain = got["round-robin"]["cycles"] / got["position"]["cycles"]
        ok = got["position"]["imbalance"] <= 1.1 and gain >= 1.5
        print(f"  {name:<15} position: imbalance {got['position']['imbalance']:.3f} (goal "
              f"<= 1.1), {gain:.2f}x fewer cycles than round-robin (goal >= 1.5): "
              f"{'met' if ok else 'NOT met'}")
        deep = run(expr, tensors, order, {"i": 8}, "round-robin", "ideal", scan)["cycles"]
        print(f"  {name:<15} like for like: round-robin with {scan}'s FIFOs {WINDOW_FIFO} "
              f"deep {deep} cycles, position {deep / got['position']['cycles']:.2f}x fewer")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    ap.add_argument("--only", choices=("scaling", "balance", "hubs"))
    args = ap.parse_args()
    if args.only in (None, "scaling"):
        scaling(args.quick)
    if args.only in (None, "balance"):
        balance(args.quick)
    if args.only in (None, "hubs"):
        hubs(args.quick)


if __name__ == "__main__":
    main()
