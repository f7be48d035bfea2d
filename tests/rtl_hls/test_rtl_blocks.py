"""The RTL netlist on block-sparse graphs (docs/blocks.md): scalar graphs keep their
netlists exactly, block graphs get wide words, the block op's loop nest and the
initiation interval, and lint clean. Parity with the Python model is in
tests/parity/test_parity_blocks.py.
"""

from __future__ import annotations

import pytest

from ir import examples, load_hw
from rtl_hls.rtl import generate
from tests._block_graphs import (
    BLOCK_HW_OVERRIDES,
    block_cases,
    outer_broadcast_graph,
    row_center_graph,
)
from tests.parity._backends import assert_lint_clean as _assert_lint_clean


def test_scalar_netlists_unchanged_by_blocks():
    """The wide-word parameters appear only where values are blocks: a scalar graph's
    netlist has no block parameter and only 34-bit words."""
    for graph in (examples.spmv(6, 7), examples.spmm_ikj(5, 6, 4), examples.row_scale(5, 6)):
        text = generate(graph, hw=load_hw("ideal", BLOCK_HW_OVERRIDES)).text
        assert "BLOCK" not in text and ".W(" not in text and "CYCLES" not in text
        assert "[33:0]" in text and not any(f"[{w}:0]" in text for w in (65, 129, 513))


def test_block_netlist_parameters():
    """A block graph's netlist: wide words on block edges, the block op's loop nest and
    the initiation interval from ir.block_cycles."""
    graph = examples.spmm_ikj(8, 6, 4, block=2)
    text = generate(graph, hw=load_hw("ideal", BLOCK_HW_OVERRIDES)).text
    assert ".W(130)" in text and "logic [129:0]" in text
    assert ".MODE(1)" in text and ".NL(3)" in text and ".CI(2)" in text
    assert ".CYCLES(2)" in text  # 2x2x2 = 8 MACs at 4 per cycle


@pytest.mark.cosim
def test_block_netlists_are_lint_clean(tmp_path):
    cases = {name: graph for name, graph, _, _ in block_cases(2)}
    graphs = [cases["spmm_ikj"], cases["row_sum_exp"], row_center_graph(8, 8, 2),
              outer_broadcast_graph(8, 4, 4, 2)]
    for graph in graphs:
        for hw in (load_hw("ideal", BLOCK_HW_OVERRIDES), load_hw("hbm2-u280")):
            _assert_lint_clean(generate(graph, hw=hw), tmp_path)
