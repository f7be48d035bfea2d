"""The Python model's timing shell against rules derived by hand from docs/timing.md
("Latency, II and start-up"), not from the model: a source's start-up shifts every token
by exactly that many cycles; on a chain with unbounded FIFOs every node's latency and
every edge's read latency add up along the path; an II throttles a node's firings to one
every II cycles; RAM FIFOs hold depth + 1 tokens; and the FIFO report equals the
occupancy counted cycle by cycle from the trace with numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cosim.backends._backend import PythonBackend
from ir import GraphBuilder, HwError, examples, load_hw
from sim_models.python import simulate

N = 9


def _copy_graph(depth: int | None = None):
    """x = c for a dense vector: root -> scan_dense -> (crd -> level writer,
    ref -> array -> value writer); every path from the root is a chain."""
    g = GraphBuilder("copy", "float32", depth)
    g.tensor("c", (N,), "d")
    g.tensor("x", (N,), "d", role="output")
    g.node("root", "root")
    g.node("scan", "scan_dense", tensor="c", level=0)
    g.node("arr", "array", tensor="c")
    g.node("xi", "level_writer", tensor="x", level=0)
    g.node("xv", "value_writer", tensor="x")
    for s, d in [("root.ref", "scan.ref_in"), ("scan.crd", "xi.crd"), ("scan.ref", "arr.ref"),
                 ("arr.val", "xv.val")]:
        g.edge(s, d)
    return g.build()


#: the nodes before each edge's writer, the writer included (its path from the root)
PATHS = {"root.ref->scan.ref_in": ["root"], "scan.crd->xi.crd": ["root", "scan"],
         "scan.ref->arr.ref": ["root", "scan"], "arr.val->xv.val": ["root", "scan", "arr"]}
C = np.arange(1, N + 1, dtype=np.float32)


def _run(hw_sets, depth=None, graph=None):
    res = simulate(graph or _copy_graph(), {"c": C}, trace=True, depth=depth,
                   hw=load_hw("ideal", hw_sets))
    np.testing.assert_array_equal(res.dense("x"), C)
    return res


@pytest.mark.parametrize("startup", [0, 1, 7])
def test_start_up_of_the_source_shifts_everything(startup):
    base, late = _run([]), _run([f"timing.root.startup={startup}"])
    assert late.cycles == base.cycles + startup
    for name, et in base.trace.edges.items():
        assert late.trace.edges[name].cycles == [c + startup for c in et.cycles], name


@pytest.mark.parametrize("lat", [{"root": 2}, {"scan": 3}, {"scan": 2, "arr": 4},
                                 {"root": 3, "scan": 2, "arr": 2, "xv": 3}])
@pytest.mark.parametrize("fifo", [1, 2])
def test_latencies_add_up_along_a_chain(lat, fifo):
    """With unbounded FIFOs nothing waits for space, so a token's write cycle (its
    writer's firing) moves by the extra latency of every node and FIFO before that writer;
    the run by the latest writer's, plus that writer's own extra latency (end of run)."""
    ops = {"root": "root", "scan": "scan_dense", "arr": "array", "xv": "value_writer"}
    sets = [f"fifo.latency={fifo}"] + [f"timing.{ops[n]}.latency={v}" for n, v in lat.items()]
    base, slow = _run([]), _run(sets)

    def extra(path):  # the delay into the last node of ``path``: latencies and FIFOs before it
        return sum(lat.get(n, 1) - 1 for n in path[:-1]) + (fifo - 1) * (len(path) - 1)

    for name, path in PATHS.items():
        # a token's write is its writer's firing, which waits for the edges into it
        want = [c + extra(path) for c in base.trace.edges[name].cycles]
        assert slow.trace.edges[name].cycles == want, name
    ends = [base.nodes["xi"].done_cycle + extra(["root", "scan", "xi"]),
            base.nodes["xv"].done_cycle + extra(["root", "scan", "arr", "xv"])
            + lat.get("xv", 1) - 1]
    assert slow.cycles == max(ends) + 1


@pytest.mark.parametrize("ii", [2, 3])
def test_ii_throttles_every_firing(ii):
    res = _run([f"timing.scan_dense.ii={ii}"])
    writes = res.trace.edges["scan.crd->xi.crd"].cycles  # N crds, the stop, D
    assert writes == [writes[0] + k * ii for k in range(len(writes))]
    assert res.nodes["scan"].fires == len(writes)


def test_ram_fifos_hold_depth_plus_one():
    """A slow consumer (reduce at II 4) backs the ALU's output FIFO up: at depth 3 it
    holds 3 tokens with shift-register FIFOs and 4 with Vitis's RAM FIFOs."""
    rng = np.random.default_rng(3)
    b = rng.standard_normal((6, 8)).astype(np.float32)
    c = rng.standard_normal(8).astype(np.float32)
    g = examples.spmv(6, 8)
    peaks = {}
    for fifo in ("1", "vitis"):
        hw = load_hw("ideal", [f"fifo.latency={fifo}", "timing.reduce.ii=4"])
        res = simulate(g, {"B": b, "c": c}, depth=3, hw=hw)
        np.testing.assert_allclose(res.dense("x"), b @ c, rtol=1e-5)
        peaks[fifo] = res.max_occupancy["mul.val->red.val_in"]
    assert peaks == {"1": 3, "vitis": 4}


def _occupancy_report(et, cycles, capacity):
    """(peak, full, empty) cycle by cycle: occupancy at the start of cycle c is the tokens
    written before c and not read before c; unread tokens stay to the end."""
    w = np.array(et.cycles, dtype=np.int64)
    r = np.full(len(w), np.iinfo(np.int64).max)
    r[:len(et.read_cycles)] = et.read_cycles
    end = max([cycles, *(w + 1), *(np.array(et.read_cycles, dtype=np.int64) + 1)])
    c = np.arange(end)[:, None]
    occ = ((w[None, :] < c) & (c <= r[None, :])).sum(axis=1)
    full = int((occ == capacity).sum()) if capacity is not None else 0
    return full, int((occ == 0).sum())


@settings(max_examples=30, deadline=None)
@given(kernel=st.sampled_from(["spmv", "spmm_ikj", "elementwise"]), seed=st.integers(0, 999),
       depth=st.sampled_from([1, 2, 3, 4, None]), fifo=st.sampled_from(["1", "2", "vitis"]),
       ii=st.integers(1, 3), lat=st.integers(1, 3))
def test_fifo_report_matches_the_trace(kernel, seed, depth, fifo, ii, lat):
    rng = np.random.default_rng(seed)
    m, n = (int(x) for x in rng.integers(1, 6, size=2))
    a = np.where(rng.random((m, n)) < 0.5, rng.standard_normal((m, n)), 0).astype(np.float32)
    graphs = {"spmv": (examples.spmv(m, n), {"B": a, "c": np.ones(n, np.float32)}),
              "spmm_ikj": (examples.spmm_ikj(m, n, m), {"B": a, "C": a.T.copy()}),
              "elementwise": (examples.elementwise(m, n), {"A": a, "B": a})}
    g, inputs = graphs[kernel]
    hw = load_hw("ideal", [f"fifo.latency={fifo}", f"timing.alu.ii={ii}",
                           f"timing.intersect.latency={lat}", f"timing.union.latency={lat}"])
    try:
        res = simulate(g, inputs, trace=True, depth=depth, hw=hw)
    except Exception as exc:  # depth 1 deadlocks reconvergent graphs (docs/timing.md)
        assert depth == 1 and "deadlock" in str(exc)
        return
    caps = {e.name: (e.depth if fifo != "vitis" or e.depth is None or e.depth <= 2
                     else e.depth + 1) for e in g.with_depth(depth).edges} \
        if depth is not None else {e.name: None for e in g.edges}
    for name, et in res.trace.edges.items():
        got = res.fifos[name]
        assert (got.full_cycles, got.empty_cycles) == _occupancy_report(et, res.cycles,
                                                                          caps[name]), name
        assert got.peak == res.max_occupancy[name]
        assert caps[name] is None or got.peak <= caps[name]


def test_a_backend_refuses_knobs_it_does_not_render():
    class LatencyOnly(PythonBackend):
        name = "latency-only"
        timing_knobs = frozenset({"latency"})

    g = examples.spmv(3, 3)
    inputs = {"B": np.eye(3, dtype=np.float32), "c": np.ones(3, np.float32)}
    LatencyOnly().run(g, inputs, hw=load_hw("ideal", ["timing.alu.latency=2"]))
    with pytest.raises(HwError) as exc:
        LatencyOnly().run(g, inputs, hw=load_hw("ideal", ["timing.alu.ii=2",
                                                          "fifo.latency=2"]))
    assert str(exc.value) == ("backend 'latency-only' does not render the timing knob(s) "
                              "fifo.latency, ii (hardware 'ideal' or the graph's node "
                              "parameters set them); it renders latency")


@pytest.mark.parametrize("depth", [2, 3, None])
@pytest.mark.parametrize("fifo", ["1", "vitis"])
def test_fifo_report_across_history_compaction(depth, fifo):
    """Long streams (over 4096 tokens per edge, so channels drop consumed history) with
    back-pressure: the report still equals the cycle-by-cycle count."""
    rng = np.random.default_rng(5)
    b = rng.standard_normal((2, 5000)).astype(np.float32)
    c = rng.standard_normal(5000).astype(np.float32)
    g = examples.spmv(2, 5000, "dd")
    hw = load_hw("ideal", [f"fifo.latency={fifo}", "timing.reduce.ii=2",
                           "timing.alu.latency=2"])
    g1 = g.with_depth(depth)
    res = simulate(g1, {"B": b, "c": c}, trace=True, depth=depth, hw=hw)
    np.testing.assert_allclose(res.dense("x"), b @ c, rtol=1e-3)
    for e in g1.edges:
        cap = None if depth is None else depth + 1 if fifo == "vitis" and depth > 2 else depth
        got = res.fifos[e.name]
        want = _occupancy_report(res.trace.edges[e.name], res.cycles, cap)
        assert (got.full_cycles, got.empty_cycles) == want, e.name
