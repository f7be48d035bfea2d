"""FIFO sizing: the smallest depth per edge that keeps a run's cycle count within a
tolerance of what unbounded FIFOs achieve (``samfuse fifo-size``, docs/cli.md).

The search runs the graph on a backend (the Python model by default): once with unbounded
FIFOs (the reference cycles, and every edge's peak occupancy); then from depth = peak + 1
on every edge (which reproduces the reference schedule exactly: no writer ever waits) it
shrinks one edge at a time, deepest first, by bisection on that edge's depth with the
others held, keeping a depth only if a simulation of it finishes within the budget; the
result is verified by a final simulation. Cycles need not be monotone in one edge's
depth, so the bisection finds a small depth that keeps the budget, not always the
smallest; every depth it reports is one it simulated.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ir import Graph, Hardware
from sim_models.python import SimResult, SimulationError

__all__ = ["FifoSizing", "size_fifos", "with_edge_depths"]


@dataclass
class FifoSizing:
    """What the search found: the depths, the cycles they give, the reference and the
    budget, each edge's peak occupancy with unbounded FIFOs, and the runs it took."""

    depths: dict[str, int]
    cycles: int
    reference_cycles: int
    budget: int
    peaks: dict[str, int]
    runs: int = 0
    graph: Graph | None = field(default=None, repr=False)

    def rows(self) -> list[str]:
        """One line per edge: name, peak, chosen depth."""
        width = max([len(n) for n in self.depths] + [4])
        lines = [f"{'edge':<{width}}  {'peak':>6}  {'depth':>6}"]
        lines += [f"{n:<{width}}  {self.peaks[n]:>6}  {d:>6}" for n, d in self.depths.items()]
        return lines


def with_edge_depths(graph: Graph, depths: Mapping[str, int | None]) -> Graph:
    """``graph`` with the named edges at the given depths (the others as they are)."""
    doc = graph.to_dict()
    for e in doc["edges"]:
        name = f"{e['src']}->{e['dst']}"
        if name in depths:
            e["depth"] = depths[name]
    return Graph.from_dict(doc)


def size_fifos(graph: Graph, inputs: Mapping[str, Any], hw: Hardware | None,
               tolerance: float = 0.01,
               run: Callable[[Graph, Mapping[str, Any], Hardware | None], SimResult] | None
               = None) -> FifoSizing:
    """Search the depths (module docstring); ``run(graph, inputs, hw)`` simulates a graph
    at its own depths (default: the Python model)."""
    if not (isinstance(tolerance, (int, float)) and 0 <= tolerance < math.inf):
        raise ValueError(f"tolerance {tolerance!r} must be a number >= 0 (0.01 = 1 %)")
    if run is None:
        from sim_models.python import simulate

        def run(g, ins, machine):
            return simulate(g, ins, hw=machine)

    ref = run(graph.with_depth(None), inputs, hw)
    assert ref.cycles is not None
    budget = math.floor(ref.cycles * (1 + tolerance))
    peaks = {e.name: ref.max_occupancy[e.name] for e in graph.edges}
    # peak + 1: the peak counts tokens at the end of a cycle, while a slot freed by a read
    # is seen by the writer a cycle later (one read per cycle), so peak + 1 never fills
    depths = {name: p + 1 for name, p in peaks.items()}
    runs = 1

    def fits(trial: dict[str, int]) -> bool:
        nonlocal runs
        runs += 1
        try:
            res = run(with_edge_depths(graph, trial), inputs, hw)
        except SimulationError:  # too shallow: a deadlock
            return False
        return res.cycles is not None and res.cycles <= budget

    if not fits(depths):  # a FIFO read latency that grows with depth (fifo.latency=vitis)
        raise ValueError(f"graph {graph.name!r}: at every edge's peak occupancy the run is "
                         f"slower than {budget} cycles (unbounded FIFOs: {ref.cycles}), as "
                         "deeper FIFOs read later under this hardware's fifo.latency; give "
                         "a larger --tolerance or fifo.latency=1 or 2")
    for name in sorted(depths, key=lambda n: (-depths[n], n)):
        lo, hi = 1, depths[name]  # the current depths fit
        while lo < hi:
            mid = (lo + hi) // 2
            if fits({**depths, name: mid}):
                hi = mid
            else:
                lo = mid + 1
        depths[name] = hi
    sized = with_edge_depths(graph, depths)
    final = run(sized, inputs, hw)
    runs += 1
    assert final.cycles is not None and final.cycles <= budget, "sizing lost its budget"
    return FifoSizing(depths, final.cycles, ref.cycles, budget, peaks, runs, sized)
