"""Parallel lanes on the SystemC backend against the Python reference model.

``lane_split``, ``lane_merge`` and ``lane_merge2`` (docs/primitives.md, docs/parallel.md)
in compiled graphs: SpMV and SpMM (Gustavson ``i,k,j`` and inner product ``i,j,k``)
parallelised at ``i``, ``j`` or both, round-robin and balanced partitions, deep (default)
and shallow lane buffers, ideal memory and the hbm2-u280 memory system. Every run must
agree with the Python model on every token's write and read cycle, the cycle count, node
statistics, FIFO occupancies, the memory report and the outputs (which must also equal
numpy); deadlocks and stream errors must give the Python model's report.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from _parity import assert_same_result, python_run
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler import compile_expression
from cosim import SystemCBackend, SystemCRun
from ir import Graph, GraphBuilder, GraphError, Hardware, load_hw
from sim_models.python import DeadlockError, SimulationError, simulate

pytestmark = pytest.mark.cosim

HBM = load_hw("hbm2-u280")
#: (depth override, hardware) every graph runs in: the graph's own depths (deep lane
#: buffers) and unbounded FIFOs, each with ideal memory and with the HBM2 memory system
CONFIGS: list[tuple[int | None | str, Hardware | None]] = [
    ("graph", None), (None, None), ("graph", HBM), (None, HBM)]
#: a memory system whose writers wait for every word's acknowledgement, so merges'
#: outputs fill while they copy and pick
SLOW_MEMORY = load_hw("hbm2-u280", {"dram.channels": 1, "dram.line_bytes": 4,
                                    "dram.outstanding": 1, "dram.latency_cycles": 50})
SPMV = "y(i) = A(i,j) * x(j)"
SPMM = "X(i,j) = A(i,k) * B(k,j)"
PARTITIONS = ("round-robin", "balanced")



def _csr(m: int, n: int, density: float, seed: int) -> sp.csr_matrix:
    return sp.random(m, n, density=density, format="csr", random_state=seed,
                     dtype=np.float32)


def _dense(m: int, n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((m, n)).astype(np.float32)


def _spmv(a: sp.csr_matrix, x: np.ndarray, lanes: int, partition: str = "round-robin",
          **kw) -> tuple[Graph, dict]:
    g = compile_expression(SPMV, {"A": "csr"}, {"A": a.shape, "x": x.shape},
                           par={"i": lanes}, partition=partition, stats={"A": a, "x": x},
                           **kw)
    return g, {"A": a, "x": x}


def _spmm(a: sp.csr_matrix, b: np.ndarray, order: str, par: dict[str, int],
          partition: str = "round-robin", **kw) -> tuple[Graph, dict]:
    g = compile_expression(SPMM, {"A": "csr", "X": "csr"}, {"A": a.shape, "B": b.shape},
                           order=order, par=par, partition=partition,
                           stats={"A": a, "B": b}, **kw)
    return g, {"A": a, "B": b}


def _tight(case: tuple[Graph, dict]) -> tuple[Graph, dict]:
    """The case with every FIFO but the lane buffers 1 deep (half rate: outputs fill)."""
    data = case[0].to_dict()
    for e in data["edges"]:
        if e["depth"] == 2:
            e["depth"] = 1
    return Graph.from_dict(data), case[1]


def _ops(graph: Graph) -> set[str]:
    return {n.op for n in graph.nodes.values() if n.op.startswith("lane_")}


def _check(systemc: SystemCBackend, cases: list[tuple[Graph, dict]], want: np.ndarray,
           out: str, configs=CONFIGS) -> None:
    """Every case in every config as one SystemC batch (one child), each equal to the
    Python model; every run that completes must give numpy's ``want``."""
    runs = [SystemCRun(g, ins, trace=True, depth=d, hw=hw, mem_trace=hw is not None)
            for g, ins in cases for d, hw in configs]
    results = systemc.run_batch(runs)
    for run, sc in zip(runs, results, strict=True):
        meta = run.graph.meta.get("parallel", {})
        where = (f"{run.graph.name} par={meta.get('par')} {meta.get('partition')} "
                 f"lane_buffer={meta.get('lane_buffer')} depth={run.depth} "
                 f"hw={run.hw.name if run.hw else None}")
        assert_same_result(python_run(run.graph, run.inputs, run.depth, run.hw), sc, where)
        if run.depth is None:  # unbounded FIFOs never deadlock
            assert not isinstance(sc, Exception), f"{where}: {sc}"
        if not isinstance(sc, Exception):
            np.testing.assert_allclose(sc.dense(out), want, rtol=1e-4, atol=1e-4,
                                       err_msg=where)


# -- SpMV: one output level, lane_merge -----------------------------------------------

@pytest.mark.parametrize("partition", PARTITIONS)
@pytest.mark.parametrize("lanes", [2, 3, 4])
def test_spmv_lanes(systemc, lanes, partition):
    a, x = _csr(23, 17, 0.2, lanes), _dense(17, 1, 40 + lanes).ravel()
    cases = [_spmv(a, x, lanes, partition), _spmv(a, x, lanes, partition, lane_buffer=4)]
    cases.append(_tight(cases[0]))
    assert all(_ops(g) == {"lane_split", "lane_merge"} for g, _ in cases)
    _check(systemc, cases, a @ x, "y")


# -- SpMM: Gustavson and inner product, parallel at i (lane_merge2), j, both ------------

@pytest.mark.parametrize("partition", PARTITIONS)
@pytest.mark.parametrize("par", [{"i": 2}, {"j": 2}, {"i": 2, "j": 2}, {"i": 3}],
                         ids=["i2", "j2", "i2j2", "i3"])
@pytest.mark.parametrize("order", ["i,k,j", "i,j,k"])
def test_spmm_lanes(systemc, order, par, partition):
    a, b = _csr(9, 8, 0.3, 11), _dense(8, 6, 12)
    b[np.random.default_rng(13).random(b.shape) < 0.4] = 0  # B is stored compressed too
    cases = [_spmm(a, b, order, par, partition), _spmm(a, b, order, par, partition,
                                                       lane_buffer=4)]
    cases.append(_tight(cases[0]))
    want_ops = {"lane_split"} | ({"lane_merge2"} if "i" in par else set()) | \
        ({"lane_merge"} if "j" in par else set())
    assert all(_ops(g) == want_ops for g, _ in cases)
    _check(systemc, cases, a @ b, "X", [*CONFIGS, ("graph", SLOW_MEMORY)])


def test_shallow_lane_buffers_stall_lanes_on_each_other(systemc):
    """With lane_buffer=4 a later lane's merge input fills while an earlier lane still
    runs: the lanes stall on output space (what the deep default buffers avoid)."""
    a, b = _csr(16, 12, 0.4, 21), _dense(12, 10, 22)
    deep, shallow = (_spmm(a, b, "i,k,j", {"i": 2}, "balanced", lane_buffer=lb)[0]
                     for lb in (1024, 4))
    inputs = {"A": a, "B": b}
    (r_deep, r_shallow) = systemc.run_batch([SystemCRun(g, inputs, trace=True)
                                             for g in (deep, shallow)])
    for g, r in ((deep, r_deep), (shallow, r_shallow)):
        assert_same_result(simulate(g, inputs, trace=True), r, g.name)
    splits = [n for n, s in r_shallow.nodes.items() if s.op == "lane_split"]
    assert sum(r_shallow.nodes[n].stall_out for n in splits) > \
        sum(r_deep.nodes[n].stall_out for n in splits)
    assert r_shallow.cycles >= r_deep.cycles


def test_deep_lane_buffers_are_fast(systemc):
    """8192-deep merge inputs (4 lanes of 2048) on a few thousand rows: the FIFOs grow
    with what they hold, not with their depth, and the run stays quick."""
    a, x = _csr(3000, 200, 0.02, 31), _dense(200, 1, 32).ravel()
    g, inputs = _spmv(a, x, 4, "balanced", lane_buffer=2048)
    assert max(e.depth or 0 for e in g.edges) == 2048 * 2
    res = systemc.run(g, inputs)
    assert systemc.last_timings["simulate"] < 10.0
    assert res.cycles == simulate(g, inputs).cycles
    np.testing.assert_allclose(res.dense("y"), a @ x, rtol=1e-4, atol=1e-4)


def test_lane_deadlock_gives_the_python_report(systemc):
    """Every FIFO 1 deep: a lane's merge input cannot hold its output until the earlier
    lane passes, so the lanes deadlock; both backends name the same blocked FIFOs."""
    a, x = _csr(10, 10, 0.4, 41), _dense(10, 1, 42).ravel()
    g, inputs = _spmv(a, x, 2)
    with pytest.raises(DeadlockError) as py:
        simulate(g, inputs, depth=1)
    with pytest.raises(DeadlockError) as sc:
        systemc.run(g, inputs, depth=1)
    assert str(sc.value) == str(py.value)


# -- random shapes, densities and lanes --------------------------------------------------

@settings(max_examples=15, deadline=None)
@given(m=st.integers(1, 7), k=st.integers(1, 6), n=st.integers(1, 6),
       density=st.sampled_from([0.0, 0.15, 0.4, 1.0]), lanes=st.integers(2, 5),
       kernel=st.sampled_from(["spmv", "i,k,j", "i,j,k"]),
       at=st.sampled_from(["i", "j", "ij"]), partition=st.sampled_from(PARTITIONS),
       lane_buffer=st.sampled_from([2, 4, 1024]), seed=st.integers(0, 2**16))
def test_random_lanes_parity(systemc, m, k, n, density, lanes, kernel, at, partition,
                             lane_buffer, seed):
    """Often more lanes than non-empty rows (small, sparse matrices): idle lanes still
    pass every stop. Tiny lane buffers may deadlock; then both backends must say so alike."""
    a = _csr(m, k, density, seed)
    if kernel == "spmv":
        x = _dense(k, 1, seed + 1).ravel()
        cases, want, out = [_spmv(a, x, lanes, partition, lane_buffer=lane_buffer)], a @ x, "y"
    else:
        b = _dense(k, n, seed + 1)
        b[np.random.default_rng(seed + 2).random(b.shape) < 1 - density] = 0
        par = {v: lanes if len(at) == 1 else 2 for v in at}
        cases, want, out = [_spmm(a, b, kernel, par, partition, lane_buffer=lane_buffer)], \
            a @ b, "X"
    _check(systemc, cases, want, out, [("graph", None), (None, None), ("graph", HBM)])


# -- malformed lanes -----------------------------------------------------------------------

def _edit_splits(graph: Graph, **params) -> Graph:
    """``graph`` with every lane_split's ``params`` replaced (as graph JSON would)."""
    data = graph.to_dict()
    for node in data["nodes"]:
        if node["op"] == "lane_split":
            node["params"].update(params)
    return Graph.from_dict(data)


def _same_error(systemc, graph: Graph, inputs: dict, depth="graph") -> str:
    with pytest.raises(SimulationError) as py:
        simulate(graph, inputs, depth=depth)
    with pytest.raises(SimulationError) as sc:
        systemc.run(graph, inputs, depth=depth)
    assert str(sc.value) == str(py.value)
    return str(sc.value)


@pytest.mark.parametrize("kernel", ["spmv", "spmm"])
def test_lanes_that_do_not_partition_give_the_python_message(systemc, kernel, unchecked_graphs):
    """Every lane keeps lane 0's coordinates: the merge sees one coordinate twice."""
    a = _csr(6, 5, 0.6, 51)
    if kernel == "spmv":
        g, inputs = _spmv(a, _dense(5, 1, 52).ravel(), 2)
    else:
        g, inputs = _spmm(a, _dense(5, 4, 53), "i,k,j", {"i": 2})
    msg = _same_error(systemc, _edit_splits(g, lane=0), inputs)
    assert "lanes must partition the coordinates" in msg
    merges = [nid for nid, n in g.nodes.items() if n.op in ("lane_merge", "lane_merge2")]
    assert any(f"node {nid!r}" in msg for nid in merges)


def _two_lane_merge(b_format: str) -> Graph:
    """A lane_merge fed straight by two scanned vectors A and B (B: ``b_format``)."""
    g = GraphBuilder("merge_vectors", depth=None)
    g.tensor("A", (6,), "c")
    g.tensor("B", (6,) if b_format == "c" else (2, 6), b_format)
    g.tensor("X", (6,), "c", role="output")
    nodes = [("r", "root", {}), ("Ai", "scan_compressed", {"tensor": "A", "level": 0}),
             ("Av", "array", {"tensor": "A"}), ("m", "lane_merge", {}),
             ("Xi", "level_writer", {"tensor": "X", "level": 0}),
             ("Xv", "value_writer", {"tensor": "X"})]
    edges = [("r.ref", "Ai.ref_in"), ("Ai.ref", "Av.ref"), ("Ai.crd", "m.crd_a"),
             ("Av.val", "m.val_a"), ("m.crd", "Xi.crd"), ("m.val", "Xv.val")]
    if b_format == "c":
        nodes += [("Bi", "scan_compressed", {"tensor": "B", "level": 0})]
        edges += [("r.ref", "Bi.ref_in"), ("Bi.ref", "Bv.ref"), ("Bi.crd", "m.crd_b")]
    else:  # a matrix: its inner crds carry one more stop level than A's
        nodes += [("Bi", "scan_dense", {"tensor": "B", "level": 0}),
                  ("Bj", "scan_compressed", {"tensor": "B", "level": 1})]
        edges += [("r.ref", "Bi.ref_in"), ("Bi.ref", "Bj.ref_in"), ("Bj.ref", "Bv.ref"),
                  ("Bj.crd", "m.crd_b")]
    nodes.append(("Bv", "array", {"tensor": "B"}))
    edges.append(("Bv.val", "m.val_b"))
    for nid, op, kw in nodes:
        g.node(nid, op, **kw)
    for s, d in edges:
        g.edge(s, d)
    return g.build()


def test_lane_merge_of_disjoint_vectors_matches(systemc):
    """The merge on its own: two vectors with disjoint coordinates merge into their sum."""
    a, b = np.array([1, 0, 3, 0, 0, 6], np.float32), np.array([0, 2, 0, 4, 5, 0], np.float32)
    g = _two_lane_merge("c")
    for depth in (1, 2, None):
        res = systemc.run(g, {"A": a, "B": b}, trace=True, depth=depth)
        assert_same_result(simulate(g, {"A": a, "B": b}, trace=True, depth=depth), res,
                           f"depth={depth}")
        np.testing.assert_array_equal(res.dense("X"), a + b)


def _two_lane_merge2(depth: int | None) -> Graph:
    """A lane_merge2 fed straight by two scanned matrices A and B (compressed rows) and
    written out at once: X = A + B when their non-empty rows are disjoint."""
    g = GraphBuilder("merge_matrices", depth=depth)
    for t in "AB":
        g.tensor(t, (5, 4), "cc")
    g.tensor("X", (5, 4), "cc", role="output")
    g.node("r", "root")
    g.node("m", "lane_merge2")
    for t, side in (("A", "a"), ("B", "b")):
        g.node(f"{t}i", "scan_compressed", tensor=t, level=0)
        g.node(f"{t}j", "scan_compressed", tensor=t, level=1)
        g.node(f"{t}v", "array", tensor=t)
        for s, d in [("r.ref", f"{t}i.ref_in"), (f"{t}i.ref", f"{t}j.ref_in"),
                     (f"{t}j.ref", f"{t}v.ref"), (f"{t}i.crd", f"m.crd1_{side}"),
                     (f"{t}j.crd", f"m.crd0_{side}"), (f"{t}v.val", f"m.val_{side}")]:
            g.edge(s, d)
    for nid, op, kw, src in [("Xi", "level_writer", {"level": 0}, "m.crd1"),
                             ("Xj", "level_writer", {"level": 1}, "m.crd0"),
                             ("Xv", "value_writer", {}, "m.val")]:
        g.node(nid, op, tensor="X", **kw)
        g.edge(src, f"{nid}.{'val' if op == 'value_writer' else 'crd'}")
    return g.build()


def test_lane_merge2_of_disjoint_rows_matches(systemc):
    """The two-level merge on its own, including outputs that fill while it picks."""
    rng = np.random.default_rng(71)
    full = rng.standard_normal((5, 4)).astype(np.float32)
    full[rng.random((5, 4)) < 0.3] = 0
    a, b = full.copy(), full.copy()
    a[[1, 2, 4]] = 0
    b[[0, 3]] = 0
    inputs = {"A": a, "B": b}
    runs = [SystemCRun(_two_lane_merge2(d), inputs, trace=True, hw=hw, mem_trace=hw is not None)
            for d in (1, 2, None) for hw in (None, SLOW_MEMORY)]
    results = systemc.run_batch(runs)
    for run, sc in zip(runs, results, strict=True):
        py = simulate(run.graph, inputs, trace=True, hw=run.hw, mem_trace=run.hw is not None)
        assert_same_result(py, sc, f"{run.graph.name} hw={run.hw}")
        np.testing.assert_array_equal(sc.dense("X"), full)
    assert all(sc.nodes["m"].stall_out for run, sc in zip(runs, results, strict=True)
               if run.hw and run.graph.edges[0].depth is not None)


def test_lane_merge_stream_errors_give_the_python_message(systemc):
    g = _two_lane_merge("c")
    a = np.array([1, 0, 3, 0, 0, 0], np.float32)
    msg = _same_error(systemc, g, {"A": a, "B": a})
    assert msg.endswith("both lanes hold coordinate 0: lanes must partition the coordinates")
    g = _two_lane_merge("dc")
    msg = _same_error(systemc, g, {"A": a, "B": np.zeros((2, 6), np.float32)})
    assert "misaligned lanes: crd_a holds " in msg


def _misnested_merge2() -> Graph:
    """lane_merge2 whose lane a pairs T's level-0 crds (outer) with its level-2 crds
    (inner, one stop level too deep); lane b is a well-formed matrix B."""
    g = GraphBuilder("misnested_merge2", depth=None)
    g.tensor("T", (2, 2, 3), "ccc")
    g.tensor("B", (3, 3), "cc")
    g.tensor("X", (3, 3), "cc", role="output")
    g.node("r", "root")
    g.node("m", "lane_merge2")
    g.node("Ti", "scan_compressed", tensor="T", level=0)
    g.node("Tj", "scan_compressed", tensor="T", level=1)
    g.node("Tk", "scan_compressed", tensor="T", level=2)
    g.node("Tv", "array", tensor="T")
    g.node("Bi", "scan_compressed", tensor="B", level=0)
    g.node("Bj", "scan_compressed", tensor="B", level=1)
    g.node("Bv", "array", tensor="B")
    for nid, op, kw, src in [("Xi", "level_writer", {"level": 0}, "m.crd1"),
                             ("Xj", "level_writer", {"level": 1}, "m.crd0"),
                             ("Xv", "value_writer", {}, "m.val")]:
        g.node(nid, op, tensor="X", **kw)
        g.edge(src, f"{nid}.{'val' if op == 'value_writer' else 'crd'}")
    for s, d in [("r.ref", "Ti.ref_in"), ("Ti.ref", "Tj.ref_in"), ("Tj.ref", "Tk.ref_in"),
                 ("Tk.ref", "Tv.ref"), ("Ti.crd", "m.crd1_a"), ("Tk.crd", "m.crd0_a"),
                 ("Tv.val", "m.val_a"), ("r.ref", "Bi.ref_in"),
                 ("Bi.ref", "Bj.ref_in"), ("Bj.ref", "Bv.ref"), ("Bi.crd", "m.crd1_b"),
                 ("Bj.crd", "m.crd0_b"), ("Bv.val", "m.val_b")]:
        g.edge(s, d)
    return g.build()


def test_lane_merge2_stream_errors_give_the_python_message(systemc, unchecked_graphs):
    """An inner stream whose stops do not nest under the outer one: a copy closes lane a
    with S2 where the outer fiber ends with S0 (S1 expected), or lane a still holds a crd
    when the outer streams end."""
    g = _misnested_merge2()
    b = np.zeros((3, 3), np.float32)
    b[2, 0] = 1
    t = np.zeros((2, 2, 3), np.float32)
    t[0, 0, 1] = t[1, 0, 2] = 1  # Tk: 1 S1 2 S2 D against Ti: 0 1 S0 D
    msg = _same_error(systemc, g, {"T": t, "B": b})
    assert msg.endswith("lane a's inner stream closed its fiber with S2 but the outer "
                        "stream ends it with S0")
    t[0, 1, 0] = 1  # Tk: 1 S0 0 S1 2 S2 D: closes with S1, then holds 2 at the end
    msg = _same_error(systemc, g, {"T": t, "B": b})
    assert msg.endswith("crd0_a holds 2 where its coordinates hold D")


def test_lane_index_beyond_lanes_does_not_load():
    """``lane >= lanes`` is a graph error: no backend gets to run it."""
    a = _csr(4, 4, 0.5, 61)
    g, _ = _spmv(a, _dense(4, 1, 62).ravel(), 2)
    with pytest.raises(GraphError, match="lane 5 must be below lanes 2"):
        _edit_splits(g, lane=5)
