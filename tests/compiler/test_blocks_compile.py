"""Compiling with block sparsity (docs/blocks.md): the compiler blocks the named indices,
writes every ALU's and reducer's block operator, and the compiled graph's output equals
numpy for every order that lowers, block size, format and density."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ir
from compiler import LoweringError, compile_expression
from sim_models.python import simulate
from tests._block_graphs import block_sparse

#: expression, formats, shapes (by tensor), numpy reference; inputs whose format is
#: compressed get a block-sparse pattern, the others are dense
EXPRESSIONS = {
    "spmm": ("X(i,j) = A(i,k) * B(k,j)", {"A": "csr"}, {"A": "ik", "B": "kj"},
             lambda t: t["A"] @ t["B"]),
    "sddmm": ("S(i,j) = M(i,j) * Q(i,d) * K(j,d)", {"M": "csr", "S": "csr"},
              {"M": "ij", "Q": "id", "K": "jd"}, lambda t: t["M"] * (t["Q"] @ t["K"].T)),
    "bias_relu": ("Y(i,j) = relu(sum(k) A(i,k) * W(k,j) + b(j))", {"A": "csr"},
                  {"A": "ik", "W": "kj", "b": "j"},
                  lambda t: np.maximum(t["A"] @ t["W"] + t["b"], 0)),
    "spmv": ("y(i) = A(i,j) * x(j)", {"A": "csr"}, {"A": "ij", "x": "j"},
             lambda t: t["A"] @ t["x"]),
    "nested": ("X(i,l) = A(i,j) * B(j,k) * H(k,l)", {"A": "csr", "B": "csr"},
               {"A": "ij", "B": "jk", "H": "kl"}, lambda t: t["A"] @ t["B"] @ t["H"]),
    "scale_rows": ("Y(i,j) = A(i,j) * d(i)", {"A": "csr", "Y": "csr"},
                   {"A": "ij", "d": "i"}, lambda t: t["A"] * t["d"][:, None]),
}
SIZES = {"i": 3, "j": 2, "k": 2, "l": 2, "d": 2}


def _inputs(name: str, b: int, blocked: set[str], seed: int, density: float):
    expr, fmts, dims, gold = EXPRESSIONS[name]
    rng = np.random.default_rng(seed)
    n = {v: SIZES[v] * (b if v in blocked else 1) for v in SIZES}
    t = {}
    for tensor, idx in dims.items():
        shape = tuple(n[v] for v in idx)
        if fmts.get(tensor, "").startswith(("csr", "dc", "cc")) and len(idx) == 2 \
                and all(v in blocked for v in idx):
            t[tensor] = block_sparse(rng, *shape, b, density)
        else:
            t[tensor] = rng.standard_normal(shape).astype(np.float32)
    shapes = {k: v.shape for k, v in t.items()}
    return expr, fmts, shapes, t, gold(t)


def _check(name: str, b: int, blocked: set[str], order, seed: int = 0, density=0.5):
    expr, fmts, shapes, t, want = _inputs(name, b, blocked, seed, density)
    g = compile_expression(expr, fmts, shapes, order=order,
                           block={v: b for v in blocked}, stats=t)
    out = simulate(g, t).outputs
    (tensor,) = out
    np.testing.assert_allclose(out[tensor].to_dense(), want, rtol=1e-4, atol=1e-4)
    return g


@pytest.mark.parametrize("name", sorted(EXPRESSIONS))
@pytest.mark.parametrize("b", [2, 4])
def test_blocked_expressions_match_numpy_in_the_chosen_order(name, b):
    _, _, dims, _ = EXPRESSIONS[name]
    blocked = {v for idx in dims.values() for v in idx} - {"d"}
    g = _check(name, b, blocked, None)
    assert g.meta["block"] == {v: b for v in sorted(blocked)}
    assert any(n.params.get("block") for n in g.nodes.values())


@pytest.mark.parametrize("name", ["spmm", "sddmm", "bias_relu", "nested"])
def test_every_order_that_lowers_with_blocks_matches_numpy(name):
    _, _, dims, _ = EXPRESSIONS[name]
    indices = sorted({v for idx in dims.values() for v in idx})
    from itertools import permutations
    lowered = 0
    for order in permutations(indices):
        try:
            _check(name, 2, set(indices) - {"d"}, ",".join(order))
        except LoweringError as exc:
            assert "order" in str(exc) or "block" in str(exc)
            continue
        lowered += 1
    assert lowered >= 2


def test_a_product_under_a_sum_contracts_in_the_multiply():
    g = _check("spmm", 4, {"i", "j", "k"}, "i,k,j")
    assert g.nodes["mul"].params["block"] == "ik,kj->ij;i=4,j=4,k=4"
    g = _check("spmm", 4, {"i", "j", "k"}, "i,j,k")
    assert g.nodes["red_k"].params["block"] == "ij->ij;i=4,j=4"


def test_unblocked_reduction_index_streams_outer_products():
    g = _check("sddmm", 4, {"i", "j"}, "i,j,d")
    blocks = {n.id: n.params.get("block") for n in g.nodes.values() if n.op == "alu"}
    assert "i,j->ij;i=4,j=4" in blocks.values()


def test_block_errors_name_the_index():
    with pytest.raises(LoweringError, match="index 'i' has size 6, not a multiple of 4"):
        compile_expression("y(i) = A(i,j) * x(j)", {"A": "csr"}, {"A": (6, 8)},
                           block={"i": 4})
    with pytest.raises(LoweringError, match="block names 'q', which is not an index"):
        compile_expression("y(i) = A(i,j) * x(j)", {"A": "csr"}, {"A": (8, 8)},
                           block={"q": 4})
    with pytest.raises(LoweringError, match="dtype 'int32' cannot be blocked"):
        compile_expression("y(i) = A(i,j) * x(j)", {"A": "csr"}, {"A": (8, 8)},
                           block={"i": 4}, dtype="int32")


@settings(max_examples=20, deadline=None)
@given(name=st.sampled_from(sorted(EXPRESSIONS)), b=st.sampled_from([2, 3]),
       seed=st.integers(0, 2**16), density=st.floats(0.0, 1.0),
       drop=st.sampled_from(["", "i", "j", "k"]))
def test_blocked_expressions_over_random_patterns(name, b, seed, density, drop):
    _, _, dims, _ = EXPRESSIONS[name]
    blocked = {v for idx in dims.values() for v in idx} - {"d", drop}
    try:
        _check(name, b, blocked, None, seed, density)
    except LoweringError as exc:  # some partial blockings cannot lower in any order
        assert "block" in str(exc) or "order" in str(exc)


def test_block_lanes_compose():
    expr, fmts, shapes, t, want = _inputs("spmm", 2, {"i", "j", "k"}, 3, 0.6)
    g = compile_expression(expr, fmts, shapes, order="i,k,j", block={"i": 2, "j": 2, "k": 2},
                           par={"i": 2}, partition="balanced", stats=t)
    np.testing.assert_allclose(simulate(g, t).outputs["X"].to_dense(), want, rtol=1e-4,
                               atol=1e-4)
    assert ir.value_elems(g)
