"""Block-sparse graphs (docs/blocks.md) in generated HLS C++, C-simulated with g++:
every edge's token sequence equals the Python model's, outputs equal the model's bit for
bit and numpy's within rounding, with the recording top and with HBM ``m_axi`` ports.

Covers the shared block cases (contractions, elementwise ALUs with N from unions,
reducers with and without a fold, unary exp, accumulators) at b = 2 and 4 and one at
b = 16 (256-element blocks), a row broadcast (``ij,i->ij`` fed by the ``broadcast``
primitive) and an outer product (``i,j->ij``) with unequal extents, special binary32
payloads (NaN, -0.0, inf), and random block patterns. Each graph compiles once (the
backend caches builds by their sources).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ir.examples as ex
from cosim import HlsCsimBackend
from ir import BlockOp, Graph, GraphBuilder, compare_traces, load_hw, value_elems
from rtl_hls.hls import generate
from sim_models.python import simulate
from tests._block_graphs import BLOCK_HW_OVERRIDES, block_cases, block_sparse
from tests._wiring import matrix_writers, wire

pytestmark = pytest.mark.cosim

HBM = "hbm2-u280"
CASES = [(b, *case) for b in (2, 4) for case in block_cases(b)]
CASES += [(16, *case) for case in block_cases(16) if case[0] == "spmm_ikj"]
IDS = [f"{c[1]}-b{c[0]}" for c in CASES]


def _bits(tree) -> np.ndarray:
    return np.ascontiguousarray(tree.to_dense(), dtype=np.float32).view(np.uint32)


def _assert_same(graph: Graph, inputs: dict, hls: HlsCsimBackend, want: dict | None = None,
                 hw: str | None = None) -> dict[str, np.ndarray]:
    """csim's tokens on every edge and its outputs (bit for bit) equal the Python
    model's on the same hardware; outputs equal numpy's ``want`` within rounding.
    Returns the outputs' dense bits."""
    ref = simulate(graph, inputs, trace=True, hw=load_hw(hw) if hw else None)
    res = hls.run(graph, inputs, trace=True, hw=hw)
    mismatches = compare_traces(ref.trace, res.trace, timed=False)
    assert not mismatches, "\n".join(map(str, mismatches[:5]))
    assert sorted(res.outputs) == sorted(ref.outputs)
    for name, tree in ref.outputs.items():
        assert res.outputs[name].block == tree.block
        np.testing.assert_array_equal(_bits(res.outputs[name]), _bits(tree), err_msg=name)
    for name, gold in (want or {}).items():
        np.testing.assert_allclose(res.outputs[name].to_dense(), gold, rtol=1e-5, atol=1e-5)
    return {name: _bits(tree) for name, tree in res.outputs.items()}


def _has(bits: np.ndarray, *patterns: int) -> bool:
    return all(bool(np.isin(bits, np.uint32(p)).any()) for p in patterns)


@pytest.mark.parametrize("hw", [None, HBM])
@pytest.mark.parametrize("b,name,graph,inputs,expected", CASES, ids=IDS)
def test_block_cases_are_token_exact(hls, b, name, graph, inputs, expected, hw):
    _assert_same(graph, inputs, hls, expected, hw=hw)


# -- hand-built block operators: a row broadcast and an outer product --------------------
def row_scale_graph(m: int, n: int, bi: int, bj: int) -> Graph:
    """X(i,j) = A(i,j) * s(i), s(i) = sum_j A(i,j): the reducer folds each block's
    columns (``ij->i``), ``broadcast`` repeats the row-block sums over the j blocks, and
    the ALU broadcasts them along the block's columns (``ij,i->ij``)."""
    return ex.row_scale(m, n, block=(bi, bj))


def outer_graph(m: int, n: int, bi: int, bj: int) -> Graph:
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


@pytest.mark.parametrize("hw", [None, HBM])
def test_row_broadcast_block_operator(hls, hw):
    rng = np.random.default_rng(5)
    A = np.kron(rng.random((4, 3)) < 0.6, np.ones((2, 4))).astype(np.float32) * \
        rng.standard_normal((8, 12)).astype(np.float32)
    g = row_scale_graph(8, 12, 2, 4)
    assert value_elems(g)["bc_j.val->mul.b"] == 2
    _assert_same(g, {"A": A}, hls, {"X": A * A.sum(axis=1, keepdims=True)}, hw=hw)


@pytest.mark.parametrize("hw", [None, HBM])
def test_outer_product_block_operator(hls, hw):
    rng = np.random.default_rng(6)
    u = rng.standard_normal(6).astype(np.float32)
    w = rng.standard_normal(9).astype(np.float32)
    _assert_same(outer_graph(6, 9, 2, 3), {"u": u, "w": w}, hls, {"X": np.outer(u, w)}, hw=hw)


# -- generated code ----------------------------------------------------------------------
def test_block_streams_and_operators_in_the_top():
    g = ex.spmm_ikj(8, 8, 8, block=4)
    top = generate(g, hw=load_hw("ideal", BLOCK_HW_OVERRIDES))
    src = top.files[top.top_source]
    assert 'hls::stream<samfuse::block_tok<16>> s' in src
    extents, (sa, sb), n_out = BlockOp.parse("ik,kj->ij;i=4,j=4,k=4", 2).loops()
    assert (extents, sa, sb, n_out) == ((4, 4, 4), (4, 0, 1), (0, 1, 4), 2)
    # the loop nest of ir.BlockOp.loops() and the II of ir.block_cycles (64 MACs / 4)
    assert ("samfuse_alu<samfuse::OP_MUL, true, samfuse::BlockOp<2, "
            "samfuse::ints<4, 4, 4>, samfuse::ints<4, 0, 1>, samfuse::ints<0, 1, 4>>, 16>"
            ) in src
    assert "samfuse_array<16>(" in src
    # scalar graphs keep the scalar word everywhere
    scalar = generate(ex.spmm_ikj(8, 8, 8))
    assert "block_tok" not in scalar.files[scalar.top_source]


# -- bit-exact payloads --------------------------------------------------------------------
def _special(shape: tuple[int, int], rng: np.random.Generator, b: int) -> np.ndarray:
    """A block-sparse matrix whose stored blocks hold NaNs (with payloads), -0.0, ±inf."""
    x = block_sparse(rng, *shape, b, 0.7)
    specials = np.array([0x7FC00123, 0xFFC00000, 0x80000000, 0x7F800000, 0xFF800000],
                        dtype=np.uint32).view(np.float32)
    spots = (x != 0) & (rng.random(shape) < 0.3)
    x[spots] = rng.choice(specials, int(spots.sum()))
    return x


@pytest.mark.parametrize("op", ["add", "mul", "max"])
def test_special_payloads_pass_bit_exact_elementwise(hls, op):
    rng = np.random.default_rng(11)
    A, B = _special((8, 6), rng, 2), _special((8, 6), rng, 2)
    out = _assert_same(ex.elementwise(8, 6, op, block=2), {"A": A, "B": B}, hls)["X"]
    # the special words reach the output: a NaN payload, the negative NaN, +inf
    assert _has(out, 0x7FC00123, 0xFFC00000, 0x7F800000)


def test_special_payloads_in_a_contraction_and_an_exp(hls):
    rng = np.random.default_rng(12)
    B = _special((8, 8), rng, 4)  # inf * 0 and NaN in block products
    C = _special((8, 4), rng, 4)
    out = _assert_same(ex.spmm_ikj(8, 8, 4, block=4), {"B": B, "C": C}, hls)["X"]
    assert np.isnan(out.view(np.float32)).any()
    _assert_same(ex.row_reduce(8, 8, "sum", "exp", block=4), {"A": B}, hls)
    _assert_same(ex.row_reduce(8, 8, "max", "", block=4), {"A": B}, hls)


# -- random block patterns -------------------------------------------------------------------
_RANDOM = {"spmm_ikj": lambda: ex.spmm_ikj(6, 6, 4, block=2),
           "elementwise_sub": lambda: ex.elementwise(6, 4, "sub", block=2)}


@settings(max_examples=20, deadline=None)
@given(kernel=st.sampled_from(sorted(_RANDOM)), dens=st.floats(0.0, 1.0),
       seed=st.integers(0, 2**16))
def test_random_block_patterns_are_token_exact(hls, kernel, dens, seed):
    rng = np.random.default_rng(seed)
    g = _RANDOM[kernel]()
    shapes = {t: s.shape for t, s in g.tensors.items() if s.role == "input"}
    inputs = {t: block_sparse(rng, *shape, 2, dens) for t, shape in shapes.items()}
    _assert_same(g, inputs, hls)
