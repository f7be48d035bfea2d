"""The order-3 sparse accumulator ``spacc3`` in generated HLS C++, C-simulated with g++:
compiled graphs that reduce an index above three kept ones (TTM in three orders with
``k`` first, a dense kept level, an empty reduction, a matrix × order-3 outer product;
the shared cases of ``tests/_spacc3_graphs.py``) are token-exact against the Python
model on every edge and equal to numpy, with the recording top and with HBM ``m_axi``
ports; a block-valued TTM adds whole blocks bit for bit as the model; the on-chip
buffer check sees the accumulator's peak; ``spacc2`` and ``spacc3`` run one loop
(``spacc_core.h``).

Graphs keep fixed shapes, so each compiles once and is reused for every input.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from cosim import HlsCsimBackend
from ir import Graph, Hardware, compare_traces, load_hw
from rtl_hls.hls import generate, template_path
from sim_models.python import SimulationError, simulate
from tests._block_graphs import BLOCK_HW_OVERRIDES
from tests._spacc3_graphs import spacc3_block_case, spacc3_cases

pytestmark = pytest.mark.cosim

HBM = "hbm2-u280"
CASES = list(spacc3_cases())
IDS = [c[0] for c in CASES]
_CALL = re.compile(r"samfuse_spacc3<(\d+)u, (\d+)u, (\d+)u, true>\(")


def _bits(tree) -> np.ndarray:
    return np.ascontiguousarray(tree.to_dense(), dtype=np.float32).view(np.uint32)


def _assert_same(graph: Graph, inputs: dict, hls: HlsCsimBackend, want: dict,
                 hw: str | Hardware | None = None) -> None:
    """csim's tokens on every edge and its outputs (bit for bit) equal the Python
    model's on the same hardware; outputs equal numpy's ``want`` within rounding."""
    machine = load_hw(hw) if isinstance(hw, str) else hw
    ref = simulate(graph, inputs, trace=True, hw=machine)
    res = hls.run(graph, inputs, trace=True, hw=machine)
    mismatches = compare_traces(ref.trace, res.trace, timed=False)
    assert not mismatches, "\n".join(map(str, mismatches[:5]))
    assert sorted(res.outputs) == sorted(ref.outputs)
    for name, tree in ref.outputs.items():
        assert res.outputs[name].levels == tree.levels, name
        np.testing.assert_array_equal(_bits(res.outputs[name]), _bits(tree), err_msg=name)
    for name, gold in want.items():
        np.testing.assert_allclose(res.outputs[name].to_dense(), gold, rtol=1e-5, atol=1e-5,
                                   err_msg=f"{name} vs numpy")


def _spacc3_nodes(graph: Graph) -> list[str]:
    return [n for n, node in graph.nodes.items() if node.op == "spacc3"]


@pytest.mark.parametrize("hw", [None, HBM])
@pytest.mark.parametrize("name,graph,inputs,expected", CASES, ids=IDS)
def test_spacc3_cases_are_token_exact(hls, name, graph, inputs, expected, hw):
    assert len(_spacc3_nodes(graph)) == 1, f"{name}: the compiler emitted no spacc3"
    _assert_same(graph, inputs, hls, expected, hw=hw)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ttm_orders_on_more_inputs(hls, seed):
    """The TTM graphs (the same sources, so the same builds) on fresh random operands."""
    for name, graph, inputs, expected in spacc3_cases(seed=seed):
        if name.startswith("ttm_k"):
            _assert_same(graph, inputs, hls, expected)


@pytest.mark.parametrize("hw", [None, HBM, "narrow"])
def test_block_valued_spacc3_adds_whole_blocks(hls, hw):
    """b = 2: 8-element blocks; on "narrow" (HBM with 4 MACs per cycle) the accumulator's
    firings take 2 cycles, so its call gets the template argument II = 2."""
    name, graph, inputs, expected = spacc3_block_case(2)
    acc = _spacc3_nodes(graph)
    assert len(acc) == 1
    machine = load_hw(HBM, BLOCK_HW_OVERRIDES) if hw == "narrow" else hw
    _assert_same(graph, inputs, hls, expected, hw=machine)
    design = generate(graph, hw=load_hw(machine) if isinstance(machine, str) else machine)
    top = design.files[design.top_source]
    call = next(line for line in top.splitlines() if "samfuse_spacc3<" in line)
    assert "samfuse::edge(" in call, "the accumulator's val output is a block stream"
    assert (", true, 2>(" in call) == (hw == "narrow"), call


def test_capacities_are_the_output_level_sizes():
    """One bound per kept level, outermost first: the size of the output level that
    level's crds are written to (X(i,j,l) = 4 x 3 x 3 in order k,i,j,l), not the largest
    dimension (5) cubed."""
    graph = next(c[1] for c in CASES if c[0] == "ttm_kijl")
    design = generate(graph)
    calls = _CALL.findall(design.files[design.top_source])
    assert calls == [("4", "3", "3")]


def test_onchip_buffer_check_sees_the_accumulator(hls):
    """The accumulator's peak entry count from C-simulation goes through the model's own
    check: the same error over a tiny onchip.bytes, and a normal run under the default."""
    name, graph, inputs, _ = next(c for c in CASES if c[0] == "ttm_kijl")
    small = load_hw(HBM, ["onchip.bytes=16"])
    with pytest.raises(SimulationError) as want:
        simulate(graph, inputs, hw=small)
    with pytest.raises(SimulationError) as got:
        hls.run(graph, inputs, hw=small)
    assert str(got.value) == str(want.value)
    assert "spacc3" in str(got.value) or _spacc3_nodes(graph)[0] in str(got.value)


def test_spacc2_and_spacc3_share_one_loop():
    """spacc2.h and spacc3.h only bind their streams to spacc_core.h's loop."""
    for op, n in (("spacc2", 2), ("spacc3", 3)):
        text = template_path(op).read_text()
        assert f"spacc_levels<{n}," in text and "while" not in text, op
