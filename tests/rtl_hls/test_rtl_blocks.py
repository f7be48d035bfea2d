"""Reference RTL on block-sparse graphs (docs/blocks.md) against the Python model and
numpy: every edge's tokens with their write and read cycles, the cycle count, the
outputs, and with the memory system every burst and each memory node's stall cycles;
under Icarus on ideal hardware, on a bounded datapath (``BLOCK_HW_OVERRIDES``: firings
of several cycles) and on ``hbm2-u280``, and under Verilator on a few of them (each
Verilator build takes about a minute). Scalar graphs keep their netlists exactly."""

from __future__ import annotations

import numpy as np
import pytest
from _block_graphs import BLOCK_HW_OVERRIDES, block_cases
from test_rtl import _assert_lint_clean, _sim

from ir import GraphBuilder, compare_traces, examples, load_hw
from rtl_hls.rtl import generate
from sim_models.python import simulate
from tests._wiring import matrix_writers, wire

HW = {"ideal": None, "bounded": ("ideal", BLOCK_HW_OVERRIDES), "hbm2": ("hbm2-u280", [])}


def _hw(name: str):
    spec = HW[name]
    return None if spec is None else load_hw(*spec)


def _bursts(res):
    return [(r.cycle, r.port, r.line, r.lines, r.write) for r in res.mem_requests]


def _check(graph, inputs, expected, sim: str, hw, rtol: float = 1e-5) -> None:
    """RTL == Python model (traces, cycles, outputs, memory), and both close to numpy."""
    from cosim import RtlBackend

    memory = hw is not None and hw.memory
    ref = simulate(graph, inputs, trace=True, hw=hw, mem_trace=memory)
    got = RtlBackend(_sim(sim)).run(graph, inputs, trace=True, hw=hw, mem_trace=memory)
    assert compare_traces(ref.trace, got.trace) == []
    late = [n for n, et in ref.trace.edges.items()
            if got.trace.edges[n].read_cycles != et.read_cycles]
    assert not late, f"read cycles differ on {late}"
    assert got.cycles == ref.cycles
    if memory:
        assert _bursts(got) == _bursts(ref)
        assert got.channel_bytes == ref.channel_bytes
        stalls = {n: s.stall_mem for n, s in got.nodes.items()}
        assert stalls == {n: ref.nodes[n].stall_mem for n in stalls}
    for name, tree in ref.outputs.items():
        dense = got.outputs[name].to_dense()
        np.testing.assert_array_equal(dense.view(np.uint32),
                                      tree.to_dense().view(np.uint32))  # bit for bit
        if name in expected:
            np.testing.assert_allclose(dense, expected[name], rtol=rtol, atol=1e-5)


def _case(b: int, name: str, scale: int = 1):
    for n, graph, inputs, expected in block_cases(b, scale=scale):
        if n == name:
            return graph, inputs, expected
    raise KeyError(name)


CASES = [n for n, *_ in block_cases(2)]


@pytest.mark.cosim
@pytest.mark.parametrize("hw", list(HW))
@pytest.mark.parametrize("b", [2, 4])
@pytest.mark.parametrize("case", CASES)
def test_block_cases_on_icarus(case, b, hw):
    _check(*_case(b, case), "icarus", _hw(hw))


#: (case, b, hardware): contraction + spacc with memory, fold + unary, elementwise with N
VERILATOR = [("spmm_ikj", 4, "hbm2"), ("row_sum_exp", 2, "bounded"),
             ("elementwise_add", 2, "bounded")]


@pytest.mark.cosim
@pytest.mark.parametrize("case,b,hw", VERILATOR)
def test_block_cases_on_verilator(case, b, hw):
    _check(*_case(b, case), "verilator", _hw(hw))


@pytest.mark.cosim
@pytest.mark.parametrize("case", ["spmv", "spmm_ikj"])
def test_16x16_blocks(case):
    """b = 16 (E = 256, a 16x16x16 block product in 16 cycles on hbm2-u280)."""
    _check(*_case(16, case), "icarus", _hw("hbm2"))


def _row_center(m: int, n: int, b: int):
    """X(i,j) = exp(A(i,j) - max_j A(i,j)): a folding max reducer (``ij->i``), its row
    maxima broadcast over j (a ``broadcast`` of b-vectors) into a row-broadcast subtract
    (``ij,i->ij``), then exp on blocks."""
    dims = f"i={b},j={b}"
    g = GraphBuilder("row_center", "float32", 2)
    g.tensor("A", (m, n), "dc", block=(b, b))
    g.tensor("X", (m, n), "dc", role="output", block=(b, b))
    for nid, op, p in [("root", "root", {}), ("Ai", "scan_dense", dict(tensor="A", level=0)),
                       ("Aj_max", "scan_compressed", dict(tensor="A", level=1)),
                       ("Av_max", "array", dict(tensor="A")),
                       ("rowmax", "reduce", dict(op="max", block=f"ij->i;{dims}")),
                       ("Aj", "scan_compressed", dict(tensor="A", level=1)),
                       ("Av", "array", dict(tensor="A")), ("rs_j", "repsig", {}),
                       ("bc_j", "broadcast", {}),
                       ("sub", "alu", dict(op="sub", block=f"ij,i->ij;{dims}")),
                       ("exp", "unary", dict(op="exp"))]:
        g.node(nid, op, **p)
    matrix_writers(g)
    wire(g, "root.ref>Ai.ref_in Ai.ref>Aj_max.ref_in Aj_max.ref>Av_max.ref "
             "Av_max.val>rowmax.val_in Ai.ref>rowmax.outer Ai.ref>Aj.ref_in Ai.crd>Xi.crd "
             "Aj.crd>rs_j.crd Aj.crd>Xj.crd rowmax.val>bc_j.val_in rs_j.repsig>bc_j.repsig "
             "Aj.ref>Av.ref Av.val>sub.a bc_j.val>sub.b sub.val>exp.a exp.val>Xv.val")
    return g.build(kernel="row_center")


def _outer(m: int, n: int, bi: int, bj: int):
    """X(i,j) = u(i) * v(j), dense: an outer product of blocks (``i,j->ij``), u's value
    broadcast over j, v's root repeated over i (bi != bj: operands of different widths)."""
    g = GraphBuilder("outer", "float32", 2)
    g.tensor("u", (m,), "d", block=(bi,))
    g.tensor("v", (n,), "d", block=(bj,))
    g.tensor("X", (m, n), "dd", role="output", block=(bi, bj))
    for nid, op, p in [("root_u", "root", {}), ("root_v", "root", {}),
                       ("ui", "scan_dense", dict(tensor="u", level=0)),
                       ("rs_i", "repsig", {}), ("rep_v", "repeat", {}),
                       ("vj", "scan_dense", dict(tensor="v", level=0)),
                       ("uv", "array", dict(tensor="u")), ("vv", "array", dict(tensor="v")),
                       ("rs_j", "repsig", {}), ("bc_j", "broadcast", {}),
                       ("mul", "alu", dict(op="mul", block=f"i,j->ij;i={bi},j={bj}"))]:
        g.node(nid, op, **p)
    matrix_writers(g)
    wire(g, "root_u.ref>ui.ref_in ui.crd>rs_i.crd ui.crd>Xi.crd root_v.ref>rep_v.ref_in "
             "rs_i.repsig>rep_v.repsig rep_v.ref>vj.ref_in vj.crd>Xj.crd vj.crd>rs_j.crd "
             "ui.ref>uv.ref uv.val>bc_j.val_in rs_j.repsig>bc_j.repsig vj.ref>vv.ref "
             "bc_j.val>mul.a vv.val>mul.b mul.val>Xv.val")
    return g.build(kernel="outer")


def _row_center_case(b: int = 4):
    rng = np.random.default_rng(3)
    from _block_graphs import block_sparse

    A = block_sparse(rng, 4 * b, 3 * b, b, 0.5)
    stored = np.kron(np.any((A != 0).reshape(4, b, 3, b), axis=(1, 3)),
                     np.ones((b, b))).astype(bool)
    rowmax = np.where(stored, A, -np.inf).max(axis=1, keepdims=True)
    X = np.where(stored, np.exp(A.astype(np.float64) - rowmax), 0.0).astype(np.float32)
    return _row_center(4 * b, 3 * b, b), {"A": A}, {"X": X}


@pytest.mark.cosim
@pytest.mark.parametrize("sim,hw", [("icarus", "ideal"), ("icarus", "hbm2"),
                                    ("verilator", "bounded")])
def test_broadcast_spec(sim, hw):
    _check(*_row_center_case(), sim, _hw(hw))


@pytest.mark.cosim
@pytest.mark.parametrize("hw", ["bounded", "hbm2"])
def test_outer_product(hw):
    rng = np.random.default_rng(4)
    u = rng.standard_normal(12).astype(np.float32)
    v = rng.standard_normal(8).astype(np.float32)
    _check(_outer(12, 8, 4, 2), {"u": u, "v": v}, {"X": np.outer(u, v)}, "icarus", _hw(hw))


@pytest.mark.cosim
@pytest.mark.parametrize("op", ["add", "max", "mul", "div"])
def test_special_values_bit_exact(op):
    """NaN payloads, -0.0 and infinities inside blocks: the RTL equals the Python model
    bit for bit (N from the union is the zero block: -0.0 + N is +0.0, and x / N is the
    scalar division by zero: 0/0 and NaN/0 the canonical NaN)."""
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
    graph = examples.elementwise(4, 4, op, block=b)
    f = {"add": np.add, "max": np.maximum, "mul": np.multiply, "div": np.divide}[op]
    with np.errstate(all="ignore"):
        gold = f(A, B) if op != "max" else np.where(A >= B, A, B)
    if op == "mul":  # an intersection: only blocks both store
        def stored(M):
            return np.kron(np.any((M != 0).reshape(2, b, 2, b), axis=(1, 3)), np.ones((b, b)))
        gold = np.where((stored(A) * stored(B)) > 0, gold, 0.0).astype(np.float32)
    _check(graph, {"A": A, "B": B}, {"X": gold}, "icarus", None)


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

    graphs = [_case(2, "spmm_ikj")[0], _case(2, "row_sum_exp")[0], _row_center(8, 8, 2),
              _outer(8, 4, 4, 2)]
    for graph in graphs:
        for hw in (load_hw("ideal", BLOCK_HW_OVERRIDES), load_hw("hbm2-u280")):
            _assert_lint_clean(generate(graph, hw=hw), tmp_path)
