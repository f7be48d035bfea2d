"""Parallel lanes (docs/parallel.md) on every backend against the Python model and numpy:
range lanes (``lane_split``, ``lane_merge``, ``lane_merge2``) in compiled SpMV, SpMM
(Gustavson ``i,k,j`` and inner product ``i,j,k``) and elementwise kernels, parallel at
``i``, ``j`` or both, round-robin and balanced, deep and shallow lane buffers, ideal
memory and hbm2-u280; position lanes (``position_split``, ``lane_combine``,
``lane_combine2``) splitting a heavy row; merges fed by hand; random shapes, densities and
lane counts; deadlocks and malformed lanes with the model's report. What each backend is
held to is in ``_backends.py``; the HLS and RTL builds run on the graphs they built before
the suites were merged (``only=``).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp
from _backends import RTL, assert_replays, assert_same_result, over, python_run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import compile_expression
from cosim import HlsRunError
from ir import Graph, GraphBuilder, GraphError, Hardware, load_hw
from sim_models.python import DeadlockError, SimulationError, simulate
from tests._lane_graphs import (
    DENSITIES,
    HLS_LANE_CASES,
    KERNELS,
    LANE_CASES,
    PARTITIONS,
    POSITION_CASES,
    deal_graph,
    hls_lane_graph,
    hls_lane_inputs,
    lane_case,
    lane_graph,
    lane_numpy,
    lane_operands,
    position_case,
)

HBM = load_hw("hbm2-u280")
#: (depth override, hardware) every graph runs in on the cheap backends: the graph's own
#: depths (deep lane buffers) and unbounded FIFOs, each with ideal memory and with HBM2
CONFIGS: list[tuple[int | None | str, Hardware | None]] = [
    ("graph", None), (None, None), ("graph", HBM), (None, HBM)]
#: a memory system whose writers wait for every word's acknowledgement, so merges'
#: outputs fill while they copy and pick
SLOW_MEMORY = load_hw("hbm2-u280", {"dram.channels": 1, "dram.line_bytes": 4,
                                    "dram.outstanding": 1, "dram.latency_cycles": 50})
SPMV = "y(i) = A(i,j) * x(j)"
SPMM = "X(i,j) = A(i,k) * B(k,j)"
CHEAP_BACKENDS = ("python", "systemc")
ALL = ("python", "systemc", "hls", *RTL)


def _cheap(configs=CONFIGS) -> dict[str, list]:
    return {name: configs for name in CHEAP_BACKENDS}


def _once(hw: Hardware | None = None) -> dict[str, list]:
    """One run at the graph's depths on ``hw``, on every backend."""
    return {name: [("graph", hw)] for name in ALL}


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


def _check_all(backend, cases: list[tuple[Graph, dict]], want: np.ndarray, out: str,
               configs=CONFIGS) -> None:
    """Every case in every configuration equal to the Python model (a bounded run may
    deadlock as the model does; unbounded FIFOs never do); completed runs give numpy's
    ``want``."""
    for g, ins in cases:
        backend.check(g, ins, {out: want}, configs=_cheap(configs), rtol=1e-4, atol=1e-4,
                      deadlocks=True)


# -- range lanes on the cheap backends ---------------------------------------------------

@pytest.mark.parametrize("backend,lanes,partition", over(
    [(n, p) for n in (2, 3, 4) for p in PARTITIONS], backends=CHEAP_BACKENDS),
    indirect=["backend"])
def test_spmv_lanes(backend, lanes, partition):
    a, x = _csr(23, 17, 0.2, lanes), _dense(17, 1, 40 + lanes).ravel()
    cases = [_spmv(a, x, lanes, partition), _spmv(a, x, lanes, partition, lane_buffer=4)]
    cases.append(_tight(cases[0]))
    assert all(_ops(g) == {"lane_split", "lane_merge"} for g, _ in cases)
    _check_all(backend, cases, a @ x, "y")


PARS = {"i2": {"i": 2}, "j2": {"j": 2}, "i2j2": {"i": 2, "j": 2}, "i3": {"i": 3}}


@pytest.mark.parametrize("backend,order,par,partition", over(
    [(o, p, q) for o in ("i,k,j", "i,j,k") for p in PARS for q in PARTITIONS],
    backends=CHEAP_BACKENDS), indirect=["backend"])
def test_spmm_lanes(backend, order, par, partition):
    par = PARS[par]
    a, b = _csr(9, 8, 0.3, 11), _dense(8, 6, 12)
    b[np.random.default_rng(13).random(b.shape) < 0.4] = 0  # B is stored compressed too
    cases = [_spmm(a, b, order, par, partition), _spmm(a, b, order, par, partition,
                                                       lane_buffer=4)]
    cases.append(_tight(cases[0]))
    want_ops = {"lane_split"} | ({"lane_merge2"} if "i" in par else set()) | \
        ({"lane_merge"} if "j" in par else set())
    assert all(_ops(g) == want_ops for g, _ in cases)
    _check_all(backend, cases, a @ b, "X", [*CONFIGS, ("graph", SLOW_MEMORY)])


CHEAP = over([()], ["lanes"], backends=CHEAP_BACKENDS)


@pytest.mark.parametrize("backend", CHEAP, indirect=True)
def test_shallow_lane_buffers_stall_lanes_on_each_other(backend):
    """With lane_buffer=4 a later lane's merge input fills while an earlier lane still
    runs: the lanes stall on output space (what the deep default buffers avoid)."""
    a, b = _csr(16, 12, 0.4, 21), _dense(12, 10, 22)
    deep, shallow = (_spmm(a, b, "i,k,j", {"i": 2}, "balanced", lane_buffer=lb)[0]
                     for lb in (1024, 4))
    inputs = {"A": a, "B": b}
    (r_deep,) = backend.check(deep, inputs, configs=_once())
    (r_shallow,) = backend.check(shallow, inputs, configs=_once())
    splits = [n for n, s in r_shallow.nodes.items() if s.op == "lane_split"]
    assert sum(r_shallow.nodes[n].stall_out for n in splits) > \
        sum(r_deep.nodes[n].stall_out for n in splits)
    assert r_shallow.cycles >= r_deep.cycles


@pytest.mark.parametrize("backend", CHEAP, indirect=True)
def test_lane_deadlock_gives_the_model_report(backend):
    """Every FIFO 1 deep: a lane's merge input cannot hold its output until the earlier
    lane passes, so the lanes deadlock; both backends name the same blocked FIFOs."""
    a, x = _csr(10, 10, 0.4, 41), _dense(10, 1, 42).ravel()
    g, inputs = _spmv(a, x, 2)
    res = backend.run(g, inputs, 1)
    assert isinstance(res, DeadlockError), res
    with pytest.raises(DeadlockError) as py:
        simulate(g, inputs, depth=1)
    assert str(res) == str(py.value)


@pytest.mark.parametrize("backend", CHEAP, indirect=True)
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(m=st.integers(1, 7), k=st.integers(1, 6), n=st.integers(1, 6),
       density=st.sampled_from([0.0, 0.15, 0.4, 1.0]), lanes=st.integers(2, 5),
       kernel=st.sampled_from(["spmv", "i,k,j", "i,j,k"]),
       at=st.sampled_from(["i", "j", "ij"]), partition=st.sampled_from(PARTITIONS),
       lane_buffer=st.sampled_from([2, 4, 1024]), seed=st.integers(0, 2**16))
def test_random_lanes_parity(backend, m, k, n, density, lanes, kernel, at, partition,
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
    _check_all(backend, cases, want, out, [("graph", None), (None, None), ("graph", HBM)])


# -- range lanes on every backend ---------------------------------------------------------

#: (case, partition, memory): every case both ways without memory, and with it every
#: case but the union (its joins read no memory the others do not); float32 on ideal
#: memory (the recording HLS top), int32 on HBM (the m_axi top): one build each
HLS_RUNS = [(c, p, m) for c in sorted(HLS_LANE_CASES) for p in PARTITIONS
            for m in ("recording", "hbm") if not (m == "hbm" and c == "add_cc_i2")]


@pytest.mark.parametrize("backend,case,partition,memory", over(
    HLS_RUNS, backends=("python", "systemc", "hls")), indirect=["backend"])
def test_lanes_at_three_densities(backend, case, partition, memory):
    dtype = "int32" if memory == "hbm" else "float32"
    hw = HBM if memory == "hbm" else None
    graph = hls_lane_graph(case, partition, dtype)
    assert HLS_LANE_CASES[case][6] <= {n.op for n in graph.nodes.values()}
    for k, density in enumerate(DENSITIES):
        inputs = hls_lane_inputs(case, density, dtype, seed=10 + k)
        backend.check(graph, inputs, {_out(graph): HLS_LANE_CASES[case][5](inputs)},
                      configs=_once(hw), exact=True)


def _out(graph: Graph) -> str:
    (name,) = [t for t, spec in graph.tensors.items() if spec.role == "output"]
    return name


ONE = over([()], ["lanes"], backends=("python", "systemc", "hls"))


@pytest.mark.parametrize("backend", ONE, indirect=True)
def test_shallow_lane_buffers_give_the_same_tokens(backend):
    graph = hls_lane_graph("spmm_ijk_i2j2", "balanced", lane_buffer=4)
    inputs = hls_lane_inputs("spmm_ijk_i2j2", 0.6, "float32", seed=5)
    backend.check(graph, inputs, {"X": inputs["A"] @ inputs["B"]}, configs=_once())


_VEC = {"a": np.array([0, 3, 0, 1, 4, 0, 5, 9, 2], np.float32)}


@pytest.mark.parametrize("backend", ONE, indirect=True)
def test_a_dealt_vector_merges_back_in_order(backend):
    backend.check(deal_graph(1), _VEC, {"x": _VEC["a"]}, configs=_once(), exact=True)


#: lane buffers so shallow that lanes wait on each other (asserted in the RTL's tests)
RTL_CASES = list(LANE_CASES)
VERILATOR_CASES = ["gustavson_i2j2_balanced_shallow", "spmv_i3"]


@pytest.mark.parametrize("backend,case", over([(c,) for c in RTL_CASES], RTL_CASES, backends=(
    "python", "systemc", *RTL), only={"rtl-verilator": VERILATOR_CASES}), indirect=["backend"])
def test_lane_cases_match_model_cycle_for_cycle(backend, case):
    graph, inputs = lane_case(case)
    backend.check(graph, inputs, {_out(graph): lane_numpy(LANE_CASES[case][0], inputs)},
                  configs=_once())


@pytest.mark.parametrize("backend,case", over(
    [(c,) for c in ("spmv_i3_shallow", "gustavson_i2j2_balanced_shallow")],
    backends=("rtl-icarus",)), indirect=["backend"])
def test_lane_primitives_replay_their_traces_cycle_exactly(backend, case):
    """Every primitive of the graph in isolation, driven by the model's recorded trace:
    a difference names the edge (so the primitive) and the first differing token."""
    graph, inputs = lane_case(case)
    assert_replays(graph, inputs, backend.sim)


@pytest.mark.parametrize("backend,case", over(
    [(c,) for c in ("spmv_i3_balanced", "gustavson_i2j2_balanced_shallow", "inner_i2")],
    backends=("python", "systemc", "rtl-icarus")), indirect=["backend"])
def test_lanes_with_memory_match_model(backend, case):
    """hbm2-u280: every lane's scanners and arrays are memory ports of their own."""
    graph, inputs = lane_case(case)
    (res,) = backend.check(graph, inputs, {_out(graph): lane_numpy(LANE_CASES[case][0],
                                                                   inputs)},
                           configs=_once(HBM))
    assert res.dram_read_bytes > 0 and res.dram_write_bytes > 0


@pytest.mark.parametrize("backend", over([()], ["random"], backends=("python", "rtl-icarus")),
                         indirect=True)
@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kernel=st.sampled_from(sorted(KERNELS)), m=st.integers(1, 5), k=st.integers(1, 4),
       n=st.integers(1, 3), density=st.sampled_from([0.0, 0.3, 1.0]),
       lanes=st.integers(2, 6), where=st.sampled_from(["i", "j", "ij"]),
       partition=st.sampled_from(["round-robin", "balanced"]),
       lane_buffer=st.sampled_from([2, 3, 1024]), seed=st.integers(0, 2**16))
def test_lanes_on_random_inputs_match_model_and_numpy(backend, kernel, m, k, n, density,
                                                       lanes, where, partition, lane_buffer,
                                                       seed):
    """int32, so the product equals numpy exactly; up to 6 lanes on up to 5 rows."""
    inputs = lane_operands(kernel, m, k, n, density, seed, "int32")
    where = "i" if kernel == "spmv" else where
    par = {v: lanes if len(where) == 1 else 2 for v in where}
    graph = lane_graph(kernel, inputs, par, partition, lane_buffer, "int32")
    backend.check(graph, inputs, {_out(graph): lane_numpy(kernel, inputs)}, configs=_once(),
                  exact=True)


# -- position lanes ------------------------------------------------------------------------

def _heavy(m: int, n: int, seed: int) -> sp.csr_matrix:
    """A sparse matrix one of whose rows is full."""
    a = sp.random(m, n, 0.15, format="lil", random_state=seed, dtype=np.float32)
    a[m // 2, :] = np.random.default_rng(seed).random(n).astype(np.float32) + 0.5
    return a.tocsr()


def _position(expr, formats, tensors, order, lanes, **kw) -> tuple[Graph, dict]:
    g = compile_expression(expr, formats, {k: v.shape for k, v in tensors.items()},
                           order=order, par={"i": lanes}, partition="position",
                           stats=dict(tensors), **kw)
    assert any(n.op == "position_split" for n in g.nodes.values())
    return g, tensors


@pytest.mark.parametrize("backend,lanes", over([(n,) for n in (2, 3, 5)],
                                               backends=CHEAP_BACKENDS), indirect=["backend"])
def test_spmv_position_lanes(backend, lanes):
    a = _heavy(13, 11, lanes)
    x = np.random.default_rng(lanes).random(11).astype(np.float32)
    expr = "y(i) = A(i,k) * x(k)"
    cases = [_position(expr, {"A": "csr"}, {"A": a, "x": x}, "i,k", lanes),
             _position(expr, {"A": "csr"}, {"A": a, "x": x}, "i,k", lanes, lane_buffer=4)]
    cases.append(_tight(cases[0]))
    _check_all(backend, cases, a @ x, "y")


@pytest.mark.parametrize("backend,lanes", over([(n,) for n in (2, 4)],
                                               backends=CHEAP_BACKENDS), indirect=["backend"])
def test_spmm_and_sddmm_position_lanes(backend, lanes):
    rng = np.random.default_rng(lanes)
    a = _heavy(9, 8, 10 + lanes)
    b = rng.random((8, 3), dtype=np.float32)
    u, v = rng.random((9, 2), dtype=np.float32), rng.random((2, 8), dtype=np.float32)
    spmm = [_position(SPMM, {"A": "csr", "X": "csr"}, {"A": a, "B": b}, "i,k,j", lanes)]
    spmm.append(_tight(spmm[0]))
    _check_all(backend, spmm, a @ b, "X")
    sddmm = [_position("X(i,j) = A(i,j) * U(i,k) * V(k,j)", {"A": "csr", "X": "csr"},
                       {"A": a, "U": u, "V": v}, "i,j,k", lanes)]
    _check_all(backend, sddmm, a.multiply(u @ v).toarray(), "X")


def _position_inputs(shapes: dict, dtype: str, seed: int) -> dict[str, np.ndarray]:
    """Small-integer values (exact in any summation order); row 2 of A is full."""
    rng = np.random.default_rng(seed)
    out = {n: (rng.integers(1, 9, s) * (rng.random(s) < 0.4)).astype(dtype)
           for n, s in shapes.items()}
    out["A"][2] = rng.integers(1, 9, shapes["A"][1]).astype(dtype)
    return out


#: C-simulation-sized position cases: expression, formats, shapes, order, numpy, merge
HLS_POSITION = {
    "spmv": ("y(i) = A(i,k) * x(k)", {"A": "csr"}, {"A": (7, 9), "x": (9,)}, "i,k",
             lambda t: t["A"] @ t["x"], "lane_combine"),
    "spmm": ("X(i,j) = A(i,k) * B(k,j)", {"A": "csr", "X": "csr"},
             {"A": (7, 9), "B": (9, 4)}, "i,k,j", lambda t: t["A"] @ t["B"], "lane_combine2"),
}


@pytest.mark.parametrize("backend,case,lanes,memory", over(
    [(c, n, m) for c in sorted(HLS_POSITION) for n in (2, 3) for m in ("recording", "hbm")],
    backends=("python", "systemc", "hls")), indirect=["backend"])
def test_position_lanes_on_every_top(backend, case, lanes, memory):
    """float32 on the recording HLS top, int32 on the m_axi top."""
    expr, formats, shapes, order, want, combine = HLS_POSITION[case]
    dtype = "int32" if memory == "hbm" else "float32"
    inputs = _position_inputs(shapes, dtype, seed=lanes)
    graph = compile_expression(expr, formats, shapes, order=order, par={"i": lanes},
                               partition="position", stats=inputs, dtype=dtype)
    assert {"position_split", combine} <= {n.op for n in graph.nodes.values()}
    backend.check(graph, inputs, {_out(graph): want(inputs)},
                  configs=_once(HBM if memory == "hbm" else None), exact=True)


@pytest.mark.parametrize("backend,case", over([(c,) for c in sorted(POSITION_CASES)], backends=(
    "python", "systemc", "rtl-icarus")), indirect=["backend"])
def test_position_lane_cases_match_model_cycle_for_cycle(backend, case):
    graph, inputs, gold = position_case(*POSITION_CASES[case])
    assert "position_split" in {n.op for n in graph.nodes.values()}
    backend.check(graph, inputs, {_out(graph): gold}, configs=_once())


@pytest.mark.parametrize("backend,case", over([(c,) for c in ("spmv_3", "spmm_3_shallow")],
                                              backends=("rtl-icarus",)), indirect=["backend"])
def test_position_lane_primitives_replay_their_traces_cycle_exactly(backend, case):
    graph, inputs, _ = position_case(*POSITION_CASES[case])
    assert_replays(graph, inputs, backend.sim)


# -- merges fed by hand; malformed lanes ------------------------------------------------------

def _edit_splits(graph: Graph, **params) -> Graph:
    """``graph`` with every lane_split's ``params`` replaced (as graph JSON would)."""
    data = graph.to_dict()
    for node in data["nodes"]:
        if node["op"] == "lane_split":
            node["params"].update(params)
    return Graph.from_dict(data)


def _same_error(backend, graph: Graph, inputs: dict, depth="graph") -> str:
    res = backend.run(graph, inputs, depth)
    assert isinstance(res, SimulationError), res
    assert_same_result(python_run(graph, inputs, depth), res, graph.name)
    return str(res)


@pytest.mark.parametrize("backend,kernel", over([("spmv",), ("spmm",)],
                                                backends=CHEAP_BACKENDS), indirect=["backend"])
def test_lanes_that_do_not_partition_give_the_model_message(backend, kernel, unchecked_graphs):
    """Every lane keeps lane 0's coordinates: the merge sees one coordinate twice."""
    a = _csr(6, 5, 0.6, 51)
    if kernel == "spmv":
        g, inputs = _spmv(a, _dense(5, 1, 52).ravel(), 2)
    else:
        g, inputs = _spmm(a, _dense(5, 4, 53), "i,k,j", {"i": 2})
    msg = _same_error(backend, _edit_splits(g, lane=0), inputs)
    assert "lanes must partition the coordinates" in msg
    merges = [nid for nid, n in g.nodes.items() if n.op in ("lane_merge", "lane_merge2")]
    assert any(f"node {nid!r}" in msg for nid in merges)


@pytest.mark.parametrize("backend", ONE, indirect=True)
def test_overlapping_dealt_lanes_fail_as_in_the_model(backend, unchecked_graphs):
    """Both lanes of a dealt vector keep lane 0: C-simulation reports the rule in its
    own words."""
    graph = deal_graph(0, 2)
    res = backend.run(graph, _VEC, "graph")
    assert isinstance(res, SimulationError), res
    if backend.name == "hls":
        assert isinstance(res, HlsRunError)
        assert re.search(r"samfuse csim: samfuse_lane_\w+: both lanes hold the same "
                         "coordinate", str(res)), str(res)
    else:
        assert_same_result(python_run(graph, _VEC, "graph"), res, graph.name)
        assert "both lanes hold coordinate" in str(res)


def test_lane_index_beyond_lanes_does_not_load():
    """``lane >= lanes`` is a graph error: no backend gets to run it."""
    a = _csr(4, 4, 0.5, 61)
    g, _ = _spmv(a, _dense(4, 1, 62).ravel(), 2)
    with pytest.raises(GraphError, match="lane 5 must be below lanes 2"):
        _edit_splits(g, lane=5)
    with pytest.raises(GraphError, match="lane 2 must be below lanes 2"):
        deal_graph(2, 2)


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


@pytest.mark.parametrize("backend", CHEAP, indirect=True)
def test_lane_merge_of_disjoint_vectors_matches(backend):
    """The merge on its own: two vectors with disjoint coordinates merge into their sum."""
    a, b = np.array([1, 0, 3, 0, 0, 6], np.float32), np.array([0, 2, 0, 4, 5, 0], np.float32)
    results = backend.check(_two_lane_merge("c"), {"A": a, "B": b}, {"X": a + b}, exact=True,
                            configs={backend.name: [(d, None) for d in (1, 2, None)]})
    assert not any(isinstance(r, Exception) for r in results)


@pytest.mark.parametrize("backend", CHEAP, indirect=True)
def test_lane_merge2_of_disjoint_rows_matches(backend):
    """The two-level merge on its own, including outputs that fill while it picks."""
    rng = np.random.default_rng(71)
    full = rng.standard_normal((5, 4)).astype(np.float32)
    full[rng.random((5, 4)) < 0.3] = 0
    a, b = full.copy(), full.copy()
    a[[1, 2, 4]] = 0
    b[[0, 3]] = 0
    inputs = {"A": a, "B": b}
    for depth in (1, 2, None):
        graph = _two_lane_merge2(depth)
        results = backend.check(graph, inputs, {"X": full}, exact=True, configs={
            backend.name: [("graph", None), ("graph", SLOW_MEMORY)]})
        if depth is not None:
            assert results[1].nodes["m"].stall_out


@pytest.mark.parametrize("backend", CHEAP, indirect=True)
def test_lane_merge_stream_errors_give_the_model_message(backend):
    g = _two_lane_merge("c")
    a = np.array([1, 0, 3, 0, 0, 0], np.float32)
    msg = _same_error(backend, g, {"A": a, "B": a})
    assert msg.endswith("both lanes hold coordinate 0: lanes must partition the coordinates")
    g = _two_lane_merge("dc")
    msg = _same_error(backend, g, {"A": a, "B": np.zeros((2, 6), np.float32)})
    assert "misaligned lanes: crd_a holds " in msg


@pytest.mark.parametrize("backend", CHEAP, indirect=True)
def test_lane_merge2_stream_errors_give_the_model_message(backend, unchecked_graphs):
    """An inner stream whose stops do not nest under the outer one: a copy closes lane a
    with S2 where the outer fiber ends with S0 (S1 expected), or lane a still holds a crd
    when the outer streams end."""
    g = _misnested_merge2()
    b = np.zeros((3, 3), np.float32)
    b[2, 0] = 1
    t = np.zeros((2, 2, 3), np.float32)
    t[0, 0, 1] = t[1, 0, 2] = 1  # Tk: 1 S1 2 S2 D against Ti: 0 1 S0 D
    msg = _same_error(backend, g, {"T": t, "B": b})
    assert msg.endswith("lane a's inner stream closed its fiber with S2 but the outer "
                        "stream ends it with S0")
    t[0, 1, 0] = 1  # Tk: 1 S0 0 S1 2 S2 D: closes with S1, then holds 2 at the end
    msg = _same_error(backend, g, {"T": t, "B": b})
    assert msg.endswith("crd0_a holds 2 where its coordinates hold D")
