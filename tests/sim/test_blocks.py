"""Block sparsity in the Python reference model (docs/blocks.md): outputs against numpy,
firing costs from compute.macs_per_cycle, block memory traffic, and the codec."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ir
import ir.examples as ex
from ir import Block, BlockError, BlockOp, GraphError
from sim_models.python import run_primitive, simulate
from tests._block_graphs import block_cases, block_sparse

CASES = [(b, *case) for b in (1, 2, 4) for case in block_cases(b)]


@pytest.mark.parametrize("b,name,graph,inputs,expected", CASES,
                         ids=[f"{c[1]}-b{c[0]}" for c in CASES])
def test_block_graphs_match_numpy(b, name, graph, inputs, expected):
    res = simulate(graph, inputs)
    for tensor, gold in expected.items():
        np.testing.assert_allclose(res.outputs[tensor].to_dense(), gold, rtol=1e-5,
                                   atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(b=st.sampled_from([1, 2, 3]), mb=st.integers(1, 4), kb=st.integers(1, 4),
       nb=st.integers(1, 3), dens=st.floats(0.0, 1.0), seed=st.integers(0, 2**16),
       fmt=st.sampled_from(["dc", "cc", "dd"]))
def test_block_gustavson_spmm_over_random_block_patterns(b, mb, kb, nb, dens, seed, fmt):
    rng = np.random.default_rng(seed)
    B = block_sparse(rng, mb * b, kb * b, b, dens)
    C = block_sparse(rng, kb * b, nb * b, b, dens)
    g = ex.spmm_ikj(mb * b, kb * b, nb * b, b_fmt=fmt, block=b)
    res = simulate(g, {"B": B, "C": C})
    np.testing.assert_allclose(res.outputs["X"].to_dense(), B @ C, rtol=1e-5, atol=1e-5)


def test_contraction_sums_exact_products_in_binary64_and_rounds_once():
    # 1 + 2^-24 + 2^-24: binary32 steps would round each addition away; binary64 keeps it
    assert BlockOp.parse("ij,j->i;i=3,j=3", 2).contracted == "j"
    a = np.array([[1.0, 2.0**-24, 2.0**-24]], dtype=np.float32)
    res = simulate(ex.spmv(3, 3, b_fmt="dd", block=3), {"B": np.vstack([a, a, a]),
                                                       "c": np.ones(3, np.float32)})
    exact = np.float32(1.0 + 2.0**-23)
    assert res.outputs["x"].to_dense()[0] == exact


def test_block_firings_take_ceil_work_over_macs_cycles():
    rng = np.random.default_rng(1)
    B = block_sparse(rng, 8, 8, 4, 1.0)
    C = block_sparse(rng, 8, 8, 4, 1.0)
    g = ex.spmm_ikj(8, 8, 8, b_fmt="dd", c_fmt="dd", block=4)
    hw = ir.load_hw("ideal", ["compute.macs_per_cycle=16"])
    assert ir.block_cycles(g, hw) == {"mul": 4}  # 64 MACs; the accumulator's 16 adds: 1
    fast, slow = simulate(g, {"B": B, "C": C}), simulate(g, {"B": B, "C": C}, hw=hw)
    assert slow.cycles > fast.cycles
    # 8 block products, each occupying the multiplier 4 cycles
    assert slow.cycles >= 8 * 4
    np.testing.assert_array_equal(slow.outputs["X"].to_dense(), fast.outputs["X"].to_dense())


def test_scalar_graphs_keep_their_cycles_on_a_bounded_datapath():
    rng = np.random.default_rng(2)
    B = block_sparse(rng, 8, 8, 1, 0.5)
    C = block_sparse(rng, 8, 8, 1, 0.5)
    g = ex.spmm_ikj(8, 8, 8)
    hw = ir.load_hw("ideal", ["compute.macs_per_cycle=1"])
    assert ir.block_cycles(g, hw) == {}
    assert simulate(g, {"B": B, "C": C}, hw=hw).cycles == simulate(g, {"B": B, "C": C}).cycles


def test_unary_block_firing_cycles_in_the_harness():
    blk = Block([1.0, -2.0, 3.0, -4.0])
    run = run_primitive("unary", {"a": [blk, blk, ir.DONE]}, params={"op": "relu"},
                        elems={"a": 4, "val": 4}, cycles=3)
    assert run.tokens["val"][0] == Block([1.0, 0.0, 3.0, 0.0])
    assert run.cycles["val"][:2] == [0, 3]


def test_block_memory_traffic_is_the_blocks_words():
    rng = np.random.default_rng(3)
    b = 4
    B = block_sparse(rng, 16, 16, b, 0.5)
    c = rng.standard_normal(16).astype(np.float32)
    hw = ir.load_hw("hbm2-u280")
    blocked = simulate(ex.spmv(16, 16, block=b), {"B": B, "c": c}, hw=hw)
    tree = ir.to_blocks(B, "dc", (b, b))
    # B's value array streams every stored block once: whole 64-byte lines of 16 words
    assert blocked.nodes["Bv"].dram_read_bytes == tree.vals.size * 4
    np.testing.assert_allclose(blocked.outputs["x"].to_dense(), B @ c, rtol=1e-5, atol=1e-5)


def test_block_tokens_round_trip_text_and_words():
    blk = Block([1.5, -0.0, float("inf"), float("nan")])
    assert ir.parse_token(ir.token_text(blk), float) == blk
    assert ir.token_text(blk) == "[1.5,-0,inf,nan]"
    word = ir.encode_token(blk, "float", 4)
    assert word >> 128 == 0 and ir.decode_token(word, "float", "val", 4) == blk
    for tok in (ir.stop(3), ir.EMPTY, ir.DONE):
        assert ir.decode_token(ir.encode_token(tok, "float", 4), "float", "val", 4) == tok


def test_blocked_trees_round_trip_and_name_bad_extents():
    rng = np.random.default_rng(4)
    A = block_sparse(rng, 6, 9, 3, 0.5)
    for fmt in ("dc", "cc", "dd", "dc:1,0"):
        tree = ir.to_blocks(A, fmt, (3, 3))
        assert tree.full_shape == (6, 9) and tree.shape == (2, 3)
        np.testing.assert_array_equal(tree.to_dense(), A)
    with pytest.raises(BlockError, match="mode 1 has size 9, not a multiple of its block"):
        ir.to_blocks(A, "dc", (3, 2))


def _spmv_with_mul_block(spec: str) -> dict:
    """A block SpMV's JSON whose mul declares the block contraction ``spec``."""
    data = ex.spmv(4, 4, block=2).to_dict()
    (mul,) = [n for n in data["nodes"] if n["id"] == "mul"]
    mul["params"]["block"] = spec
    return data


def test_block_graph_errors_name_the_node():
    data = _spmv_with_mul_block("ij,j->i;i=2,j=3")
    with pytest.raises(GraphError,
                       match="node 'mul': input a carries 4-element values but block .* reads 6"):
        ir.Graph.from_dict(data)
    for n in data["nodes"]:
        if n["id"] == "mul":
            n["params"] = {"op": "add", "block": "ij,j->i;i=2,j=2"}
    with pytest.raises(GraphError, match="contracts 'j', which only a mul ALU can"):
        ir.Graph.from_dict(data)
    for n in data["nodes"]:
        if n["id"] == "mul":
            n["params"] = {"op": "mul"}
    with pytest.raises(GraphError, match="node 'mul': input a, b carries blocks"):
        ir.Graph.from_dict(data)


def test_block_division_by_zero_follows_the_scalar_rule():
    """0/0 and NaN/0 give the canonical NaN (0x7fc00000) as the scalar division does, not
    the FPU's default NaN: block and scalar values agree bit for bit (docs/blocks.md)."""
    from sim_models.python._blocks import BlockBinary, block_unary
    from sim_models.python._values import binary_op

    nan = np.uint32(0x7FC01234).view(np.float32)
    a = np.array([0.0, nan, 1.0, -2.0, -0.0], dtype=np.float32)
    got = BlockBinary("div", "i,i->i;i=5", "n")(Block(a), Block(np.zeros(5, np.float32))).a
    scalar = binary_op("div", "float32")
    want = np.array([scalar(float(x), 0.0) for x in a], dtype=np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    by_const = block_unary("div_const", 0.0)(Block(a)).a
    np.testing.assert_array_equal(by_const.view(np.uint32), want.view(np.uint32))


def test_oversized_blocks_are_load_errors_not_memory_errors():
    data = _spmv_with_mul_block("ij,j->i;i=100000,j=100000")
    with pytest.raises(GraphError, match="exceeds the 65,536 a block may hold"):
        ir.Graph.from_dict(data)
    data = ex.spmv(4, 4, block=2).to_dict()
    data["tensors"][0]["shape"] = [1 << 20, 1 << 20]
    data["tensors"][0]["block"] = [1 << 10, 1 << 10]
    with pytest.raises(GraphError, match="more than the 65,536 a block may"):
        ir.Graph.from_dict(data)
