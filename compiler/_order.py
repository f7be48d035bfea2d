"""The partial order graph of a (fused) expression's index variables.

Nodes are the index variables. Edges say "before in the dataflow order": every input
access contributes its storage mode order (the index of level ``l`` before that of level
``l+1``: SAM scanners walk levels top-down), and the user's order contributes a chain
over the names it lists. Tensors are added after the user's chain, in order of first
appearance; a tensor whose mode order would close a cycle is *permuted* instead (a
transposed copy is materialised in memory, so its edges drop out) — or, when transposes
are forbidden, the conflict is an error naming the tensor, its access and the indices.
A topological sort picks the first valid order; :meth:`OrderGraph.all_orders`
enumerates them all (up to a cap).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from ir import Format, FormatError, Graph, Hardware

from ._ast import Access, Assignment, Expr, Reduction, accesses, walk
from ._errors import CompileError, LoweringError
from ._factor import reduction_groups
from ._order_cost import OrderCost, order_cost
from ._parse import parse

__all__ = ["OrderGraph", "OrderError", "Orders", "Conflict", "order_graph", "ORDER_CAP",
           "OrderSearch", "explain_orders"]

#: default cap on the orders :meth:`OrderGraph.all_orders` enumerates
ORDER_CAP = 1000


class OrderError(CompileError):
    """Ordering constraints that no dataflow order can satisfy."""


@dataclass(frozen=True)
class Conflict:
    """A tensor whose storage order closed a cycle: ``cycle`` is the index path
    (first = last) and ``why`` names the source of each of its edges."""

    tensor: str
    access: str
    format: str
    cycle: tuple[str, ...]
    why: tuple[str, ...]

    def describe(self) -> str:
        steps = [f"{a} before {b} ({w})" for a, b, w in
                 zip(self.cycle, self.cycle[1:], self.why, strict=False)]
        return (f"tensor {self.tensor!r} read as {self.access} in format "
                f"{self.format!r}: " + "; ".join(steps))


@dataclass(frozen=True)
class Orders:
    """Valid orders in sort order; ``count`` is exact unless ``capped``."""

    orders: list[list[str]]
    count: int
    capped: bool
    cap: int

    def __str__(self) -> str:
        more = f" (capped at {self.cap}; there are more)" if self.capped else ""
        return f"{self.count} valid order(s){more}"


@dataclass
class OrderGraph:
    """Index variables, their "before" edges (with reasons) and the permuted tensors."""

    indices: list[str]  # in priority order: user order, output indices, the rest
    edges: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    permuted: dict[str, Conflict] = field(default_factory=dict)
    #: every input tensor's storage-order edges, permuted tensors included
    storage: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    def transposes(self, order: Sequence[str]) -> list[str]:
        """Tensors whose storage order ``order`` violates (they need a permuted copy)."""
        pos = {v: n for n, v in enumerate(order)}
        return [t for t, es in self.storage.items()
                if any(pos[a] > pos[b] for a, b in es)]

    def successors(self, v: str) -> list[str]:
        return [b for a, b in self.edges if a == v]

    def is_valid(self, order: Sequence[str]) -> bool:
        pos = {v: n for n, v in enumerate(order)}
        return sorted(order) == sorted(self.indices) and \
            all(pos[a] < pos[b] for a, b in self.edges)

    def first_order(self) -> list[str]:
        """The valid order that is smallest in priority order (a topological sort)."""
        return next(self._extensions())

    def all_orders(self, cap: int = ORDER_CAP) -> Orders:
        """Every valid order, in sort order, up to ``cap``."""
        if cap < 1:
            raise ValueError(f"cap {cap!r} must be >= 1")
        out: list[list[str]] = []
        for order in self._extensions():
            if len(out) == cap:
                return Orders(out, cap, True, cap)
            out.append(order)
        return Orders(out, len(out), False, cap)

    def orders(self) -> Iterator[list[str]]:
        """Every valid order, in sort order, lazily."""
        return self._extensions()

    def _predecessors(self) -> dict[str, set[str]]:
        preds: dict[str, set[str]] = {v: set() for v in self.indices}
        for a, b in self.edges:
            preds[b].add(a)
        return preds

    def _extensions(self) -> Iterator[list[str]]:
        preds = self._predecessors()
        chosen: list[str] = []
        placed: set[str] = set()

        def go() -> Iterator[list[str]]:
            if len(chosen) == len(self.indices):
                yield list(chosen)
                return
            for v in self.indices:
                if v not in placed and preds[v] <= placed:
                    chosen.append(v)
                    placed.add(v)
                    yield from go()
                    chosen.pop()
                    placed.discard(v)

        return go()

    def factored_orders(self, rhs: Expr, out: Sequence[str]) -> list[list[str]]:
        """Valid orders built for factored iteration (``_factor.py``), best guesses first.

        A greedy topological sort that, whenever a reduction's value no longer depends on
        an unplaced index, places that reduction's loops next (the deepest first, so a
        max inside a sum's body is hoisted out of the sum): the reduction is then
        computed once and broadcast instead of recomputed in later loops. Otherwise the
        variants place the first ``n`` output indices first (``n`` from all of them down
        to none) and then reduced indices before output ones — which makes a sparse
        accumulator but hoists more out of the output loops.
        """
        owner = {v: g for g in reduction_groups(rhs) for v in g.indices}
        rank = {v: n for n, v in enumerate(self.indices)}
        succ: dict[str, list[str]] = {v: [] for v in self.indices}
        for a, b in self.edges:
            succ[a].append(b)
        outs = set(out)
        found: list[list[str]] = []
        for leading in range(len(out), -1, -1):
            # the sort is incremental (in-degrees, the set of free indices): fused
            # layers have hundreds of indices
            left = {v: 0 for v in self.indices}
            for _, b in self.edges:
                left[b] += 1
            free = {v for v in self.indices if not left[v]}
            placed: list[str] = []
            done: set[str] = set()
            n_out = 0
            while free:
                ready = [(-owner[v].depth, rank[v], v) for v in free
                         if v in owner and owner[v].free <= done]
                if ready:
                    v = min(ready)[2]
                else:
                    outputs_first = n_out < leading
                    v = min(free, key=lambda v: ((v in outs) != outputs_first, rank[v]))
                placed.append(v)
                done.add(v)
                free.discard(v)
                n_out += v in outs
                for w in succ[v]:
                    left[w] -= 1
                    if not left[w]:
                        free.add(w)
            if placed not in found:
                found.append(placed)
        return found

    def __str__(self) -> str:
        lines = [f"indices {','.join(self.indices)}"]
        lines += [f"  {a} -> {b}  ({'; '.join(w)})" for (a, b), w in self.edges.items()]
        lines += [f"  permuted copy of {c.tensor}: {c.describe()}"
                  for c in self.permuted.values()]
        return "\n".join(lines)


def order_graph(assign: Assignment | str, formats: Mapping[str, str | Format] | None = None,
                order: Sequence[str] | str | None = None, *, transpose: bool = True
                ) -> OrderGraph:
    """Build the partial order graph of ``assign`` for the given input ``formats`` (default
    dense) and partial user ``order``; see the module docstring."""
    assign = parse(assign) if isinstance(assign, str) else assign
    formats = formats or {}
    names = _index_names(assign)
    user = _user_chain(order, names)
    rest = [v for v in [*assign.target.indices, *names] if v not in user]
    graph = OrderGraph(list(dict.fromkeys([*user, *rest])))
    for a, b in zip(user, user[1:], strict=False):
        graph.edges.setdefault((a, b), []).append(f"dataflow order {','.join(user)}")
    for tensor, accs in _by_tensor(assign).items():
        fmt = _format(formats.get(tensor), accs[0])
        new: dict[tuple[str, str], str] = {}
        for acc in accs:
            levels = [acc.indices[m] for m in fmt.mode_order]
            why = f"{acc} stored with levels {','.join(levels)}"
            for a, b in zip(levels, levels[1:], strict=False):
                if a != b:
                    new.setdefault((a, b), why)
        graph.storage[tensor] = list(new)
        cycle = _find_cycle(graph.indices, [*graph.edges, *new])
        if cycle is None:
            for e, why in new.items():
                graph.edges.setdefault(e, []).append(why)
            continue
        reasons = tuple(new[e] if e in new else "; ".join(graph.edges[e])
                        for e in zip(cycle, cycle[1:], strict=False))
        conflict = Conflict(tensor, " and ".join(map(str, accs)), str(fmt), tuple(cycle),
                            reasons)
        if not transpose:
            raise OrderError(f"conflicting ordering constraints: {conflict.describe()}; "
                             f"indices {', '.join(sorted(set(cycle)))} cannot all be "
                             "ordered. Allow transposes (a permuted copy of "
                             f"{tensor!r}), store it in another format or change the order")
        graph.permuted[tensor] = conflict
    return graph


def _index_names(assign: Assignment) -> list[str]:
    """Output indices first, then every other index in order of first appearance."""
    found = list(assign.target.indices)
    for e in walk(assign.rhs):
        if isinstance(e, (Access, Reduction)):
            found += e.indices
    return list(dict.fromkeys(found))


def _user_chain(order: Sequence[str] | str | None, names: list[str]) -> list[str]:
    if order is None:
        return []
    parts = [p for p in order.replace(" ", "").split(",") if p] if isinstance(order, str) \
        else [str(p) for p in order]
    shown = ",".join(parts)
    unknown = [p for p in parts if p not in names]
    if unknown:
        raise OrderError(f"order {shown!r} names {', '.join(map(repr, unknown))}, which "
                         f"is not an index of the expression; its indices are "
                         f"{','.join(names)}")
    dup = sorted({p for p in parts if parts.count(p) > 1})
    if dup:
        raise OrderError(f"order {shown!r} is a cycle: it puts {', '.join(dup)} both "
                         "before and after other indices; list each index at most once")
    return parts


def _by_tensor(assign: Assignment) -> dict[str, list[Access]]:
    out: dict[str, list[Access]] = {}
    seen: set[Access] = set()  # a fused layer reads one weight thousands of times
    for a in accesses(assign.rhs):
        if a not in seen:
            seen.add(a)
            out.setdefault(a.tensor, []).append(a)
    return out


def _format(spec: str | Format | None, acc: Access) -> Format:
    try:
        return Format.parse(spec if spec is not None else "dense", len(acc.indices))
    except FormatError as exc:
        raise OrderError(f"tensor {acc.tensor!r}: {exc}") from None


def _find_cycle(nodes: list[str], edges: list[tuple[str, str]]) -> list[str] | None:
    """A directed cycle as a node path (first = last), or ``None``."""
    succ: dict[str, list[str]] = {v: [] for v in nodes}
    for a, b in edges:
        succ[a].append(b)
    state: dict[str, int] = {}
    path: list[str] = []

    def dfs(v: str) -> list[str] | None:
        state[v] = 1
        path.append(v)
        for w in succ[v]:
            if state.get(w) == 1:
                return [*path[path.index(w):], w]
            if w not in state:
                found = dfs(w)
                if found:
                    return found
        state[v] = 2
        path.pop()
        return None

    for v in nodes:
        if v not in state:
            found = dfs(v)
            if found:
                return found
    return None


# -- the cost-chosen order: candidates, their costs, the explanation ---------------------

@dataclass
class OrderSearch:
    """Candidate orders as they are tried: costed (:class:`OrderCost`), rejected by the
    lowering (its reason) or left uncosted (over the search budget). :meth:`finish`
    returns the cheapest graph with the whole search in ``graph.meta["order_search"]``.

    An order that writes the output permuted (``out_moved``) only wins when no order
    writes it as the user asked: the user reads the output back in that format. A graph
    whose FIFOs had to be deepened to hold a whole fiber (``deepened``: a deep epilogue's
    bypass, :func:`compiler._fifo_hazard.deepen_fifos`) only wins when no graph runs at
    the compiled depths.
    """

    rows: list[dict] = field(default_factory=list)
    #: (rank, error): if nothing lowers, the error of the lowest rank is raised
    errors: list[tuple[int, LoweringError]] = field(default_factory=list)
    best: tuple[tuple[bool, float, int], Graph] | None = None
    costed: int = 0
    #: of those, graphs whose FIFOs were deepened (they do not count towards a budget)
    deepened: int = 0
    #: whether :attr:`best` had its FIFOs deepened
    best_deepened: bool = False
    skipped: int = 0
    #: what was searched, for :meth:`finish`
    space: str = ""

    def add(self, order: Sequence[str], graph: Graph, cost: OrderCost,
            out_moved: bool = False, deepened: bool = False) -> None:
        self.costed += 1
        self.deepened += deepened
        key = (out_moved, cost.total, len(self.rows))
        self.rows.append({"order": ",".join(order), "cost": cost.total,
                          "cycles": cost.cycles, "tokens": cost.tokens,
                          "transposes": dict(cost.transposes),
                          "output_permuted": out_moved,
                          **({"fifos_deepened": True} if deepened else {})})
        if self.best is None or (deepened, key) < (self.best_deepened, self.best[0]):
            self.best, self.best_deepened = (key, graph), deepened

    def prune(self, order: Sequence[str], bound: float, out_moved: bool = False) -> bool:
        """Skip ``order`` (recording why) when a lower bound on its cost — the re-sorting
        its transposed sparse inputs need, known before lowering — already reaches the
        best cost found; returns whether it was pruned."""
        if self.best is None or self.best_deepened or (out_moved, bound) < self.best[0][:2]:
            return False
        self.rows.append({"order": ",".join(order), "pruned": bound})
        return True

    def reject(self, order: Sequence[str], exc: LoweringError, rank: int | None = None
               ) -> None:
        self.errors.append((len(self.rows) if rank is None else rank, exc))
        self.rows.append({"order": ",".join(order), "invalid": exc.message.splitlines()[0]})

    def skip(self, order: Sequence[str] | None = None) -> None:
        self.skipped += 1

    def merge(self, other: OrderSearch) -> None:
        """Take a second pass's costed orders (deep epilogues, over the orders this one
        rejected): each replaces its rejection here, marked ``deep``, and becomes the
        best only if strictly cheaper (ties keep this search's choice). An order the
        second pass skips keeps its rejection row, so every order is counted once."""
        costed = {r["order"]: {**r, "deep": True} for r in other.rows if "cost" in r}
        self.rows = [costed.pop(r["order"]) if r["order"] in costed else r
                     for r in self.rows] + list(costed.values())
        self.costed += other.costed
        self.deepened += other.deepened
        if other.best is not None and self.best is not None and \
                (other.best_deepened, other.best[0][:2]) < \
                (self.best_deepened, self.best[0][:2]):
            self.best, self.best_deepened = other.best, other.best_deepened

    def finish(self, space: str) -> Graph:
        """The cheapest costed graph (or the first rejection, if nothing lowered)."""
        if self.best is None:
            raise min(self.errors, key=lambda e: e[0])[1]
        graph = self.best[1]
        graph.meta["order_search"] = {"space": space, "chosen": ",".join(
            graph.meta["order"]), "candidates": self.rows, "not_costed": self.skipped}
        return graph


def explain_orders(graph: Graph, stats: Mapping[str, object] | None = None,
                   hw: Hardware | None = None) -> str:
    """Every candidate order the compiler weighed for ``graph``, cheapest first, with its
    estimated cost (``docs/cost.md``) or why the lowering rejected it; the chosen one is
    marked ``*``. A graph compiled with an explicit order is costed here (``stats`` as
    for :func:`compiler.order_cost`)."""
    search = graph.meta.get("order_search")
    chosen = ",".join(graph.meta.get("order", []))
    head = f"{graph.name}: {graph.meta.get('expression', '')}"
    if search is None:
        cost = order_cost(graph, stats, hw)
        rows = [{"order": chosen, "cost": cost.total, "cycles": cost.cycles,
                 "tokens": cost.tokens, "transposes": cost.transposes}]
        search = {"space": "order given explicitly", "chosen": chosen, "candidates": rows,
                  "not_costed": 0}
    cands = search["candidates"]
    costed = sorted((c for c in cands if "cost" in c),
                    key=lambda c: (c.get("fifos_deepened", False),
                                   c.get("output_permuted", False), c["cost"]))
    invalid = [c for c in cands if "invalid" in c]
    pruned = [c for c in cands if "pruned" in c]
    lines = [head, f"  {search['space']}: {len(costed)} costed, {len(invalid)} invalid"
             + (f", {len(pruned)} pruned" if pruned else "")
             + (f", {search['not_costed']} not costed (search budget)"
                if search["not_costed"] else "")
             + "; cost = expected cycles (busiest node) + re-sorting of transposed sparse "
             "inputs, in cycles"]
    width = max([len(c["order"]) for c in cands] + [5])
    for c in costed:
        mark = "*" if c["order"] == search["chosen"] else " "
        moved = "".join(f" + transpose {t} " + (f"{v:,.0f}" if v else "free (dense)")
                        for t, v in c["transposes"].items())
        note = " (writes the output permuted)" if c.get("output_permuted") else ""
        if c.get("fifos_deepened"):
            note += " (FIFOs deepened to hold a fiber)"
        lines.append(f"  {mark} {c['order']:<{width}}  cost {c['cost']:>12,.0f}  = cycles "
                     f"{c['cycles']:,.0f}{moved}{note}  ({c['tokens']:,.0f} tokens)")
    best = costed[0]["cost"] if costed else 0.0
    for c in pruned:
        lines.append(f"    {c['order']:<{width}}  pruned: re-sorting its transposed sparse "
                     f"inputs alone costs {c['pruned']:,.0f} >= the best {best:,.0f}")
    for c in invalid:
        lines.append(f"    {c['order']:<{width}}  invalid: {c['invalid']}")
    return "\n".join(lines)
