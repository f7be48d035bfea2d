"""Hand-built SAMML graphs of the classic sparse kernels.

They are written out node by node, independent of the compiler, so that the reference
model, every backend and the compiler itself can be checked against them. Each function
takes the operand shapes and returns a validated :class:`Graph`.
"""

from __future__ import annotations

from ._graph import Graph, GraphBuilder

__all__ = ["spmv", "spmm_ijk", "spmm_ikj", "spmm_kij", "sddmm", "elementwise", "ttv",
           "row_scale", "masked_dense", "row_reduce", "KERNELS", "reconvergent_fork",
           "misaligned_alu"]


def _blk(block: int, spec: str) -> dict[str, str]:
    """The ``block`` parameter of a block operator with every letter of extent ``block``
    (no parameter for scalar graphs)."""
    if block <= 1:  # a 1-element block is a scalar
        return {}
    letters = sorted(set(spec.replace(",", "").replace("->", "")))
    return {"block": f"{spec};" + ",".join(f"{c}={block}" for c in letters)}


def _bt(block: int, ndim: int) -> tuple[int, ...] | None:
    return (block,) * ndim if block > 1 else None


def spmv(m: int, n: int, b_fmt: str = "dc", depth: int | None = 2,
         dtype: str = "float32", block: int = 0) -> Graph:
    """x(i) = B(i,j) * c(j); B in ``b_fmt`` (row-major), c dense. ``block`` > 0: B in
    block x block blocks, c and x in block-vectors (a block matrix-vector product)."""
    g = GraphBuilder("spmv", dtype, depth)
    g.tensor("B", (m, n), b_fmt, block=_bt(block, 2))
    g.tensor("c", (n,), "d", block=_bt(block, 1))
    g.tensor("x", (m,), "d", role="output", block=_bt(block, 1))
    g.node("rootB", "root")
    g.node("rootc", "root")
    g.node("Bi", "scan_" + _kind(b_fmt, 0), tensor="B", level=0)
    g.node("Bj", "scan_" + _kind(b_fmt, 1), tensor="B", level=1)
    g.node("rs_i", "repsig")
    g.node("rep_c", "repeat")
    g.node("cj", "scan_dense", tensor="c", level=0)
    g.node("isect_j", "intersect")
    g.node("Bv", "array", tensor="B")
    g.node("cv", "array", tensor="c")
    g.node("mul", "alu", op="mul", **_blk(block, "ij,j->i"))
    g.node("red", "reduce", op="sum", **_blk(block, "i->i"))
    g.node("xi", "level_writer", tensor="x", level=0)
    g.node("xv", "value_writer", tensor="x")
    for s, d in [("rootB.ref", "Bi.ref_in"), ("Bi.ref", "Bj.ref_in"), ("Bi.crd", "rs_i.crd"),
                 ("Bi.crd", "xi.crd"), ("rootc.ref", "rep_c.ref_in"),
                 ("rs_i.repsig", "rep_c.repsig"), ("rep_c.ref", "cj.ref_in"),
                 ("Bj.crd", "isect_j.crd_a"), ("Bj.ref", "isect_j.ref_a"),
                 ("cj.crd", "isect_j.crd_b"), ("cj.ref", "isect_j.ref_b"),
                 ("isect_j.ref_a", "Bv.ref"), ("isect_j.ref_b", "cv.ref"),
                 ("Bv.val", "mul.a"), ("cv.val", "mul.b"), ("mul.val", "red.val_in"),
                 ("Bi.ref", "red.outer"), ("red.val", "xv.val")]:
        g.edge(s, d)
    return g.build(kernel="spmv")


def spmm_ijk(m: int, k: int, n: int, b_fmt: str = "dc", depth: int | None = 2,
             dtype: str = "float32") -> Graph:
    """X(i,j) = B(i,k) * C(k,j), inner-product order i,j,k; C stored column-major."""
    g = GraphBuilder("spmm_ijk", dtype, depth)
    g.tensor("B", (m, k), b_fmt)
    g.tensor("C", (k, n), "dc:1,0")
    g.tensor("X", (m, n), "dd", role="output")
    g.node("rootB", "root")
    g.node("rootC", "root")
    g.node("Bi", "scan_" + _kind(b_fmt, 0), tensor="B", level=0)
    g.node("rs_i", "repsig")
    g.node("rep_C", "repeat")
    g.node("Cj", "scan_dense", tensor="C", level=0)
    g.node("rs_j", "repsig")
    g.node("rep_B", "repeat")
    g.node("Bk", "scan_" + _kind(b_fmt, 1), tensor="B", level=1)
    g.node("Ck", "scan_compressed", tensor="C", level=1)
    g.node("isect_k", "intersect")
    g.node("Bv", "array", tensor="B")
    g.node("Cv", "array", tensor="C")
    g.node("mul", "alu", op="mul")
    g.node("red", "reduce", op="sum")
    g.node("Xi", "level_writer", tensor="X", level=0)
    g.node("Xj", "level_writer", tensor="X", level=1)
    g.node("Xv", "value_writer", tensor="X")
    for s, d in [("rootB.ref", "Bi.ref_in"), ("Bi.crd", "rs_i.crd"), ("Bi.crd", "Xi.crd"),
                 ("rootC.ref", "rep_C.ref_in"), ("rs_i.repsig", "rep_C.repsig"),
                 ("rep_C.ref", "Cj.ref_in"), ("Cj.crd", "rs_j.crd"), ("Cj.crd", "Xj.crd"),
                 ("Bi.ref", "rep_B.ref_in"), ("rs_j.repsig", "rep_B.repsig"),
                 ("rep_B.ref", "Bk.ref_in"), ("Cj.ref", "Ck.ref_in"),
                 ("Bk.crd", "isect_k.crd_a"), ("Bk.ref", "isect_k.ref_a"),
                 ("Ck.crd", "isect_k.crd_b"), ("Ck.ref", "isect_k.ref_b"),
                 ("isect_k.ref_a", "Bv.ref"), ("isect_k.ref_b", "Cv.ref"),
                 ("Bv.val", "mul.a"), ("Cv.val", "mul.b"), ("mul.val", "red.val_in"),
                 ("Cj.ref", "red.outer"), ("red.val", "Xv.val")]:
        g.edge(s, d)
    return g.build(kernel="spmm_ijk")


def spmm_ikj(m: int, k: int, n: int, b_fmt: str = "dc", c_fmt: str = "dc",
             depth: int | None = 2, dtype: str = "float32", block: int = 0) -> Graph:
    """X(i,j) = B(i,k) * C(k,j), Gustavson order i,k,j with a sparse accumulator;
    ``block`` > 0: every operand in block x block blocks (block products)."""
    g = GraphBuilder("spmm_ikj", dtype, depth)
    g.tensor("B", (m, k), b_fmt, block=_bt(block, 2))
    g.tensor("C", (k, n), c_fmt, block=_bt(block, 2))
    g.tensor("X", (m, n), "dc", role="output", block=_bt(block, 2))
    g.node("rootB", "root")
    g.node("rootC", "root")
    g.node("Bi", "scan_" + _kind(b_fmt, 0), tensor="B", level=0)
    g.node("Bk", "scan_" + _kind(b_fmt, 1), tensor="B", level=1)
    g.node("rs_i", "repsig")
    g.node("rep_C", "repeat")
    g.node("Ck", "scan_" + _kind(c_fmt, 0), tensor="C", level=0)
    g.node("isect_k", "intersect")
    g.node("Cj", "scan_" + _kind(c_fmt, 1), tensor="C", level=1)
    g.node("rs_j", "repsig")
    g.node("rep_B", "repeat")
    g.node("Bv", "array", tensor="B")
    g.node("Cv", "array", tensor="C")
    g.node("mul", "alu", op="mul", **_blk(block, "ik,kj->ij"))
    g.node("acc", "spacc")
    g.node("Xi", "level_writer", tensor="X", level=0)
    g.node("Xj", "level_writer", tensor="X", level=1)
    g.node("Xv", "value_writer", tensor="X")
    for s, d in [("rootB.ref", "Bi.ref_in"), ("Bi.ref", "Bk.ref_in"), ("Bi.crd", "rs_i.crd"),
                 ("Bi.crd", "Xi.crd"), ("rootC.ref", "rep_C.ref_in"),
                 ("rs_i.repsig", "rep_C.repsig"), ("rep_C.ref", "Ck.ref_in"),
                 ("Bk.crd", "isect_k.crd_a"), ("Bk.ref", "isect_k.ref_a"),
                 ("Ck.crd", "isect_k.crd_b"), ("Ck.ref", "isect_k.ref_b"),
                 ("isect_k.ref_b", "Cj.ref_in"), ("Cj.crd", "rs_j.crd"),
                 ("isect_k.ref_a", "rep_B.ref_in"), ("rs_j.repsig", "rep_B.repsig"),
                 ("rep_B.ref", "Bv.ref"), ("Cj.ref", "Cv.ref"), ("Bv.val", "mul.a"),
                 ("Cv.val", "mul.b"), ("Cj.crd", "acc.crd_in"), ("mul.val", "acc.val_in"),
                 ("acc.crd", "Xj.crd"), ("acc.val", "Xv.val")]:
        g.edge(s, d)
    return g.build(kernel="spmm_ikj")


def spmm_kij(m: int, k: int, n: int, depth: int | None = 2, dtype: str = "float32",
             block: int = 0) -> Graph:
    """X(i,j) = B(i,k) * C(k,j), outer-product order k,i,j: B column-major (k outer), C
    row-major; the reduction over the outermost index needs the matrix accumulator.
    ``block`` > 0: every operand in block x block blocks (block outer products)."""
    g = GraphBuilder("spmm_kij", dtype, depth)
    g.tensor("B", (m, k), "dc:1,0", block=_bt(block, 2))
    g.tensor("C", (k, n), "dc", block=_bt(block, 2))
    g.tensor("X", (m, n), "cc", role="output", block=_bt(block, 2))
    g.node("rootB", "root")
    g.node("rootC", "root")
    g.node("Bk", "scan_dense", tensor="B", level=0)
    g.node("Ck", "scan_dense", tensor="C", level=0)
    g.node("isect_k", "intersect")
    g.node("Bi", "scan_compressed", tensor="B", level=1)
    g.node("rs_i", "repsig")
    g.node("rep_C", "repeat")
    g.node("Cj", "scan_compressed", tensor="C", level=1)
    g.node("rs_j", "repsig")
    g.node("rep_B", "repeat")
    g.node("Bv", "array", tensor="B")
    g.node("Cv", "array", tensor="C")
    g.node("mul", "alu", op="mul", **_blk(block, "ik,kj->ij"))
    g.node("acc", "spacc2")
    g.node("Xi", "level_writer", tensor="X", level=0)
    g.node("Xj", "level_writer", tensor="X", level=1)
    g.node("Xv", "value_writer", tensor="X")
    for s, d in [("rootB.ref", "Bk.ref_in"), ("rootC.ref", "Ck.ref_in"),
                 ("Bk.crd", "isect_k.crd_a"), ("Bk.ref", "isect_k.ref_a"),
                 ("Ck.crd", "isect_k.crd_b"), ("Ck.ref", "isect_k.ref_b"),
                 ("isect_k.ref_a", "Bi.ref_in"), ("Bi.crd", "rs_i.crd"),
                 ("isect_k.ref_b", "rep_C.ref_in"), ("rs_i.repsig", "rep_C.repsig"),
                 ("rep_C.ref", "Cj.ref_in"), ("Cj.crd", "rs_j.crd"),
                 ("Bi.ref", "rep_B.ref_in"), ("rs_j.repsig", "rep_B.repsig"),
                 ("rep_B.ref", "Bv.ref"), ("Cj.ref", "Cv.ref"), ("Bv.val", "mul.a"),
                 ("Cv.val", "mul.b"), ("Bi.crd", "acc.crd1_in"), ("Cj.crd", "acc.crd0_in"),
                 ("mul.val", "acc.val_in"), ("acc.crd1", "Xi.crd"), ("acc.crd0", "Xj.crd"),
                 ("acc.val", "Xv.val")]:
        g.edge(s, d)
    return g.build(kernel="spmm_kij")


def sddmm(m: int, n: int, k: int, b_fmt: str = "dc", depth: int | None = 2,
          dtype: str = "float32", block: int = 0) -> Graph:
    """X(i,j) = B(i,j) * C(i,k) * D(k,j): sampled dense-dense matmul; C, D dense.
    ``block`` > 0: every operand in block x block blocks (BigBird's block SDDMM)."""
    g = GraphBuilder("sddmm", dtype, depth)
    g.tensor("B", (m, n), b_fmt, block=_bt(block, 2))
    g.tensor("C", (m, k), "dd", block=_bt(block, 2))
    g.tensor("D", (k, n), "dd:1,0", block=_bt(block, 2))
    g.tensor("X", (m, n), "dc", role="output", block=_bt(block, 2))
    for r in ("rootB", "rootC", "rootD"):
        g.node(r, "root")
    g.node("Bi", "scan_" + _kind(b_fmt, 0), tensor="B", level=0)
    g.node("Ci", "scan_dense", tensor="C", level=0)
    g.node("isect_i", "intersect")
    g.node("Bj", "scan_" + _kind(b_fmt, 1), tensor="B", level=1)
    g.node("rs_i", "repsig")
    g.node("rep_D", "repeat")
    g.node("Dj", "scan_dense", tensor="D", level=0)
    g.node("isect_j", "intersect")
    g.node("rs_j", "repsig")
    g.node("rep_C", "repeat")
    g.node("Ck", "scan_dense", tensor="C", level=1)
    g.node("Dk", "scan_dense", tensor="D", level=1)
    g.node("isect_k", "intersect")
    g.node("Cv", "array", tensor="C")
    g.node("Dv", "array", tensor="D")
    g.node("Bv", "array", tensor="B")
    g.node("mul_cd", "alu", op="mul", **_blk(block, "ik,kj->ij"))
    g.node("red", "reduce", op="sum", **_blk(block, "ij->ij"))
    g.node("mul_b", "alu", op="mul", **_blk(block, "ij,ij->ij"))
    g.node("Xi", "level_writer", tensor="X", level=0)
    g.node("Xj", "level_writer", tensor="X", level=1)
    g.node("Xv", "value_writer", tensor="X")
    for s, d in [("rootB.ref", "Bi.ref_in"), ("rootC.ref", "Ci.ref_in"),
                 ("Bi.crd", "isect_i.crd_a"), ("Bi.ref", "isect_i.ref_a"),
                 ("Ci.crd", "isect_i.crd_b"), ("Ci.ref", "isect_i.ref_b"),
                 ("isect_i.ref_a", "Bj.ref_in"), ("isect_i.crd", "rs_i.crd"),
                 ("isect_i.crd", "Xi.crd"), ("rootD.ref", "rep_D.ref_in"),
                 ("rs_i.repsig", "rep_D.repsig"), ("rep_D.ref", "Dj.ref_in"),
                 ("Bj.crd", "isect_j.crd_a"), ("Bj.ref", "isect_j.ref_a"),
                 ("Dj.crd", "isect_j.crd_b"), ("Dj.ref", "isect_j.ref_b"),
                 ("isect_j.crd", "rs_j.crd"), ("isect_j.crd", "Xj.crd"),
                 ("isect_i.ref_b", "rep_C.ref_in"), ("rs_j.repsig", "rep_C.repsig"),
                 ("rep_C.ref", "Ck.ref_in"), ("isect_j.ref_b", "Dk.ref_in"),
                 ("Ck.crd", "isect_k.crd_a"), ("Ck.ref", "isect_k.ref_a"),
                 ("Dk.crd", "isect_k.crd_b"), ("Dk.ref", "isect_k.ref_b"),
                 ("isect_k.ref_a", "Cv.ref"), ("isect_k.ref_b", "Dv.ref"),
                 ("Cv.val", "mul_cd.a"), ("Dv.val", "mul_cd.b"), ("mul_cd.val", "red.val_in"),
                 ("isect_j.ref_a", "red.outer"), ("isect_j.ref_a", "Bv.ref"),
                 ("Bv.val", "mul_b.a"), ("red.val", "mul_b.b"), ("mul_b.val", "Xv.val")]:
        g.edge(s, d)
    return g.build(kernel="sddmm")


def elementwise(m: int, n: int, op: str = "add", a_fmt: str = "dc", b_fmt: str = "dc",
                out_fmt: str = "dc", depth: int | None = 2, dtype: str = "float32",
                block: int = 0) -> Graph:
    """X(i,j) = A(i,j) op B(i,j): ``add``/``sub``/``max`` co-iterate by union, ``mul`` by
    intersection; compressed outer output levels drop coordinates with empty fibers.
    ``block`` > 0: block x block blocks, the op elementwise inside them."""
    join = "intersect" if op == "mul" else "union"
    g = GraphBuilder(f"elementwise_{op}", dtype, depth)
    g.tensor("A", (m, n), a_fmt, block=_bt(block, 2))
    g.tensor("B", (m, n), b_fmt, block=_bt(block, 2))
    g.tensor("X", (m, n), out_fmt, role="output", block=_bt(block, 2))
    g.node("rootA", "root")
    g.node("rootB", "root")
    g.node("Ai", "scan_" + _kind(a_fmt, 0), tensor="A", level=0)
    g.node("Bi", "scan_" + _kind(b_fmt, 0), tensor="B", level=0)
    g.node("join_i", join)
    g.node("Aj", "scan_" + _kind(a_fmt, 1), tensor="A", level=1)
    g.node("Bj", "scan_" + _kind(b_fmt, 1), tensor="B", level=1)
    g.node("join_j", join)
    g.node("Av", "array", tensor="A")
    g.node("Bv", "array", tensor="B")
    g.node("alu", "alu", op=op, **_blk(block, "ij,ij->ij"))
    g.node("Xi", "level_writer", tensor="X", level=0)
    g.node("Xj", "level_writer", tensor="X", level=1)
    g.node("Xv", "value_writer", tensor="X")
    edges = [("rootA.ref", "Ai.ref_in"), ("rootB.ref", "Bi.ref_in"),
             ("Ai.crd", "join_i.crd_a"), ("Ai.ref", "join_i.ref_a"),
             ("Bi.crd", "join_i.crd_b"), ("Bi.ref", "join_i.ref_b"),
             ("join_i.ref_a", "Aj.ref_in"), ("join_i.ref_b", "Bj.ref_in"),
             ("Aj.crd", "join_j.crd_a"), ("Aj.ref", "join_j.ref_a"),
             ("Bj.crd", "join_j.crd_b"), ("Bj.ref", "join_j.ref_b"),
             ("join_j.ref_a", "Av.ref"), ("join_j.ref_b", "Bv.ref"),
             ("Av.val", "alu.a"), ("Bv.val", "alu.b"), ("alu.val", "Xv.val")]
    if out_fmt.startswith("c"):  # drop rows whose fiber came out empty
        g.node("drop", "crddrop")
        edges += [("join_i.crd", "drop.outer_in"), ("join_j.crd", "drop.inner_in"),
                  ("drop.outer", "Xi.crd"), ("drop.inner", "Xj.crd")]
    else:
        edges += [("join_i.crd", "Xi.crd"), ("join_j.crd", "Xj.crd")]
    for s, d in edges:
        g.edge(s, d)
    return g.build(kernel=f"elementwise_{op}")


def row_reduce(m: int, n: int, op: str = "sum", fn: str = "exp", a_fmt: str = "dc",
               depth: int | None = 2, dtype: str = "float32", block: int = 0) -> Graph:
    """x(i) = op_j fn(A(i,j)) over A's stored entries (``fn`` a ``unary`` op or ""):
    a softmax's row max or denominator. ``block`` > 0: A in block x block blocks, the
    reducer folding the blocks' columns (``ij->i``)."""
    g = GraphBuilder(f"row_{op}", dtype, depth)
    g.tensor("A", (m, n), a_fmt, block=_bt(block, 2))
    g.tensor("x", (m,), "d", role="output", block=_bt(block, 1))
    g.node("rootA", "root")
    g.node("Ai", "scan_" + _kind(a_fmt, 0), tensor="A", level=0)
    g.node("Aj", "scan_" + _kind(a_fmt, 1), tensor="A", level=1)
    g.node("Av", "array", tensor="A")
    g.node("red", "reduce", op=op, **_blk(block, "ij->i"))
    g.node("xi", "level_writer", tensor="x", level=0)
    g.node("xv", "value_writer", tensor="x")
    val = "Av.val"
    if fn:
        g.node("fn", "unary", op=fn)
        g.edge("Av.val", "fn.a")
        val = "fn.val"
    for s, d in [("rootA.ref", "Ai.ref_in"), ("Ai.ref", "Aj.ref_in"), ("Aj.ref", "Av.ref"),
                 (val, "red.val_in"), ("Ai.ref", "red.outer"), ("Ai.crd", "xi.crd"),
                 ("red.val", "xv.val")]:
        g.edge(s, d)
    return g.build(kernel=f"row_{op}")


def ttv(m: int, n: int, p: int, b_fmt: str = "dcc", depth: int | None = 2,
        dtype: str = "float32") -> Graph:
    """X(i,j) = B(i,j,k) * c(k): a 3-tensor kernel; X keeps B's sparsity (compressed j)."""
    g = GraphBuilder("ttv", dtype, depth)
    g.tensor("B", (m, n, p), b_fmt)
    g.tensor("c", (p,), "d")
    g.tensor("X", (m, n), "dc", role="output")
    g.node("rootB", "root")
    g.node("rootc", "root")
    g.node("Bi", "scan_" + _kind(b_fmt, 0), tensor="B", level=0)
    g.node("Bj", "scan_" + _kind(b_fmt, 1), tensor="B", level=1)
    g.node("Bk", "scan_" + _kind(b_fmt, 2), tensor="B", level=2)
    g.node("rs_j", "repsig")
    g.node("rep_c", "repeat")
    g.node("ck", "scan_dense", tensor="c", level=0)
    g.node("isect_k", "intersect")
    g.node("Bv", "array", tensor="B")
    g.node("cv", "array", tensor="c")
    g.node("mul", "alu", op="mul")
    g.node("red", "reduce", op="sum")
    g.node("Xi", "level_writer", tensor="X", level=0)
    g.node("Xj", "level_writer", tensor="X", level=1)
    g.node("Xv", "value_writer", tensor="X")
    # c's root ref must be repeated once per (i, j): repeat over Bj's crds, whose stream
    # nests j inside i, after lifting the root ref to one ref per i with a second repeat
    g.node("rs_i", "repsig")
    g.node("rep_ci", "repeat")
    for s, d in [("rootB.ref", "Bi.ref_in"), ("Bi.ref", "Bj.ref_in"), ("Bj.ref", "Bk.ref_in"),
                 ("Bi.crd", "Xi.crd"), ("Bj.crd", "Xj.crd"), ("Bi.crd", "rs_i.crd"),
                 ("rootc.ref", "rep_ci.ref_in"), ("rs_i.repsig", "rep_ci.repsig"),
                 ("Bj.crd", "rs_j.crd"), ("rep_ci.ref", "rep_c.ref_in"),
                 ("rs_j.repsig", "rep_c.repsig"), ("rep_c.ref", "ck.ref_in"),
                 ("Bk.crd", "isect_k.crd_a"), ("Bk.ref", "isect_k.ref_a"),
                 ("ck.crd", "isect_k.crd_b"), ("ck.ref", "isect_k.ref_b"),
                 ("isect_k.ref_a", "Bv.ref"), ("isect_k.ref_b", "cv.ref"),
                 ("Bv.val", "mul.a"), ("cv.val", "mul.b"), ("mul.val", "red.val_in"),
                 ("Bj.ref", "red.outer"), ("red.val", "Xv.val")]:
        g.edge(s, d)
    return g.build(kernel="ttv")


def row_scale(m: int, n: int, a_fmt: str = "dc", depth: int | None = 2,
              dtype: str = "float32", block: tuple[int, int] | None = None) -> Graph:
    """X(i,j) = A(i,j) * s(i) with s(i) = sum_j' A(i,j'): factored iteration.

    The row sum is computed once per row by a reducer over one scan of A's j level, then
    a ``broadcast`` repeats it over the j crds of a second scan of that level, where it
    meets A's values again. (One scan feeding both would deadlock on rows longer than the
    FIFOs: the multiplier would hold the row's values until the row sum is known.)
    ``block`` (bi, bj): A in bi x bj blocks; the reducer folds each block's columns
    (``ij->i``) and the ALU broadcasts the row sums along them (``ij,i->ij``).
    """
    dims = f"i={block[0]},j={block[1]}" if block else ""
    g = GraphBuilder("row_scale", dtype, depth)
    g.tensor("A", (m, n), a_fmt, block=block)
    g.tensor("X", (m, n), a_fmt, role="output", block=block)
    g.node("root", "root")
    g.node("Ai", "scan_" + _kind(a_fmt, 0), tensor="A", level=0)
    g.node("Aj_sum", "scan_" + _kind(a_fmt, 1), tensor="A", level=1)
    g.node("Av_sum", "array", tensor="A")
    g.node("rowsum", "reduce", op="sum", **({"block": f"ij->i;{dims}"} if block else {}))
    g.node("Aj", "scan_" + _kind(a_fmt, 1), tensor="A", level=1)
    g.node("Av", "array", tensor="A")
    g.node("rs_j", "repsig")
    g.node("bc_j", "broadcast")
    g.node("mul", "alu", op="mul", **({"block": f"ij,i->ij;{dims}"} if block else {}))
    g.node("Xi", "level_writer", tensor="X", level=0)
    g.node("Xj", "level_writer", tensor="X", level=1)
    g.node("Xv", "value_writer", tensor="X")
    for s, d in [("root.ref", "Ai.ref_in"), ("Ai.ref", "Aj_sum.ref_in"),
                 ("Aj_sum.ref", "Av_sum.ref"), ("Av_sum.val", "rowsum.val_in"),
                 ("Ai.ref", "rowsum.outer"), ("Ai.ref", "Aj.ref_in"), ("Ai.crd", "Xi.crd"),
                 ("Aj.crd", "rs_j.crd"), ("Aj.crd", "Xj.crd"), ("rowsum.val", "bc_j.val_in"),
                 ("rs_j.repsig", "bc_j.repsig"), ("Aj.ref", "Av.ref"), ("Av.val", "mul.a"),
                 ("bc_j.val", "mul.b"), ("mul.val", "Xv.val")]:
        g.edge(s, d)
    return g.build(kernel="row_scale")


def masked_dense(m: int, n: int, a_fmt: str = "dc", depth: int | None = 2,
                 dtype: str = "float32") -> Graph:
    """X(i,j) = A(i,j) * W(i,j) with W dense: A's coordinates *locate* into W's levels.

    W is never scanned: at each level its parent reference is repeated over A's crds
    and ``locate`` turns each (crd, parent ref) into W's position, one cycle per stored
    entry of A instead of one per coordinate of W's dense level.
    """
    g = GraphBuilder("masked_dense", dtype, depth)
    g.tensor("A", (m, n), a_fmt)
    g.tensor("W", (m, n), "dd")
    g.tensor("X", (m, n), a_fmt, role="output")
    g.node("rootA", "root")
    g.node("rootW", "root")
    g.node("Ai", "scan_" + _kind(a_fmt, 0), tensor="A", level=0)
    g.node("Aj", "scan_" + _kind(a_fmt, 1), tensor="A", level=1)
    for v in "ij":
        g.node(f"rs_{v}", "repsig")
        g.node(f"rep_W{v}", "repeat")
        g.node(f"W{v}", "locate", tensor="W", level="ij".index(v))
    g.node("Av", "array", tensor="A")
    g.node("Wv", "array", tensor="W")
    g.node("mul", "alu", op="mul")
    g.node("Xi", "level_writer", tensor="X", level=0)
    g.node("Xj", "level_writer", tensor="X", level=1)
    g.node("Xv", "value_writer", tensor="X")
    for s, d in [("rootA.ref", "Ai.ref_in"), ("Ai.ref", "Aj.ref_in"),
                 ("Ai.crd", "rs_i.crd"), ("rootW.ref", "rep_Wi.ref_in"),
                 ("rs_i.repsig", "rep_Wi.repsig"), ("Ai.crd", "Wi.crd_in"),
                 ("rep_Wi.ref", "Wi.ref_in"), ("Aj.crd", "rs_j.crd"),
                 ("Wi.ref", "rep_Wj.ref_in"), ("rs_j.repsig", "rep_Wj.repsig"),
                 ("Aj.crd", "Wj.crd_in"), ("rep_Wj.ref", "Wj.ref_in"),
                 ("Aj.ref", "Av.ref"), ("Wj.ref", "Wv.ref"), ("Av.val", "mul.a"),
                 ("Wv.val", "mul.b"), ("Ai.crd", "Xi.crd"), ("Aj.crd", "Xj.crd"),
                 ("mul.val", "Xv.val")]:
        g.edge(s, d)
    return g.build(kernel="masked_dense")


# -- graphs that fail on purpose: every backend must report them as the Python model does


def reconvergent_fork(n: int = 8, depth: int | None = 2, dtype: str = "float32") -> Graph:
    """A graph that deadlocks on small FIFOs, for checking how every backend reports it.

    A (1 x ``n``, dense) has its values fork to a sparse accumulator and straight into an
    ALU that also reads the accumulator's output: the direct branch fills its FIFO while
    the accumulator waits for the end of the row, so the fork's producer blocks: a real
    buffering deadlock whenever ``depth`` <= ``n``. It is not a kernel and computes
    nothing: with deeper FIFOs the ALU meets operands of different nesting (the
    accumulator's output is one level shallower) and the run fails with a stream error.
    So it is not in :data:`KERNELS`.
    """
    g = GraphBuilder("fork_deadlock", dtype, depth)
    g.tensor("A", (1, n), "dd")
    g.tensor("X", (1, n), "dc", role="output")
    for nid, op, kw in [("r", "root", {}), ("Ai", "scan_dense", {"tensor": "A", "level": 0}),
                        ("Aj", "scan_dense", {"tensor": "A", "level": 1}),
                        ("Av", "array", {"tensor": "A"}), ("acc", "spacc", {}),
                        ("alu", "alu", {"op": "add"}),
                        ("Xi", "level_writer", {"tensor": "X", "level": 0}),
                        ("Xj", "level_writer", {"tensor": "X", "level": 1}),
                        ("Xv", "value_writer", {"tensor": "X"})]:
        g.node(nid, op, **kw)
    for s, d in [("r.ref", "Ai.ref_in"), ("Ai.ref", "Aj.ref_in"), ("Ai.crd", "Xi.crd"),
                 ("Aj.crd", "acc.crd_in"), ("Aj.ref", "Av.ref"), ("Av.val", "acc.val_in"),
                 ("Av.val", "alu.a"), ("acc.val", "alu.b"), ("acc.crd", "Xj.crd"),
                 ("alu.val", "Xv.val")]:
        g.edge(s, d)
    return g.build()


def misaligned_alu(m: int = 2, n: int = 2, a_fmt: str = "dd", op: str = "mul",
                   dtype: str = "float32") -> Graph:
    """An ALU fed A's values (two levels) and c's (one level): a stream error, not a kernel.

    The operands' stops misalign as soon as A's first row ends, so every run fails with
    the ALU's "misaligned operands" error. The graph passes load-time validation, so the
    failure is a run-time report.
    """
    g = GraphBuilder("misaligned_alu", dtype)
    g.tensor("A", (m, n), a_fmt)
    g.tensor("c", (n,), "d")
    g.tensor("x", (n,), "d", role="output")
    for nid, op_, kw in [("ra", "root", {}), ("rc", "root", {}),
                         ("Ai", "scan_" + _kind(a_fmt, 0), {"tensor": "A", "level": 0}),
                         ("Aj", "scan_" + _kind(a_fmt, 1), {"tensor": "A", "level": 1}),
                         ("ci", "scan_dense", {"tensor": "c", "level": 0}),
                         ("Av", "array", {"tensor": "A"}), ("cv", "array", {"tensor": "c"}),
                         ("alu", "alu", {"op": op}),
                         ("xi", "level_writer", {"tensor": "x", "level": 0}),
                         ("xv", "value_writer", {"tensor": "x"})]:
        g.node(nid, op_, **kw)
    for s, d in [("ra.ref", "Ai.ref_in"), ("Ai.ref", "Aj.ref_in"), ("rc.ref", "ci.ref_in"),
                 ("ci.crd", "xi.crd"), ("Aj.ref", "Av.ref"), ("ci.ref", "cv.ref"),
                 ("Av.val", "alu.a"), ("cv.val", "alu.b"), ("alu.val", "xv.val")]:
        g.edge(s, d)
    return g.build()


def _kind(fmt: str, level: int) -> str:
    letters = fmt.split(":")[0]
    return "dense" if letters[level] == "d" else "compressed"


KERNELS = {"spmv": spmv, "spmm_ijk": spmm_ijk, "spmm_ikj": spmm_ikj, "spmm_kij": spmm_kij,
           "sddmm": sddmm, "elementwise": elementwise, "ttv": ttv, "row_scale": row_scale,
           "masked_dense": masked_dense}
