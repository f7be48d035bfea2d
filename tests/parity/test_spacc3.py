"""The order-3 sparse accumulator ``spacc3`` on every backend against the Python model
and numpy: the shared compiled cases (tests/_spacc3_graphs.py: TTM in three orders with
``k`` first, a dense kept level, an empty reduction, a matrix × order-3 outer product),
an int32 TTM, a hand-built accumulator fed straight from a 4-level tensor's scans
(random shapes and densities), block values (the accumulator adds whole blocks, on a
bounded datapath too), memory regimes; misaligned streams fail with the model's message
(four tokens, a block among them); the on-chip rule charges 16 bytes per entry and names
the accumulator. What each backend is held to is in ``_backends.py``; the HLS templates'
shape and the RTL netlists' sizes are checked as generated text.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from _backends import RTL, assert_lint_clean, assert_same_result, over, python_run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import compile_expression
from ir import Block, Graph, GraphBuilder, load_hw
from sim_models.python import SimulationError, simulate
from tests._block_graphs import BLOCK_HW_OVERRIDES
from tests._spacc3_graphs import TTM, spacc3_block_case, spacc3_cases
from tests._wiring import wire

HBM = load_hw("hbm2-u280")
#: one-word lines, one outstanding write, latency 20: the writers wait for every write,
#: so the drain often finds crd0/val full (a step waits for space on what it writes)
HW = {"ideal": None, "hbm2": HBM, "bounded": load_hw("ideal", BLOCK_HW_OVERRIDES),
      "narrow": load_hw("hbm2-u280", BLOCK_HW_OVERRIDES),
      "slow_writes": load_hw("hbm2-u280", ["dram.line_bytes=4", "dram.outstanding=1",
                                           "dram.latency_cycles=20"])}
#: the contract's depths on ideal memory, and HBM, where a run is cheap
CHEAP = [(d, None) for d in (1, 2, 4, None)] + [(2, HBM), (None, HBM)]
CONFIGS = {"python": CHEAP, "systemc": CHEAP, "hls": [(2, None), (2, HBM)]}
CASES = list(spacc3_cases())
IDS = [c[0] for c in CASES]


def _acc(graph: Graph) -> str:
    (acc,) = [nid for nid, n in graph.nodes.items() if n.op == "spacc3"]
    return acc


# -- the shared compiled cases ----------------------------------------------------------

@pytest.mark.parametrize("backend,name,graph,inputs,expected",
                         over(CASES, IDS, only={"rtl-verilator": ["ttm_kijl", "outer3"]}),
                         indirect=["backend"])
def test_shared_cases_match_model_and_numpy(backend, name, graph, inputs, expected):
    acc = _acc(graph)
    results = backend.check(graph, inputs, expected, configs=CONFIGS)
    if backend.name in ("python", "systemc"):
        assert results[CHEAP.index((None, None))].nodes[acc].fires > 0


#: (case, hardware): the memory system, and writers that wait for every write
MEMORY = [("ttm_kijl", "hbm2"), ("outer3", "hbm2"), ("ttm_kijl", "slow_writes"),
          ("outer3", "slow_writes")]


@pytest.mark.parametrize("backend,case,hw", over(MEMORY, backends=(
    "python", "systemc", "rtl-icarus", "rtl-verilator"), only={
        "rtl-icarus": ["ttm_kijl-hbm2", "ttm_kijl-slow_writes", "outer3-slow_writes"],
        "rtl-verilator": ["outer3-hbm2"]}), indirect=["backend"])
def test_memory_regimes(backend, case, hw):
    _, graph, inputs, expected = CASES[IDS.index(case)]
    backend.check(graph, inputs, expected, configs={backend.name: [(2, HW[hw])]})


@pytest.mark.parametrize("backend,seed", over([(s,) for s in (1, 2, 3)], backends=(
    "python", "hls")), indirect=["backend"])
def test_ttm_orders_on_more_inputs(backend, seed):
    """The TTM graphs (the same sources, so the same builds) on fresh random operands."""
    for name, graph, inputs, expected in spacc3_cases(seed=seed):
        if name.startswith("ttm_k"):
            backend.check(graph, inputs, expected, configs={"hls": [(2, None)]})


@pytest.mark.parametrize("backend", over([()], ["int32"], backends=("python", "systemc")),
                         indirect=True)
def test_int32_ttm_matches_model_and_numpy(backend):
    """int32 values: the accumulator adds in wrapping int32 arithmetic, as the model."""
    rng = np.random.default_rng(3)
    B = (rng.integers(-9, 10, (4, 3, 5)) * (rng.random((4, 3, 5)) < 0.5)).astype(np.int32)
    C = (rng.integers(-9, 10, (5, 3)) * (rng.random((5, 3)) < 0.6)).astype(np.int32)
    g = compile_expression(TTM, {"B": "dcc", "C": "dc", "X": "ccc"},
                           {"B": B.shape, "C": C.shape}, order="k,i,j,l", dtype="int32",
                           name="ttm_int32")
    assert _acc(g)
    backend.check(g, {"B": B, "C": C}, {"X": np.einsum("ijk,kl->ijl", B, C)}, configs=CONFIGS)


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
    wire(g, "r.ref>Tk.ref_in Tk.ref>Ti.ref_in Ti.ref>Tj.ref_in Tj.ref>Tl.ref_in Tl.ref>Tv.ref "
         "Ti.crd>acc.crd2_in Tj.crd>acc.crd1_in Tl.crd>acc.crd0_in Tv.val>acc.val_in "
         "acc.crd2>Xi.crd acc.crd1>Xj.crd acc.crd0>Xl.crd acc.val>Xv.val")
    return g.build()


def _sparse(rng: np.random.Generator, shape: tuple[int, ...], density: float,
            dtype: str) -> np.ndarray:
    vals = rng.integers(-5, 6, shape) if dtype == "int32" else rng.uniform(-2, 2, shape)
    return (vals * (rng.random(shape) < density)).astype(dtype)


CHEAP_BACKENDS = over([()], ["sum_k"], backends=("python", "systemc"))


@pytest.mark.parametrize("backend", CHEAP_BACKENDS, indirect=True)
@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.tuples(*(st.integers(1, 4) for _ in range(4))),
       density=st.sampled_from([0.0, 0.2, 0.6, 1.0]), dtype=st.sampled_from(["float32",
                                                                              "int32"]),
       seed=st.integers(0, 2**16))
def test_sum_over_the_outer_level_of_random_tensors(backend, shape, density, dtype, seed):
    T = _sparse(np.random.default_rng(seed), shape, density, dtype)
    backend.check(_sum_k_graph(shape, dtype), {"T": T}, {"X": T.sum(axis=0)}, configs=CONFIGS)


@pytest.mark.parametrize("backend", CHEAP_BACKENDS, indirect=True)
def test_drain_steps_follow_the_contract(backend):
    """One group: e entries in r (i, j) fibers leave in e + r steps after the closing S3,
    with the separators and lowered stops of docs/primitives.md."""
    T = np.zeros((2, 2, 2, 3), np.float32)
    T[0, 1, 0, 2], T[1, 1, 0, 2], T[1, 0, 1, 0], T[0, 1, 1, 1], T[1, 1, 1, 0] = 1, 2, 3, 4, 5
    g = _sum_k_graph(T.shape)
    (sc,) = backend.check(g, {"T": T}, {"X": T.sum(axis=0)}, configs={
        backend.name: [(None, None)]})
    edges = {"crd2": "acc.crd2->Xi.crd", "crd1": "acc.crd1->Xj.crd",
             "crd0": "acc.crd0->Xl.crd", "val": "acc.val->Xv.val"}
    tokens = {p: [repr(t) for t in sc.trace.edges[e].tokens] for p, e in edges.items()}
    # sorted (i, j, l): (0,1,0) 3 | (1,0,2) 3 | (1,1,0) 5, (1,1,1) 4
    assert tokens == {"crd2": ["0", "1", "S0", "D"], "crd1": ["1", "S0", "0", "1", "S1", "D"],
                      "crd0": ["0", "S1", "2", "S0", "0", "1", "S2", "D"],
                      "val": ["3.0", "S1", "3.0", "S0", "5.0", "4.0", "S2", "D"]}
    cycles = sc.trace.edges[edges["crd0"]].cycles
    assert cycles[:7] == list(range(cycles[0], cycles[0] + 7))  # 4 entries + 3 fibers


# -- blocks -----------------------------------------------------------------------------

BLOCK_CONFIGS = {"python": [*CHEAP, (1, HW["bounded"]), (None, HW["bounded"])],
                 "hls": [(2, None), (2, HBM), (2, HW["narrow"])],
                 "rtl-icarus": [(2, HW["bounded"]), (2, HBM)], "rtl-verilator": [(2, None)]}
BLOCK_CONFIGS["systemc"] = BLOCK_CONFIGS["python"]


@pytest.mark.parametrize("backend,b", over([(2,), (3,)], only={
    name: ["2"] for name in ("hls", *RTL)}), indirect=["backend"])
def test_block_values_match_model_and_numpy(backend, b):
    """The accumulator's val stream carries b³-element blocks."""
    name, g, inputs, want = spacc3_block_case(b)
    acc = _acc(g)
    for res in backend.check(g, inputs, want, configs=BLOCK_CONFIGS):
        if isinstance(res, Exception):
            continue  # a deadlock at depth 1, as the model's
        vals = res.trace.edges[next(e for e in res.trace.edges if e.startswith(f"{acc}.val"))]
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


def _assert_same_errors(backend, g: Graph, inputs: dict, pattern: str) -> None:
    """Both models fail alike at every depth; unbounded, with a message matching
    ``pattern``."""
    for depth in (1, 2, None):
        res = backend.run(g, inputs, depth)
        assert isinstance(res, SimulationError), res
        assert_same_result(python_run(g, inputs, depth, None), res, f"depth={depth}")
    assert re.search(pattern, str(res)), str(res)


@pytest.mark.parametrize("backend", CHEAP_BACKENDS, indirect=True)
def test_misaligned_levels_give_the_model_message(backend, unchecked_graphs):
    """crd1_in fed the i crds (one per level-1 fiber) and crd2_in the j crds: an i stop
    meets an l stop of the wrong level."""
    T = _sparse(np.random.default_rng(5), (2, 3, 2, 3), 0.6, "float32")
    g = _rewired(_rewired(_sum_k_graph(T.shape), "acc.crd1_in", "Ti.crd"), "acc.crd2_in",
                 "Tj.crd")
    _assert_same_errors(backend, g, {"T": T}, r"node 'acc' at cycle \d+: misaligned "
                        r"streams: crd0_in holds S\d, crd1_in S\d")


@pytest.mark.parametrize("backend", CHEAP_BACKENDS, indirect=True)
def test_crd_under_a_closed_level_gives_the_four_token_message(backend):
    """crd2_in fed the reduced level's crds: they end (D) while l and j still hold crds."""
    T = _sparse(np.random.default_rng(6), (2, 2, 2, 2), 0.8, "float32")
    g = _rewired(_sum_k_graph(T.shape), "acc.crd2_in", "Tk.crd")
    _assert_same_errors(backend, g, {"T": T}, r"node 'acc' at cycle \d+: crd0_in holds \d+ "
                        r"with crd1_in \d+, crd2_in D, val_in -?\d")


@pytest.mark.parametrize("backend", CHEAP_BACKENDS, indirect=True)
def test_four_token_message_names_a_block_value(backend, unchecked_graphs):
    """The same on block values: the block in the message's fourth slot, bit for bit."""
    _, g, inputs, _ = spacc3_block_case(2)
    bad = _rewired(g, f"{_acc(g)}.crd2_in", "isect_k.crd")
    _assert_same_errors(backend, bad, inputs,
                        r"crd0_in holds \d+ with crd1_in \d+, crd2_in D, val_in \[-?\d")


# -- the on-chip buffer -------------------------------------------------------------------

@pytest.mark.parametrize("backend", CHEAP_BACKENDS, indirect=True)
def test_onchip_rule_charges_16_bytes_per_entry(backend):
    """The peak entry count times 16 fits exactly; one byte less fails with the model's
    message naming the accumulator."""
    T = _sparse(np.random.default_rng(8), (3, 3, 2, 4), 0.5, "float32")
    g = _sum_k_graph(T.shape)
    peak = int(np.count_nonzero(T.any(axis=0)))  # one group: every stored (i, j, l)
    assert peak > 1
    fits = load_hw("ideal", [f"onchip.bytes={peak * 16}"])
    backend.check(g, {"T": T}, {"X": T.sum(axis=0)}, configs={backend.name: [(2, fits)]})
    over_hw = load_hw("ideal", [f"onchip.bytes={peak * 16 - 1}"])
    over_run = backend.run(g, {"T": T}, 2, over_hw)
    assert isinstance(over_run, SimulationError)
    assert f"acc (spacc3) {peak * 16} bytes" in str(over_run)
    assert_same_result(python_run(g, {"T": T}, 2, over_hw), over_run, "over")


@pytest.mark.parametrize("backend", over([()], ["ttm_kijl"], backends=(
    "python", "systemc", "hls", "rtl-icarus")), indirect=True)
def test_onchip_overflow_of_a_compiled_ttm(backend):
    """The accumulator's peak (from C-simulation, the RTL core's peak register) goes
    through the model's own check: the same error over a tiny buffer."""
    name, g, inputs, _ = CASES[IDS.index("ttm_kijl")]
    small = load_hw("hbm2-u280", ["onchip.bytes=16"])
    res = backend.run(g, inputs, 2, small, trace=False)
    assert isinstance(res, SimulationError), res
    assert re.search(rf"{_acc(g)} \(spacc3\) \d+ bytes", str(res)), str(res)
    with pytest.raises(SimulationError) as want:
        simulate(g, inputs, hw=small)
    assert str(res) == str(want.value)


# -- generated text -----------------------------------------------------------------------

_CALL = re.compile(r"samfuse_spacc3<(\d+)u, (\d+)u, (\d+)u, true>\(")


def test_hls_capacities_are_the_output_level_sizes():
    """One bound per kept level, outermost first: the size of the output level that
    level's crds are written to (X(i,j,l) = 4 x 3 x 3 in order k,i,j,l), not the largest
    dimension (5) cubed."""
    from rtl_hls.hls import generate

    design = generate(CASES[IDS.index("ttm_kijl")][1])
    assert _CALL.findall(design.files[design.top_source]) == [("4", "3", "3")]


@pytest.mark.parametrize("hw", [None, "hbm2", "narrow"])
def test_hls_block_accumulator_call(hw):
    """The accumulator's val output is a block stream; on "narrow" (HBM with 4 MACs per
    cycle) its firings take 2 cycles, so its call gets the template argument II = 2."""
    from rtl_hls.hls import generate

    _, graph, _, _ = spacc3_block_case(2)
    design = generate(graph, hw=HW[hw] if hw else None)
    call = next(line for line in design.files[design.top_source].splitlines()
                if "samfuse_spacc3<" in line)
    assert "samfuse::edge(" in call
    assert (", true, 2>(" in call) == (hw == "narrow"), call


def test_hls_spacc2_and_spacc3_share_one_loop():
    """spacc2.h and spacc3.h only bind their streams to spacc_core.h's loop."""
    from rtl_hls.hls import template_path

    for op, n in (("spacc2", 2), ("spacc3", 3)):
        text = template_path(op).read_text()
        assert f"spacc_levels<{n}," in text and "while" not in text, op


def test_rtl_spacc3_is_sized_by_its_output_levels():
    """N2 x N1 x N0 entries: the sizes of the output levels its crds are written to."""
    from rtl_hls.rtl import generate

    graph = CASES[IDS.index("ttm_kijl")][1]
    i, j, _, l = (*graph.tensors["B"].shape, graph.tensors["C"].shape[1])
    net = generate(graph)
    assert f".N2({i}), .N1({j}), .N0({l})" in net.text
    assert net.acc_instances[_acc(graph)].endswith(".u_core")


@pytest.mark.cosim
def test_rtl_spacc3_netlists_are_lint_clean(tmp_path):
    """A scalar and a block spacc3 (closed and open edges), and one with memory."""
    from rtl_hls.rtl import generate

    for graph in (CASES[IDS.index("ttm_kijl")][1], spacc3_block_case(2)[1]):
        assert "samfuse_spacc3 #(.FP(1'b1), .N2(" in generate(graph).text
        for open_edges in (False, True):
            assert_lint_clean(generate(graph, open_edges=open_edges), tmp_path)
    assert_lint_clean(generate(CASES[IDS.index("outer3")][1], hw=HBM), tmp_path)
