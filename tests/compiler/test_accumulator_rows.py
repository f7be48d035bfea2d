"""Accumulator rows feeding further computation: a ``spacc``'s output streams into
functions, products with factors broadcast over its crds, and an outer accumulator."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import LoweringError, compile_expression
from ir import Graph
from ir._tokens import is_control
from sim_models.python import simulate

NESTED = "Y(i,j) = sum(k) A(i,k) * sum(k2) X(k,k2) * W(k2,j)"


def _sparse(rng: np.random.Generator, shape: tuple[int, int], density: float) -> np.ndarray:
    return (rng.uniform(-1, 1, shape) * (rng.random(shape) < density)).astype(np.float32)


def _nested_inputs(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"A": _sparse(rng, (7, 6), 0.35), "X": _sparse(rng, (6, 8), 0.3),
            "W": _sparse(rng, (8, 5), 1.0)}


def _compile(expr: str, arrays: dict[str, np.ndarray], fmts: dict[str, str],
             order: str) -> Graph:
    return compile_expression(expr, fmts, {t: a.shape for t, a in arrays.items()},
                              order=order)


def _data_tokens(graph: Graph, node: str, trace) -> int:
    """Data tokens a node wrote on its output edge (its firings minus stops and D)."""
    (edge,) = [e for e in graph.edges if e.src_node == node]
    return sum(not is_control(t) for t in trace.edges[edge.name].tokens)


def _mul_fed_by(graph: Graph, tensors: set[str]) -> str:
    """The ALU multiplying the value arrays of ``tensors`` (directly)."""
    for n in graph.nodes.values():
        if n.op == "alu":
            srcs = {graph.nodes[e.src_node].params.get("tensor")
                    for e in graph.in_edges[n.id].values()}
            if srcs == tensors:
                return n.id
    raise AssertionError(f"no ALU multiplies {tensors}")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nested_matmul_inner_row_is_computed_once_per_row_and_streamed(seed):
    a = _nested_inputs(seed)
    g = _compile(NESTED, a, {"A": "csr", "X": "csr", "W": "csr"}, "i,k,k2,j")
    assert g.meta["reductions"] == ["sum(k2): spacc", "sum(k): spacc"]
    run = simulate(g, a, trace=True)
    np.testing.assert_allclose(run.dense("Y"), a["A"] @ a["X"] @ a["W"], rtol=1e-4,
                               atol=1e-5)
    # the inner product X·W runs once per stored A(i,k): row k of X times W's rows
    nnz_w_row = (a["W"] != 0).sum(axis=1)
    expected = sum(nnz_w_row[a["X"][k] != 0].sum() for _, k in zip(*np.nonzero(a["A"]),
                                                                  strict=True))
    assert _data_tokens(g, _mul_fed_by(g, {"X", "W"}), run.trace) == expected
    # A(i,k) is read once per stored entry and broadcast over the inner row's crds
    (a_val,) = [n.id for n in g.nodes.values() if n.op == "array" and
                n.params["tensor"] == "A"]
    assert _data_tokens(g, a_val, run.trace) == np.count_nonzero(a["A"])
    bcast = [n for n in g.nodes.values() if n.op == "broadcast"]
    assert len(bcast) == 1
    inner = next(n.id for n in g.nodes.values() if n.op == "spacc")
    sig = g.in_edges[bcast[0].id]["repsig"].src_node
    assert g.in_edges[sig]["crd"].src == f"{inner}.crd"


def test_streaming_the_inner_row_beats_recomputing_it_per_output_column():
    a = _nested_inputs(0)
    fmts = {"A": "csr", "X": "csr", "W": "csr"}
    streamed = simulate(_compile(NESTED, a, fmts, "i,k,k2,j"), a)
    per_entry = simulate(_compile(NESTED, a, fmts, "i,j,k,k2"), a)
    np.testing.assert_allclose(streamed.dense("Y"), per_entry.dense("Y"), rtol=1e-4,
                               atol=1e-5)
    assert streamed.cycles < per_entry.cycles


@pytest.mark.parametrize("expr, ref", [
    ("Y(i,j) = relu(sum(k) B(i,k) * C(k,j)) * d(i)",
     lambda a: np.maximum(a["B"] @ a["C"], 0) * a["d"][:, None]),
    ("Y(i,j) = 2 * exp(sum(k) B(i,k) * C(k,j)) / d(i)",
     lambda a: np.where(_support(a), 2 * np.exp(a["B"] @ a["C"]), 0) / a["d"][:, None]),
    ("Y(i,j) = -(s * sum(k) B(i,k) * C(k,j))", lambda a: -(a["s"] * (a["B"] @ a["C"]))),
])
def test_elementwise_epilogue_fuses_after_gustavson(expr, ref):
    rng = np.random.default_rng(3)
    a = {"B": _sparse(rng, (6, 5), 0.4), "C": _sparse(rng, (5, 7), 0.4),
         "d": rng.uniform(1, 2, 6).astype(np.float32),
         "s": np.asarray(rng.uniform(1, 2), dtype=np.float32)}
    a = {t: v for t, v in a.items() if re.search(rf"\b{t}\b", expr.split("=")[1])}
    g = _compile(expr, a, {"B": "csr", "C": "csr", "Y": "dc"}, "i,k,j")
    assert g.meta["reductions"] == ["sum(k): spacc"]
    np.testing.assert_allclose(simulate(g, a).dense("Y"), ref(a), rtol=1e-4, atol=1e-5)


def _support(a: dict[str, np.ndarray]) -> np.ndarray:
    """Where Gustavson's accumulator stores an entry: some k has B(i,k) and C(k,j)."""
    return ((a["B"] != 0).astype(int) @ (a["C"] != 0).astype(int)) > 0


@pytest.mark.parametrize("expr, fmts, ref", [
    ("Y(i,j) = sum(k) B(i,k) * C(k,j) + b(j)", {"b": "c"},
     lambda a: a["B"] @ a["C"] + a["b"]),
    ("Y(i,j) = relu(sum(k) B(i,k) * C(k,j) + b(j))", {},
     lambda a: np.maximum(a["B"] @ a["C"] + a["b"], 0)),
    ("Y(i,j) = E(i,j) * sum(k) B(i,k) * C(k,j)", {"E": "csr"},
     lambda a: a["E"] * (a["B"] @ a["C"])),
    ("Y(i,j) = E(i,j) * sum(k) B(i,k) * C(k,j)", {},
     lambda a: a["E"] * (a["B"] @ a["C"])),
    ("Y(i,j) = E(i,j) - sum(k) B(i,k) * C(k,j)", {"E": "csr"},
     lambda a: a["E"] - a["B"] @ a["C"]),
    ("Y(i,j) = (sum(k) B(i,k) * C(k,j)) / d(j)", {},
     lambda a: np.where(_support(a), (a["B"] @ a["C"]) / a["d"], 0)),
])
def test_accumulator_rows_meet_operands_outside_the_reduction(expr, fmts, ref):
    """Epilogue joins after a Gustavson SpMM: union_val for + and -, intersect_val for a
    sparse factor, locate for a dense one; the rows' crds are the output's."""
    rng = np.random.default_rng(5)
    a = {"B": _sparse(rng, (6, 5), 0.4), "C": _sparse(rng, (5, 7), 0.4),
         "b": _sparse(rng, (7,), 0.5), "E": _sparse(rng, (6, 7), 0.5),
         "d": rng.uniform(1, 2, 7).astype(np.float32)}
    a = {t: v for t, v in a.items() if re.search(rf"\b{t}\(", expr.split("=")[1])}
    g = _compile(expr, a, {"B": "csr", "C": "csr", "Y": "dc", **fmts}, "i,k,j")
    assert g.meta["reductions"] == ["sum(k): spacc"]
    ops = {n.op for n in g.nodes.values()}
    joined = "union_val" if re.search(r"[+-] ", expr.split("=")[1]) else \
        "intersect_val" if fmts else "locate"
    assert joined in ops
    np.testing.assert_allclose(simulate(g, a).dense("Y"), ref(a), rtol=1e-4, atol=1e-5)


def test_accumulator_rows_meet_no_operand_iterated_before_the_reduction():
    """Over k,i,j the accumulator's loop is outermost: E(i,j) would have to share i."""
    shapes = {"B": (3, 4), "C": (4, 5), "E": (3, 5)}
    with pytest.raises(LoweringError, match="runs the sum over 'k' outside index 'i'") as exc:
        compile_expression("Y(i,j) = E(i,j) * sum(k) B(i,k) * C(k,j)",
                           {"B": "csr", "C": "csr", "E": "csr"}, shapes, order="k,i,j")
    assert "epilogue join" in str(exc.value)


@settings(max_examples=30, deadline=None)
@given(m=st.integers(1, 7), k=st.integers(1, 6), n=st.integers(1, 7),
       density=st.sampled_from([0.0, 0.2, 0.5, 1.0]), op=st.sampled_from("+-*/"),
       other_fmt=st.sampled_from(["csr", "dcsr", "dense"]), left=st.booleans(),
       order=st.sampled_from(["i,k,j", "j,k,i"]), seed=st.integers(0, 2**16))
def test_epilogue_joins_match_numpy(m, k, n, density, op, other_fmt, left, order, seed):
    """Random shapes, densities, formats, operators and sides; both Gustavson orders
    (rows of i, or columns of j, meeting E)."""
    rng = np.random.default_rng(seed)
    a = {"B": _sparse(rng, (m, k), density), "C": _sparse(rng, (k, n), density),
         "E": _sparse(rng, (m, n), 0.5)}
    if op == "/":
        a["E"] = rng.uniform(1, 2, (m, n)).astype(np.float32)
        other_fmt = "dense"
    acc = "sum(k) B(i,k) * C(k,j)"
    rhs = f"E(i,j) {op} ({acc})" if left and op in "+-*" else f"({acc}) {op} E(i,j)"
    fmts = {"B": "csr" if order == "i,k,j" else "csc", "C": "csr" if order == "i,k,j"
            else "csc", "Y": "csr" if order == "i,k,j" else "csc"}
    if other_fmt != "dense":
        fmts["E"] = other_fmt if order == "i,k,j" else {"csr": "csc", "dcsr": "dcsc"}[
            other_fmt]
    g = _compile(f"Y(i,j) = {rhs}", a, fmts, order)
    prod, e = a["B"] @ a["C"], a["E"]
    want = {"+": lambda: prod + e, "-": lambda: e - prod if left else prod - e,
            "*": lambda: prod * e, "/": lambda: np.where(_support(a), prod / e, 0)}[op]()
    np.testing.assert_allclose(simulate(g, a).dense("Y"), want, rtol=1e-4, atol=1e-5)
