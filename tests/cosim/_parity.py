"""Helpers shared by the cosim tests: the Python model's reference run and the
backend-parity assertion (from the parity suites, tests/parity/_backends.py), one batched
SystemC check, one graph-JSON edit."""

from __future__ import annotations

import numpy as np

from cosim import SystemCRun
from sim_models.python import DeadlockError
from tests.parity._backends import assert_same_result, python_run

__all__ = ["assert_same_result", "python_run", "check_systemc", "rename_node"]


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
