"""Helpers shared by the cosim tests: the Python model's reference run, one
backend-parity assertion, one batched SystemC check, one graph-JSON edit."""

from __future__ import annotations

import numpy as np

from cosim import SystemCRun
from ir import compare_traces
from sim_models.python import DeadlockError, SimulationError, simulate


def python_run(graph, inputs, depth=2, hw=None):
    """The Python model's traced run (with its memory requests when ``hw`` has memory),
    or the :class:`SimulationError` a backend must reproduce."""
    try:
        return simulate(graph, inputs, trace=True, depth=depth, hw=hw,
                        mem_trace=hw is not None and hw.memory)
    except SimulationError as exc:
        return exc


def assert_same_result(py, sc, where: str) -> None:
    """Backend result ``sc`` equals the Python model's ``py``: the same error, or every
    token's write and read cycle, cycles, statistics, memory report and outputs."""
    if isinstance(py, Exception) or isinstance(sc, Exception):
        assert type(py) is type(sc) and str(py) == str(sc), f"{where}: {py!r} vs {sc!r}"
        return
    mismatches = compare_traces(py.trace, sc.trace)
    assert not mismatches, f"{where}: " + "; ".join(map(str, mismatches[:3]))
    for name, et in py.trace.edges.items():
        assert sc.trace.edges[name].read_cycles == et.read_cycles, f"{where}: reads of {name}"
    assert sc.cycles == py.cycles, where
    assert sc.nodes == py.nodes, where
    assert sc.max_occupancy == py.max_occupancy, where
    assert (sc.hw, sc.clock_mhz, sc.channel_bytes) == (py.hw, py.clock_mhz,
                                                       py.channel_bytes), where
    assert sc.mem_requests == py.mem_requests, where
    assert set(sc.outputs) == set(py.outputs), where
    for name in py.outputs:
        np.testing.assert_array_equal(sc.dense(name), py.dense(name), err_msg=where)


def check_systemc(systemc, graph, inputs: dict, configs, hws: dict,
                  want: dict[str, np.ndarray] | None = None) -> list:
    """Run ``graph`` on SystemC in every ``(depth, hw name)`` of ``configs`` (one batch):
    each run equals the Python model's, and its outputs are close to ``want``."""
    runs = [SystemCRun(graph, inputs, trace=True, depth=d, hw=hws[h],
                       mem_trace=hws[h] is not None and hws[h].memory) for d, h in configs]
    results = systemc.run_batch(runs)
    for (depth, h), sc in zip(configs, results, strict=True):
        where = f"{graph.name} ({graph.dtype}, depth={depth}, hw={h})"
        assert_same_result(python_run(graph, inputs, depth, hws[h]), sc, where)
        if isinstance(sc, DeadlockError) and depth == 1:
            continue  # a graph's own reconvergent forks can need two slots on an edge
        for name, gold in (want or {}).items():
            np.testing.assert_allclose(sc.dense(name), gold, rtol=1e-5, atol=1e-5,
                                       err_msg=where)
    return results


def rename_node(data: dict, old: str, new: str) -> None:
    """Rename node ``old`` to ``new`` in graph JSON ``data``, edges included (in place)."""
    for n in data["nodes"]:
        if n["id"] == old:
            n["id"] = new
    for e in data["edges"]:
        for end in ("src", "dst"):
            node, port = e[end].rsplit(".", 1)
            if node == old:
                e[end] = f"{new}.{port}"
