"""Order costs: the objective of the compiler's order search.

Takes a compiled graph and its inputs' statistics, prices it with the FLOPs/bytes
heuristic (:mod:`compiler._cost`) on the machine it will run on, and returns the cycles
the order costs (:class:`OrderCost`), including the re-sorting of inputs the order needs
transposed (docs/cost.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ir import Format, Graph, Hardware

from ._cost import Estimate, TensorStats, _grid, as_stats, estimate, grid_shape
from ._cost_memory import memory_cycles

__all__ = ["OrderCost", "order_cost", "transpose_tokens", "cycle_estimate", "input_stats",
           "DEFAULT_DENSITY", "REPEAT_LOOP"]

#: density assumed for an input stored with a compressed level when no statistics are given
DEFAULT_DENSITY = 0.1


def input_stats(given: TensorStats | float | Any | None, shape: tuple[int, ...],
                fmt: str | Format, where: str, name: str) -> TensorStats:
    """:func:`as_stats` of ``given``, or the default for a tensor stored in ``fmt``:
    density 1 if every level is dense, else :data:`DEFAULT_DENSITY`."""
    if given is None:
        f = Format.parse(fmt, len(shape))
        given = 1.0 if all(f.is_dense(lv) for lv in range(f.ndim)) else DEFAULT_DENSITY
    return as_stats(given, shape, fmt, where, name)


def transpose_tokens(stats: TensorStats, fmt: str | Format) -> float:
    """Cost of a permuted copy of a tensor stored in ``fmt``, in stream tokens.

    A dense tensor is addressed, not scanned: its transpose is a different address
    order and costs nothing. A tensor with a compressed level must have its ``n``
    stored entries re-sorted: read once, ``⌈log₂ n⌉`` merge passes, written once, one
    entry per cycle each: ``n · (⌈log₂ n⌉ + 2)``.
    """
    f = Format.parse(fmt, len(stats.shape))
    if all(f.is_dense(lv) for lv in range(f.ndim)):
        return 0.0
    n = math.prod(size * dens for size, dens in stats.levels(f))
    return n * (math.ceil(math.log2(n)) + 2) if n > 1 else 2.0 * n


#: cycles a token takes around a repeater's reconvergent loop (repsig → repeat → the join
#: with the stream the repsig came from): with depth-``d`` FIFOs a repeated stream moves
#: one token per ``max(1, REPEAT_LOOP / d)`` cycles (measured 3.0, 1.5, 1.05 at d = 2, 4, 8)
REPEAT_LOOP = 6.0


def cycle_estimate(graph: Graph, est: Estimate, hw: Hardware | None = None) -> float:
    """Expected cycles of a pipelined graph: its busiest node (:attr:`Estimate.busy`:
    the largest expected token count on any of its streams; an accumulator's input
    plus its drained output, since it accepts nothing while draining), a
    ``repeat``/``broadcast`` node's count multiplied by its reconvergent-loop slowdown
    (:data:`REPEAT_LOOP`). On a ``hw`` with memory (and ``est`` priced on it), the
    memory bounds of :func:`compiler._cost_memory.memory_cycles` join in."""
    node_busy: dict[str, float] = {}
    for nid, busy in est.busy.items():
        if graph.nodes[nid].op in ("repeat", "broadcast"):
            depths = [e.depth for es in graph.out_edges[nid].values() for e in es]
            if depths and None not in depths:
                busy *= max(1.0, REPEAT_LOOP / max(1, min(depths)))
        node_busy[nid] = busy
    if hw is None or not hw.memory or not est.port_costs:
        return max(node_busy.values(), default=0.0)
    return memory_cycles(graph, node_busy, est.ports, est.port_costs, hw)


@dataclass(frozen=True)
class OrderCost:
    """What one dataflow order costs, in cycles: the graph's expected cycles
    (:func:`cycle_estimate`) plus the re-sorting of the sparse inputs the order needs
    transposed (:func:`transpose_tokens`: one entry per cycle per pass). ``tokens``
    (all expected data tokens) is reported alongside."""

    cycles: float
    tokens: float
    transposes: dict[str, float]

    @property
    def total(self) -> float:
        return self.cycles + sum(self.transposes.values())


def order_cost(graph: Graph, stats: Mapping[str, TensorStats | float | Any] | None = None,
               hw: Hardware | None = None, buffer: str | tuple[str, ...] | None = None
               ) -> OrderCost:
    """The :class:`OrderCost` of a compiled graph. Inputs without statistics are dense
    (density 1) when the user stored them dense and :data:`DEFAULT_DENSITY` otherwise;
    a transposed input is priced in the format the user asked for
    (``graph.meta["transposed"]``). ``hw``: the machine the cycles are priced on (its
    memory and datapath; None: ideal memory, unbounded block datapath). ``buffer``: the
    on-chip buffer choice the graph will run with (``compiler.buffer_graph``: ``auto``,
    ``none`` or names), so an order is priced with the buffers it would get."""
    stats = stats or {}
    moved = graph.meta.get("transposed", {})
    full: dict[str, TensorStats] = {}
    for name, spec in graph.tensors.items():
        if spec.role != "input":
            continue
        asked = moved.get(name, {}).get("requested", spec.format)
        full[name] = input_stats(_grid(stats.get(name), spec), grid_shape(spec), asked,
                                 f"graph {graph.name!r}", name)
    if buffer is not None and buffer != "none":
        from ._buffer import buffer_graph  # it prices with this module's statistics

        graph = buffer_graph(graph, hw, buffer, full)
    est = estimate(graph, full, hw)
    return OrderCost(cycle_estimate(graph, est, hw), sum(est.tokens.values()),
                     {t: transpose_tokens(full[t], v["requested"]) for t, v in moved.items()
                      if t in full})
