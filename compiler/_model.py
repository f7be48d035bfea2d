"""Compile a whole :class:`ir.Program` under an :class:`ir.Schedule`.

Per region: fuse (``_fusion``), build the partial order graph (``_order``), then try the
valid dataflow orders in sort order until the lowering accepts one (it has limits of its
own, see ``docs/compiler.md``). If none is accepted and transposes are allowed, orders
that keep only the user's chain are tried next, fewest permuted tensors first. Regions
connect through tensors materialised in memory in their declared (or scheduled) format.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain, islice, permutations
from typing import TYPE_CHECKING, Any

from ir import (
    Format,
    Graph,
    Hardware,
    Program,
    ProgramError,
    Region,
    Schedule,
    Statement,
    TensorDecl,
    block_grid,
)

from ._assoc import associate
from ._ast import Access, Assignment, accesses
from ._blocks import grid_given, grid_stats, index_blocks, tensor_blocks
from ._compile import cost_tries, no_gc_pauses, parse_order, prepare
from ._cost import TensorStats, as_stats
from ._errors import CompileError, LoweringError
from ._factor import Factorer
from ._fifo_hazard import runnable
from ._fusion import FusedExpression, _map_children, format_assignment, fuse_region
from ._order import OrderError, OrderGraph, OrderSearch, order_graph
from ._order_cost import input_stats, order_cost, transpose_tokens
from ._parse import parse
from ._partition import lane_buffer_for, plan_lanes
from ._position import POSITION_PARTITIONS, model_positions

if TYPE_CHECKING:
    from ._buffer import BufferChoice

__all__ = ["CompiledModel", "CompiledRegion", "Kernel", "compile_model", "einsum_program",
           "MAX_TRIES"]

#: at most this many orders are handed to the lowering per fused expression
MAX_TRIES = 400
#: orders beyond the partial order graph's are enumerated up to this many indices
MAX_RELAXED = 7
#: expression nodes visited to rank orders by their factored-iteration cost (each order
#: costs one visit per node): ~40 orders of a fused layer, only the guesses of a fully
#: fused GPT layer; the other valid orders follow in sort order
RANK_BUDGET = 12_000


@dataclass
class Kernel:
    """One fused expression compiled to one graph (one exported tensor)."""

    target: str
    text: str
    order: list[str]
    graph: Graph
    order_graph: OrderGraph
    transposed: dict[str, dict[str, str]]  # tensor -> {"requested", "bound"}
    inlined: tuple[str, ...]
    tried: list[tuple[list[str], str]]  # rejected orders and the lowering's reason
    compile_seconds: float
    #: graph input -> the tensor in memory it is a second view of (``_dense_views``)
    views: dict[str, str] = field(default_factory=dict)

    @property
    def inputs(self) -> list[str]:
        """The graph's input tensors (bind each to memory's :meth:`source`)."""
        return [n for n, t in self.graph.tensors.items() if t.role == "input"]

    def source(self, name: str) -> str:
        """The tensor in memory a graph input reads: itself, or the one it views."""
        return self.views.get(name, name)

    @property
    def costed(self) -> int:
        """Candidate orders lowered and costed (``graph.meta["order_search"]``)."""
        rows = self.graph.meta.get("order_search", {}).get("candidates", [])
        return sum("cost" in r for r in rows)

    @property
    def outputs(self) -> list[str]:
        return [n for n, t in self.graph.tensors.items() if t.role == "output"]


@dataclass
class CompiledRegion:
    """A schedule region: its kernels run one after the other, in program order."""

    name: str
    statements: list[str]
    kernels: list[Kernel]

    @property
    def inputs(self) -> list[str]:
        """Tensors the region reads from memory (inputs, weights, earlier results; not
        its materialised intermediates, which stay on chip)."""
        return list(dict.fromkeys(k.source(t) for k in self.kernels for t in k.inputs
                                  if not k.graph.tensors[t].onchip))

    @property
    def outputs(self) -> list[str]:
        return [k.target for k in self.kernels]

    @property
    def compile_seconds(self) -> float:
        return sum(k.compile_seconds for k in self.kernels)


@dataclass
class CompiledModel:
    """Every region of a program compiled, in execution order."""

    program: Program
    schedule: Schedule
    regions: list[CompiledRegion]
    depth: int | None
    formats: dict[str, str] = field(default_factory=dict)  # memory format per tensor

    @property
    def compile_seconds(self) -> float:
        return sum(r.compile_seconds for r in self.regions)

    def __str__(self) -> str:
        lines = [f"model {self.program.name}, schedule {self.schedule.name}: "
                 f"{len(self.regions)} region(s), compiled in "
                 f"{self.compile_seconds * 1e3:.1f} ms"]
        for reg in self.regions:
            writes = [f"{k.target} (on chip)" if k.graph.tensors[k.target].onchip
                      else k.target for k in reg.kernels]
            lines.append(f"region {reg.name} [{', '.join(reg.statements)}]: reads "
                         f"{', '.join(reg.inputs)} -> writes {', '.join(writes)}")
            for k in reg.kernels:
                moved = ", ".join(f"{t} {v['requested']}->{v['bound']}"
                                  for t, v in k.transposed.items())
                lines.append(f"  {k.text}")
                lines.append(f"    order {','.join(k.order)}"
                             + (f"; transposed {moved}" if moved else "")
                             + f"; {len(k.graph.nodes)} nodes; "
                             f"{k.compile_seconds * 1e3:.1f} ms, "
                             f"{k.costed} order(s) costed, {len(k.tried)} rejected")
        return "\n".join(lines)


def compile_model(program: Program, schedule: Schedule | None = None, *,
                  depth: int | None = 2, stats: Mapping[str, Any] | None = None,
                  hw: Hardware | None = None, buffer: BufferChoice | None = None
                  ) -> CompiledModel:
    """Compile ``program`` region by region (default schedule: unfused).

    Each kernel's order is the cheapest candidate by :func:`compiler.order_cost`, given
    ``stats`` (per tensor: a density, a :class:`TensorStats` or the tensor itself, e.g.
    the bound inputs and weights; tensors without stats: dense if stored dense, else
    :data:`compiler.DEFAULT_DENSITY`), priced on ``hw`` (None: ideal memory) with the
    on-chip buffers each candidate would get (the region's ``buffer``, else the
    schedule's, else ``buffer``; :func:`compiler.buffer_model` adds them after)."""
    schedule = schedule if schedule is not None else Schedule.unfused(program)
    schedule.validate(program)
    if schedule.reassociates:  # before fusion: the regions fuse the rewritten chains
        def price(prog: Program, sched: Schedule, names: Sequence[str]) -> float:
            return _price(prog, sched, names, depth, stats, hw)

        with no_gc_pauses():
            program, schedule = associate(program, schedule, price)
    formats = {n: schedule.formats.get(n, t.format) for n, t in program.tensors.items()}
    blocks = tensor_blocks(program, schedule.block)
    known = program_stats(program, formats, stats, blocks)
    regions = []
    with no_gc_pauses():
        for reg in schedule.execution_order(program):
            regions.append(_compile_region(program, schedule, reg, formats, depth, known,
                                           stats or {}, blocks, hw, buffer))
    return CompiledModel(program, schedule, regions, depth, formats)


def _compile_region(program: Program, schedule: Schedule, reg: Region,
                    formats: dict[str, str], depth: int | None,
                    known: Mapping[str, TensorStats], data: Mapping[str, Any],
                    blocks: Mapping[str, tuple[int, ...]], hw: Hardware | None = None,
                    buffer: BufferChoice | None = None) -> CompiledRegion:
    fused = fuse_region(program, reg.statements, reg.materialise)
    reg = schedule.lanes_of(reg, (n for f in fused for n in f.assignment.target.indices))
    _check_order_names(reg, fused)
    _check_par_names(reg, fused)
    choice = reg.buffer or schedule.buffer or buffer
    kernels = [_compile_kernel(program, formats, reg, f, depth, known, data, blocks, hw,
                               choice) for f in fused]
    if reg.materialise:
        kernels = _materialised(reg, kernels, formats, program)
    return CompiledRegion(reg.name, list(reg.statements), kernels)


def _materialised(reg: Region, kernels: list[Kernel], formats: Mapping[str, str],
                  program: Program) -> list[Kernel]:
    """The region's kernels with its materialised tensors on chip (docs/fusion.md,
    "Materialised intermediates"): the producer's output and the consumers' inputs (and
    their second views) marked ``onchip``. The tensor must be stored dense: an on-chip
    buffer is addressed, so a reader viewing it in another mode order costs nothing."""
    for t in reg.materialise:
        fmt = Format.parse(formats[t], len(program.tensors[t].shape))
        if not all(fmt.is_dense(k) for k in range(fmt.ndim)):
            raise CompileError(f"region {reg.name!r}: materialise {t!r}: its format "
                               f"{formats[t]!r} is not dense; an on-chip intermediate is "
                               "stored dense (give it a dense format in formats:)")
    out = []
    for k in kernels:
        names = {n for n in k.graph.tensors if k.source(n) in reg.materialise}
        out.append(replace(k, graph=k.graph.with_onchip(names)) if names else k)
    return out


def _price(program: Program, schedule: Schedule, names: Sequence[str],
           depth: int | None, stats: Mapping[str, Any] | None,
           hw: Hardware | None = None) -> float:
    """What ``assoc: cost`` minimises: the expected cycles (:func:`order_cost`, the order
    search's objective) of the named regions' kernels, which run one after another."""
    formats = {n: schedule.formats.get(n, t.format) for n, t in program.tensors.items()}
    blocks = tensor_blocks(program, schedule.block)
    known = program_stats(program, formats, stats, blocks)
    total = 0.0
    for reg in schedule.regions:
        if reg.name in names:
            try:
                compiled = _compile_region(program, schedule, reg, formats, depth, known,
                                           stats or {}, blocks, hw)
            except CompileError:  # an association the lowering rejects is never chosen
                return math.inf
            total += sum(order_cost(k.graph, known, hw).total for k in compiled.kernels)
    return total


def program_stats(program: Program, formats: Mapping[str, str],
                  stats: Mapping[str, Any] | None, blocks: Mapping[str, tuple[int, ...]]
                  ) -> dict[str, Any]:
    """The statistics of the program's tensors as :class:`TensorStats`; a blocked
    tensor keeps its data, from which each kernel measures its block grid."""
    return {n: v if n in blocks else as_stats(v, program.tensors[n].shape, formats[n],
                                              f"program {program.name!r}", n)
            for n, v in (stats or {}).items() if n in program.tensors}


def _check_order_names(reg: Region, fused: list[FusedExpression]) -> None:
    if not reg.order:
        return
    known = {n for f in fused for n in f.index_names()}
    unknown = [n for n in reg.order if n not in known]
    if unknown:
        texts = "; ".join(f.text for f in fused)
        raise OrderError(f"region {reg.name!r}: order {','.join(reg.order)!r} names "
                         f"{', '.join(map(repr, unknown))}, which is not an index of its "
                         f"fused expression(s): {texts}")


def _check_par_names(reg: Region, fused: list[FusedExpression]) -> None:
    """Every parallel index is an output index of one of the region's kernels."""
    outs = {n for f in fused for n in f.assignment.target.indices}
    unknown = [n for n in reg.par if n not in outs]
    if unknown:
        texts = "; ".join(f.text for f in fused)
        raise OrderError(f"region {reg.name!r}: par names {', '.join(map(repr, unknown))}, "
                         f"which is not an output index of its fused expression(s): {texts}")


def _compile_kernel(program: Program, formats: dict[str, str], reg: Region,
                    fused: FusedExpression, depth: int | None,
                    stats: Mapping[str, TensorStats],
                    data: Mapping[str, Any] | None = None,
                    blocks: Mapping[str, tuple[int, ...]] | None = None,
                    hw: Hardware | None = None, buffer: BufferChoice | None = None
                    ) -> Kernel:
    """The cheapest of the first candidate orders that lower (as many as the search
    budget affords for the expression's size: :func:`compiler._compile.cost_tries`),
    each priced with the on-chip buffers ``buffer`` gives it on ``hw``."""
    start = time.perf_counter()
    names = fused.index_names()
    user = [n for n in reg.order or () if n in names]
    reads = fused.reads  # walks the expression: a fused layer's is large
    graph_of = order_graph(fused.assignment, {t: formats[t] for t in reads}, user,
                           transpose=reg.transpose)
    tensors = [fused.target, *reads]
    fmts = {t: formats[t] for t in tensors}
    shapes = {t: program.tensors[t].shape for t in tensors}
    blocks = blocks or {}
    # blocked tensors: the graph iterates their grids, and so does the heuristic
    grid = {t: block_grid(shapes[t], blocks[t]) if t in blocks else shapes[t]
            for t in tensors}
    known = {t: input_stats(grid_given(stats.get(t), shapes[t], blocks[t]) if t in blocks
                            else stats.get(t), grid[t], fmts[t], f"region {reg.name!r}", t)
             for t in reads}
    resort = {t: transpose_tokens(known[t], fmts[t]) for t in reads}
    dtype = program.tensors[fused.target].dtype
    name = f"{program.name}.{reg.name}.{fused.target}"
    tried: list[tuple[list[str], str]] = []
    sizes = {v: grid[a.tensor][m] for a in accesses(fused.assignment.rhs)
             for m, v in enumerate(a.indices)}
    block = index_blocks(fused.assignment, blocks)
    job = prepare(fused.assignment, fmts, shapes, transpose=reg.transpose, depth=depth,
                  dtype=dtype, name=name, block=block)

    def search_orders(deep: bool, only: set[tuple[str, ...]] | None = None) -> OrderSearch:
        """One pass over the candidates (or ``only`` these): deep epilogue joins only in
        the second, over every candidate when no order lowers without them, else over
        the orders the first rejected (:func:`compiler._compile._search`)."""
        factorer = Factorer(fused.assignment.rhs, fused.assignment.target.indices, deep)
        budget = cost_tries(factorer.size)
        failed = tried if only is None else []  # the first pass's rejections are kept
        failed.clear()
        search = OrderSearch()
        for order in _candidates(graph_of, fused.assignment, sizes, user, reg.transpose,
                                 factorer):
            if only is not None and tuple(order) not in only:
                continue
            if search.costed - search.deepened >= budget or \
                    len(failed) + search.deepened >= MAX_TRIES:
                search.skip()
                break
            if search.prune(order, sum(resort[t] for t in graph_of.transposes(order))):
                continue
            deepened = False
            try:
                internal = parse_order(job.norm, order)
                graph = job.build(internal, deep=deep)
                if deep:  # beside plain orders no deadlock is risked; alone, FIFOs deepened
                    graph, deepened = runnable(graph, job.sizes(internal), only is None)
            except LoweringError as exc:
                failed.append((order, exc.message))
                search.reject(order, exc)
                continue
            search.add(order, graph, order_cost(graph, known, hw, buffer), deepened=deepened)
        return search

    search = search_orders(deep=False)
    if search.best is None:
        search = search_orders(deep=True)
    elif search.errors:
        rejected = {tuple(r["order"].split(",")) for r in search.rows if "invalid" in r}
        search.merge(search_orders(deep=True, only=rejected))
    if search.best is not None:
        graph = search.finish(f"region {reg.name}: candidates of the partial order graph"
                              + ("" if search.skipped else " (all)"))
        par = {n: k for n, k in reg.par.items() if n in fused.assignment.target.indices}
        given = grid_stats(job.norm, data or {}, job.blocks, job.idx_sizes)
        lanes = plan_lanes(job.norm, par, reg.partition, job.idx_sizes, job.fmts, given,
                           measured_only=True)
        if lanes.splits and reg.partition in POSITION_PARTITIONS:
            lanes = model_positions(program, formats, job,
                                    parse_order(job.norm, graph.meta["order"]), par,
                                    reg.partition, given, lanes)
        if lanes.splits:  # lanes do not change which order is cheapest per lane
            searched = graph.meta.get("order_search")
            graph = job.build_lanes(graph, lanes.splits, reg.partition,
                                    lane_buffer_for(graph, lanes.splits, reg.partition,
                                                    reg.lane_buffer, known))
            graph.meta["order_search"] = searched
            graph.meta["parallel"]["expected_imbalance"] = lanes.imbalance
            if lanes.estimated:
                graph.meta["parallel"]["estimated"] = list(lanes.estimated)
            if lanes.fallback:
                graph.meta["parallel"]["fallback"] = lanes.fallback
        graph.meta["region"] = reg.name
        graph.meta["inlined"] = list(fused.inlined)
        return Kernel(fused.target, fused.text, list(graph.meta["order"]), graph, graph_of,
                      dict(graph.meta["transposed"]), fused.inlined, tried,
                      time.perf_counter() - start)
    views = _dense_views(program, formats, fused, blocks)
    if views is not None:  # a dense tensor read in two orders: a second name for it
        prog, fmts, aliased, names = views
        kernel = _compile_kernel(prog, fmts, reg, aliased, depth, stats, data, blocks, hw,
                                 buffer)
        kernel.views = names
        kernel.graph.meta["views"] = dict(names)
        return kernel
    shown = "\n".join(f"  {','.join(o)}: {why.splitlines()[0]}" for o, why in tried[:5])
    more = f"\n  ... and {len(tried) - 5} more" if len(tried) > 5 else ""
    if len(tried) >= MAX_TRIES:
        more += f" (stopped at the cap of {MAX_TRIES} orders)"
    raise LoweringError(f"region {reg.name!r}: no dataflow order of {fused.text} can be "
                        f"lowered ({len(tried)} tried):\n{shown}{more}")


def _dense_views(program: Program, formats: dict[str, str], fused: FusedExpression,
                 blocks: Mapping[str, tuple[int, ...]] | None
                 ) -> tuple[Program, dict[str, str], FusedExpression, dict[str, str]] | None:
    """When no order lowers: each dense tensor the expression reads with two or more
    index patterns (GraphSAGE's X·Ws beside (Â·X)·Wn re-associated), its second and
    further patterns read under names of their own (``x__v1``), which the kernel binds
    to the same tensor: a dense tensor is addressed, so a view in another storage order
    costs nothing (docs/fusion.md, "Association"). None if there is no such tensor."""
    patterns: dict[str, list[tuple[str, ...]]] = {}
    for a in accesses(fused.assignment.rhs):
        fmt = Format.parse(formats[a.tensor], len(a.indices))
        if all(fmt.is_dense(lv) for lv in range(fmt.ndim)) and a.tensor not in (blocks or {}):
            seen = patterns.setdefault(a.tensor, [])
            if a.indices not in seen:
                seen.append(a.indices)
    alias: dict[tuple[str, tuple[str, ...]], str] = {}
    tensors = dict(program.tensors)
    for t, seen in patterns.items():
        for n, indices in enumerate(seen[1:], 1):
            name = f"{t}__v{n}"
            while name in tensors:
                name += "_"
            alias[(t, indices)] = name
            tensors[name] = replace(program.tensors[t], name=name, role="input")
    if not alias:
        return None

    def rename(e: Any) -> Any:
        if isinstance(e, Access):
            return replace(e, tensor=alias.get((e.tensor, e.indices), e.tensor))
        return _map_children(e, rename)

    names = {v: t for (t, _), v in alias.items()}
    assign = parse(format_assignment(Assignment(fused.assignment.target,
                                                rename(fused.assignment.rhs))))
    prog = Program(tensors, program.statements, [*program.inputs, *names],
                   list(program.outputs), program.name, dict(program.meta))
    fmts = {**formats, **{v: formats[t] for v, t in names.items()}}
    return prog, fmts, replace(fused, assignment=assign), names


def _candidates(graph: OrderGraph, assign: Assignment, sizes: Mapping[str, int],
                user: Sequence[str], transpose: bool, factorer: Factorer
                ) -> Iterator[list[str]]:
    """Valid orders: the factored-iteration guesses and the first orders of the sort
    order (``RANK_BUDGET``), those whose loops nest first and among them the fewest
    points computed first, then the rest of the sort order; then (transposes allowed)
    orders keeping only the user's chain, fewest permuted tensors first."""
    guesses = graph.factored_orders(assign.rhs, assign.target.indices)
    rest = graph.orders()  # lazily: a fused layer has astronomically many
    extra = max(0, RANK_BUDGET // factorer.size - len(guesses))
    head = list(islice(rest, extra))
    # orders whose loops cannot be shared go last: the lowering would reject them, but
    # their reasons still make the error message if nothing else lowers
    ranked = sorted(guesses + head, key=lambda o: factorer.rank(o, sizes))
    seen = set()
    for order in chain(ranked, islice(rest, max(0, MAX_TRIES - extra))):
        if tuple(order) not in seen:
            seen.add(tuple(order))
            yield order
    if not transpose or len(graph.indices) > MAX_RELAXED:
        return
    pos = {v: n for n, v in enumerate(user)}
    relaxed = []
    for n, perm in enumerate(permutations(graph.indices)):
        if perm in seen:
            continue
        kept = [v for v in perm if v in pos]
        if kept != list(user):
            continue
        relaxed.append((len(graph.transposes(perm)), n, list(perm)))
    relaxed.sort()
    for _, _, order in relaxed:
        yield order


def einsum_program(statements: Sequence[str], shapes: Mapping[str, Sequence[int]],
                   formats: Mapping[str, str] | None = None, *,
                   outputs: Sequence[str] | None = None, scopes: Sequence[str] | None = None,
                   name: str = "program") -> Program:
    """A :class:`ir.Program` from statements in index notation (the einsum-text frontend).

    ``shapes`` must give every input's shape; a defined tensor's shape follows from its
    indices. ``outputs`` defaults to the last statement's target; ``scopes`` (one per
    statement) group statements into layers for :meth:`ir.Schedule.by_scope`.
    """
    formats = formats or {}
    shape_of = {n: tuple(int(d) for d in s) for n, s in shapes.items()}
    stmts: list[Statement] = []
    for n, text in enumerate(statements):
        assign = parse(text)
        reads = list(dict.fromkeys(a.tensor for a in accesses(assign.rhs)))
        sizes: dict[str, int] = {}
        for a in accesses(assign.rhs):
            if a.tensor not in shape_of:
                raise ProgramError(f"statement {text!r} reads {a.tensor!r}, whose shape is "
                                   "unknown: give it in shapes or define it earlier")
            sizes.update(zip(a.indices, shape_of[a.tensor], strict=False))
        target = assign.target
        unknown = [i for i in target.indices if i not in sizes]
        if unknown:
            raise ProgramError(f"statement {text!r}: the size of output index "
                               f"{', '.join(unknown)} is unknown (no operand has it)")
        shape_of.setdefault(target.tensor, tuple(sizes[i] for i in target.indices))
        scope = scopes[n] if scopes is not None else ""
        stmts.append(Statement(target.tensor, text, tuple(reads), scope=scope))
    defined = [s.target for s in stmts]
    outs = list(outputs) if outputs is not None else defined[-1:]
    decls = []
    for tensor, shape in shape_of.items():
        role = "output" if tensor in outs else "intermediate" if tensor in defined \
            else "input"
        decls.append(TensorDecl(tensor, shape, formats.get(tensor, "dense"), role))
    return Program.build(decls, stmts, name)
