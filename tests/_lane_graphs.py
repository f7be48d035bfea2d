"""Compiled lane graphs with their inputs and numpy references, shared by the lane parity
suite (tests/parity/test_parity_lanes.py) and the backends' own tests (docs/parallel.md):
range lanes (``lane_split``, ``lane_merge``, ``lane_merge2``) in SpMV, SpMM in two orders
and elementwise kernels, at ``i``, ``j`` or both, round-robin and balanced, deep and
shallow lane buffers; a vector dealt to two lanes by hand; position lanes
(``position_split``, ``lane_combine``, ``lane_combine2``) on a matrix with a heavy row.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from compiler import compile_expression
from ir import Graph, GraphBuilder

__all__ = ["LANE_CASES", "lane_case", "lane_graph", "lane_numpy", "lane_operands",
           "HLS_LANE_CASES", "hls_lane_graph", "hls_lane_inputs", "DENSITIES", "PARTITIONS",
           "deal_graph", "POSITION_CASES", "position_case"]

DENSITIES = (0.0, 0.35, 1.0)
PARTITIONS = ("round-robin", "balanced")
SPMV = "y(i) = A(i,j) * x(j)"
SPMM = "X(i,j) = A(i,k) * B(k,j)"
#: kernel -> (expression, dataflow order); the elementwise kernels join two sparse
#: operands at the parallel index, so each lane splits a crd and two refs there (the
#: second split's crd output is left unconnected)
KERNELS = {"spmv": (SPMV, None), "gustavson": (SPMM, "i,k,j"), "inner": (SPMM, "i,j,k"),
           "emul": ("X(i,j) = A(i,j) * B(i,j)", None),
           "eadd": ("X(i,j) = A(i,j) + B(i,j)", None)}


def _sparse_int(rng, shape, density: float, npt) -> sp.csr_matrix:
    vals = rng.integers(1, 6, shape) * rng.choice([-1, 1], shape)
    return sp.csr_matrix((vals * (rng.random(shape) < density)).astype(npt))


def lane_operands(kernel: str, m: int, k: int, n: int, density: float, seed: int,
              dtype: str = "float32") -> dict:
    """A (m×k, scipy CSR, nonzero values) and x (k) or B (k×n, dense numpy); for the
    elementwise kernels B is m×k and as sparse as A."""
    rng = np.random.default_rng(seed)
    npt = np.float32 if dtype == "float32" else np.int32
    a = _sparse_int(rng, (m, k), density, npt)
    if kernel in ("emul", "eadd"):
        return {"A": a, "B": _sparse_int(rng, (m, k), density, npt)}
    other = rng.integers(-4, 6, (k,) if kernel == "spmv" else (k, n)).astype(npt)
    return {"A": a, "x" if kernel == "spmv" else "B": other}


def lane_graph(kernel: str, inputs: dict, par: dict[str, int],
               partition: str = "round-robin", lane_buffer: int = 1024,
               dtype: str = "float32") -> Graph:
    expr, order = KERNELS[kernel]
    fmts = {"A": "csr"} if kernel == "spmv" else {"A": "csr", "X": "csr"}
    if kernel in ("emul", "eadd"):
        fmts = {"A": "dc", "B": "dc", "X": "dc"}
    return compile_expression(expr, fmts, {t: v.shape for t, v in inputs.items()},
                              order=order, par=par, partition=partition,
                              lane_buffer=lane_buffer, stats=inputs, dtype=dtype,
                              name=f"{kernel}_lanes")


def lane_numpy(kernel: str, inputs: dict) -> np.ndarray:
    a = inputs["A"].toarray()
    if kernel == "emul":
        return a * inputs["B"].toarray()
    if kernel == "eadd":
        return a + inputs["B"].toarray()
    return a @ (inputs["x"] if kernel == "spmv" else inputs["B"])


#: RTL-sized cases: name -> (kernel, par, partition, lane_buffer, (m, k, n, density, seed))
LANE_CASES = {
    "spmv_i2": ("spmv", {"i": 2}, "round-robin", 1024, (9, 7, 0, 0.35, 1)),
    "spmv_i3": ("spmv", {"i": 3}, "round-robin", 1024, (9, 7, 0, 0.35, 1)),
    "spmv_i3_balanced": ("spmv", {"i": 3}, "balanced", 1024, (9, 7, 0, 0.35, 1)),
    "spmv_i3_shallow": ("spmv", {"i": 3}, "balanced", 2, (12, 7, 0, 0.5, 2)),
    "gustavson_i2": ("gustavson", {"i": 2}, "round-robin", 1024, (8, 6, 5, 0.3, 3)),
    "gustavson_i3_balanced": ("gustavson", {"i": 3}, "balanced", 1024, (8, 6, 5, 0.3, 3)),
    "gustavson_j2": ("gustavson", {"j": 2}, "round-robin", 1024, (8, 6, 5, 0.3, 3)),
    "gustavson_i2j2": ("gustavson", {"i": 2, "j": 2}, "round-robin", 1024,
                       (8, 6, 5, 0.3, 3)),
    "gustavson_i2j2_balanced_shallow": ("gustavson", {"i": 2, "j": 2}, "balanced", 2,
                                        (10, 6, 6, 0.4, 4)),
    "inner_i2": ("inner", {"i": 2}, "round-robin", 1024, (7, 5, 5, 0.4, 5)),
    "inner_j3_balanced": ("inner", {"j": 3}, "balanced", 1024, (7, 5, 5, 0.4, 5)),
    "inner_i2j2_shallow": ("inner", {"i": 2, "j": 2}, "round-robin", 2, (7, 5, 5, 0.4, 5)),
    "emul_j2": ("emul", {"j": 2}, "round-robin", 1024, (6, 7, 0, 0.5, 6)),
    "eadd_i3_balanced": ("eadd", {"i": 3}, "balanced", 1024, (6, 7, 0, 0.3, 6)),
}
#: lane buffers so shallow that lanes wait on each other (asserted in the model)


def lane_case(name: str) -> tuple[Graph, dict]:
    kernel, par, partition, lane_buffer, (m, k, n, density, seed) = LANE_CASES[name]
    inputs = lane_operands(kernel, m, k, n, density, seed)
    return lane_graph(kernel, inputs, par, partition, lane_buffer), inputs


def _mm(ins: dict) -> np.ndarray:
    return ins["A"] @ ins["B"]


#: C-simulation-sized cases: case → (expression, formats, shapes, order, par, numpy
#: reference, lane ops it uses)
HLS_LANE_CASES: dict[str, tuple[str, dict, dict, str | None, dict, Callable, set[str]]] = {
    "spmv_i3": (SPMV, {"A": "csr"}, {"A": (7, 6), "x": (6,)}, None, {"i": 3},
                lambda ins: ins["A"] @ ins["x"], {"lane_split", "lane_merge"}),
    "spmm_ikj_i2": (SPMM, {"A": "csr", "X": "csr"}, {"A": (7, 6), "B": (6, 5)}, "i,k,j",
                    {"i": 2}, _mm, {"lane_split", "lane_merge2"}),
    "spmm_ijk_i2": (SPMM, {"A": "csr", "B": "csr", "X": "csr"}, {"A": (7, 6), "B": (6, 5)},
                    "i,j,k", {"i": 2}, _mm, {"lane_split", "lane_merge2"}),
    "spmm_ijk_j2": (SPMM, {"A": "csr", "B": "csr", "X": "csr"}, {"A": (7, 6), "B": (6, 5)},
                    "i,j,k", {"j": 2}, _mm, {"lane_split", "lane_merge"}),
    "spmm_ijk_i2j2": (SPMM, {"A": "csr", "X": "csr"}, {"A": (7, 6), "B": (6, 5)}, "i,j,k",
                      {"i": 2, "j": 2}, _mm, {"lane_split", "lane_merge", "lane_merge2"}),
    # the join at i is a union of two doubly compressed operands: every operand's ref is
    # split, and the splits of the second ref leave their crd output unconnected
    "add_cc_i2": ("X(i,j) = A(i,j) + B(i,j)", {"A": "cc", "B": "cc", "X": "cc"},
                  {"A": (7, 6), "B": (7, 6)}, None, {"i": 2},
                  lambda ins: ins["A"] + ins["B"], {"lane_split", "lane_merge2"}),
}


def hls_lane_inputs(case: str, density: float, dtype: str, seed: int
                    ) -> dict[str, np.ndarray]:
    """Small-integer values (exact in float32 in any summation order)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in HLS_LANE_CASES[case][2].items():
        vals = rng.integers(1, 9, shape) * (rng.random(shape) < density)
        out[name] = vals.astype(dtype)
    return out


def hls_lane_graph(case: str, partition: str, dtype: str = "float32", **kw) -> Graph:
    expr, fmts, shapes, order, par, _, _ = HLS_LANE_CASES[case]
    stats = hls_lane_inputs(case, DENSITIES[1], dtype, seed=1) if partition == "balanced" else None
    return compile_expression(expr, fmts, shapes, order=order, par=par, partition=partition,
                              stats=stats, dtype=dtype, **kw)


def deal_graph(lane_b: int, lanes: int = 2) -> Graph:
    """A compressed vector dealt round-robin to two lanes and merged back."""
    g = GraphBuilder("deal", "float32")
    g.tensor("a", (9,), "c")
    g.tensor("x", (9,), "c", role="output")
    g.node("root", "root")
    g.node("ai", "scan_compressed", tensor="a", level=0)
    g.edge("root.ref", "ai.ref_in")
    g.node("merge", "lane_merge")
    for s, lane in (("a", 0), ("b", lane_b)):
        g.node(f"split_{s}", "lane_split", lanes=lanes, lane=lane, lo=0, hi=9)
        g.node(f"val_{s}", "array", tensor="a")
        for src, dst in [("ai.crd", f"split_{s}.crd_in"), ("ai.ref", f"split_{s}.ref_in"),
                         (f"split_{s}.ref", f"val_{s}.ref"),
                         (f"split_{s}.crd", f"merge.crd_{s}"),
                         (f"val_{s}.val", f"merge.val_{s}")]:
            g.edge(src, dst)
    g.node("xi", "level_writer", tensor="x", level=0)
    g.node("xv", "value_writer", tensor="x")
    g.edge("merge.crd", "xi.crd")
    g.edge("merge.val", "xv.val")
    return g.build()


def position_case(kernel: str, lanes: int, dtype: str = "float32",
                  lane_buffer: int | None = None, seed: int = 1
                  ) -> tuple[Graph, dict, np.ndarray]:
    """A position-lane SpMV or SpMM on an 8 x 7 matrix whose row 3 is full."""
    rng = np.random.default_rng(seed)
    npt = np.float32 if dtype == "float32" else np.int32
    vals = rng.integers(1, 6, (8, 7)) * (rng.random((8, 7)) < 0.3)
    vals[3] = rng.integers(1, 6, 7)  # the heavy row
    a = sp.csr_matrix(vals.astype(npt))
    if kernel == "spmv":
        other, expr, fmts, order = rng.integers(-4, 6, 7).astype(npt), \
            "y(i) = A(i,k) * x(k)", {"A": "csr"}, "i,k"
        inputs = {"A": a, "x": other}
    else:
        other, expr, fmts, order = rng.integers(-4, 6, (7, 3)).astype(npt), \
            "X(i,j) = A(i,k) * B(k,j)", {"A": "csr", "X": "csr"}, "i,k,j"
        inputs = {"A": a, "B": other}
    graph = compile_expression(expr, fmts, {t: v.shape for t, v in inputs.items()},
                               order=order, par={"i": lanes}, partition="position",
                               lane_buffer=lane_buffer, stats=inputs, dtype=dtype,
                               name=f"{kernel}_position")
    return graph, inputs, a.toarray() @ other


#: RTL-sized position-lane cases: name -> (kernel, lanes, dtype, lane buffer)
POSITION_CASES = {"spmv_3": ("spmv", 3, "float32", None),
                  "spmv_4_int": ("spmv", 4, "int32", None),
                  "spmm_2": ("spmm", 2, "float32", None),
                  "spmm_3_shallow": ("spmm", 3, "float32", 2),
                  "spmm_3_int": ("spmm", 3, "int32", None)}
