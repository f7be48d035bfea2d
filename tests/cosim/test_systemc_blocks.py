"""Block sparsity (docs/blocks.md) in SystemC against the Python model: every shared block
case token for token (blocks compared bit for bit) and cycle for cycle on ideal memory,
on a bounded datapath (multi-cycle firings) and on HBM, at several FIFO depths; outputs
against numpy; random block patterns; broadcast and outer-product block ops built by hand;
NaN / -0.0 / inf payloads inside blocks; and a stream error naming a block token.

Each graph's configurations run as one batch (one forked SystemC child).
"""

from __future__ import annotations

import numpy as np
import pytest
from _parity import assert_same_result, check_systemc, python_run
from hypothesis import given, settings
from hypothesis import strategies as st

import ir.examples as ex
from cosim import SystemCBackend, SystemCRun
from ir import Block, Graph, GraphBuilder, load_hw
from sim_models.python import SimulationError, simulate
from tests._block_graphs import BLOCK_HW_OVERRIDES, block_cases, block_sparse
from tests._wiring import matrix_writers, wire

pytestmark = pytest.mark.cosim

HWS = {"ideal": None, "ideal-macs4": load_hw("ideal", BLOCK_HW_OVERRIDES),
       "hbm2-u280": load_hw("hbm2-u280")}
DEPTHS = (1, 2, None)
#: (depth, hardware name) of every check
CONFIGS = [(d, h) for h in HWS for d in DEPTHS]
CASES = [(b, *case) for b in (2, 4) for case in block_cases(b)] + \
    [(16, *case) for case in block_cases(16, seed=5) if case[0] == "spmm_ikj"]  # 8 and 5 blocks



def _check(systemc: SystemCBackend, graph: Graph, inputs: dict,
           want: dict[str, np.ndarray] | None = None, configs=CONFIGS) -> list:
    return check_systemc(systemc, graph, inputs, configs, HWS, want)


@pytest.mark.parametrize("b,name,graph,inputs,expected", CASES,
                         ids=[f"{c[1]}-b{c[0]}" for c in CASES])
def test_block_cases_match_model_and_numpy(systemc, b, name, graph, inputs, expected):
    results = _check(systemc, graph, inputs, expected)
    done = results[DEPTHS.index(None)]  # unbounded FIFOs on ideal memory
    blocks = [t for e in done.trace.edges.values() for t in e.tokens
              if isinstance(t, Block)]
    assert blocks and all(len(t) in (b, b * b) for t in blocks)


def test_bounded_datapath_takes_longer_and_agrees(systemc):
    """ceil(W / 4)-cycle firings really occupy the nodes: more cycles, same outputs."""
    _, g, inputs, want = next(c for c in block_cases(4) if c[0] == "spmm_ikj")
    fast, slow = systemc.run_batch([SystemCRun(g, inputs), SystemCRun(g, inputs,
                                                                       hw=HWS["ideal-macs4"])])
    assert slow.cycles > fast.cycles
    assert slow.nodes["mul"].fires == fast.nodes["mul"].fires
    np.testing.assert_array_equal(slow.dense("X"), fast.dense("X"))


def test_spacc2_of_blocks(systemc):
    """The matrix accumulator sums block outer products (k,i,j order)."""
    rng = np.random.default_rng(7)
    for b in (2, 3):
        B, C = block_sparse(rng, 4 * b, 3 * b, b, 0.5), block_sparse(rng, 3 * b, 2 * b, b, 0.6)
        _check(systemc, ex.spmm_kij(4 * b, 3 * b, 2 * b, block=b), {"B": B, "C": C},
               {"X": B @ C})


def _row_broadcast(m: int, n: int, b: int, op: str) -> Graph:
    """X(i,j) = A(i,j) op s(i), s(i) = the row sums of A: the reducer folds each block's
    columns (``ij->i``), a broadcast repeats s over the row's blocks and the ALU meets them
    with a row broadcast (``ij,i->ij``)."""
    g = GraphBuilder(f"row_broadcast_{op}")
    g.tensor("A", (m, n), "dc", block=(b, b))
    g.tensor("X", (m, n), "dc", role="output", block=(b, b))
    for nid, prim, kw in [
            ("root", "root", {}), ("Ai", "scan_dense", {"tensor": "A", "level": 0}),
            ("Aj_sum", "scan_compressed", {"tensor": "A", "level": 1}),
            ("Av_sum", "array", {"tensor": "A"}),
            ("rowsum", "reduce", {"op": "sum", "block": f"ij->i;i={b},j={b}"}),
            ("Aj", "scan_compressed", {"tensor": "A", "level": 1}),
            ("Av", "array", {"tensor": "A"}), ("rs_j", "repsig", {}),
            ("bc_j", "broadcast", {}),
            ("alu", "alu", {"op": op, "block": f"ij,i->ij;i={b},j={b}"})]:
        g.node(nid, prim, **kw)
    matrix_writers(g)
    wire(g, "root.ref>Ai.ref_in Ai.ref>Aj_sum.ref_in Aj_sum.ref>Av_sum.ref "
             "Av_sum.val>rowsum.val_in Ai.ref>rowsum.outer Ai.ref>Aj.ref_in Ai.crd>Xi.crd "
             "Aj.crd>rs_j.crd Aj.crd>Xj.crd rowsum.val>bc_j.val_in rs_j.repsig>bc_j.repsig "
             "Aj.ref>Av.ref Av.val>alu.a bc_j.val>alu.b alu.val>Xv.val")
    return g.build()


@pytest.mark.parametrize("op", ["sub", "mul"])
@pytest.mark.parametrize("b", [2, 4])
def test_row_broadcast_block_op(systemc, b, op):
    rng = np.random.default_rng(b)
    m, n = 3 * b, 4 * b
    A = block_sparse(rng, m, n, b, 0.5)
    stored = np.kron(np.any((A != 0).reshape(m // b, b, n // b, b), axis=(1, 3)),
                     np.ones((b, b))).astype(bool)
    s = A.astype(np.float64).sum(axis=1, keepdims=True).astype(np.float32)
    want = np.where(stored, A - s if op == "sub" else A * s, 0).astype(np.float32)
    _check(systemc, _row_broadcast(m, n, b, op), {"A": A}, {"X": want})


def _outer(m: int, n: int, b: int) -> Graph:
    """X(i,j) = a(i) * b(j) on compressed block-vectors: ``i,j->ij`` makes each output
    block the outer product of two b-vectors."""
    g = GraphBuilder("block_outer")
    g.tensor("a", (m,), "c", block=(b,))
    g.tensor("b", (n,), "c", block=(b,))
    g.tensor("X", (m, n), "cc", role="output", block=(b, b))
    for nid, prim, kw in [
            ("ra", "root", {}), ("rb", "root", {}),
            ("ai", "scan_compressed", {"tensor": "a", "level": 0}),
            ("rs_i", "repsig", {}), ("rep_b", "repeat", {}),
            ("bj", "scan_compressed", {"tensor": "b", "level": 0}),
            ("rs_j", "repsig", {}), ("av", "array", {"tensor": "a"}),
            ("bc_a", "broadcast", {}), ("bv", "array", {"tensor": "b"}),
            ("mul", "alu", {"op": "mul", "block": f"i,j->ij;i={b},j={b}"})]:
        g.node(nid, prim, **kw)
    matrix_writers(g)
    wire(g, "ra.ref>ai.ref_in ai.crd>rs_i.crd ai.crd>Xi.crd rb.ref>rep_b.ref_in "
             "rs_i.repsig>rep_b.repsig rep_b.ref>bj.ref_in bj.crd>rs_j.crd bj.crd>Xj.crd "
             "ai.ref>av.ref av.val>bc_a.val_in rs_j.repsig>bc_a.repsig bc_a.val>mul.a "
             "bj.ref>bv.ref bv.val>mul.b mul.val>Xv.val")
    return g.build()


@pytest.mark.parametrize("b", [2, 3, 16])
def test_outer_product_block_op(systemc, b):
    rng = np.random.default_rng(10 + b)
    m, n = 4 * b, 3 * b
    a = (rng.standard_normal(m) * (rng.random(m // b) < 0.6).repeat(b)).astype(np.float32)
    v = (rng.standard_normal(n) * (rng.random(n // b) < 0.6).repeat(b)).astype(np.float32)
    v[:b] = rng.standard_normal(b)  # b keeps a stored block, so X has rows
    _check(systemc, _outer(m, n, b), {"a": a, "b": v}, {"X": np.outer(a, v)})


@settings(max_examples=20, deadline=None)
@given(b=st.sampled_from([2, 3, 4]), mb=st.integers(1, 4), kb=st.integers(1, 4),
       nb=st.integers(1, 3), dens=st.floats(0.0, 1.0), seed=st.integers(0, 2**16),
       fmt=st.sampled_from(["dc", "cc", "dd"]), hw=st.sampled_from(sorted(HWS)),
       depth=st.sampled_from(DEPTHS))
def test_random_block_patterns(systemc, b, mb, kb, nb, dens, seed, fmt, hw, depth):
    rng = np.random.default_rng(seed)
    B = block_sparse(rng, mb * b, kb * b, b, dens)
    C = block_sparse(rng, kb * b, nb * b, b, dens)
    A2 = block_sparse(rng, mb * b, nb * b, b, dens)
    graphs = [(ex.spmm_ikj(mb * b, kb * b, nb * b, b_fmt=fmt, block=b), {"B": B, "C": C},
               {"X": B @ C}),
              (ex.elementwise(mb * b, nb * b, "sub", a_fmt=fmt if fmt != "dd" else "dc",
                              block=b), {"A": A2, "B": B @ C}, None)]
    for g, inputs, want in graphs:
        _check(systemc, g, inputs, want, configs=[(depth, hw)])


def _bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def test_special_payloads_in_blocks_are_bit_exact(systemc):
    """NaN (with a payload), -0.0, +-inf and subnormals inside blocks: every token and
    every output element has the Python model's bits (elementwise ops, a contraction, a
    max fold and exp)."""
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
        for py, sc in zip([python_run(g, inputs, d, HWS[h]) for d, h in CONFIGS],
                          _check(systemc, g, inputs), strict=True):
            if isinstance(py, Exception):
                continue  # a depth-1 deadlock, checked equal by _check
            for name in py.outputs:
                bits = _bits(py.outputs[name].vals)
                np.testing.assert_array_equal(_bits(sc.outputs[name].vals), bits,
                                              err_msg=g.name)
                seen |= set(bits.ravel().tolist())
    # the outputs really hold the special values: -0.0, a NaN payload, +-inf
    assert {0x80000000, 0x7FC12345, 0x7F800000, 0xFF800000} <= seen


def test_misaligned_block_operands_give_the_model_error(systemc):
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
    results = systemc.run_batch([SystemCRun(bad, inputs, trace=True, depth=d) for d in DEPTHS])
    for depth, sc in zip(DEPTHS, results, strict=True):
        assert isinstance(sc, SimulationError), sc
        assert "[" in str(sc)
        assert_same_result(python_run(bad, inputs, depth, None), sc, f"depth={depth}")


def test_per_module_processes_and_vcd_agree(tmp_path):
    """One SC_METHOD per primitive (the pool is committed on the falling edge) gives the
    same block run; a VCD of a block graph is written (din/dout show handles)."""
    if SystemCBackend.unavailable():
        pytest.skip(SystemCBackend.unavailable())
    _, g, inputs, want = next(c for c in block_cases(2) if c[0] == "sddmm")
    hw = HWS["ideal-macs4"]
    sc = SystemCBackend(per_module_processes=True, vcd=tmp_path / "blocks").run(
        g, inputs, trace=True, hw=hw)
    assert_same_result(python_run(g, inputs, "graph", hw), sc, "per-module")
    np.testing.assert_allclose(sc.dense("X"), want["X"], rtol=1e-5, atol=1e-5)
    assert (tmp_path / "blocks.vcd").stat().st_size > 0
