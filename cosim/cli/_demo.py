"""``samfuse demo`` and ``samfuse example-data``: the karate club's adjacency times random
features, compiled and simulated, and the README tour's input files."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np

from compiler import compile_expression
from ir import FiberTree
from sim_models.python import simulate

from ..runs._files import atomic_path, path_arg, writable_dir, write_atomic
from ._args import PROG, CliError, say, still_running
from ._model import seed_arg
from ._report import summary_lines
from ._show import render_file

__all__ = ["add_demo_parsers", "cmd_demo", "cmd_example_data"]


DEMO_EXPR = "X(i,j) = A(i,k) * H(k,j)"
#: a demo run of the karate club with this many feature columns takes about a minute
DEMO_MAX_FEATURES = 4096


def _karate_inputs(features: int, seed: int) -> tuple[Any, np.ndarray]:
    """The demo's operands: the karate club's adjacency (34×34, CSR, ships with networkx)
    and seeded dense features (34 × ``features``)."""
    import networkx as nx
    import scipy.sparse as sp

    if not 1 <= features <= DEMO_MAX_FEATURES:
        raise CliError(f"--features {features}: expected 1..{DEMO_MAX_FEATURES} columns "
                       "(the demo simulates 34 x N dense features token by token; give "
                       "`samfuse sim` your own inputs for bigger runs)")
    A = sp.csr_array(nx.to_scipy_sparse_array(nx.karate_club_graph(), weight=None,
                                              dtype=np.float32))
    H = np.random.default_rng(seed).standard_normal((A.shape[1], features))
    return A, H.astype(np.float32)


def cmd_example_data(args: argparse.Namespace) -> int:
    """``b.mtx`` and ``c.npy``: the README tour's inputs (the demo's operands)."""
    A, H = _karate_inputs(args.features, args.seed)
    out = writable_dir(args.dir, "DIR")
    b, c = out / "b.mtx", out / "c.npy"
    with atomic_path(b) as tmp:
        FiberTree.from_any(A, "csr").to_mtx(tmp)
    with atomic_path(c) as tmp:
        np.save(tmp, H)
    say(f"wrote {b}: karate club adjacency {A.shape[0]}x{A.shape[1]}, {A.nnz} nonzeros",
         f"wrote {c}: dense {H.shape[0]}x{H.shape[1]} float32 (seed {args.seed})")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """Karate-club adjacency (34×34, ships with networkx) times seeded dense features."""
    A, H = _karate_inputs(args.features, args.seed)
    out = writable_dir(args.out, "--out")
    t0 = time.perf_counter()
    graph = compile_expression(DEMO_EXPR, {"A": "csr"}, {"A": A.shape, "H": H.shape},
                               order=args.order, name="demo_spmm")
    compile_s = time.perf_counter() - t0
    write_atomic(out / "graph.json", graph.to_json() + "\n")
    with still_running("simulating the demo"):
        res = simulate(graph, {"A": A, "H": H})
    want = A @ H
    got = res.dense("X")
    err = float(np.max(np.abs(got - want))) if got.size else 0.0
    ok = bool(np.allclose(got, want, rtol=1e-4, atol=1e-4))
    say(f"demo       {DEMO_EXPR}",
         f"inputs     A: karate club adjacency {A.shape[0]}x{A.shape[1]}, {A.nnz} nonzeros "
         f"(csr); H: dense {H.shape[0]}x{H.shape[1]} (seed {args.seed})",
         f"compiled   {len(graph.nodes)} nodes, {len(graph.edges)} edges in "
         f"{compile_s * 1e3:.1f} ms; order {','.join(graph.meta['order'])}; "
         f"{', '.join(graph.meta['reductions'])}",
         *summary_lines(res, "python"),
         f"check      {'PASS' if ok else 'FAIL'}: max |X - A@H| = {err:.3g} against scipy "
         "(rtol 1e-4, atol 1e-4)")
    with atomic_path(out / "X.npy") as tmp:
        np.save(tmp, got)
    try:
        render_file(graph, out / "graph.svg")
        say(f"wrote      {out / 'graph.json'}, {out / 'graph.svg'}, {out / 'X.npy'}")
    except CliError as exc:
        print(f"{PROG}: warning: {exc}", file=sys.stderr)
        say(f"wrote      {out / 'graph.json'}, {out / 'X.npy'}")
    return 0 if ok else 1




def add_demo_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``demo`` and ``example-data``."""
    d = sub.add_parser("demo", help="compile and simulate karate-club A times features H")
    d.add_argument("--out", default="samfuse-demo", type=path_arg, help="output directory "
                   "(default ./samfuse-demo)")
    d.add_argument("--features", type=int, default=16, help="columns of H (default 16)")
    d.add_argument("--seed", type=seed_arg, default=0, help="seed of H (an int >= 0)")
    d.add_argument("--order", help="dataflow order (default: chosen by the compiler)")
    d.set_defaults(func=cmd_demo)

    x = sub.add_parser("example-data", help="write the README tour's inputs: b.mtx (the "
                       "karate club's adjacency, 34x34) and c.npy (dense 34x16 features)")
    x.add_argument("dir", nargs="?", default=".", help="folder to write into (default .)")
    x.add_argument("--features", type=int, default=16, help="columns of c (default 16)")
    x.add_argument("--seed", type=seed_arg, default=0, help="seed of c (an int >= 0)")
    x.set_defaults(func=cmd_example_data)
