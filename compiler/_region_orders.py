"""The dataflow orders the compiler accepts for one fusion region, priced by the heuristic.

An autoscheduler must never propose an order the lowering rejects (a *known* constraint)
and wants the FLOPs/bytes heuristic's opinion of every order it may propose. Both come
from the compiler's own order search: the region is compiled once, and the orders it
lowered and costed (``graph.meta["order_search"]``) are the region's choices, cheapest
first. Nothing is simulated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ir import Hardware, Program, Region

if TYPE_CHECKING:
    from ._buffer import BufferChoice

from ._blocks import tensor_blocks
from ._fusion import fuse_region
from ._model import _compile_kernel, program_stats

__all__ = ["RegionOrders", "region_orders"]


@dataclass(frozen=True)
class RegionOrders:
    """A region's fused kernels (their targets), and — when it has exactly one — every
    order the compiler lowered for it with the heuristic's cost (cycles), cheapest first.
    ``cost`` is the region's cost under the compiler's own choice of orders. A region
    with several kernels has no ``orders``: one chain over names renamed apart in each
    kernel would not mean one thing, so the compiler keeps choosing for it."""

    statements: tuple[str, ...]
    kernels: tuple[str, ...]
    orders: tuple[tuple[str, ...], ...]
    costs: tuple[float, ...]
    cost: float
    #: the order the compiler's search chose (one kernel), else None
    chosen: tuple[str, ...] | None = None

    def cost_of(self, order: Sequence[str] | None) -> float:
        """The heuristic's cost of the region under ``order`` (None: the compiler's)."""
        return self.cost if order is None else self.costs[self.orders.index(tuple(order))]


def region_orders(program: Program, statements: Sequence[str], *,
                  formats: Mapping[str, str] | None = None,
                  stats: Mapping[str, Any] | None = None,
                  depth: int | None = 2,
                  block: Mapping[str, int] | None = None,
                  hw: Hardware | None = None,
                  buffer: BufferChoice | None = None) -> RegionOrders:
    """Compile the region of ``statements`` (raises :class:`CompileError` if it does not
    lower) and list the orders its search lowered and costed, given ``stats`` (as for
    :func:`compile_model`: per tensor a density, a ``TensorStats`` or the tensor);
    ``block`` seeds block sparsity as a schedule's ``block`` does; ``hw`` is the machine
    the orders are priced on (None: ideal memory), each with the on-chip buffers
    ``buffer`` would give it there (``compiler.buffer_graph``; None: none)."""
    fmts = {n: (formats or {}).get(n, t.format) for n, t in program.tensors.items()}
    name = "+".join(statements)
    region = Region(name if len(name) <= 120 else f"{statements[0]}+{len(statements) - 1}",
                    list(statements))
    blocks = tensor_blocks(program, block or {})
    known = program_stats(program, fmts, stats, blocks)
    kernels = [_compile_kernel(program, fmts, region, f, depth, known, stats or {}, blocks,
                               hw, buffer) for f in fuse_region(program, list(statements))]
    searches = [k.graph.meta["order_search"] for k in kernels]
    chosen = [next(c["cost"] for c in s["candidates"] if c["order"] == s["chosen"]
                   and "cost" in c) for s in searches]
    orders: list[tuple[tuple[str, ...], float]] = []
    if len(kernels) == 1:
        costed = [c for c in searches[0]["candidates"] if "cost" in c]
        orders = sorted(((tuple(c["order"].split(",")), c["cost"]) for c in costed),
                        key=lambda oc: oc[1])
    return RegionOrders(tuple(statements), tuple(k.target for k in kernels),
                        tuple(o for o, _ in orders), tuple(c for _, c in orders),
                        sum(chosen),
                        tuple(searches[0]["chosen"].split(",")) if orders else None)
