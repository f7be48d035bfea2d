"""``samfuse model --json``: a model run as one JSON object, measured beside predicted.

Per region and in total: the simulated cycles, the DRAM bytes the backend moved, and the
work the simulator counted (``flops``: values the reducers and ALUs consumed;
``mem_accesses``: words the scanners, arrays and writers read and wrote;
``fuseflow_mem_accesses``: the same without the compressed scanners' reads, as FuseFlow's
artifact sums Comal's counters; ``ir._work``),
as FuseFlow's Figure 14 counts them. Each region also carries the cost heuristic's
prediction (``compiler.estimate`` and ``compiler.cycle_estimate`` on its kernels, given
the tensors they actually read, at the FIFO depths the run used, priced on the run's
hardware: DRAM lines and their round trips, docs/cost.md), the numbers FuseFlow's
Table 3 checks. Totals are sums over regions, as the run's table adds them.
"""

from __future__ import annotations

from typing import Any

from compiler import CompiledModel, cycle_estimate, estimate
from ir import run_depth

from ._model_run import ModelRun

__all__ = ["model_json", "MEASURED_FIELDS"]

#: the measured fields of the run and of every region
MEASURED_FIELDS = ("cycles", "dram_read_bytes", "dram_write_bytes", "flops", "mem_accesses",
                   "fuseflow_mem_accesses")


def _as_stats(tree: Any) -> Any:
    """A tensor as the heuristic takes it: a block-valued tree as its dense array (the
    heuristic finds the block grid itself), any other as it is."""
    return tree.to_dense() if getattr(tree.vals, "ndim", 1) > 1 else tree


def model_json(compiled: CompiledModel, run: ModelRun,
               depth: int | None | str = "graph") -> dict[str, Any]:
    """The run as one JSON-able object; ``depth`` is the run's own FIFO depth (as given
    to ``run_model``), which the cycle estimate prices like the run did."""
    used = run_depth(depth, run.hw)
    regions = []
    for reg, rr in zip(compiled.regions, run.regions, strict=True):
        row: dict[str, Any] = {"name": reg.name, "cycles": rr.cycles,
                               "dram_read_bytes": rr.dram_read_bytes,
                               "dram_write_bytes": rr.dram_write_bytes,
                               "flops": 0, "mem_accesses": 0, "fuseflow_mem_accesses": 0,
                               "est_cycles": 0.0, "est_dram_bytes": 0.0, "est_flops": 0.0}
        for k in reg.kernels:
            work = rr.results[k.target].work(k.graph)
            row["flops"] += work.flops
            row["mem_accesses"] += work.mem_accesses
            row["fuseflow_mem_accesses"] += work.fuseflow_mem_accesses
            graph = k.graph if used == "graph" else k.graph.with_depth(used)
            est = estimate(graph, {t: _as_stats(run.memory[k.source(t)]) for t in k.inputs},
                           hw=run.hw)
            row["est_cycles"] += cycle_estimate(graph, est, run.hw)
            row["est_dram_bytes"] += est.dram_bytes
            row["est_flops"] += est.flops
        regions.append(row)
    totals = {f: sum(r[f] for r in regions) for f in MEASURED_FIELDS}
    return {"program": run.program, "schedule": run.schedule, "backend": run.backend,
            "hw": run.hw.name, "depth": "graph" if used == "graph" else
            "inf" if used is None else used, **totals, "regions": regions}
