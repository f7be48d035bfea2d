"""Block-sparse graphs with their inputs and numpy references, shared by every backend's
block tests (docs/blocks.md).

Each case is ``(name, graph, inputs, expected)``: ``inputs`` are full-size numpy arrays
(the backends cut them into the graph's blocks), ``expected`` maps the output tensor to
its dense numpy value. The cases cover every way a firing computes on blocks: a
contraction in a mul (``ij,j->i``, ``ik,kj->ij``), elementwise ALUs with ``N`` from a
union (read as the zero block), a reducer with and without a fold (``ij->i``,
``ij->ij``, ``i->i``), a unary operator on blocks, and accumulators of blocks
(``spacc``). Hand-built graphs add the block operators the examples do not use: row
broadcasts (``ij,i->ij``) and outer products (``i,j->ij``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

import ir.examples as ex
from ir import Graph, GraphBuilder
from tests._wiring import matrix_writers, wire

__all__ = ["block_sparse", "block_cases", "BLOCK_HW_OVERRIDES", "row_broadcast_graph",
           "row_center_graph", "outer_compressed_graph", "outer_repeat_graph",
           "outer_broadcast_graph"]

#: a bounded datapath, so that firings take several cycles (ceil(W / 4))
BLOCK_HW_OVERRIDES = ["compute.macs_per_cycle=4"]


def block_sparse(rng: np.random.Generator, m: int, n: int, b: int, density: float
                 ) -> np.ndarray:
    """An m x n float32 matrix whose nonzeros fill a random pattern of b x b blocks
    (with a few zeros inside stored blocks, which a block format keeps)."""
    pattern = rng.random((m // b, n // b)) < density
    vals = rng.standard_normal((m, n)).astype(np.float32)
    vals[rng.random((m, n)) < 0.1] = 0.0
    return (np.kron(pattern, np.ones((b, b))) * vals).astype(np.float32)


def block_cases(b: int = 2, seed: int = 0, scale: int = 1
                ) -> Iterator[tuple[str, Graph, dict[str, Any], dict[str, np.ndarray]]]:
    """The shared cases at block size ``b`` (sizes multiples of ``b``, ``scale`` times
    the smallest)."""
    rng = np.random.default_rng(seed)
    m, k, n = 4 * b * scale, 3 * b * scale, 2 * b * scale
    B = block_sparse(rng, m, k, b, 0.5)
    c = rng.standard_normal(k).astype(np.float32)
    yield "spmv", ex.spmv(m, k, block=b), {"B": B, "c": c}, {"x": B @ c}
    C = block_sparse(rng, k, n, b, 0.6)
    yield "spmm_ikj", ex.spmm_ikj(m, k, n, block=b), {"B": B, "C": C}, {"X": B @ C}
    M = block_sparse(rng, m, n, b, 0.5)
    Cd = rng.standard_normal((m, k)).astype(np.float32)
    D = rng.standard_normal((k, n)).astype(np.float32)
    mask = np.kron(np.any((M != 0).reshape(m // b, b, n // b, b), axis=(1, 3)),
                   np.ones((b, b)))
    yield "sddmm", ex.sddmm(m, n, k, block=b), {"B": M, "C": Cd, "D": D}, \
        {"X": M * (Cd @ D) * mask}
    for op, f in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                  ("max", np.maximum)):
        A2, B2 = block_sparse(rng, m, n, b, 0.5), block_sparse(rng, m, n, b, 0.5)
        yield f"elementwise_{op}", ex.elementwise(m, n, op, block=b), {"A": A2, "B": B2}, \
            {"X": f(A2, B2)}
    A = block_sparse(rng, m, n, b, 0.6)
    stored = np.kron(np.any((A != 0).reshape(m // b, b, n // b, b), axis=(1, 3)),
                     np.ones((b, b))).astype(bool)
    e = np.where(stored, np.exp(A.astype(np.float64)), 0.0)
    yield "row_sum_exp", ex.row_reduce(m, n, "sum", "exp", block=b), {"A": A}, \
        {"x": e.sum(axis=1).astype(np.float32)}
    # a row with no stored block keeps the reducer's identity, -inf
    yield "row_max", ex.row_reduce(m, n, "max", "", block=b), {"A": A}, \
        {"x": np.where(stored, A, -np.inf).max(axis=1).astype(np.float32)}


def row_broadcast_graph(m: int, n: int, b: int, op: str) -> Graph:
    """X(i,j) = A(i,j) op s(i), s(i) = the row sums of A: the reducer folds each block's
    columns (``ij->i``), a broadcast repeats s over the row's blocks and the ALU meets them
    with a row broadcast (``ij,i->ij``)."""
    g = GraphBuilder(f"row_broadcast_{op}")
    g.tensor("A", (m, n), "dc", block=(b, b))
    g.tensor("X", (m, n), "dc", role="output", block=(b, b))
    for nid, prim, kw in [
            ("root", "root", {}), ("Ai", "scan_dense", {"tensor": "A", "level": 0}),
            ("Aj_sum", "scan_compressed", {"tensor": "A", "level": 1}),
            ("Av_sum", "array", {"tensor": "A"}),
            ("rowsum", "reduce", {"op": "sum", "block": f"ij->i;i={b},j={b}"}),
            ("Aj", "scan_compressed", {"tensor": "A", "level": 1}),
            ("Av", "array", {"tensor": "A"}), ("rs_j", "repsig", {}),
            ("bc_j", "broadcast", {}),
            ("alu", "alu", {"op": op, "block": f"ij,i->ij;i={b},j={b}"})]:
        g.node(nid, prim, **kw)
    matrix_writers(g)
    wire(g, "root.ref>Ai.ref_in Ai.ref>Aj_sum.ref_in Aj_sum.ref>Av_sum.ref "
             "Av_sum.val>rowsum.val_in Ai.ref>rowsum.outer Ai.ref>Aj.ref_in Ai.crd>Xi.crd "
             "Aj.crd>rs_j.crd Aj.crd>Xj.crd rowsum.val>bc_j.val_in rs_j.repsig>bc_j.repsig "
             "Aj.ref>Av.ref Av.val>alu.a bc_j.val>alu.b alu.val>Xv.val")
    return g.build()


def row_center_graph(m: int, n: int, b: int):
    """X(i,j) = exp(A(i,j) - max_j A(i,j)): a folding max reducer (``ij->i``), its row
    maxima broadcast over j (a ``broadcast`` of b-vectors) into a row-broadcast subtract
    (``ij,i->ij``), then exp on blocks."""
    dims = f"i={b},j={b}"
    g = GraphBuilder("row_center", "float32", 2)
    g.tensor("A", (m, n), "dc", block=(b, b))
    g.tensor("X", (m, n), "dc", role="output", block=(b, b))
    for nid, op, p in [("root", "root", {}), ("Ai", "scan_dense", dict(tensor="A", level=0)),
                       ("Aj_max", "scan_compressed", dict(tensor="A", level=1)),
                       ("Av_max", "array", dict(tensor="A")),
                       ("rowmax", "reduce", dict(op="max", block=f"ij->i;{dims}")),
                       ("Aj", "scan_compressed", dict(tensor="A", level=1)),
                       ("Av", "array", dict(tensor="A")), ("rs_j", "repsig", {}),
                       ("bc_j", "broadcast", {}),
                       ("sub", "alu", dict(op="sub", block=f"ij,i->ij;{dims}")),
                       ("exp", "unary", dict(op="exp"))]:
        g.node(nid, op, **p)
    matrix_writers(g)
    wire(g, "root.ref>Ai.ref_in Ai.ref>Aj_max.ref_in Aj_max.ref>Av_max.ref "
             "Av_max.val>rowmax.val_in Ai.ref>rowmax.outer Ai.ref>Aj.ref_in Ai.crd>Xi.crd "
             "Aj.crd>rs_j.crd Aj.crd>Xj.crd rowmax.val>bc_j.val_in rs_j.repsig>bc_j.repsig "
             "Aj.ref>Av.ref Av.val>sub.a bc_j.val>sub.b sub.val>exp.a exp.val>Xv.val")
    return g.build(kernel="row_center")


def outer_compressed_graph(m: int, n: int, b: int) -> Graph:
    """X(i,j) = a(i) * b(j) on compressed block-vectors: ``i,j->ij`` makes each output
    block the outer product of two b-vectors."""
    g = GraphBuilder("block_outer")
    g.tensor("a", (m,), "c", block=(b,))
    g.tensor("b", (n,), "c", block=(b,))
    g.tensor("X", (m, n), "cc", role="output", block=(b, b))
    for nid, prim, kw in [
            ("ra", "root", {}), ("rb", "root", {}),
            ("ai", "scan_compressed", {"tensor": "a", "level": 0}),
            ("rs_i", "repsig", {}), ("rep_b", "repeat", {}),
            ("bj", "scan_compressed", {"tensor": "b", "level": 0}),
            ("rs_j", "repsig", {}), ("av", "array", {"tensor": "a"}),
            ("bc_a", "broadcast", {}), ("bv", "array", {"tensor": "b"}),
            ("mul", "alu", {"op": "mul", "block": f"i,j->ij;i={b},j={b}"})]:
        g.node(nid, prim, **kw)
    matrix_writers(g)
    wire(g, "ra.ref>ai.ref_in ai.crd>rs_i.crd ai.crd>Xi.crd rb.ref>rep_b.ref_in "
             "rs_i.repsig>rep_b.repsig rep_b.ref>bj.ref_in bj.crd>rs_j.crd bj.crd>Xj.crd "
             "ai.ref>av.ref av.val>bc_a.val_in rs_j.repsig>bc_a.repsig bc_a.val>mul.a "
             "bj.ref>bv.ref bv.val>mul.b mul.val>Xv.val")
    return g.build()


def outer_repeat_graph(m: int, n: int, bi: int, bj: int) -> Graph:
    """X(i,j) = u(i) * w(j), u and w dense block vectors: ``i,j->ij``."""
    g = GraphBuilder("block_outer", "float32", 2)
    g.tensor("u", (m,), "d", block=(bi,))
    g.tensor("w", (n,), "d", block=(bj,))
    g.tensor("X", (m, n), "dd", role="output", block=(bi, bj))
    g.node("root_u", "root")
    g.node("root_w", "root")
    g.node("ui", "scan_dense", tensor="u", level=0)
    g.node("rs_i", "repsig")
    g.node("rep_w", "repeat")
    g.node("wj", "scan_dense", tensor="w", level=0)
    g.node("rs_j", "repsig")
    g.node("rep_u", "repeat")
    g.node("uv", "array", tensor="u")
    g.node("wv", "array", tensor="w")
    g.node("mul", "alu", op="mul", block=f"i,j->ij;i={bi},j={bj}")
    matrix_writers(g)
    wire(g, "root_u.ref>ui.ref_in ui.crd>rs_i.crd ui.crd>Xi.crd root_w.ref>rep_w.ref_in "
             "rs_i.repsig>rep_w.repsig rep_w.ref>wj.ref_in wj.crd>rs_j.crd wj.crd>Xj.crd "
             "ui.ref>rep_u.ref_in rs_j.repsig>rep_u.repsig rep_u.ref>uv.ref wj.ref>wv.ref "
             "uv.val>mul.a wv.val>mul.b mul.val>Xv.val")
    return g.build()


def outer_broadcast_graph(m: int, n: int, bi: int, bj: int):
    """X(i,j) = u(i) * v(j), dense: an outer product of blocks (``i,j->ij``), u's value
    broadcast over j, v's root repeated over i (bi != bj: operands of different widths)."""
    g = GraphBuilder("outer", "float32", 2)
    g.tensor("u", (m,), "d", block=(bi,))
    g.tensor("v", (n,), "d", block=(bj,))
    g.tensor("X", (m, n), "dd", role="output", block=(bi, bj))
    for nid, op, p in [("root_u", "root", {}), ("root_v", "root", {}),
                       ("ui", "scan_dense", dict(tensor="u", level=0)),
                       ("rs_i", "repsig", {}), ("rep_v", "repeat", {}),
                       ("vj", "scan_dense", dict(tensor="v", level=0)),
                       ("uv", "array", dict(tensor="u")), ("vv", "array", dict(tensor="v")),
                       ("rs_j", "repsig", {}), ("bc_j", "broadcast", {}),
                       ("mul", "alu", dict(op="mul", block=f"i,j->ij;i={bi},j={bj}"))]:
        g.node(nid, op, **p)
    matrix_writers(g)
    wire(g, "root_u.ref>ui.ref_in ui.crd>rs_i.crd ui.crd>Xi.crd root_v.ref>rep_v.ref_in "
             "rs_i.repsig>rep_v.repsig rep_v.ref>vj.ref_in vj.crd>Xj.crd vj.crd>rs_j.crd "
             "ui.ref>uv.ref uv.val>bc_j.val_in rs_j.repsig>bc_j.repsig vj.ref>vv.ref "
             "bc_j.val>mul.a vv.val>mul.b mul.val>Xv.val")
    return g.build(kernel="outer")
