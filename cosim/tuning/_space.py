"""The autoscheduler's search space, built from a program: what may vary and what is valid.

A :class:`Point` is one configuration: a fusion grouping (a region boundary after some
statements; regions are runs of consecutive statements), one dataflow order per region,
a FIFO depth and values of the hardware knobs asked for. Its **known constraints** are
checked here, before anything is simulated: every region must compile, and a region's
order must be one the compiler lowered for it (``compiler.region_orders``). Groupings
vary at the boundaries of *units* (statements, or the runs of one module scope) plus
the hand schedules (unfused, per layer, fully fused). A point's lane count and partition
apply to every kernel's outermost output index (docs/parallel.md); block sizes are not in
the space: the compiler has no block values yet. A point's association (``assoc``: as
written, left or right) re-associates the program's chains of products before grouping
(docs/fusion.md, "Association"); its regions then take the compiler's orders. A
point's ``buffer`` (``none`` or ``auto``) is its schedule's on-chip buffer choice
(docs/timing.md, "On-chip buffers").
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ir import (
    ASSOCIATIONS,
    BUFFER_MODES,
    PARTITIONS,
    Format,
    Hardware,
    Program,
    Region,
    Schedule,
)

__all__ = ["Point", "TuneSpace", "TuneError", "UNITS"]

#: how statements are grouped into the atoms a region boundary may separate
UNITS = ("statement", "scope")
#: groupings are listed (and sampled uniformly) up to this many; beyond, cut bits are drawn
MAX_LISTED = 4096
#: the most points a space lists and scores whole; a larger one is sampled (GPT at
#: units=scope: a few groupings, but 4 orders for each of up to 27 regions)
MAX_POINTS = 20_000


class TuneError(ValueError):
    """A tuning request that cannot run: the message names the option and the value."""


@dataclass(frozen=True)
class Point:
    """One configuration: ``cuts[i]`` puts a region boundary after statement ``i``;
    ``orders`` has one entry per region in program order (a full dataflow order, or
    None: the compiler's choice); ``hw`` holds (knob, value) pairs."""

    cuts: tuple[bool, ...]
    orders: tuple[tuple[str, ...] | None, ...]
    depth: int | None = 2
    hw: tuple[tuple[str, str], ...] = ()
    #: parallel lanes on every kernel's outermost output index, and how they share it
    lanes: int = 1
    partition: str = "round-robin"
    #: block extent of the program's sparse tensors (1: scalar values; docs/blocks.md)
    block: int = 1
    #: association of the program's chains of products (orders: the compiler's unless
    #: "as-written")
    assoc: str = "as-written"
    #: on-chip buffers of every region: "none" or "auto" (the compiler's rule)
    buffer: str = "none"


@dataclass
class TuneSpace:
    """Fusion groupings × per-region orders × FIFO depths × hardware knob values."""

    program: Program
    #: statement index spans [a, b) of the units, in program order
    units: list[tuple[int, int]]
    #: per tensor (a density, TensorStats or the tensor): what the heuristic prices with
    stats: Mapping[str, Any] = field(default_factory=dict)
    depths: tuple[int | None, ...] = (2,)
    hw_knobs: tuple[tuple[str, tuple[str, ...]], ...] = ()
    lanes: tuple[int, ...] = (1,)
    partitions: tuple[str, ...] = ("round-robin",)
    blocks: tuple[int, ...] = (1,)
    #: which tensors a block point blocks: "sparse" (the program's sparse inputs and
    #: weights, and what they meet) or "all" (every tensor the extent divides)
    block_tensors: str = "sparse"
    #: keep at most this many orders per region, the heuristic's cheapest
    max_orders: int = 8
    #: never propose a point the heuristic prices above this many times the space's
    #: cheapest (a fully fused GCN at ``small`` is not practical to simulate); None: keep
    prune: float | None = 100.0
    #: associations of the chains of products to search (docs/fusion.md)
    assocs: tuple[str, ...] = ("as-written",)
    #: the machine the heuristic prices on (the runs' hardware; None: ideal memory)
    hw: Hardware | None = None
    #: on-chip buffer choices to search (``none``, ``auto``)
    buffers: tuple[str, ...] = ("none",)
    _spans: dict[tuple[int, int], Any] = field(default_factory=dict, repr=False)

    @classmethod
    def build(cls, program: Program, *, units: str = "statement",
              stats: Mapping[str, Any] | None = None,
              depths: Sequence[int | None] = (2,),
              hw_knobs: Mapping[str, Sequence[Any]] | None = None,
              max_orders: int = 8, prune: float | None = 100.0,
              lanes: Sequence[int] = (1,),
              partitions: Sequence[str] = ("round-robin",),
              blocks: Sequence[int] = (1,), block_tensors: str = "sparse",
              assocs: Sequence[str] = ("as-written",),
              hw: Hardware | None = None,
              buffers: Sequence[str] = ("none",)) -> TuneSpace:
        """The space of ``program``; ``units`` is ``statement`` or ``scope`` (the runs
        of statements of one module, ``Schedule.by_scope(depth=None)``)."""
        if units not in UNITS:
            raise TuneError(f"units {units!r}: expected one of {', '.join(UNITS)}")
        if not depths or any(d is not None and (not isinstance(d, int) or d < 1)
                             for d in depths):
            raise TuneError(f"depths {list(depths)!r}: expected FIFO depths >= 1 or None")
        if max_orders < 1:
            raise TuneError(f"max_orders {max_orders!r}: expected at least 1")
        if not lanes or any(isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 64
                            for n in lanes):
            raise TuneError(f"lanes {list(lanes)!r}: expected lane counts from 1 to 64")
        if not partitions or any(x not in PARTITIONS for x in partitions):
            raise TuneError(f"partitions {list(partitions)!r}: expected some of "
                            f"{', '.join(PARTITIONS)}")
        if not blocks or any(isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 256
                             for n in blocks):
            raise TuneError(f"blocks {list(blocks)!r}: expected block extents from 1 to 256")
        if block_tensors not in ("sparse", "all"):
            raise TuneError(f"block_tensors {block_tensors!r}: expected sparse or all")
        searched = [a for a in ASSOCIATIONS if a != "cost"]
        if not assocs or any(a not in searched for a in assocs):
            raise TuneError(f"assocs {list(assocs)!r}: expected some of "
                            f"{', '.join(searched)} (the tuner prices the associations "
                            "itself, so 'cost' is not a value to search)")
        if not buffers or any(b not in BUFFER_MODES for b in buffers):
            raise TuneError(f"buffers {list(buffers)!r}: expected some of "
                            f"{', '.join(BUFFER_MODES)}")
        index = {st.target: n for n, st in enumerate(program.statements)}
        groups = [[st.target] for st in program.statements] if units == "statement" else \
            [r.statements for r in Schedule.by_scope(program, depth=None).regions]
        spans = [(index[g[0]], index[g[-1]] + 1) for g in groups]
        return cls(program, spans, dict(stats or {}), tuple(depths),
                   _check_knobs(hw_knobs or {}), tuple(dict.fromkeys(lanes)),
                   tuple(dict.fromkeys(partitions)), tuple(dict.fromkeys(blocks)),
                   block_tensors, max_orders, prune, tuple(dict.fromkeys(assocs)), hw,
                   tuple(dict.fromkeys(buffers)))

    # -- structure ---------------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.program.statements)

    @property
    def free_cuts(self) -> list[int]:
        """Statement positions after which a unit ends (the grouping's free bits)."""
        return [b - 1 for _, b in self.units[:-1]]

    def regions(self, cuts: Sequence[bool]) -> list[tuple[int, int]]:
        """The statement spans [a, b) of a grouping, in program order."""
        bounds = [0, *[i + 1 for i, c in enumerate(cuts) if c], self.n]
        return list(itertools.pairwise(bounds))

    def span(self, a: int, b: int, assoc: str = "as-written", buffer: str = "none") -> Any:
        """The compiler's view of one region (``RegionOrders`` with the heuristic's
        costs and ``default``, the compiler's own order choice), or the
        ``CompileError`` that says why it does not compile; computed once. ``buffer``:
        the on-chip buffer choice every order is priced with (a point's ``buffer``)."""
        key = (a, b) if assoc == "as-written" else (a, b, assoc)
        key = key if buffer == "none" else (*key, buffer)
        if key not in self._spans:
            from compiler import CompileError, region_orders

            program, stmts, stats = self.associated(a, b, assoc)
            bought = None if buffer == "none" else buffer
            try:
                priced = region_orders(program, stmts, stats=stats, hw=self.hw,
                                       buffer=bought)
                plain = region_orders(program, stmts, hw=self.hw, buffer=bought) \
                    if stats else priced
                default = plain.chosen
                self._spans[key] = (priced, default)
            except CompileError as exc:
                self._spans[key] = exc
        return self._spans[key]

    def blocked_span(self, a: int, b: int, block: int, assoc: str = "as-written") -> Any:
        """The region's orders priced with the program's sparse tensors in blocks of
        ``block`` (the heuristic of a block point), or the error why it does not lower."""
        memo = self.__dict__.setdefault("_memo_blocked", {})
        if (a, b, block, assoc) not in memo:
            from compiler import CompileError, region_orders

            program, stmts, stats = self.associated(a, b, assoc)
            try:
                memo[(a, b, block, assoc)] = region_orders(program, stmts, stats=stats,
                                                           block=self.block_seeds(block),
                                                           hw=self.hw)
            except CompileError as exc:
                memo[(a, b, block, assoc)] = exc
        return memo[(a, b, block, assoc)]

    def associated(self, a: int, b: int, assoc: str = "as-written"
                   ) -> tuple[Program, list[str], Mapping[str, Any]]:
        """The program re-associated as ``assoc`` asks (the same for every grouping:
        one association everywhere), the statements that stand for ``[a, b)`` in it
        (each replaced statement's slot keeps its place), and the statistics priced with
        (the new intermediates measured when the bound tensors are at hand)."""
        stmts = [st.target for st in self.program.statements[a:b]]
        if assoc == "as-written":
            return self.program, stmts, self.stats
        memo = self.__dict__.setdefault("_memo_assoc", {})
        if assoc not in memo:
            from compiler import evaluate
            from compiler._assoc import associate

            unfused = replace(Schedule.unfused(self.program), assoc=assoc)
            program, sched = associate(self.program, unfused)
            slot = {reg.name: reg.statements[0] for reg in sched.regions}
            stats = dict(self.stats)
            bound = {n: stats.get(n) for n in program.inputs}
            if program is not self.program and all(
                    v is not None and not isinstance(v, (int, float)) and hasattr(v, "shape")
                    for v in bound.values()):
                stats.update(evaluate(program, bound))
            memo[assoc] = (program, slot, stats)
        program, slot, stats = memo[assoc]
        return program, [slot[t] for t in stmts], stats

    def block_seeds(self, block: int) -> dict[str, int]:
        """The schedule's ``block`` for a block point (``block_tensors``: the program's
        sparse tensors, or every tensor whose sizes the extent divides)."""
        from compiler._blocks import seed_blocks

        return seed_blocks(self.program, block, self.block_tensors)

    def compiles(self, a: int, b: int, assoc: str = "as-written") -> bool:
        return not isinstance(self.span(a, b, assoc), Exception)

    def options(self, a: int, b: int, assoc: str = "as-written"
                ) -> list[tuple[str, ...] | None]:
        """The orders a region may take: the heuristic's cheapest ``max_orders`` lowered
        orders and the compiler's default; [None] for a region of several kernels, and
        for a re-associated program (the compiler's choice)."""
        if assoc != "as-written":
            return [None]
        memo = self.__dict__.setdefault("_memo_options", {})
        if (a, b) not in memo:
            priced, default = self.span(a, b)
            keep = list(priced.orders[: self.max_orders]) or [None]
            memo[(a, b)] = keep if default is None or default in keep else [*keep, default]
        return memo[(a, b)]

    def heuristic(self, p: Point) -> float:
        """The FLOPs/bytes heuristic's cycles for ``p``: its regions' order costs summed
        (kernels run one after the other); inf if a region does not compile."""
        memo = self.__dict__.setdefault("_memo_heuristic", {})
        if p not in memo:
            memo[p] = self._heuristic(p)
        return memo[p]

    def pruned(self, p: Point) -> bool:
        """Whether the heuristic rules ``p`` out (``prune`` × the cheapest point)."""
        if self.prune is None:
            return False
        if "_floor" not in self.__dict__:
            rng = random.Random(0)
            pool = self.all_points() if self.enumerable() else \
                [self.sample(rng) for _ in range(512)]
            self.__dict__["_floor"] = min(self.heuristic(q) for q in pool)
        return self.heuristic(p) > self.prune * self.__dict__["_floor"]

    def _heuristic(self, p: Point) -> float:
        """Each region's order cost over the lane count: the heuristic's busiest node
        sees a lane's share (it assumes uniform data, so no partition differs). A block
        point prices its regions compiled with blocks (block operators at one firing per
        cycle: the heuristic does not see ``compute.macs_per_cycle``); any other point
        prices each order with its on-chip buffers (``p.buffer`` on the space's ``hw``:
        a buffered gather is loaded once, docs/cost.md)."""
        total = 0.0
        for (a, b), order in zip(self.regions(p.cuts), p.orders, strict=True):
            if not self.compiles(a, b, p.assoc):
                return math.inf
            priced, default = self.span(a, b, p.assoc)
            if p.block > 1:
                priced = self.blocked_span(a, b, p.block, p.assoc)
                if isinstance(priced, Exception):
                    return math.inf
                order = order or default
                if priced.orders and tuple(order or ()) not in priced.orders:
                    return math.inf  # the order does not lower with blocks
            elif p.buffer != "none":
                priced = self._buffered(a, b, p, priced, order or default)
            total += priced.cost_of(order or default) if priced.orders else priced.cost
        return total / p.lanes

    def _buffered(self, a: int, b: int, p: Point, plain: Any, order: Any) -> Any:
        """The region priced with ``p``'s on-chip buffers; the unbuffered pricing when
        that search did not cost ``order`` (its bound pruned it: an expensive order)."""
        got = self.span(a, b, p.assoc, p.buffer)
        if isinstance(got, Exception):
            return plain
        priced = got[0]
        if priced.orders and order is not None and tuple(order) not in priced.orders:
            return plain
        return priced

    # -- groupings ---------------------------------------------------------------------
    def hand_cuts(self) -> dict[str, tuple[bool, ...]]:
        """FuseFlow's hand schedules as groupings: unfused, partial (one region per
        layer) and full."""
        scoped = Schedule.by_scope(self.program)
        index = {st.target: n for n, st in enumerate(self.program.statements)}
        ends = {index[r.statements[-1]] for r in scoped.regions}
        return {"unfused": (True,) * (self.n - 1),
                "partial": tuple(i in ends for i in range(self.n - 1)),
                "full": (False,) * (self.n - 1)}

    def groupings(self) -> list[tuple[bool, ...]] | None:
        """Every grouping whose regions compile (the unit groupings and the hand ones),
        or None when there are more than :data:`MAX_LISTED` to list."""
        free = self.free_cuts
        if 2 ** len(free) > MAX_LISTED:
            return None
        out = []
        for bits in itertools.product((False, True), repeat=len(free)):
            cuts = [False] * (self.n - 1)
            for pos, bit in zip(free, bits, strict=True):
                cuts[pos] = bit
            out.append(tuple(cuts))
        out.extend(self.hand_cuts().values())
        return [c for c in dict.fromkeys(out) if self.grouping_compiles(c)]

    def grouping_compiles(self, cuts: Sequence[bool], assoc: str = "as-written") -> bool:
        return all(self.compiles(a, b, assoc) for a, b in self.regions(cuts))

    def allowed(self, cuts: Sequence[bool], assoc: str = "as-written") -> bool:
        """Whether a grouping is in the space: boundaries only between units (or one of
        the hand groupings), and every region compiles."""
        free = set(self.free_cuts)
        return len(cuts) == self.n - 1 and (
            all(i in free for i, c in enumerate(cuts) if c)
            or tuple(cuts) in self.hand_cuts().values()) and \
            self.grouping_compiles(cuts, assoc)

    # -- points ------------------------------------------------------------------------
    def valid(self, p: Point) -> bool:
        """Whether ``p`` meets every known constraint."""
        spans = self.regions(p.cuts)
        return p.assoc in self.assocs and self.allowed(p.cuts, p.assoc) and \
            len(p.orders) == len(spans) and \
            all(o in [*self.options(a, b, p.assoc), None]
                for (a, b), o in zip(spans, p.orders, strict=True)) and \
            p.depth in self.depths and p.lanes in self.lanes and \
            p.partition in self.partitions and p.block in self.blocks and \
            dict(p.hw) in [dict(zip([k for k, _ in self.hw_knobs], v, strict=True))
                           for v in itertools.product(*[vs for _, vs in self.hw_knobs])]

    def default_point(self, cuts: Sequence[bool]) -> Point:
        """A grouping with the compiler's orders and the first depth and knob values."""
        return Point(tuple(cuts), tuple(self.span(a, b)[1] for a, b in self.regions(cuts)),
                     self.depths[0], tuple((k, vs[0]) for k, vs in self.hw_knobs),
                     self.lanes[0], self.partitions[0], self.blocks[0])

    def cheapest_point(self, cuts: Sequence[bool]) -> Point:
        """A grouping with the heuristic's cheapest order for every region."""
        return replace(self.default_point(cuts),
                       orders=tuple(self.options(a, b)[0] for a, b in self.regions(cuts)))

    def sample(self, rng: random.Random) -> Point:
        """A uniformly drawn grouping (among those that compile), then a uniform order
        per region, depth and knob values: never a known-invalid point."""
        listed = self._listed()
        while True:
            if listed is not None:
                cuts = listed[rng.randrange(len(listed))]
            else:
                cuts = tuple(i in self.free_cuts and rng.random() < 0.5
                             for i in range(self.n - 1))
            if self.grouping_compiles(cuts):
                break
        p = Point(cuts, tuple(rng.choice(self.options(a, b)) for a, b in
                              self.regions(cuts)),
                  rng.choice(self.depths),
                  tuple((k, rng.choice(vs)) for k, vs in self.hw_knobs),
                  rng.choice(self.lanes), rng.choice(self.partitions),
                  rng.choice(self.blocks))
        if len(self.buffers) > 1:  # drawn only when searched: as before otherwise
            p = replace(p, buffer=rng.choice(self.buffers))
        if len(self.assocs) == 1:  # drawn only when searched: as before otherwise
            return p
        assoc = rng.choice(self.assocs)
        if assoc == "as-written":
            return p
        if not self.grouping_compiles(cuts, assoc):
            return p
        return replace(p, assoc=assoc, orders=(None,) * len(p.orders))

    def all_points(self) -> list[Point]:
        """Every valid point, listed once and kept (small spaces)."""
        if "_points" not in self.__dict__:
            self.__dict__["_points"] = list(self.points())
        return self.__dict__["_points"]

    def points(self) -> Iterator[Point]:
        """Every valid point (raises :class:`TuneError` if the groupings are not listed)."""
        listed = self._listed()
        if listed is None:
            raise TuneError(f"the space has 2^{len(self.free_cuts)} groupings: too many to "
                            "enumerate; use units='scope'")
        knobs = list(itertools.product(*[vs for _, vs in self.hw_knobs]))
        names = [k for k, _ in self.hw_knobs]
        for assoc in self.assocs:
            for cuts in listed:
                if assoc != "as-written" and not self.grouping_compiles(cuts, assoc):
                    continue
                per_region = [self.options(a, b, assoc) for a, b in self.regions(cuts)]
                for orders, depth, values, lanes, part, block, buf in itertools.product(
                        itertools.product(*per_region), self.depths, knobs, self.lanes,
                        self.partitions, self.blocks, self.buffers):
                    yield Point(cuts, tuple(orders), depth,
                                tuple(zip(names, values, strict=True)), lanes, part, block,
                                assoc, buf)

    def neighbours(self, p: Point) -> list[Point]:
        """Points one move away: one free boundary flipped (new regions take the
        heuristic's cheapest order), one region's order, the depth or one knob changed."""
        out = []
        for pos in self.free_cuts:
            cuts = list(p.cuts)
            cuts[pos] = not cuts[pos]
            if self.allowed(cuts, p.assoc):
                kept = dict(zip(self.regions(p.cuts), p.orders, strict=True))
                out.append(replace(p, cuts=tuple(cuts), orders=tuple(
                    kept.get(s, self.options(*s, p.assoc)[0]) for s in self.regions(cuts))))
        for x in self.assocs:
            if x != p.assoc and self.grouping_compiles(p.cuts, x):
                out.append(replace(p, assoc=x, orders=tuple(
                    self.options(*s, x)[0] for s in self.regions(p.cuts))))
        for n, s in enumerate(self.regions(p.cuts)):
            for o in self.options(*s, p.assoc):
                if o != p.orders[n]:
                    out.append(replace(p, orders=p.orders[:n] + (o,) + p.orders[n + 1:]))
        out += [replace(p, depth=d) for d in self.depths if d != p.depth]
        out += [replace(p, lanes=n) for n in self.lanes if n != p.lanes]
        out += [replace(p, partition=x) for x in self.partitions if x != p.partition]
        out += [replace(p, block=b) for b in self.blocks if b != p.block]
        out += [replace(p, buffer=b) for b in self.buffers if b != p.buffer]
        for n, (k, vs) in enumerate(self.hw_knobs):
            out += [replace(p, hw=p.hw[:n] + ((k, v),) + p.hw[n + 1:]) for v in vs
                    if v != p.hw[n][1]]
        return out

    def _listed(self) -> list[tuple[bool, ...]] | None:
        if "_groupings" not in self.__dict__:
            self.__dict__["_groupings"] = self.groupings()
        return self.__dict__["_groupings"]

    # -- what a point means ----------------------------------------------------------
    def schedule(self, p: Point, name: str = "tuned") -> Schedule:
        """The :class:`ir.Schedule` of ``p`` (regions named by their statements)."""
        regions = []
        for (a, b), order in zip(self.regions(p.cuts), p.orders, strict=True):
            stmts = [st.target for st in self.program.statements[a:b]]
            label = "+".join(stmts) if len("+".join(stmts)) <= 120 else \
                f"{stmts[0]}+{b - a - 2}+{stmts[-1]}"
            par = {} if p.lanes == 1 else {v: p.lanes for v in
                                           (self.outer_index(t) for t in stmts) if v}
            regions.append(Region(label, stmts, list(order) if order else None, par=par,
                                  partition=p.partition))
        # the buffers explicit, so best.yaml reproduces its cycles under samfuse model
        # (whose default is auto)
        return Schedule(regions, name=name, block=self.block_seeds(p.block), assoc=p.assoc,
                        buffer=p.buffer)

    def outer_index(self, target: str) -> str | None:
        """The index of ``target``'s outermost storage level (None for a scalar)."""
        from compiler import parse

        st = next(s for s in self.program.statements if s.target == target)
        names = parse(st.text).target.indices
        if not names:
            return None
        fmt = Format.parse(self.program.tensors[target].format, len(names))
        return names[fmt.mode_order[0]]

    def describe(self, p: Point) -> str:
        """``linear+mm[i,k,j] | relu_ …`` with the depth and knobs."""
        parts = []
        for (a, b), order in zip(self.regions(p.cuts), p.orders, strict=True):
            text = "+".join(st.target for st in self.program.statements[a:b])
            parts.append(text + (f"[{','.join(order)}]" if order else ""))
        extra = [f"depth={p.depth}"] * (len(self.depths) > 1) + [f"{k}={v}" for k, v in p.hw]
        if len(self.lanes) > 1 or p.lanes > 1:
            extra.append(f"lanes={p.lanes}")
        if len(self.partitions) > 1:
            extra.append(f"partition={p.partition}")
        if len(self.blocks) > 1 or p.block > 1:
            extra.append(f"block={p.block}")
        if len(self.assocs) > 1 or p.assoc != "as-written":
            extra.append(f"assoc={p.assoc}")
        if len(self.buffers) > 1 or p.buffer != "none":
            extra.append(f"buffer={p.buffer}")
        return " | ".join(parts) + ("  " + " ".join(extra) if extra else "")

    def enumerable(self) -> bool:
        """Whether the space is small enough to list and score every point."""
        size = self.size()
        return size is not None and size <= MAX_POINTS

    def size(self) -> int | None:
        """How many valid points there are (None when the groupings are not listed)."""
        listed = self._listed()
        if listed is None:
            return None
        per = math.prod(len(vs) for _, vs in self.hw_knobs) * len(self.depths) * \
            len(self.lanes) * len(self.partitions) * len(self.blocks) * len(self.buffers)
        return per * sum(math.prod(len(self.options(a, b, x)) for a, b in self.regions(c))
                         for x in self.assocs for c in listed
                         if x == "as-written" or self.grouping_compiles(c, x))


def _check_knobs(knobs: Mapping[str, Sequence[Any]]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Knob values as override strings, each checked against the hardware keys."""
    from ir import HwError, load_hw

    out = []
    for key, values in sorted(knobs.items()):
        if not values:
            raise TuneError(f"hardware knob {key!r} has no values")
        texts = tuple(str(v) for v in values)
        for v in texts:
            try:
                load_hw("ideal", [f"{key}={v}"])
            except HwError as exc:
                raise TuneError(f"hardware knob {key}={v}: {exc}") from None
        out.append((key, texts))
    return tuple(out)
