"""GCN-like chains A·(X·W) compiled with X·W materialised on chip (docs/fusion.md,
"Materialised intermediates"), with their inputs and numpy references, shared by the
compiler's tests and the parity suites.

A case is ``(compiled model, inputs, gold)``: the program ``T(k,j) = X(k,l) * W(l,j)``,
``Y(i,j) = A(i,k) * T(k,j)`` in one region, either as written (T inlined: the row of T is
recomputed per nonzero of A) or with ``materialise: [T]`` (T computed once into an on-chip
buffer, then gathered row by row).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from compiler import CompiledModel, compile_model, einsum_program
from ir import Region, Schedule

__all__ = ["gcn_chain", "kernel_cases", "STATEMENTS"]

STATEMENTS = ["T(k,j) = X(k,l) * W(l,j)", "Y(i,j) = A(i,k) * T(k,j)"]


def gcn_chain(n: int, f: int, h: int, density: float, seed: int, *,
              a_format: str = "csr", x_format: str = "dense", materialise: bool = True,
              order: str | None = None
              ) -> tuple[CompiledModel, dict[str, Any], dict[str, np.ndarray]]:
    """Y = A·(X·W) on an ``n``-node graph with ``f`` features and ``h`` hidden units."""
    rng = np.random.default_rng(seed)
    a = sp.random(n, n, density=density, format="csr", random_state=seed, dtype=np.float32)
    x = rng.standard_normal((n, f)).astype(np.float32)
    if x_format != "dense":  # a sparse feature matrix: about half its entries zero
        x[rng.random((n, f)) < 0.5] = 0
    w = rng.standard_normal((f, h)).astype(np.float32)
    prog = einsum_program(STATEMENTS, {"A": (n, n), "X": (n, f), "W": (f, h)},
                          {"A": a_format, "X": x_format}, name="gcn_chain")
    region = Region("layer", ["T", "Y"], order.split(",") if order else None,
                    materialise=("T",) if materialise else ())
    compiled = compile_model(prog, Schedule([region], name="materialised"))
    gold = {"Y": a.toarray().astype(np.float64) @ (x.astype(np.float64) @ w)}
    return compiled, {"A": a, "X": x, "W": w}, gold


def kernel_cases(compiled: CompiledModel, inputs: dict[str, Any]
                 ) -> list[tuple[Any, dict[str, Any], dict[str, np.ndarray]]]:
    """Each kernel of ``compiled`` alone: (graph, its inputs as the model run binds them,
    the numpy gold of its output), T's gold computed by numpy, not by the code under
    test, and fed to its consumer."""
    x, w, a = (np.asarray(inputs[t].toarray() if hasattr(inputs[t], "toarray")
                          else inputs[t], dtype=np.float64) for t in ("X", "W", "A"))
    memory = {"X": inputs["X"], "W": inputs["W"], "A": inputs["A"],
              "T": (x @ w).astype(np.float32)}
    gold = {"T": x @ w, "Y": a @ (x @ w)}
    return [(k.graph, {t: memory[k.source(t)] for t in k.inputs}, {k.target: gold[k.target]})
            for reg in compiled.regions for k in reg.kernels]
