"""The order-3 sparse accumulator ``spacc3`` in SystemC against the Python model: token
for token and cycle for cycle at several FIFO depths (1 and unbounded among them), on
ideal memory and on HBM, and against numpy: the shared compiled cases
(tests/_spacc3_graphs.py), an int32 TTM, a hand-built accumulator fed straight from a
4-level tensor's scans (random shapes and densities), block values (on a bounded
datapath too); misaligned streams fail with the model's message (four tokens, a block
among them); the on-chip rule charges 16 bytes per entry and names the accumulator.

Each graph's configurations run as one batch (one forked SystemC child).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from _parity import assert_same_result, check_systemc, python_run
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import compile_expression
from cosim import SystemCBackend, SystemCRun
from ir import Block, Graph, GraphBuilder, load_hw
from sim_models.python import SimulationError, simulate
from tests._block_graphs import BLOCK_HW_OVERRIDES
from tests._spacc3_graphs import TTM, spacc3_block_case, spacc3_cases

pytestmark = pytest.mark.cosim

HWS = {"ideal": None, "hbm2-u280": load_hw("hbm2-u280"),
       "ideal-macs4": load_hw("ideal", BLOCK_HW_OVERRIDES)}
#: (depth, hardware name) of every check: the contract's depths on ideal memory, and HBM
CONFIGS = [(d, "ideal") for d in (1, 2, 4, None)] + [(2, "hbm2-u280"), (None, "hbm2-u280")]
#: blocks: the same, and a bounded datapath (multi-cycle firings)
BLOCK_CONFIGS = [*CONFIGS, (1, "ideal-macs4"), (None, "ideal-macs4")]
CASES = list(spacc3_cases())


def _check(systemc: SystemCBackend, graph: Graph, inputs: dict,
           want: dict[str, np.ndarray] | None = None, configs=CONFIGS) -> list:
    return check_systemc(systemc, graph, inputs, configs, HWS, want)


def _spacc3_nodes(graph: Graph) -> list[str]:
    return [nid for nid, n in graph.nodes.items() if n.op == "spacc3"]


# -- the shared compiled cases ----------------------------------------------------------

@pytest.mark.parametrize("name,graph,inputs,expected", CASES, ids=[c[0] for c in CASES])
def test_shared_cases_match_model_and_numpy(systemc, name, graph, inputs, expected):
    assert _spacc3_nodes(graph)
    results = _check(systemc, graph, inputs, expected)
    done = results[CONFIGS.index((None, "ideal"))]
    acc = _spacc3_nodes(graph)[0]
    assert done.nodes[acc].fires > 0


def test_int32_ttm_matches_model_and_numpy(systemc):
    """int32 values: the accumulator adds in wrapping int32 arithmetic, as the model."""
    rng = np.random.default_rng(3)
    B = (rng.integers(-9, 10, (4, 3, 5)) * (rng.random((4, 3, 5)) < 0.5)).astype(np.int32)
    C = (rng.integers(-9, 10, (5, 3)) * (rng.random((5, 3)) < 0.6)).astype(np.int32)
    g = compile_expression(TTM, {"B": "dcc", "C": "dc", "X": "ccc"},
                           {"B": B.shape, "C": C.shape}, order="k,i,j,l", dtype="int32",
                           name="ttm_int32")
    assert _spacc3_nodes(g)
    _check(systemc, g, {"B": B, "C": C}, {"X": np.einsum("ijk,kl->ijl", B, C)})


# -- an accumulator fed straight from scans -----------------------------------------------

def _sum_k_graph(shape: tuple[int, int, int, int], dtype: str = "float32") -> Graph:
    """X(i,j,l) = sum(k) T(k,i,j,l), T stored cccc: the i, j and l scans' crds and T's
    values go straight into the spacc3 (every group ends with S3, empty fibers
    included)."""
    g = GraphBuilder("sum_k_spacc3", dtype)
    g.tensor("T", shape, "cccc")
    g.tensor("X", shape[1:], "ccc", role="output")
    g.node("r", "root")
    for lvl, idx in enumerate("kijl"):
        g.node(f"T{idx}", "scan_compressed", tensor="T", level=lvl)
    g.node("Tv", "array", tensor="T")
    g.node("acc", "spacc3")
    for lvl, idx in enumerate("ijl"):
        g.node(f"X{idx}", "level_writer", tensor="X", level=lvl)
    g.node("Xv", "value_writer", tensor="X")
    for s, d in [("r.ref", "Tk.ref_in"), ("Tk.ref", "Ti.ref_in"), ("Ti.ref", "Tj.ref_in"),
                 ("Tj.ref", "Tl.ref_in"), ("Tl.ref", "Tv.ref"), ("Ti.crd", "acc.crd2_in"),
                 ("Tj.crd", "acc.crd1_in"), ("Tl.crd", "acc.crd0_in"),
                 ("Tv.val", "acc.val_in"), ("acc.crd2", "Xi.crd"), ("acc.crd1", "Xj.crd"),
                 ("acc.crd0", "Xl.crd"), ("acc.val", "Xv.val")]:
        g.edge(s, d)
    return g.build()


def _sparse(rng: np.random.Generator, shape: tuple[int, ...], density: float,
            dtype: str) -> np.ndarray:
    vals = rng.integers(-5, 6, shape) if dtype == "int32" else rng.uniform(-2, 2, shape)
    return (vals * (rng.random(shape) < density)).astype(dtype)


@settings(max_examples=6, deadline=None)
@given(shape=st.tuples(*(st.integers(1, 4) for _ in range(4))),
       density=st.sampled_from([0.0, 0.2, 0.6, 1.0]), dtype=st.sampled_from(["float32",
                                                                              "int32"]),
       seed=st.integers(0, 2**16))
def test_sum_over_the_outer_level_of_random_tensors(systemc, shape, density, dtype, seed):
    T = _sparse(np.random.default_rng(seed), shape, density, dtype)
    _check(systemc, _sum_k_graph(shape, dtype), {"T": T}, {"X": T.sum(axis=0)})


def test_drain_steps_follow_the_contract(systemc):
    """One group: e entries in r (i, j) fibers leave in e + r steps after the closing S3,
    with the separators and lowered stops of docs/primitives.md."""
    T = np.zeros((2, 2, 2, 3), np.float32)
    T[0, 1, 0, 2], T[1, 1, 0, 2], T[1, 0, 1, 0], T[0, 1, 1, 1], T[1, 1, 1, 0] = 1, 2, 3, 4, 5
    g = _sum_k_graph(T.shape)
    sc = systemc.run(g, {"T": T}, trace=True, depth=None)
    edges = {"crd2": "acc.crd2->Xi.crd", "crd1": "acc.crd1->Xj.crd",
             "crd0": "acc.crd0->Xl.crd", "val": "acc.val->Xv.val"}
    tokens = {p: [repr(t) for t in sc.trace.edges[e].tokens] for p, e in edges.items()}
    # sorted (i, j, l): (0,1,0) 3 | (1,0,2) 3 | (1,1,0) 5, (1,1,1) 4
    assert tokens == {"crd2": ["0", "1", "S0", "D"], "crd1": ["1", "S0", "0", "1", "S1", "D"],
                      "crd0": ["0", "S1", "2", "S0", "0", "1", "S2", "D"],
                      "val": ["3.0", "S1", "3.0", "S0", "5.0", "4.0", "S2", "D"]}
    cycles = sc.trace.edges[edges["crd0"]].cycles
    assert cycles[:7] == list(range(cycles[0], cycles[0] + 7))  # 4 entries + 3 fibers
    assert_same_result(python_run(g, {"T": T}, None), sc, "drain")


# -- blocks -----------------------------------------------------------------------------

@pytest.mark.parametrize("b", [2, 3])
def test_block_values_match_model_and_numpy(systemc, b):
    name, g, inputs, want = spacc3_block_case(b)
    results = _check(systemc, g, inputs, want, BLOCK_CONFIGS)
    done = results[BLOCK_CONFIGS.index((None, "ideal"))]
    acc = _spacc3_nodes(g)[0]
    vals = done.trace.edges[next(e for e in done.trace.edges if e.startswith(f"{acc}.val"))]
    blocks = [t for t in vals.tokens if isinstance(t, Block)]
    assert blocks and all(len(t) == b ** 3 for t in blocks)


# -- errors -----------------------------------------------------------------------------

def _rewired(graph: Graph, dst: str, src: str) -> Graph:
    """``graph`` with the edge into port ``dst`` coming from ``src`` instead."""
    data = graph.to_dict()
    data["name"] = f"{graph.name}_{dst.replace('.', '_')}_from_{src.replace('.', '_')}"
    for e in data["edges"]:
        if e["dst"] == dst:
            e["src"] = src
    return Graph.from_dict(data)


def _assert_same_errors(systemc: SystemCBackend, g: Graph, inputs: dict,
                        pattern: str) -> None:
    """Both models fail alike at every depth; unbounded, with a message matching
    ``pattern``."""
    depths = (1, 2, None)
    results = systemc.run_batch([SystemCRun(g, inputs, trace=True, depth=d) for d in depths])
    for depth, sc in zip(depths, results, strict=True):
        assert isinstance(sc, SimulationError), sc
        assert_same_result(python_run(g, inputs, depth, None), sc, f"depth={depth}")
    assert re.search(pattern, str(results[-1])), str(results[-1])


def test_misaligned_levels_give_the_model_message(systemc, unchecked_graphs):
    """crd1_in fed the i crds (one per level-1 fiber) and crd2_in the j crds: an i stop
    meets an l stop of the wrong level."""
    T = _sparse(np.random.default_rng(5), (2, 3, 2, 3), 0.6, "float32")
    g = _rewired(_rewired(_sum_k_graph(T.shape), "acc.crd1_in", "Ti.crd"), "acc.crd2_in",
                 "Tj.crd")
    pattern = r"node 'acc' at cycle \d+: misaligned streams: crd0_in holds S\d, crd1_in S\d"
    with pytest.raises(SimulationError, match=pattern):
        simulate(g, {"T": T}, depth=None)
    _assert_same_errors(systemc, g, {"T": T}, pattern)


def test_crd_under_a_closed_level_gives_the_four_token_message(systemc):
    """crd2_in fed the reduced level's crds: they end (D) while l and j still hold crds."""
    T = _sparse(np.random.default_rng(6), (2, 2, 2, 2), 0.8, "float32")
    g = _rewired(_sum_k_graph(T.shape), "acc.crd2_in", "Tk.crd")
    pattern = r"node 'acc' at cycle \d+: crd0_in holds \d+ with crd1_in \d+, crd2_in D, " \
        r"val_in -?\d"
    with pytest.raises(SimulationError, match=pattern):
        simulate(g, {"T": T}, depth=None)
    _assert_same_errors(systemc, g, {"T": T}, pattern)


def test_four_token_message_names_a_block_value(systemc, unchecked_graphs):
    """The same on block values: the block in the message's fourth slot, bit for bit."""
    _, g, inputs, _ = spacc3_block_case(2)
    acc = _spacc3_nodes(g)[0]
    bad = _rewired(g, f"{acc}.crd2_in", "isect_k.crd")
    _assert_same_errors(systemc, bad, inputs,
                        r"crd0_in holds \d+ with crd1_in \d+, crd2_in D, val_in \[-?\d")


# -- the on-chip buffer -------------------------------------------------------------------

def test_onchip_rule_charges_16_bytes_per_entry(systemc):
    """The peak entry count times 16 fits exactly; one byte less fails with the model's
    message naming the accumulator."""
    T = _sparse(np.random.default_rng(8), (3, 3, 2, 4), 0.5, "float32")
    g = _sum_k_graph(T.shape)
    peak = int(np.count_nonzero(T.any(axis=0)))  # one group: every stored (i, j, l)
    assert peak > 1
    budgets = (peak * 16, peak * 16 - 1)
    hws = [load_hw("ideal", [f"onchip.bytes={n}"]) for n in budgets]
    fits, over = systemc.run_batch([SystemCRun(g, {"T": T}, trace=True, depth=2, hw=hw)
                                    for hw in hws])
    assert not isinstance(fits, Exception), fits
    np.testing.assert_allclose(fits.dense("X"), T.sum(axis=0), rtol=1e-5, atol=1e-5)
    assert isinstance(over, SimulationError)
    assert f"acc (spacc3) {peak * 16} bytes" in str(over)
    for hw, sc in zip(hws, (fits, over), strict=True):
        assert_same_result(python_run(g, {"T": T}, 2, hw), sc, f"onchip.bytes={hw.onchip.bytes}")


def test_onchip_overflow_of_a_compiled_ttm(systemc):
    name, g, inputs, _ = CASES[0]
    acc = _spacc3_nodes(g)[0]
    hw = load_hw("ideal", ["onchip.bytes=16"])
    (sc,) = systemc.run_batch([SystemCRun(g, inputs, trace=True, depth=2, hw=hw)])
    assert isinstance(sc, SimulationError)
    assert re.search(rf"{acc} \(spacc3\) \d+ bytes", str(sc)), str(sc)
    assert_same_result(python_run(g, inputs, 2, hw), sc, name)
