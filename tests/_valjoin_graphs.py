"""Hand-built graphs around the value joiners (``intersect_val``, ``union_val``), shared by
every backend's parity tests (tests/parity/test_valjoin.py), with their numpy references.

Side *a* of the joiner is a (crd, val) stream: a's innermost scanner's crds with the
values its array loads (the shape of an accumulator's drained rows); side *b* is a plain
(crd, ref) stream whose refs the joiner passes to b's array. ``union_val`` feeds an
``add`` (x = a + b, a missing a-value is ``N``, read as 0), ``intersect_val`` a ``mul``
(x = a * b).
"""

from __future__ import annotations

import numpy as np

from ir import Graph, GraphBuilder
from tests._wiring import wire

__all__ = ["ALU_OF", "vector_graph", "matrix_graph", "passthrough_graph",
           "misaligned_graph", "expected", "matrix_expected", "rand_sparse"]

#: joiner → the ALU op that makes its graph a textbook kernel
ALU_OF = {"union_val": "add", "intersect_val": "mul"}


def _valjoin_edges(join: str, a_scan: str, b_scan: str) -> list[tuple[str, str]]:
    """Side a = (a_scan.crd, av.val), side b = (b_scan.crd, b_scan.ref); bv reads ref_b."""
    return [(f"{a_scan}.ref", "av.ref"), (f"{a_scan}.crd", f"{join}.crd_a"),
            ("av.val", f"{join}.val_a"), (f"{b_scan}.crd", f"{join}.crd_b"),
            (f"{b_scan}.ref", f"{join}.ref_b"), (f"{join}.ref_b", "bv.ref"),
            (f"{join}.val_a", "alu.a"), ("bv.val", "alu.b"), ("alu.val", "xv.val")]


def _value_nodes(g: GraphBuilder, join: str, a: str, b: str, x: str) -> None:
    g.node(join, join)
    g.node("av", "array", tensor=a)
    g.node("bv", "array", tensor=b)
    g.node("alu", "alu", op=ALU_OF[join])
    g.node("xv", "value_writer", tensor=x)


def vector_graph(join: str, dtype: str, n: int, depth: int | None = 2) -> Graph:
    """x(i) = a(i) op b(i) over compressed vectors a, b; x compressed (the joiner's crds)."""
    g = GraphBuilder(f"{join}_vec", dtype, depth)
    g.tensor("a", (n,), "c")
    g.tensor("b", (n,), "c")
    g.tensor("x", (n,), "c", role="output")
    g.node("ra", "root")
    g.node("rb", "root")
    g.node("ai", "scan_compressed", tensor="a", level=0)
    g.node("bi", "scan_compressed", tensor="b", level=0)
    g.node("xi", "level_writer", tensor="x", level=0)
    _value_nodes(g, join, "a", "b", "x")
    for s, d in [("ra.ref", "ai.ref_in"), ("rb.ref", "bi.ref_in"), (f"{join}.crd", "xi.crd"),
                 *_valjoin_edges(join, "ai", "bi")]:
        g.edge(s, d)
    return g.build()


def matrix_graph(join: str, dtype: str, m: int, n: int, outer: str = "intersect",
                 fmt: str = "cc", depth: int | None = 2) -> Graph:
    """X(i,j) = A(i,j) op B(i,j), the value joiner at j (stops S0 and S1 pass through it).

    ``outer``: ``"dense"`` (A, B and X stored ``dc``; one scan of A's rows gives both
    operands' row refs, X's rows come from it), or ``"intersect"`` / ``"union"`` (rows of
    A and B, both stored as ``fmt``, joined by that primitive; X ``cc`` through a crddrop
    that removes rows left empty)."""
    g = GraphBuilder(f"{join}_mat_{outer}_{fmt}", dtype, depth)
    fmt = "dc" if outer == "dense" else fmt
    kind = {"d": "scan_dense", "c": "scan_compressed"}
    g.tensor("A", (m, n), fmt)
    g.tensor("B", (m, n), fmt)
    g.tensor("X", (m, n), "dc" if outer == "dense" else "cc", role="output")
    g.node("rA", "root")
    g.node("Ai", kind[fmt[0]], tensor="A", level=0)
    g.node("Aj", kind[fmt[1]], tensor="A", level=1)
    g.node("Bj", kind[fmt[1]], tensor="B", level=1)
    g.node("Xi", "level_writer", tensor="X", level=0)
    g.node("Xj", "level_writer", tensor="X", level=1)
    _value_nodes(g, join, "A", "B", "X")
    edges = [("rA.ref", "Ai.ref_in"), *_valjoin_edges(join, "Aj", "Bj")]
    if outer == "dense":
        edges += [("Ai.ref", "Aj.ref_in"), ("Ai.ref", "Bj.ref_in"), ("Ai.crd", "Xi.crd"),
                  (f"{join}.crd", "Xj.crd")]
    else:
        g.node("rB", "root")
        g.node("Bi", kind[fmt[0]], tensor="B", level=0)
        g.node("join_i", outer)
        g.node("drop", "crddrop")
        edges += [("rB.ref", "Bi.ref_in"), ("Ai.crd", "join_i.crd_a"),
                  ("Ai.ref", "join_i.ref_a"), ("Bi.crd", "join_i.crd_b"),
                  ("Bi.ref", "join_i.ref_b"), ("join_i.ref_a", "Aj.ref_in"),
                  ("join_i.ref_b", "Bj.ref_in"), ("join_i.crd", "drop.outer_in"),
                  (f"{join}.crd", "drop.inner_in"), ("drop.outer", "Xi.crd"),
                  ("drop.inner", "Xj.crd")]
    for s, d in edges:
        g.edge(s, d)
    return g.build()


def expected(join: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """numpy's a + b (union_val) or a * b (intersect_val), in a's dtype. (An outer
    intersect of rows only drops rows whose product is zero anyway.)"""
    with np.errstate(over="ignore", invalid="ignore"):
        return (a + b if join == "union_val" else a * b).astype(a.dtype)


def matrix_expected(join: str, outer: str, fmt: str, a: np.ndarray, b: np.ndarray
                    ) -> dict[str, np.ndarray] | None:
    """``matrix_graph``'s X as numpy has it; None where an outer intersect of compressed
    rows drops the rows only one side has (not a + b: the Python model is the only
    reference there)."""
    if (join, outer, fmt) == ("union_val", "intersect", "cc"):
        return None
    return {"X": expected(join, a, b)}


def rand_sparse(rng: np.random.Generator, shape: tuple[int, ...], density: float,
                dtype: str) -> np.ndarray:
    """Small nonzero integers (exact in float32 too) at ``density``."""
    vals = rng.integers(-6, 7, shape)
    vals = np.where(vals == 0, 3, vals)
    return (vals * (rng.random(shape) < density)).astype(dtype)


def _joiner_into_x(g: GraphBuilder, join: str, n: int) -> None:
    """The joiner ``j`` and the writers of the compressed output vector x."""
    g.tensor("x", (n,), "c", role="output")
    g.node("j", join)
    g.node("xi", "level_writer", tensor="x", level=0)
    g.node("xv", "value_writer", tensor="x")


def passthrough_graph(join: str, dtype: str, n: int) -> Graph:
    """val_a straight into the value writer: x holds a's payloads as the joiner passed
    them, where side b has the crd (intersect_val) or everywhere (union_val); ``ref_b``
    stays open."""
    g = GraphBuilder(f"{join}_payloads", dtype)
    for t in ("a", "b"):
        g.tensor(t, (n,), "c")
        g.node(f"r{t}", "root")
        g.node(f"{t}i", "scan_compressed", tensor=t, level=0)
        g.edge(f"r{t}.ref", f"{t}i.ref_in")
    g.node("av", "array", tensor="a")
    _joiner_into_x(g, join, n)
    wire(g, "ai.ref>av.ref ai.crd>j.crd_a av.val>j.val_a bi.crd>j.crd_b bi.ref>j.ref_b "
         "j.crd>xi.crd j.val_a>xv.val")
    return g.build()


def misaligned_graph(join: str, dtype: str) -> Graph:
    """Side a from a one-row matrix (its end is S1), side b from a vector (S0); val_a
    through a relu (which reads union_val's N as 0) into x."""
    g = GraphBuilder(f"{join}_misaligned", dtype)
    g.tensor("A", (1, 3), "dc")
    g.tensor("b", (3,), "c")
    for root in ("rA", "rb"):
        g.node(root, "root")
    for nid, tensor, level, kind in (("Ai", "A", 0, "scan_dense"),
                                     ("Aj", "A", 1, "scan_compressed"),
                                     ("bi", "b", 0, "scan_compressed")):
        g.node(nid, kind, tensor=tensor, level=level)
    g.node("Av", "array", tensor="A")
    g.node("f", "unary", op="relu")
    _joiner_into_x(g, join, 3)
    wire(g, "rA.ref>Ai.ref_in Ai.ref>Aj.ref_in Aj.ref>Av.ref rb.ref>bi.ref_in Aj.crd>j.crd_a "
         "Av.val>j.val_a bi.crd>j.crd_b bi.ref>j.ref_b j.crd>xi.crd j.val_a>f.a f.val>xv.val")
    return g.build()
