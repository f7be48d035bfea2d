"""Kernel graphs with their inputs, shared by the kernel parity suite
(tests/parity/test_parity_kernels.py) and the backends' own tests: every example kernel,
the primitives the examples do not use, compiled and factored graphs, at fixed shapes (so
each HLS and RTL build serves every input of its shape).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from compiler import compile_expression
from ir import Graph, GraphBuilder, examples

__all__ = ["CASES", "COMPILED", "case_inputs", "compiled_case", "small_random",
           "CHAIN", "CHAIN_FORMATS", "FORMATS_KEPT", "chain_shapes", "chain_operands",
           "chain_gold", "full_range_random"]


def small_random(rng: np.random.Generator, shape: tuple[int, ...], density: float,
           dtype: str) -> np.ndarray:
    """Small integers or normal floats (no stored zeros) at ``density``."""
    vals = rng.integers(-4, 9, shape) if dtype == "int32" else rng.standard_normal(shape)
    vals = np.where(vals == 0, 1, vals)
    return (vals * (rng.random(shape) < density)).astype(dtype)


def full_range_random(seed: int, shape, density: float, dtype: str) -> np.ndarray:
    """Non-integer floats (so rounding is exercised) or full-range int32 (so is wrap)."""
    rng = np.random.default_rng(seed)
    if dtype == "float32":
        vals = rng.standard_normal(shape).astype(np.float32)
        vals[vals == 0] = 1
    else:
        vals = rng.integers(-2**31, 2**31, size=shape, dtype=np.int64).astype(np.int32)
        vals[vals == 0] = 7
    return np.where(rng.random(shape) < density, vals, 0).astype(vals.dtype)


def _unary_graph(dtype: str) -> Graph:
    """Every unary op and reduce-max on one CSR matrix, plus a crdhold whose outputs feed
    repsigs (so its streams are traced): the primitives the examples do not use."""
    g = GraphBuilder("unaries", dtype)
    m, n = 4, 5
    g.tensor("A", (m, n), "dc")
    g.node("root", "root")
    g.node("Ai", "scan_dense", tensor="A", level=0)
    g.node("Aj", "scan_compressed", tensor="A", level=1)
    g.node("Av", "array", tensor="A")
    g.edge("root.ref", "Ai.ref_in")
    g.edge("Ai.ref", "Aj.ref_in")
    g.edge("Aj.ref", "Av.ref")
    consts = {"add_const": 3.0, "mul_const": -2.0, "div_const": 2.0}
    if dtype == "float32":
        consts = {"add_const": 0.25, "mul_const": -1.5, "div_const": 3.0}
    for op in ("relu", "exp", "neg", "rsqrt", "add_const", "mul_const", "div_const"):
        g.tensor(f"X_{op}", (m, n), "dc", role="output")
        g.node(f"u_{op}", "unary", op=op, const=consts.get(op, 0.0))
        g.node(f"Xi_{op}", "level_writer", tensor=f"X_{op}", level=0)
        g.node(f"Xj_{op}", "level_writer", tensor=f"X_{op}", level=1)
        g.node(f"Xv_{op}", "value_writer", tensor=f"X_{op}")
        for s, d in [("Av.val", f"u_{op}.a"), (f"u_{op}.val", f"Xv_{op}.val"),
                     ("Ai.crd", f"Xi_{op}.crd"), ("Aj.crd", f"Xj_{op}.crd")]:
            g.edge(s, d)
    g.tensor("y", (m,), "d", role="output")
    g.node("rmax", "reduce", op="max")
    g.node("yi", "level_writer", tensor="y", level=0)
    g.node("yv", "value_writer", tensor="y")
    g.node("hold", "crdhold")
    g.node("rs_o", "repsig")
    g.node("rs_n", "repsig")
    for s, d in [("Av.val", "rmax.val_in"), ("Ai.ref", "rmax.outer"), ("rmax.val", "yv.val"),
                 ("Ai.crd", "yi.crd"), ("Ai.crd", "hold.outer_in"), ("Aj.crd", "hold.inner_in"),
                 ("hold.outer", "rs_o.crd"), ("hold.inner", "rs_n.crd")]:
        g.edge(s, d, depth=None if s == "Ai.crd" else "default")
    return g.build()


def _elementwise(op: str, out_fmt: str = "dc") -> Callable:
    return lambda dt: examples.elementwise(5, 6, op=op, out_fmt=out_fmt, dtype=dt)


def _spmm(kernel: str) -> Callable:
    return lambda dt: getattr(examples, kernel)(5, 6, 4, dtype=dt)


def _compiled(expr: str, fmts: dict, shapes: dict, **kw) -> Callable:
    return lambda dt: compile_expression(expr, fmts, shapes, dtype=dt, **kw)


#: case → (graph factory taking the dtype, operand shapes and densities: None = the
#: swept density, a number = fixed; the kernel whose numpy result it has, if any)
CASES: dict[str, tuple[Callable[[str], Graph], dict[str, tuple[tuple[int, ...], float | None]],
                       str | None]]
CASES = {
    "spmv": (lambda dt: examples.spmv(6, 7, dtype=dt),
             {"B": ((6, 7), None), "c": ((7,), 1.0)}, "spmv"),
    **{k: (_spmm(k), {"B": ((5, 6), None), "C": ((6, 4), None)}, "spmm")
       for k in ("spmm_ijk", "spmm_ikj", "spmm_kij")},
    "sddmm": (lambda dt: examples.sddmm(5, 6, 3, dtype=dt),
              {"B": ((5, 6), None), "C": ((5, 3), 1.0), "D": ((3, 6), 1.0)}, "sddmm"),
    "ttv": (lambda dt: examples.ttv(3, 4, 5, dtype=dt),
            {"B": ((3, 4, 5), None), "c": ((5,), None)}, "ttv"),
    "elementwise_add": (_elementwise("add"), {"A": ((5, 6), None), "B": ((5, 6), None)},
                        "elementwise_add"),
    "elementwise_add_cc": (_elementwise("add", "cc"), {"A": ((5, 6), None),
                                                       "B": ((5, 6), None)}, "elementwise_add"),
    "elementwise_mul": (_elementwise("mul"), {"A": ((5, 6), None), "B": ((5, 6), None)},
                        "elementwise_mul"),
    "elementwise_div": (_elementwise("div"), {"A": ((5, 6), None), "B": ((5, 6), None)}, None),
    # locate: A's crds address dense W at both levels (no scan of W)
    "masked_dense": (lambda dt: examples.masked_dense(5, 6, dtype=dt),
                     {"A": ((5, 6), None), "W": ((5, 6), 1.0)}, "masked_dense"),
    "masked_dense_cc": (lambda dt: examples.masked_dense(5, 6, "cc", dtype=dt),
                        {"A": ((5, 6), None), "W": ((5, 6), 1.0)}, "masked_dense"),
    "unaries": (_unary_graph, {"A": ((4, 5), None)}, None),
    # broadcast of a row sum (an all-empty "cc" matrix gives broadcast an empty parent)
    "row_scale": (lambda dt: examples.row_scale(5, 6, dtype=dt), {"A": ((5, 6), None)},
                  "row_scale"),
    "row_scale_cc": (lambda dt: examples.row_scale(5, 6, "cc", dtype=dt),
                     {"A": ((5, 6), None)}, "row_scale"),
    "scaled": (_compiled("X(i,j) = 2 * B(i,k) * C(k,j) - E(i,j) * F(i,j) / 2",
                         {"B": "csr", "C": "csr", "E": "csr", "F": "csr", "X": "dc"},
                         {"B": (4, 5), "C": (5, 3), "E": (4, 3), "F": (4, 3)}),
               {"B": ((4, 5), None), "C": ((5, 3), None), "E": ((4, 3), None),
                "F": ((4, 3), None)}, None),
    "mttkrp_kijl": (_compiled("A(i,j) = B(i,k,l) * C(k,j) * D(l,j)", {"B": "ccc", "A": "cc"},
                              {"B": (3, 4, 3), "C": (4, 5), "D": (3, 5)}, order="k,i,j,l"),
                    {"B": ((3, 4, 3), None), "C": ((4, 5), 0.8), "D": ((3, 5), 0.8)}, None),
    "rowmax": (_compiled("x(i) = max(j) B(i,j)", {"B": "csr"}, {"B": (5, 6)}),
               {"B": ((5, 6), None)}, None),
    # factored iteration: the row max and the row sum inside it hoisted out of j
    "hoisted": (_compiled("Y(i,j) = B(i,j) - max(j2) B(i,j2) + sum(k) C(i,k) * d(k)",
                          {"B": "dense", "C": "csr"}, {"B": (5, 6), "C": (5, 4),
                                                       "d": (4,)}),
                {"B": ((5, 6), 1.0), "C": ((5, 4), None), "d": ((4,), 1.0)}, None),
}
def case_inputs(shapes: dict, density: float, dtype: str, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {name: small_random(rng, shape, density if d is None else d, dtype)
            for name, (shape, d) in shapes.items()}


#: compiled kernels (run cycle for cycle in RTL): expression, formats, shapes, order
COMPILED = {
    "spmv": ("x(i) = B(i,j) * c(j)", {"B": "csr"}, {"B": (6, 7), "c": (7,)}, None),
    "spmm_ikj": ("X(i,j) = B(i,k) * C(k,j)", {"B": "csr", "C": "csr", "X": "dc"},
                 {"B": (5, 6), "C": (6, 4)}, "i,k,j"),  # spacc
    "spmm_kij": ("X(i,j) = B(i,k) * C(k,j)", {"B": "csc", "C": "csr", "X": "dc"},
                 {"B": (5, 6), "C": (6, 4)}, "k,i,j"),  # spacc2
    "sddmm": ("X(i,j) = B(i,j) * C(i,k) * D(k,j)", {"B": "csr", "X": "dc"},
              {"B": (5, 6), "C": (5, 3), "D": (3, 6)}, None),
    "elementwise_add": ("X(i,j) = A(i,j) + B(i,j)", {"A": "csr", "B": "csr", "X": "dc"},
                        {"A": (5, 6), "B": (5, 6)}, None),
    # factored iteration: the row sum is hoisted out of j and broadcast over it
    "row_scale": ("X(i,j) = A(i,j) * sum(k) B(i,k) * c(k)", {"A": "csr", "B": "csr",
                                                            "X": "dc"},
                  {"A": (5, 6), "B": (5, 4), "c": (4,)}, "i,k,j"),
}
def compiled_case(kernel: str, dtype: str, seed: int = 3) -> tuple[Graph, dict]:
    """(graph, inputs) of one compiled kernel; sparse operands 40 % dense, dense ones
    full."""
    expr, fmts, shapes, order = COMPILED[kernel]
    graph = compile_expression(expr, fmts, shapes, order=order, dtype=dtype, name=kernel)
    rng = np.random.default_rng(seed)
    return graph, {t: small_random(rng, shape, 0.4 if t in fmts else 1.0, dtype)
                   for t, shape in shapes.items()}


# -- a chain whose only lowerings pin bypass FIFOs (docs/compiler.md, rule 5) ----------

#: a product chain whose orders keeping ``i`` before ``k3`` before ``k`` all lower only
#: with deep epilogues, and every one of them buffers a fiber of an accumulator's loop
#: on a branch that bypasses it (``i,k3,k,k2,k4,j``: ``spacc2_k3`` past ``red_k2``)
CHAIN = ("P(i,j) = sum(k) (sum(k2) F0(k2,i) * F1(k2,k)) * sum(k3) F2(k,k3) * "
         "sum(k4) F3(k4,k3) * F4(k4,j)")
CHAIN_FORMATS = {"F0": "dense", "F1": "dense", "F2": "csc", "F3": "dense", "F4": "csr"}
#: the same chain with formats under which, without transposes, every order that
#: lowers is deep and hazardous (compile_expression's search)
FORMATS_KEPT = {"F0": "csc", "F1": "csc", "F2": "csc", "F3": "csc", "F4": "csr"}


def chain_shapes(i: int, j: int, k: int, k2: int, k3: int, k4: int) -> dict[str, tuple]:
    """:data:`CHAIN`'s operand shapes from its index sizes."""
    return {"F0": (k2, i), "F1": (k2, k), "F2": (k, k3), "F3": (k4, k3), "F4": (k4, j)}


def chain_operands(shapes: dict[str, tuple], formats: dict[str, str], density: float,
                   seed: int) -> dict[str, np.ndarray]:
    """Seeded small integers: operands stored dense are full, the others at ``density``."""
    rng = np.random.default_rng(seed)
    return {t: (rng.integers(1, 4, s) * (rng.random(s) < (1.0 if formats[t] == "dense"
                                                          else density))).astype(np.float32)
            for t, s in shapes.items()}


def chain_gold(ops: dict[str, np.ndarray]) -> np.ndarray:
    """:data:`CHAIN` by numpy, in float64."""
    return np.einsum("bi,bk,kc,dc,dj->ij", *(ops[f"F{n}"].astype(np.float64)
                                             for n in range(5)))
