"""Re-association: a chain of matrix products is rewritten in another association.

Â·(X·W) and (Â·X)·W are one computation with different FLOPs, traffic and fusion
behaviour. This pass finds the *chains* of a program — products of 2-d operands linked
through intermediates that only the next product reads — and rewrites each in the
association its region's schedule asks for (``assoc``: ``left`` = ((A·B)·C)·D, ``right``
= A·(B·(C·D)), ``cost`` = the cheapest by a price the caller gives). It runs before
fusion, so fusion, ordering and lowering see the new statements. ``docs/fusion.md``
("Association") states the rules:

- a chain starts at a statement whose right-hand side is (or holds) a ``sum`` over a
  product of 2-d accesses that form a path of indices, e.g. ``sum(k) A(i,k) * B(k,j)``;
  an operand that is an intermediate defined by such a product statement, read by no
  other statement (once), not a program output, and in a region of the same ``assoc``,
  is expanded into its factors (transposed reads such as ``W(j,k)`` included);
- the rewritten chain has one statement per statement it replaced: the chain's last
  statement keeps its name; the intermediates get fresh names and take the replaced
  intermediates' places in the schedule's regions, in program order (an unfused
  schedule stays unfused, a layer region keeps its layer); products beyond those
  statements stay nested in the expression that reads them;
- a fresh intermediate is stored like the frontend stores a product: compressed
  (``csr``) when every factor below it is stored compressed, else dense.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cache

from ir import Program, Region, Schedule, ScheduleError, Statement, TensorDecl, check_assoc

from ._ast import Access, Assignment, BinOp, Expr, Reduction, children, free_indices, walk
from ._fusion import _explicit, _fresh, _names, format_assignment

__all__ = ["Chain", "Factor", "product_chains", "associate", "expression_associations",
           "trees", "left_tree", "right_tree", "Tree"]

#: a binary association of factors ``0..n-1``: a leaf position or (left, right)
Tree = int | tuple["Tree", "Tree"]
#: chains of at most this many factors try every association under ``cost``
#: (Catalan(4) = 14); longer ones try as written, left and right
COST_ALL_TREES = 5


@dataclass(frozen=True)
class Factor:
    """One operand of a chain, read from its row end to its column end; ``flipped``:
    the tensor is read transposed, ``T(col,row)``."""

    tensor: str
    flipped: bool = False

    def access(self, a: str, b: str) -> Access:
        return Access(self.tensor, (b, a) if self.flipped else (a, b))


@dataclass(frozen=True)
class Chain:
    """A product chain: its factors in order, and where it sits in the program."""

    root: str  # the statement holding the chain's outermost product
    assignment: Assignment  # the root with explicit, parseable reductions
    node: Expr  # the chain's outermost product in ``assignment`` (by identity)
    ends: tuple[str, str]  # its row and column index in the root
    factors: tuple[Factor, ...]
    absorbed: tuple[str, ...]  # intermediate statements merged into it, program order
    written: object  # the association as written: a leaf position or a list of them


def left_tree(n: int) -> Tree:
    tree: Tree = 0
    for k in range(1, n):
        tree = (tree, k)
    return tree


def right_tree(n: int) -> Tree:
    tree: Tree = n - 1
    for k in range(n - 2, -1, -1):
        tree = (k, tree)
    return tree


def trees(n: int, lo: int = 0) -> list[Tree]:
    """Every binary association of factors ``lo..lo+n-1`` (Catalan(n-1) of them)."""
    return list(_trees(lo, lo + n))


@cache
def _trees(lo: int, hi: int) -> tuple[Tree, ...]:
    if hi - lo == 1:
        return (lo,)
    return tuple((a, b) for mid in range(lo + 1, hi)
                 for a in _trees(lo, mid) for b in _trees(mid, hi))


def _as_tree(written: object) -> Tree | None:
    """The written association as a binary tree, None if some product is n-ary."""
    if isinstance(written, int):
        return written
    if len(written) != 2:
        return None
    a, b = (_as_tree(w) for w in written)
    return None if a is None or b is None else (a, b)


# -- finding chains ----------------------------------------------------------------------

class _Finder:
    """Chains of one program; ``group`` gives each statement its region's assoc."""

    def __init__(self, program: Program, group: dict[str, str]) -> None:
        self.program, self.group = program, group
        self.assigns = {st.target: _explicit(program, st.target) for st in program.statements}

    def chains(self) -> list[Chain]:
        taken: set[str] = set()
        out: list[Chain] = []
        for st in reversed(self.program.statements):
            if st.target in taken or self.group[st.target] == "as-written":
                continue
            found = list(self._in_statement(st.target))
            for chain in found:
                taken.update(chain.absorbed)
            out += found[::-1]  # reversed below with the rest: left to right
        return out[::-1]

    def _in_statement(self, root: str) -> Iterator[Chain]:
        assign = self.assigns[root]
        stack: list[Expr] = [assign.rhs]
        while stack:
            node = stack.pop()
            got = self._chain_at(root, assign, node)
            if got is not None:
                yield got
                continue
            stack.extend(reversed(children(node)))

    def _chain_at(self, root: str, assign: Assignment, node: Expr) -> Chain | None:
        if not isinstance(node, Reduction):
            return None
        free = [i for i in assign.target.indices if i in free_indices(node)]
        free += sorted(free_indices(node) - set(free))
        if len(free) != 2:
            return None
        absorbed: list[str] = []
        got = self._recognize(node, free[0], free[1], root, absorbed)
        if got is None or len(got[0]) < 3:
            return None
        order = {st.target: n for n, st in enumerate(self.program.statements)}
        return Chain(root, assign, node, (free[0], free[1]), tuple(got[0]),
                     tuple(sorted(absorbed, key=order.__getitem__)), got[1])

    def _recognize(self, e: Expr, a: str, b: str, root: str, absorbed: list[str]
                   ) -> tuple[list[Factor], object] | None:
        """``e`` read as a matrix from index ``a`` to ``b``: its factors and written
        association, or None if it is not a chain."""
        if isinstance(e, Access):
            if len(e.indices) != 2 or set(e.indices) != {a, b} or a == b:
                return None
            flipped = e.indices != (a, b)
            sub = self._expand(e.tensor, root, absorbed)
            if sub is None:
                return [Factor(e.tensor, flipped)], 0
            factors, written = sub
            if flipped:
                factors = [Factor(f.tensor, not f.flipped) for f in reversed(factors)]
                written = _mirror(written, len(factors))
            return factors, written
        if not isinstance(e, Reduction) or e.op != "sum":
            return None
        parts = _product(e.body)
        path = None if parts is None else _path(parts, a, b, set(e.indices))
        if path is None:
            return None
        factors: list[Factor] = []
        written: list[object] = []
        for part, (u, v) in path:
            got = self._recognize(part, u, v, root, absorbed)
            if got is None:
                return None
            written.append(_shift(got[1], len(factors)))
            factors += got[0]
        return factors, _binary(written)

    def _expand(self, tensor: str, root: str, absorbed: list[str]
                ) -> tuple[list[Factor], object] | None:
        """The chain an intermediate operand stands for, if it may be merged."""
        program = self.program
        producer = program.producer(tensor)
        if producer is None or tensor in program.outputs \
                or self.group[tensor] != self.group[root]:
            return None
        users = program.consumers(tensor)
        if len(users) != 1 or sum(a.tensor == tensor for a in walk_accesses(
                self.assigns[users[0].target].rhs)) != 1:
            return None
        assign = self.assigns[tensor]
        if not isinstance(assign.rhs, Reduction) or len(assign.target.indices) != 2:
            return None
        mine: list[str] = []
        got = self._recognize(assign.rhs, *assign.target.indices, root, mine)
        if got is None:
            return None
        absorbed += [tensor, *mine]
        return got


def walk_accesses(e: Expr) -> Iterator[Access]:
    return (n for n in walk(e) if isinstance(n, Access))


def _product(e: Expr) -> list[Expr] | None:
    """The factors of a ``*``-tree (None if anything else is multiplied in)."""
    if isinstance(e, BinOp) and e.op == "*":
        left, right = _product(e.left), _product(e.right)
        return None if left is None or right is None else left + right
    return [e] if isinstance(e, (Access, Reduction)) else None


def _path(parts: list[Expr], a: str, b: str, reduced: set[str]
          ) -> list[tuple[Expr, tuple[str, str]]] | None:
    """The factors as a path from ``a`` to ``b`` through the reduced indices, each
    factor with the ends it is read between; None if they do not form one."""
    ends = [sorted(free_indices(p)) for p in parts]
    if len(parts) < 2 or any(len(x) != 2 for x in ends):
        return None
    left = list(range(len(parts)))
    path, at, seen = [], a, {a}
    while left:
        nxt = [n for n in left if at in ends[n]]
        if len(nxt) != 1:
            return None
        n = nxt[0]
        other = ends[n][1] if ends[n][0] == at else ends[n][0]
        if other in seen:
            return None
        path.append((parts[n], (at, other)))
        left.remove(n)
        seen.add(other)
        at = other
    return path if at == b and seen - {a, b} == reduced else None


def _shift(written: object, by: int) -> object:
    if isinstance(written, int):
        return written + by
    return [_shift(w, by) for w in written]


def _mirror(written: object, n: int) -> object:
    """The written association of a chain read backwards."""
    if isinstance(written, int):
        return n - 1 - written
    return [_mirror(w, n) for w in reversed(written)]


def _binary(written: list[object]) -> object:
    return written[0] if len(written) == 1 else written


def product_chains(program: Program, schedule: Schedule | None = None) -> list[Chain]:
    """The chains of ``program`` (of 3 or more factors) that ``schedule`` re-associates
    (every chain if no schedule is given), in program order of their roots."""
    group = _groups(program, schedule)
    return _Finder(program, group).chains()


def _groups(program: Program, schedule: Schedule | None) -> dict[str, str]:
    if schedule is None:
        return {st.target: "left" for st in program.statements}
    return {t: schedule.assoc_of(reg) for reg in schedule.regions for t in reg.statements}


# -- rewriting ---------------------------------------------------------------------------

#: a price of a candidate program and schedule: lower is better (``cost``)
Price = Callable[[Program, Schedule, Sequence[str]], float]


def associate(program: Program, schedule: Schedule, price: Price | None = None
              ) -> tuple[Program, Schedule]:
    """``program`` and ``schedule`` with every chain in the association its region asks
    for; ``cost`` tries the candidate associations of each chain in turn (earlier chains
    already decided) and keeps the one ``price`` finds cheapest for the regions the chain
    touches (ties: as written). Without a re-associating region both come back as given."""
    if not schedule.reassociates:
        return program, schedule
    schedule.validate(program)
    group = _groups(program, schedule)
    chains = _Finder(program, group).chains()
    by_root: dict[str, list[Chain]] = {}
    for chain in chains:
        by_root.setdefault(chain.root, []).append(chain)
    choice: dict[int, Tree | None] = {}
    for n, chain in enumerate(chains):
        mode = group[chain.root]
        if mode == "left":
            choice[n] = left_tree(len(chain.factors))
        elif mode == "right":
            choice[n] = right_tree(len(chain.factors))
        else:
            if price is None:
                raise ScheduleError("assoc 'cost' needs the compiler's cost model; compile "
                                    "with compiler.compile_model")
            choice[n] = _cheapest(program, schedule, chains, choice, n, price)
    return _rewrite(program, schedule, chains, choice)


def _cheapest(program: Program, schedule: Schedule, chains: list[Chain],
              choice: dict[int, Tree | None], n: int, price: Price) -> Tree | None:
    chain = chains[n]
    size = len(chain.factors)
    cands: list[Tree | None] = [None]
    cands += trees(size) if size <= COST_ALL_TREES else [left_tree(size), right_tree(size)]
    regions = list(dict.fromkeys(schedule.region_of(t).name
                                 for t in (*chain.absorbed, chain.root)))
    best, best_cost = None, None
    for cand in cands:
        if cand is not None and cand == _as_tree(chain.written):
            continue
        trial = {**choice, n: cand}
        prog, sched = _rewrite(program, schedule, chains[:n + 1], trial)
        cost = price(prog, sched, regions)
        if best_cost is None or cost < best_cost:
            best, best_cost = cand, cost
    return best


def _rewrite(program: Program, schedule: Schedule, chains: list[Chain],
             choice: dict[int, Tree | None]) -> tuple[Program, Schedule]:
    tensors = dict(program.tensors)
    renamed: dict[str, str] = {}  # replaced statement -> its slot's new statement
    new_of_root: dict[str, list[Statement]] = {}
    roots: dict[str, list[int]] = {}
    for n, chain in enumerate(chains):
        tree = choice.get(n)
        if tree is not None and tree != _as_tree(chain.written):
            roots.setdefault(chain.root, []).append(n)
    used_names = set(tensors)
    order = {st.target: k for k, st in enumerate(program.statements)}
    for root, ns in roots.items():
        rst = program.statement(root)
        assign = chains[ns[0]].assignment
        outside = _replace(assign.rhs, {id(chains[n].node): Access("_", chains[n].ends)
                                        for n in ns})  # their reduction names are free
        used = _names(Assignment(assign.target, outside))
        slots = sorted({t for n in ns for t in chains[n].absorbed}, key=order.__getitem__)
        fresh = _Writer(program, tensors, used_names, root)
        tops: dict[int, Expr] = {}
        for n in ns:
            chain = chains[n]
            tree = choice[n]
            assert tree is not None
            keep = _materialised(tree, len(chain.absorbed))
            tops[id(chain.node)] = fresh.build(tree, chain, keep, *chain.ends, used)
        rhs = _replace(assign.rhs, tops)
        made = fresh.statements
        assert len(made) == len(slots)
        stmts = [replace(program.statement(old), target=st.target, text=st.text,
                         reads=st.reads) for old, st in zip(slots, made, strict=True)]
        text = format_assignment(Assignment(assign.target, rhs))
        reads = _reads(text)
        stmts.append(replace(rst, text=text, reads=reads))
        new_of_root[root] = stmts
        renamed.update({old: st.target for old, st in zip(slots, made, strict=True)})
        for old in slots:
            del tensors[old]
    if not new_of_root:
        return program, schedule
    statements: list[Statement] = []
    for st in program.statements:
        if st.target in renamed:
            continue
        statements += new_of_root.get(st.target, [st])
    prog = Program(tensors, statements, list(program.inputs), list(program.outputs),
                   program.name, dict(program.meta))
    regions = [replace(reg, statements=[renamed.get(t, t) for t in reg.statements])
               for reg in schedule.regions]
    formats = {t: f for t, f in schedule.formats.items() if t in tensors}
    sched = replace(schedule, regions=_sorted(regions, prog), formats=formats)
    try:
        sched.validate(prog)
    except ScheduleError as exc:
        raise ScheduleError(f"re-association of {', '.join(new_of_root)}: {exc}") from None
    return prog, sched


def _sorted(regions: list[Region], program: Program) -> list[Region]:
    """Each region's statements in the program's order."""
    order = {st.target: k for k, st in enumerate(program.statements)}
    return [replace(r, statements=sorted(r.statements, key=order.__getitem__))
            for r in regions]


def _reads(text: str) -> tuple[str, ...]:
    from ._parse import parse

    return tuple(dict.fromkeys(a.tensor for a in walk_accesses(parse(text).rhs)))


def _materialised(tree: Tree, count: int) -> set[Tree]:
    """The ``count`` inner products (below the top) that become statements of their
    own: the outermost first, breadth first; the others stay nested."""
    out: list[Tree] = []
    level = [c for c in tree if not isinstance(c, int)] if not isinstance(tree, int) else []
    while level and len(out) < count:
        out += level[:count - len(out)]
        level = [c for node in level for c in node if not isinstance(c, int)]
    assert len(out) == count, f"{tree!r}: fewer inner products than {count} statements"
    return set(out)


class _Writer:
    """Builds a chain's products, emitting the materialised ones as statements."""

    def __init__(self, program: Program, tensors: dict[str, TensorDecl],
                 used_names: set[str], root: str) -> None:
        self.program, self.tensors, self.used_names, self.root = \
            program, tensors, used_names, root
        self.statements: list[Statement] = []

    def build(self, tree: Tree, chain: Chain, keep: set[Tree], a: str, b: str,
              used: set[str]) -> Expr:
        if isinstance(tree, int):
            return chain.factors[tree].access(a, b)
        if tree in keep:
            return Access(self.emit(tree, chain, keep), (a, b))
        k = _fresh("k", used)
        left, right = tree
        body = BinOp("*", self.build(left, chain, keep, a, k, used),
                     self.build(right, chain, keep, k, b, used))
        return Reduction("sum", (k,), body)

    def emit(self, tree: Tree, chain: Chain, keep: set[Tree]) -> str:
        """A statement ``T(i,j) = …`` for one materialised product (its operands first)."""
        used = {"i", "j"}
        rhs = self.build(tree, chain, keep - {tree}, "i", "j", used)
        name = _fresh(f"{self.root}_p", self.used_names)
        leaves = _leaves(tree)
        rows = self._extent(chain.factors[leaves[0]], 0)
        cols = self._extent(chain.factors[leaves[-1]], 1)
        sparse = all(self._compressed(chain.factors[f].tensor) for f in leaves)
        dtype = self.tensors[self.root].dtype
        self.tensors[name] = TensorDecl(name, (rows, cols), "csr" if sparse else "dense",
                                        "intermediate", dtype)
        text = format_assignment(Assignment(Access(name, ("i", "j")), rhs))
        self.statements.append(Statement(name, text, _reads(text)))
        return name

    def _extent(self, factor: Factor, end: int) -> int:
        shape = self.tensors[factor.tensor].shape
        return shape[1 - end] if factor.flipped else shape[end]

    def _compressed(self, tensor: str) -> bool:
        from ir import Format

        decl = self.tensors[tensor]
        fmt = Format.parse(decl.format, len(decl.shape))
        return any(fmt.is_compressed(lv) for lv in range(fmt.ndim))


def _leaves(tree: Tree) -> list[int]:
    return [tree] if isinstance(tree, int) else [x for t in tree for x in _leaves(t)]


def _replace(e: Expr, new: dict[int, Expr]) -> Expr:
    """``e`` with each node whose ``id`` ``new`` names replaced, in one pass (a pass
    rebuilds the nodes above a replacement, so the others must be found in the same)."""
    if id(e) in new:
        return new[id(e)]
    from ._fusion import _map_children

    return _map_children(e, lambda c: _replace(c, new))


# -- one expression ----------------------------------------------------------------------

def expression_associations(expr: str, assoc: str) -> list[str]:
    """The texts of ``expr`` (one statement in index notation) that ``assoc`` asks to
    compile, its chains nested in that association: ``X(i,j) = A(i,k)*B(k,l)*C(l,j)``
    with ``left`` is ``X(i,j) = sum(l) (sum(k) A(i,k) * B(k,l)) * C(l,j)``. ``cost``
    gives the candidates to price: as written, then every association of a single chain
    (:data:`COST_ALL_TREES`), or left and right for several. An expression without a
    chain of three or more factors comes back alone."""
    from ._parse import parse

    check_assoc("compile", assoc)
    if assoc == "as-written":
        return [expr]
    assign = parse(expr)
    target = assign.target.tensor
    shapes = {a.tensor: (0,) * len(a.indices) for a in walk_accesses(assign.rhs)}
    if target in shapes:  # reads its own target: no program form, nothing to rewrite
        return [expr]
    shapes[target] = (0,) * len(assign.target.indices)
    program = Program({n: TensorDecl(n, s, role="output" if n == target else "input")
                       for n, s in shapes.items()},
                      [Statement(target, expr, tuple(n for n in shapes if n != target))],
                      [n for n in shapes if n != target], [target])
    sched = Schedule([Region("all", [target])], assoc="left")
    chains = _Finder(program, _groups(program, sched)).chains()
    if not chains:
        return [expr]
    if assoc == "cost":
        sizes = [len(c.factors) for c in chains]
        plans = [[t] for t in trees(sizes[0])] if len(chains) == 1 and \
            sizes[0] <= COST_ALL_TREES else \
            [[left_tree(n) for n in sizes], [right_tree(n) for n in sizes]]
        plans = [[None] * len(chains), *plans]
    else:
        make = left_tree if assoc == "left" else right_tree
        plans = [[make(len(c.factors)) for c in chains]]
    out: list[str] = []
    for plan in plans:
        new, _ = _rewrite(program, sched, chains, dict(enumerate(plan)))
        text = new.statement(target).text if new is not program else expr
        if text not in out:
            out.append(text)
    return out
