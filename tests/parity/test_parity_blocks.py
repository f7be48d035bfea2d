"""Block sparsity (docs/blocks.md) on every backend against the Python model and numpy:
the shared block cases (contractions, elementwise ALUs with N from unions, reducers with
and without a fold, unary exp, accumulators; tests/_block_graphs.py) at b = 2 and 4 and
16 (256-element blocks), on ideal memory, a bounded datapath (multi-cycle firings) and
HBM; row broadcasts (``ij,i->ij``) and outer products (``i,j->ij``) built by hand; NaN
payloads, -0.0 and infinities inside blocks bit for bit; random block patterns; a stream
error naming a block token. What each backend is held to is in ``_backends.py``.

The HLS and RTL builds run on the graphs and hardware they ran before the suites were
merged (``only=`` and the per-case configurations below).
"""

from __future__ import annotations

import numpy as np
import pytest
from _backends import RTL, assert_same_result, bits, over, python_run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ir.examples as ex
from ir import Block, Graph, load_hw, value_elems
from sim_models.python import SimulationError, simulate
from tests._block_graphs import (
    BLOCK_HW_OVERRIDES,
    block_cases,
    block_sparse,
    outer_broadcast_graph,
    outer_compressed_graph,
    outer_repeat_graph,
    row_broadcast_graph,
    row_center_graph,
)

HW = {"ideal": None, "bounded": load_hw("ideal", BLOCK_HW_OVERRIDES),
      "hbm2": load_hw("hbm2-u280")}
DEPTHS = (1, 2, None)
#: the cheap backends run every depth on every hardware, as one SystemC batch
EVERYWHERE = [(d, HW[h]) for h in HW for d in DEPTHS]
AT_GRAPH_DEPTH = [("graph", None)]


def _configs(cheap=EVERYWHERE, **costly: list[str]) -> dict[str, list]:
    """Per backend, the (depth, hardware) runs: ``cheap`` for Python and SystemC, each
    costly backend's named hardware at the graph's depth."""
    out = {"python": cheap, "systemc": cheap}
    for name, hws in costly.items():
        out[name.replace("_", "-")] = [("graph", HW[h]) for h in hws]
    return out


# -- the shared cases --------------------------------------------------------------------

CASES = [(b, *case) for b in (2, 4) for case in block_cases(b)]
CASES += [(16, *case) for case in block_cases(16) if case[0] in ("spmv", "spmm_ikj")]
IDS = [f"{c[1]}-b{c[0]}" for c in CASES]
#: b = 16 at another seed: 8 and 5 stored blocks (the cheap backends)
CASES.append((16, *next(c for c in block_cases(16, seed=5) if c[0] == "spmm_ikj")))
IDS.append("spmm_ikj-b16-seed5")
#: the selection each costly backend builds (a Verilator build takes about a minute)
VERILATOR = {"spmm_ikj-b4": "hbm2", "row_sum_exp-b2": "bounded",
             "elementwise_add-b2": "bounded"}
ONLY = {"hls": [i for i in IDS if not i.endswith("b16") and "seed" not in i] +
        ["spmm_ikj-b16"],
        "rtl-icarus": [i for i in IDS if "seed" not in i], "rtl-verilator": list(VERILATOR)}


def _case_configs(cid: str) -> dict[str, list]:
    """Icarus runs b = 16 on HBM only; Verilator each case on its one hardware."""
    icarus = ["hbm2"] if cid.endswith("b16") else list(HW)
    return _configs(hls=["ideal", "hbm2"], rtl_icarus=icarus,
                    rtl_verilator=[VERILATOR.get(cid, "ideal")])


@pytest.mark.parametrize("backend,cid,b,name,graph,inputs,expected", over(
    [(cid, *case) for cid, case in zip(IDS, CASES, strict=True)], IDS, only=ONLY),
    indirect=["backend"])
def test_block_cases_match_model_and_numpy(backend, cid, b, name, graph, inputs, expected):
    results = backend.check(graph, inputs, expected, configs=_case_configs(cid))
    if backend.name in ("python", "systemc") and any(map(np.any, expected.values())):
        done = results[EVERYWHERE.index((None, None))]  # unbounded FIFOs, ideal memory
        blocks = [t for e in done.trace.edges.values() for t in e.tokens
                  if isinstance(t, Block)]
        assert blocks and all(len(t) in (b, b * b) for t in blocks)


CHEAP = over([()], ["blocks"], backends=("python", "systemc"))


@pytest.mark.parametrize("backend", CHEAP, indirect=True)
def test_bounded_datapath_takes_longer_and_agrees(backend):
    """ceil(W / 4)-cycle firings really occupy the nodes: more cycles, same outputs."""
    _, g, inputs, want = next(c for c in block_cases(4) if c[0] == "spmm_ikj")
    fast, slow = backend.check(g, inputs, want, configs={
        backend.name: [("graph", None), ("graph", HW["bounded"])]})
    assert slow.cycles > fast.cycles
    assert slow.nodes["mul"].fires == fast.nodes["mul"].fires
    np.testing.assert_array_equal(slow.dense("X"), fast.dense("X"))


@pytest.mark.parametrize("backend,b", over([(2,), (3,)], backends=("python", "systemc")),
                         indirect=["backend"])
def test_spacc2_of_blocks(backend, b):
    """The matrix accumulator sums block outer products (k,i,j order)."""
    rng = np.random.default_rng(7)
    for size in range(2, b + 1):  # b = 3 draws after b = 2, from the one generator
        B = block_sparse(rng, 4 * size, 3 * size, size, 0.5)
        C = block_sparse(rng, 3 * size, 2 * size, size, 0.6)
    backend.check(ex.spmm_kij(4 * b, 3 * b, 2 * b, block=b), {"B": B, "C": C},
                  {"X": B @ C}, configs=_configs())


# -- hand-built block operators: row broadcasts and outer products ------------------------

def _stored(A: np.ndarray, bi: int, bj: int) -> np.ndarray:
    """Where ``A``'s stored blocks are (a block with any nonzero is stored)."""
    m, n = A.shape
    return np.kron(np.any((A != 0).reshape(m // bi, bi, n // bj, bj), axis=(1, 3)),
                   np.ones((bi, bj))).astype(bool)


def _row_broadcast(op: str, b: int) -> tuple[Graph, dict, dict]:
    """X = A op (A's row sums), the sums folded from blocks and broadcast over j."""
    rng = np.random.default_rng(b)
    m, n = 3 * b, 4 * b
    A = block_sparse(rng, m, n, b, 0.5)
    s = A.astype(np.float64).sum(axis=1, keepdims=True).astype(np.float32)
    want = np.where(_stored(A, b, b), A - s if op == "sub" else A * s, 0).astype(np.float32)
    return row_broadcast_graph(m, n, b, op), {"A": A}, {"X": want}


def _row_scale() -> tuple[Graph, dict, dict]:
    """The row_scale example on 2 x 4 blocks: its broadcast carries 2-element vectors."""
    rng = np.random.default_rng(5)
    A = np.kron(rng.random((4, 3)) < 0.6, np.ones((2, 4))).astype(np.float32) * \
        rng.standard_normal((8, 12)).astype(np.float32)
    g = ex.row_scale(8, 12, block=(2, 4))
    assert value_elems(g)["bc_j.val->mul.b"] == 2
    return g, {"A": A}, {"X": A * A.sum(axis=1, keepdims=True)}


def _row_center(b: int = 4) -> tuple[Graph, dict, dict]:
    """X = exp(A - A's row maxima): a max fold, a broadcast subtract, exp on blocks."""
    rng = np.random.default_rng(3)
    A = block_sparse(rng, 4 * b, 3 * b, b, 0.5)
    stored = _stored(A, b, b)
    rowmax = np.where(stored, A, -np.inf).max(axis=1, keepdims=True)
    X = np.where(stored, np.exp(A.astype(np.float64) - rowmax), 0.0).astype(np.float32)
    return row_center_graph(4 * b, 3 * b, b), {"A": A}, {"X": X}


def _outer_compressed(b: int) -> tuple[Graph, dict, dict]:
    rng = np.random.default_rng(10 + b)
    m, n = 4 * b, 3 * b
    a = (rng.standard_normal(m) * (rng.random(m // b) < 0.6).repeat(b)).astype(np.float32)
    v = (rng.standard_normal(n) * (rng.random(n // b) < 0.6).repeat(b)).astype(np.float32)
    v[:b] = rng.standard_normal(b)  # b keeps a stored block, so X has rows
    return outer_compressed_graph(m, n, b), {"a": a, "b": v}, {"X": np.outer(a, v)}


def _outer_dense(graph, seed: int, m: int, n: int, names: str) -> tuple[Graph, dict, dict]:
    rng = np.random.default_rng(seed)
    u = rng.standard_normal(m).astype(np.float32)
    w = rng.standard_normal(n).astype(np.float32)
    return graph, dict(zip(names, (u, w), strict=True)), {"X": np.outer(u, w)}


#: case → (graph, inputs, numpy's result) and the hardware each costly backend runs it on
OPERATORS = {
    "row_broadcast_sub-b2": (lambda: _row_broadcast("sub", 2), {}),
    "row_broadcast_sub-b4": (lambda: _row_broadcast("sub", 4), {}),
    "row_broadcast_mul-b2": (lambda: _row_broadcast("mul", 2), {}),
    "row_broadcast_mul-b4": (lambda: _row_broadcast("mul", 4), {}),
    "row_scale-2x4": (_row_scale, {"hls": ["ideal", "hbm2"]}),
    "row_center-b4": (_row_center, {"rtl_icarus": ["ideal", "hbm2"],
                                    "rtl_verilator": ["bounded"]}),
    "outer_compressed-b2": (lambda: _outer_compressed(2), {}),
    "outer_compressed-b3": (lambda: _outer_compressed(3), {}),
    "outer_compressed-b16": (lambda: _outer_compressed(16), {}),
    # u's values repeated over j by its repeated root
    "outer_repeat-2x3": (lambda: _outer_dense(outer_repeat_graph(6, 9, 2, 3), 6, 6, 9, "uw"),
                         {"hls": ["ideal", "hbm2"]}),
    # u's values broadcast over j (bi != bj: operands of different widths)
    "outer_broadcast-4x2": (lambda: _outer_dense(outer_broadcast_graph(12, 8, 4, 2), 4, 12, 8,
                                                 "uv"), {"rtl_icarus": ["bounded", "hbm2"]}),
}


@pytest.mark.parametrize("backend,case", over([(c,) for c in OPERATORS], list(OPERATORS), only={
    name: [c for c, (_, hws) in OPERATORS.items() if name.replace("-", "_") in hws]
    for name in ("hls", *RTL)}), indirect=["backend"])
def test_block_operators_match_model_and_numpy(backend, case):
    make, costly = OPERATORS[case]
    graph, inputs, want = make()
    backend.check(graph, inputs, want, configs=_configs(**costly))


# -- bit-exact payloads --------------------------------------------------------------------

def _words(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).view(np.uint32)


@pytest.mark.parametrize("backend", CHEAP, indirect=True)
def test_special_payloads_in_blocks_are_bit_exact(backend):
    """NaN (with a payload), -0.0, +-inf and subnormals inside blocks: every token and
    every stored value has the Python model's bits (elementwise ops, a contraction, a max
    fold and exp), and the outputs really hold the special values."""
    b = 2
    specials = np.array([-0.0, np.nan, np.inf, -np.inf, 1e-40, -3.0e38, 0.1, 2.5],
                        np.float32)
    specials[1] = np.uint32(0x7FC12345).view(np.float32)
    A = np.resize(specials, (2 * b, 2 * b)).astype(np.float32)
    B = np.resize(specials[::-1], (2 * b, 2 * b)).astype(np.float32)
    A[0, 0] = B[0, 0] = 1.0  # every block stays stored
    graphs = [(ex.elementwise(2 * b, 2 * b, op, block=b), {"A": A, "B": B})
              for op in ("add", "mul", "max", "sub")]
    graphs += [(ex.spmv(2 * b, 2 * b, block=b), {"B": A, "c": specials[:2 * b]}),
               (ex.row_reduce(2 * b, 2 * b, "max", "", block=b), {"A": A}),
               (ex.row_reduce(2 * b, 2 * b, "sum", "exp", block=b), {"A": A})]
    seen = set()
    for g, inputs in graphs:
        for (d, hw), got in zip(EVERYWHERE, backend.check(g, inputs, configs=_configs()),
                                strict=True):
            py = python_run(g, inputs, d, hw)
            if isinstance(py, Exception):
                continue  # a depth-1 deadlock, checked equal
            for name in py.outputs:
                words = _words(py.outputs[name].vals)
                np.testing.assert_array_equal(_words(got.outputs[name].vals), words,
                                              err_msg=g.name)
                seen |= set(words.ravel().tolist())
    assert {0x80000000, 0x7FC12345, 0x7F800000, 0xFF800000} <= seen


def _special(shape: tuple[int, int], rng: np.random.Generator, b: int) -> np.ndarray:
    """A block-sparse matrix whose stored blocks hold NaNs (with payloads), -0.0, ±inf."""
    x = block_sparse(rng, *shape, b, 0.7)
    specials = np.array([0x7FC00123, 0xFFC00000, 0x80000000, 0x7F800000, 0xFF800000],
                        dtype=np.uint32).view(np.float32)
    spots = (x != 0) & (rng.random(shape) < 0.3)
    x[spots] = rng.choice(specials, int(spots.sum()))
    return x


def _has(words: np.ndarray, *patterns: int) -> bool:
    return all(bool(np.isin(words, np.uint32(p)).any()) for p in patterns)


WITH_HLS = ("python", "systemc", "hls")
ONE_RUN = {name: AT_GRAPH_DEPTH for name in ("python", "systemc", "hls", *RTL)}


@pytest.mark.parametrize("backend,op", over([(op,) for op in ("add", "mul", "max")],
                                            backends=WITH_HLS), indirect=["backend"])
def test_special_payloads_pass_bit_exact_elementwise(backend, op):
    rng = np.random.default_rng(11)
    A, B = _special((8, 6), rng, 2), _special((8, 6), rng, 2)
    (res,) = backend.check(ex.elementwise(8, 6, op, block=2), {"A": A, "B": B},
                           configs=ONE_RUN)
    # the special words reach the output: a NaN payload, the negative NaN, +inf
    assert _has(bits(res.dense("X")), 0x7FC00123, 0xFFC00000, 0x7F800000)


@pytest.mark.parametrize("backend", over([()], ["specials"], backends=WITH_HLS),
                         indirect=True)
def test_special_payloads_in_a_contraction_and_an_exp(backend):
    rng = np.random.default_rng(12)
    B = _special((8, 8), rng, 4)  # inf * 0 and NaN in block products
    C = _special((8, 4), rng, 4)
    (res,) = backend.check(ex.spmm_ikj(8, 8, 4, block=4), {"B": B, "C": C}, configs=ONE_RUN)
    assert np.isnan(res.dense("X")).any()
    backend.check(ex.row_reduce(8, 8, "sum", "exp", block=4), {"A": B}, configs=ONE_RUN)
    backend.check(ex.row_reduce(8, 8, "max", "", block=4), {"A": B}, configs=ONE_RUN)


@pytest.mark.parametrize("backend,op", over([(op,) for op in ("add", "max", "mul", "div")],
                                            backends=("python", "systemc", "rtl-icarus")),
                         indirect=["backend"])
def test_special_values_meet_the_zero_block(backend, op):
    """NaN payloads, -0.0 and infinities inside blocks, against numpy (N from the union
    is the zero block: -0.0 + N is +0.0, and x / N is the scalar division by zero: 0/0
    and NaN/0 the canonical NaN)."""
    b = 2
    rng = np.random.default_rng(5)
    A = rng.standard_normal((4, 4)).astype(np.float32)
    B = rng.standard_normal((4, 4)).astype(np.float32)
    B[2:, :2] = 0.0  # a block only A has: A's values meet N
    specials = np.array([np.nan, -0.0, np.inf, -np.inf], dtype=np.float32)
    specials[0] = np.uint32(0x7FC01234).view(np.float32)  # a NaN with a payload
    A[2, :] = specials
    A[0, 0], B[0, 0] = -0.0, -0.0
    A[0, 1], B[0, 1] = np.inf, -np.inf
    f = {"add": np.add, "max": np.maximum, "mul": np.multiply, "div": np.divide}[op]
    with np.errstate(all="ignore"):
        gold = f(A, B) if op != "max" else np.where(A >= B, A, B)
    if op == "mul":  # an intersection: only blocks both store
        gold = np.where(_stored(A, b, b) & _stored(B, b, b), gold, 0.0).astype(np.float32)
    backend.check(ex.elementwise(4, 4, op, block=b), {"A": A, "B": B}, {"X": gold},
                  configs=ONE_RUN)


# -- random block patterns -------------------------------------------------------------------

@pytest.mark.parametrize("backend", CHEAP, indirect=True)
@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(b=st.sampled_from([2, 3, 4]), mb=st.integers(1, 4), kb=st.integers(1, 4),
       nb=st.integers(1, 3), dens=st.floats(0.0, 1.0), seed=st.integers(0, 2**16),
       fmt=st.sampled_from(["dc", "cc", "dd"]), hw=st.sampled_from(sorted(HW)),
       depth=st.sampled_from(DEPTHS))
def test_random_block_shapes(backend, b, mb, kb, nb, dens, seed, fmt, hw, depth):
    rng = np.random.default_rng(seed)
    B = block_sparse(rng, mb * b, kb * b, b, dens)
    C = block_sparse(rng, kb * b, nb * b, b, dens)
    A2 = block_sparse(rng, mb * b, nb * b, b, dens)
    graphs = [(ex.spmm_ikj(mb * b, kb * b, nb * b, b_fmt=fmt, block=b), {"B": B, "C": C},
               {"X": B @ C}),
              (ex.elementwise(mb * b, nb * b, "sub", a_fmt=fmt if fmt != "dd" else "dc",
                              block=b), {"A": A2, "B": B @ C}, None)]
    for g, inputs, want in graphs:
        backend.check(g, inputs, want, configs={backend.name: [(depth, HW[hw])]})


#: fixed shapes, so one HLS build per kernel serves every pattern
_RANDOM = {"spmm_ikj": lambda: ex.spmm_ikj(6, 6, 4, block=2),
           "elementwise_sub": lambda: ex.elementwise(6, 4, "sub", block=2)}


@pytest.mark.parametrize("backend", over([()], ["patterns"], backends=WITH_HLS), indirect=True)
@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kernel=st.sampled_from(sorted(_RANDOM)), dens=st.floats(0.0, 1.0),
       seed=st.integers(0, 2**16))
def test_random_block_patterns(backend, kernel, dens, seed):
    rng = np.random.default_rng(seed)
    g = _RANDOM[kernel]()
    shapes = {t: s.shape for t, s in g.tensors.items() if s.role == "input"}
    inputs = {t: block_sparse(rng, *shape, 2, dens) for t, shape in shapes.items()}
    backend.check(g, inputs, configs=ONE_RUN)


# -- errors -----------------------------------------------------------------------------

@pytest.mark.parametrize("backend", CHEAP, indirect=True)
def test_misaligned_block_operands_give_the_model_error(backend):
    """A stream error whose message renders a block token: the same text as the model."""
    g = ex.elementwise(4, 4, "mul", block=2)
    data = g.to_dict()
    for e in data["edges"]:  # A's values skip the intersection: a block meets B's stop
        if e["dst"] == "Av.ref":
            e["src"] = "Aj.ref"
    inputs = {"A": np.ones((4, 4), np.float32), "B": np.eye(4, dtype=np.float32)}
    bad = Graph.from_dict(data)
    with pytest.raises(SimulationError, match=r"misaligned operands: a holds .* b holds"):
        simulate(bad, inputs)
    for depth in DEPTHS:
        res = backend.run(bad, inputs, depth)
        assert isinstance(res, SimulationError), res
        assert "[" in str(res)
        assert_same_result(python_run(bad, inputs, depth, None), res, f"depth={depth}")
