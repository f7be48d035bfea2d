"""The driver: text → parse → normalize → choose an order → layouts → lowering → Graph."""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import pairwise, permutations
from typing import Any

from ir import MAX_DEPTH, Format, Graph, GraphError, Hardware, check_name

from ._assoc import expression_associations
from ._ast import Assignment, accesses
from ._blocks import block_extents, grid_sizes, grid_stats
from ._cost import TensorStats
from ._errors import LoweringError
from ._factor import Factorer
from ._fifo_hazard import deepen_fifos, runnable
from ._layout import index_sizes, layouts, parse_formats, transposes_needed
from ._lower import lower_order
from ._normalize import Normalized, normalize
from ._order import OrderSearch
from ._order_cost import input_stats, order_cost, transpose_tokens
from ._parallel import DEFAULT_LANE_BUFFER, LaneSplit, lane_cut
from ._parse import parse
from ._partition import check_lane_buffer, lane_buffer_for, plan_lanes
from ._position import POSITION_PARTITIONS, plan_positions

__all__ = ["compile_expression", "parse_order"]

#: the default order search enumerates permutations up to this many index variables
MAX_SEARCH = 6
#: at most this many candidate orders are lowered and costed (5! = 120: exhaustive up
#: to five indices for small expressions)
COST_TRIES = 120
#: why an order whose loops cannot be shared (``Factorer.nests``) is not lowered
SPLIT_LOOPS = ("the operands of one of its loops sit at different loop depths, which "
               "the lowering rejects (not lowered)")
#: expression nodes lowered and costed per expression (each costed order lowers the
#: whole expression once): every candidate of a small kernel, one of a fully fused GPT
#: layer; the search costs ``COST_BUDGET // size`` orders (at least 1, at most
#: :data:`COST_TRIES`) in the order of its pre-ranking
COST_BUDGET = 600


def cost_tries(size: int) -> int:
    """How many orders the search lowers and costs for an expression of ``size`` nodes."""
    return max(1, min(COST_TRIES, COST_BUDGET // max(size, 1)))


def compile_expression(expr: str | Assignment,
                       formats: Mapping[str, str | Format] | None = None,
                       shapes: Mapping[str, Sequence[int]] | None = None, *,
                       sizes: Mapping[str, int] | None = None,
                       order: str | Sequence[str] | None = None, reduce: str = "sum",
                       dtype: str = "float32", depth: int | None = 2,
                       transpose: bool = True, name: str | None = None,
                       stats: Mapping[str, Any] | None = None,
                       par: Mapping[str, int] | None = None,
                       partition: str = "round-robin",
                       lane_buffer: int | None = None,
                       block: Mapping[str, int] | None = None,
                       assoc: str = "as-written", hw: Hardware | None = None,
                       buffer: str | tuple[str, ...] | None = None) -> Graph:
    """Compile one tensor index expression into a validated SAMML :class:`ir.Graph`.

    ``formats`` maps tensor names (inputs and the output) to format specs (``"csr"``,
    ``"dc"``, ``"dc:1,0"``…; default dense). ``shapes`` gives tensor shapes, ``sizes``
    index sizes; together they must fix every index. ``order`` is the dataflow (loop)
    order, e.g. ``"i,k,j"``; by default the compiler lowers the candidate orders and
    keeps the cheapest by :func:`compiler.order_cost` (``docs/cost.md``), given the
    inputs' ``stats`` (per tensor: a density, a :class:`TensorStats` or the tensor
    itself; unknown sparse inputs get :data:`DEFAULT_DENSITY`); the candidates and
    their costs are in ``graph.meta["order_search"]`` (:func:`compiler.explain_orders`).
    Discordant operands are transposed in memory (their graph format is permuted)
    unless ``transpose=False``. ``reduce`` is the reduction for implicit (einsum)
    indices. ``block`` ({index: extent}) blocks those indices: the graph iterates the
    block grid and its values are dense blocks (``docs/blocks.md``); ``stats`` and
    ``par`` then speak of the grid. ``assoc`` re-associates a chain of three or more
    products (``left``, ``right``, or ``cost``: the association whose graph
    :func:`order_cost` prices cheapest; docs/fusion.md, "Association"). ``hw`` is the
    machine the orders are priced on (``docs/cost.md``; None: ideal memory), each with
    the on-chip buffers ``buffer`` would give it there (``compiler.buffer_graph``;
    None: none; the graph returned has none: ``buffer_graph`` adds them).
    """
    if assoc != "as-written":
        if not isinstance(expr, str):
            raise TypeError("compile_expression: assoc needs the expression as text")
        texts = expression_associations(expr, assoc)
        kwargs = dict(formats=formats, shapes=shapes, sizes=sizes, order=order,
                      reduce=reduce, dtype=dtype, depth=depth, transpose=transpose,
                      name=name, stats=stats, par=par, partition=partition,
                      lane_buffer=lane_buffer, block=block, hw=hw, buffer=buffer)
        if len(texts) == 1:
            return compile_expression(texts[0], **kwargs)
        graphs = [compile_expression(t, **kwargs) for t in texts]
        costs = [order_cost(g, stats, hw, buffer).total for g in graphs]
        best = graphs[costs.index(min(costs))]
        best.meta["assoc_search"] = [{"expression": t, "cost": c}
                                     for t, c in zip(texts, costs, strict=True)]
        return best
    job = prepare(expr, formats, shapes, sizes=sizes, reduce=reduce, dtype=dtype,
                  depth=depth, transpose=transpose, name=name, block=block)
    norm, fmts, idx_sizes = job.norm, job.fmts, job.idx_sizes
    tensors = {a.tensor for a in accesses(norm.assignment.rhs)}
    unknown = sorted(set(stats or {}) - tensors)
    if unknown:
        raise LoweringError(f"stats given for {unknown}, which the expression does not "
                            f"read; its inputs are {sorted(tensors)}")
    stats = grid_stats(norm, stats or {}, job.blocks, idx_sizes)
    lanes = plan_lanes(norm, par or {}, partition, idx_sizes, fmts, stats or {})
    splits = lanes.splits
    if lane_buffer is not None:  # checked before any work
        check_lane_buffer(lane_buffer)
    with no_gc_pauses():
        known = {}  # measured once (a tensor given as stats), not per candidate
        for a in accesses(norm.assignment.rhs) if order is None or splits else ():
            fmt = fmts.get(a.tensor) or Format.dense(len(a.indices))
            known[a.tensor] = input_stats((stats or {}).get(a.tensor),
                                          tuple(idx_sizes[i] for i in a.indices), fmt,
                                          "the expression", a.tensor)
        best = job.build_given(parse_order(norm, order)) if order is not None else \
            _search(job, known, hw, buffer)
        if not splits:
            return best
        if partition in POSITION_PARTITIONS:  # windows depend on the order's outer levels
            if job.blocks:
                raise LoweringError("partition position adds the lanes' partial values, "
                                    "which the lane reductions do for scalar values only: "
                                    "drop block, or use balanced")
            lanes = plan_positions(norm, par or {}, parse_order(norm, best.meta["order"]),
                                   idx_sizes, fmts, stats or {}, lanes,
                                   contiguous=partition == "position-contiguous")
            splits = lanes.splits
        graph = job.build_lanes(best, splits, partition,
                                lane_buffer_for(best, splits, partition, lane_buffer, known))
        graph.meta["parallel"]["expected_imbalance"] = lanes.imbalance
        if "order_search" in best.meta:
            graph.meta["order_search"] = best.meta["order_search"]
        return graph


def prepare(expr: str | Assignment, formats: Mapping[str, str | Format] | None = None,
            shapes: Mapping[str, Sequence[int]] | None = None, *,
            sizes: Mapping[str, int] | None = None, reduce: str = "sum",
            dtype: str = "float32", depth: int | None = 2, transpose: bool = True,
            name: str | None = None, block: Mapping[str, int] | None = None) -> _Job:
    """Everything of :func:`compile_expression` that does not depend on the order,
    checked once: ``prepare(...).build(parse_order(job.norm, order))`` compiles one
    order (the model compiler costs many orders of one fused expression this way)."""
    assign = parse(expr) if isinstance(expr, str) else expr
    if not isinstance(assign, Assignment):
        raise TypeError(f"expr must be a str or Assignment, got {type(expr).__name__}")
    if dtype not in ("float32", "int32"):
        raise LoweringError(f"dtype {dtype!r} is not supported; expected 'float32' or 'int32'")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int)
                              or not 1 <= depth <= MAX_DEPTH):
        raise LoweringError(f"depth {depth!r} must be an int >= 1 (at most {MAX_DEPTH:,}) "
                            "or None (unbounded)")
    if name is not None:  # a user's name, which ends up in file names: checked up front
        check_name("graph", name, LoweringError)
    norm = normalize(assign, reduce)
    fmts = parse_formats(norm, formats or {})
    idx_sizes = index_sizes(norm, shapes or {}, sizes or {})
    extents = block_extents(norm, block, idx_sizes)
    if extents and dtype != "float32":
        raise LoweringError(f"block values are binary32; dtype {dtype!r} cannot be blocked")
    return _Job(assign, norm, fmts, grid_sizes(idx_sizes, extents), transpose, dtype, depth,
                name or "einsum", extents)


@contextmanager
def no_gc_pauses() -> Iterator[None]:
    """Run without cyclic garbage collection (restored after, if it was on).

    Compiling allocates millions of short-lived objects, all freed by reference
    counting; the collections they trigger rescan the whole heap (torch's, when the
    frontend is loaded) and took a quarter of a fused GPT layer's compile time.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass(frozen=True)
class _Job:
    """Everything but the order: one expression to lower, for any order."""

    assign: Assignment
    norm: Normalized
    fmts: Mapping[str, Format]
    idx_sizes: Mapping[str, int]
    transpose: bool
    dtype: str
    depth: int | None
    name: str
    #: blocked index -> its extent; ``idx_sizes`` are then the block grid's
    blocks: Mapping[str, int] = field(default_factory=dict)

    def sizes(self, internal: Sequence[str]) -> list[int]:
        """The index sizes in the internal order ``internal``."""
        return [self.idx_sizes[v] for v in internal]

    def build_lanes(self, searched: Graph, splits: Mapping[str, Sequence[LaneSplit]],
                    partition: str, lane_buffer: int) -> Graph:
        """The order of ``searched`` (the one-lane graph a search chose: lanes do not
        change which order is cheapest per lane) built with ``splits``' lanes, its
        bypasses pinned as the searched graph's were (:func:`deepen_fifos`)."""
        internal = parse_order(self.norm, searched.meta["order"])
        graph = self.build_given(internal, splits, partition, lane_buffer)
        if any(e.pinned for e in searched.edges):
            graph = deepen_fifos(graph, self.sizes(internal))
        return graph

    def build_given(self, internal: list[str], *args: Any) -> Graph:
        """:meth:`build` for an order given, not searched: with deep epilogue joins
        only if it does not lower without them (else the plain lowering's error)."""
        try:
            return self.build(internal, *args)
        except LoweringError as plain:
            try:
                return self.build(internal, *args, deep=True)
            except LoweringError:
                raise plain from None

    def build(self, internal: list[str],
              splits: Mapping[str, Sequence[LaneSplit]] | None = None,
              partition: str = "round-robin",
              lane_buffer: int = DEFAULT_LANE_BUFFER, deep: bool = False) -> Graph:
        """The graph for one internal order (``LoweringError`` if it cannot lower), with
        parallel lanes where ``splits`` gives them (internal index -> each lane's split);
        ``deep`` admits deep epilogue joins (:func:`lower_order`; the searches try them
        only when no order lowers without them, a given order always)."""
        norm = self.norm
        position = {v: n for n, v in enumerate(internal)}
        text = ",".join(norm.user[v] for v in internal)
        lays = layouts(norm, self.fmts, self.idx_sizes, position, self.transpose, text)
        lowered = lower_order(norm, internal, lays, self.dtype, self.depth, self.name,
                              splits, lane_buffer, self.blocks, deep)
        meta = {
            "kernel": self.name,
            "expression": norm.assignment.source or str(self.assign),
            "normalized": str(norm.assignment),
            "order": [norm.user[v] for v in internal],
            "formats": {t: str(lay.format) for t, lay in lays.items()},
            "transposed": {t: {"requested": str(lay.requested), "bound": str(lay.format)}
                           for t, lay in lays.items() if lay.requested is not None},
            "reductions": lowered.reductions,
            "fusion_table": lowered.table.to_json(),
        }
        if self.blocks:
            meta["block"] = {norm.user[v]: b for v, b in self.blocks.items()}
        if splits:
            meta["parallel"] = {
                "par": {norm.user[v]: len(s) for v, s in splits.items()},
                "partition": partition,
                "lane_buffer": lane_buffer,
                "ranges": {norm.user[v]: [[x.lo, x.hi] for x in s]
                           for v, s in splits.items()},
                "cut": {norm.user[v]: lane_cut(s) for v, s in splits.items()},
                "lane_of": lowered.lane_of,
            }
        try:
            return lowered.builder.build(**meta)
        except GraphError as exc:  # the lowering made an invalid graph: a compiler bug
            raise AssertionError(f"compiler produced an invalid graph: {exc}") from exc


def parse_order(norm: Normalized, order: str | Sequence[str]) -> list[str]:
    """User order (``"i,k,j"``, ``"ikj"`` or a sequence) → internal index order."""
    internal: dict[str, list[str]] = {}  # user name -> its internal names, in order
    for v in norm.indices:
        internal.setdefault(norm.user[v], []).append(v)
    names = list(internal)  # by first appearance (a fused layer has hundreds of indices)
    if isinstance(order, str):
        text = order.replace(" ", "")
        parts = text.split(",") if "," in text or text in internal else list(text)
    else:
        parts = [str(p) for p in order]
    shown = ",".join(parts)
    for p in parts:
        if p not in internal:
            raise LoweringError(f"order {shown!r} names {p!r}, which is not an index of the "
                                f"expression; its indices are {','.join(names)}")
    counts = Counter(parts)
    dup = sorted(p for p, n in counts.items() if n > 1)
    if dup:
        raise LoweringError(f"order {shown!r} lists {', '.join(dup)} more than once")
    missing = [n for n in names if n not in counts]
    if missing:
        raise LoweringError(f"order {shown!r} misses {', '.join(missing)}; it must list "
                            f"every index once: {','.join(names)}")
    return [v for p in parts for v in internal[p]]


def _search(job: _Job, stats: Mapping[str, TensorStats], hw: Hardware | None = None,
            buffer: str | tuple[str, ...] | None = None) -> Graph:
    """The cheapest candidate order by :func:`order_cost`.

    Candidates: every permutation of the indices (up to :data:`MAX_SEARCH` of them,
    else only the preferred order), pre-ranked by (output in its requested layout,
    fewest input transposes, loops that nest, fewest points under factored iteration;
    an order whose loops do not nest is not lowered once another order has); the first
    :func:`cost_tries` that lower are costed (all of them for small kernels), trying at
    most three times as many once one has lowered; an order
    whose transposed sparse inputs alone cost as much as the best so far is pruned
    before lowering. An order that would write the output permuted only wins if none
    writes it as asked.
    The preferred order lists output indices (in the output's storage order when a
    format is given) and then reduced indices, innermost last. Orders that need a deep
    epilogue join (FuseFlow's GCN layer ``i,k3,k2,j``: the accumulated row meets ``W``
    after its accumulator) are searched in a second pass over the orders the first
    rejected, and win only when strictly cheaper, so a graph whose deep orders price
    no lower keeps the order it had.
    """
    search = _search_orders(job, stats, deep=False, hw=hw, buffer=buffer)
    if search.best is None:
        search = _search_orders(job, stats, deep=True, hw=hw, buffer=buffer)
    elif search.errors:
        rejected = {tuple(r["order"].split(",")) for r in search.rows if "invalid" in r}
        search.merge(_search_orders(job, stats, deep=True, hw=hw, buffer=buffer,
                                    only=rejected))
    return search.finish(search.space)


def _search_orders(job: _Job, stats: Mapping[str, TensorStats], deep: bool,
                   hw: Hardware | None = None,
                   buffer: str | tuple[str, ...] | None = None,
                   only: set[tuple[str, ...]] | None = None) -> OrderSearch:
    """One pass of :func:`_search` (deep epilogues admitted or not), over every
    candidate or ``only`` these user-named orders."""
    norm, fmts = job.norm, job.fmts
    target = norm.assignment.target
    out_fmt = fmts.get(target.tensor)
    out_names = [target.indices[m] for m in out_fmt.mode_order] if out_fmt else \
        list(target.indices)
    rest = []
    for v in norm.indices:
        if norm.user[v] not in out_names and norm.user[v] not in rest:
            rest.append(norm.user[v])
    preferred = out_names + rest
    candidates = [list(p) for p in permutations(preferred)] if len(preferred) <= MAX_SEARCH \
        else [preferred]
    if only is not None:
        candidates = [c for c in candidates if tuple(c) in only]
    transposes = transposes_needed(norm, fmts)
    internal_of = {u: [v for v in norm.indices if norm.user[v] == u] for u in preferred}
    factorer = Factorer(norm.assignment.rhs, norm.assignment.target.indices, deep)
    ranked = []
    for n, cand in enumerate(candidates):
        internal = [v for u in cand for v in internal_of[u]]
        ranked.append((transposes({v: k for k, v in enumerate(internal)}),
                       factorer.rank(internal, job.idx_sizes), n, internal))
    ranked.sort(key=lambda r: r[:3])
    search, tries = OrderSearch(), cost_tries(factorer.size)
    resort = _resort_costs(job, stats)
    lowered = 0
    for (out_moved, _), (split, _), n, internal in ranked:
        order = [norm.user[v] for v in internal]
        if search.costed - search.deepened >= tries or \
                (search.best is not None and lowered >= 3 * tries):
            search.skip(order)
            continue
        if split and search.best is not None:  # the lowering would reject it
            search.reject(order, LoweringError(SPLIT_LOOPS), n)
            continue
        pos = {v: k for k, v in enumerate(internal)}
        bound = sum(cost for levels, cost in resort.values()
                    if any(pos[a] > pos[b] for a, b in pairwise(levels)))
        if search.prune(order, bound, out_moved):
            continue
        lowered += 1
        deepened = False
        try:
            graph = job.build(internal, deep=deep)
            if deep:  # beside plain orders no deadlock is risked; alone, FIFOs deepened
                graph, deepened = runnable(graph, job.sizes(internal), only is None)
        except LoweringError as exc:
            search.reject(order, exc, n)
            continue
        search.add(order, graph, order_cost(graph, stats, hw, buffer), out_moved, deepened)
    search.space = f"{len(candidates)} permutation(s) of {len(preferred)} indices"
    return search


def _resort_costs(job: _Job, stats: Mapping[str, TensorStats]
                  ) -> dict[str, tuple[tuple[str, ...], float]]:
    """Every sparse input: its indices in storage order and the cost of re-sorting it
    (:func:`transpose_tokens`), a lower bound on any order that transposes it."""
    out = {}
    for a in accesses(job.norm.assignment.rhs):
        fmt = job.fmts.get(a.tensor) or Format.dense(len(a.indices))
        cost = transpose_tokens(stats[a.tensor], fmt)
        if cost > 0 and a.tensor not in out:
            out[a.tensor] = (tuple(a.indices[m] for m in fmt.mode_order), cost)
    return out
