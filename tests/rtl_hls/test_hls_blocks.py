"""The HLS generator on block-sparse graphs (docs/blocks.md): block streams and the block
operators' template arguments in the generated top. Parity with the Python model is in
tests/parity/test_parity_blocks.py.
"""

from __future__ import annotations

import ir.examples as ex
from ir import BlockOp, load_hw
from rtl_hls.hls import generate
from tests._block_graphs import BLOCK_HW_OVERRIDES


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
