"""Block sparsity in the compiler (docs/blocks.md): which indices are blocked, and the
block operator of every ALU and reducer the lowering creates.

A blocked index is split into a block coordinate, which the graph iterates like any
index (over the block grid), and an intra-block letter, which lives inside the values.
A value carries the blocked indices its expression depends on, in one canonical order
(the output's indices first, as the output is stored, then the rest in expression
order), so the value a writer receives is already laid out as its tensor's blocks. A
product directly under a sum contracts the summed blocked indices inside the multiply
(a block matrix product); a reducer folds the blocked letter of the index it reduces.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from string import ascii_letters, ascii_lowercase

from ._ast import BinOp, Reduction, accesses, walk
from ._errors import LoweringError
from ._normalize import Normalized

__all__ = ["BlockPlan", "block_extents", "grid_sizes", "grid_stats", "grid_given",
           "tensor_blocks", "sparse_tensors", "seed_blocks", "index_blocks",
           "statement_blocks"]

Spec = dict[str, str]


def block_extents(norm: Normalized, block: Mapping[str, int] | None,
                  sizes: Mapping[str, int]) -> dict[str, int]:
    """User ``{index: extent}`` → internal index → extent (> 1 only), checked: every
    name an index of the expression, every extent a positive int dividing its size."""
    if not block:
        return {}
    names = {norm.user[v] for v in norm.indices}
    out: dict[str, int] = {}
    for name, b in block.items():
        if name not in names:
            raise LoweringError(f"block names {name!r}, which is not an index of the "
                                f"expression; its indices are {','.join(sorted(names))}")
        if isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= 256:
            raise LoweringError(f"block {name}={b!r}: the extent must be an int from 1 to "
                                "256")
        for v in norm.indices:
            if norm.user[v] != name or b == 1:
                continue
            if sizes[v] % b:
                raise LoweringError(f"block {name}={b}: index {name!r} has size "
                                    f"{sizes[v]}, not a multiple of {b}")
            out[v] = b
    return out


def grid_sizes(sizes: Mapping[str, int], extents: Mapping[str, int]) -> dict[str, int]:
    """Index sizes of the block grid the graph iterates."""
    return {v: n // extents.get(v, 1) for v, n in sizes.items()}


#: the letters a block operator may name an index with (ir.BlockOp takes any letter):
#: Latin, then Greek, so a fused GPT attention region (~60 indices) fits
_LETTERS = ascii_letters + "".join(  # α..ω without final ς, Α..Ω (U+03A2 is unassigned)
    chr(c) for c in (*range(0x3B1, 0x3CA), *range(0x391, 0x3AA)) if c not in (0x3C2, 0x3A2))


class BlockPlan:
    """The intra-block letters of one lowering (empty when nothing is blocked)."""

    def __init__(self, norm: Normalized, extents: Mapping[str, int]) -> None:
        self.ext = dict(extents)
        self.letter: dict[str, str] = {}
        self.rank: dict[str, int] = {}
        self.summed: dict[int, Reduction] = {}
        if not self.ext:  # scalar values: nothing to plan (the common, timed case)
            return
        target = norm.assignment.target.indices
        canonical = [*target, *(v for v in norm.indices if v not in target)]
        self.rank = {v: n for n, v in enumerate(canonical)}
        free = [c for c in _LETTERS if c not in {norm.user[v] for v in canonical}]
        for v in canonical:
            name = norm.user[v]
            if v not in self.ext:
                continue
            fits = len(name) == 1 and name in ascii_lowercase and \
                name not in self.letter.values()
            if not fits and not free:
                raise LoweringError(f"block: more than {len(_LETTERS)} blocked indices "
                                    "in one expression; a block operator names each with "
                                    "a letter")
            self.letter[v] = name if fits else free.pop(0)
        #: id(product) -> the sum it is the body of (its blocked indices contract there)
        self.summed = {id(r.body): r for r in walk(norm.assignment.rhs)
                       if isinstance(r, Reduction) and r.op == "sum"}

    def canon(self, idx) -> tuple[str, ...]:
        return tuple(sorted(idx, key=self.rank.__getitem__))

    def tensor(self, shape: Sequence[int], indices: Sequence[str]
               ) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
        """A tensor's full shape (from the grid's) and its block, or None if scalar."""
        block = tuple(self.ext.get(v, 1) for v in indices)
        full = tuple(n * b for n, b in zip(shape, block, strict=True))
        return full, block if any(b > 1 for b in block) else None

    def of_access(self, access) -> tuple[str, ...]:
        """An operand's values carry its blocked indices in its dimension order."""
        return tuple(v for v in access.indices if v in self.ext)

    def alu(self, e: BinOp, a: tuple[str, ...], b: tuple[str, ...]
            ) -> tuple[tuple[str, ...], Spec]:
        red = self.summed.get(id(e)) if e.op == "*" else None
        contracted = set(red.indices) & (set(a) | set(b)) if red is not None else set()
        out = self.canon((set(a) | set(b)) - contracted)
        if not (a or b):
            return out, {}
        return out, {"block": self._spec((a, b), out)}

    def fold(self, intra: tuple[str, ...], v: str) -> tuple[tuple[str, ...], Spec]:
        """A reducer over ``v``: it folds ``v``'s letter when the values still carry it."""
        if not intra:
            return intra, {}
        out = tuple(x for x in intra if x != v)
        return out, {"block": self._spec((intra,), out)}

    def _spec(self, operands: Sequence[Sequence[str]], out: Sequence[str]) -> str:
        def word(idx: Sequence[str]) -> str:
            return "".join(self.letter[v] for v in idx)

        used = sorted({v for part in operands for v in part}, key=self.rank.__getitem__)
        dims = ",".join(f"{self.letter[v]}={self.ext[v]}" for v in used)
        return f"{','.join(word(p) for p in operands)}->{word(out)};{dims}"


def grid_stats(norm: Normalized, stats: Mapping[str, object], extents: Mapping[str, int],
               sizes: Mapping[str, int]) -> dict[str, object]:
    """Statistics of an expression's blocked inputs as their block grids
    (:func:`grid_given` per tensor)."""
    out = dict(stats)
    for a in accesses(norm.assignment.rhs):
        block = tuple(extents.get(v, 1) for v in a.indices)
        if a.tensor in stats and any(b > 1 for b in block):
            full = tuple(sizes[v] * extents.get(v, 1) for v in a.indices)
            out[a.tensor] = grid_given(stats[a.tensor], full, block)
    return out


def grid_given(given: object, full: Sequence[int], block: Sequence[int]) -> object:
    """What the heuristic should know of a blocked tensor: a full-size tensor becomes the
    0/1 pattern of its stored blocks (what the graph iterates), a full-size density or
    :class:`TensorStats` the chance that a block holds a nonzero (uniform entries);
    anything already of the grid's shape is kept."""
    import math

    import numpy as np

    from ir import FiberTree, block_grid, block_view

    from ._cost import TensorStats

    elems = math.prod(block)
    grid = block_grid(full, block)
    if isinstance(given, int | float) and not isinstance(given, bool):
        return 1.0 - (1.0 - float(given)) ** elems
    if isinstance(given, TensorStats):
        if tuple(given.shape) != tuple(full):
            return given
        return TensorStats(grid, 1.0 - (1.0 - given.density) ** elems)
    if given is None or not hasattr(given, "shape") or tuple(given.shape) != tuple(full):
        return given
    dense = given.to_dense() if isinstance(given, FiberTree) else \
        FiberTree.from_any(given, None).to_dense()
    inside = tuple(range(len(grid), 2 * len(grid)))
    return np.any(block_view(dense, block) != 0, axis=inside).astype(np.float32)


def tensor_blocks(program, seeds: Mapping[str, int]) -> dict[str, tuple[int, ...]]:
    """Every program tensor's block extents, from seed tensors blocked on all modes
    (``{"mask": 16}``): an index of a statement takes the extent of any blocked mode it
    indexes, and every mode it indexes takes it, until nothing changes. Two extents
    meeting at one index is an error naming the statement. Tensors left unblocked are
    absent."""
    from ._parse import parse

    ext: dict[str, list[int]] = {t: [b] * len(program.tensors[t].shape)
                                 for t, b in seeds.items() if b > 1}
    parsed = [(st, parse(st.text)) for st in program.statements]
    changed = bool(ext)
    while changed:
        changed = False
        for st, assign in parsed:
            idx: dict[str, int] = {}
            views = [*accesses(assign.rhs), assign.target]
            for a in views:
                for m, v in enumerate(a.indices):
                    b = ext.get(a.tensor, [1] * len(a.indices))[m]
                    if b > 1 and idx.setdefault(v, b) != b:
                        raise LoweringError(
                            f"block: statement {st.text!r} meets blocks {idx[v]} and {b} "
                            f"at index {v!r}; blocked tensors that share an index need "
                            "the same extent")
            for a in views:
                for m, v in enumerate(a.indices):
                    if v in idx:
                        row = ext.setdefault(a.tensor, [1] * len(a.indices))
                        if row[m] != idx[v]:
                            row[m] = idx[v]
                            changed = True
    for t, row in ext.items():
        for m, b in enumerate(row):
            n = program.tensors[t].shape[m]
            if n % b:
                raise LoweringError(f"block: tensor {t!r} mode {m} has size {n}, not a "
                                    f"multiple of its block extent {b}")
    return {t: tuple(row) for t, row in ext.items() if any(b > 1 for b in row)}


def sparse_tensors(program) -> list[str]:
    """The inputs and weights stored with a compressed level: what ``block`` seeds when
    a study or the command line gives only an extent."""
    from ir import Format

    return [n for n, t in program.tensors.items() if t.role in ("input", "weight")
            and "compressed" in Format.parse(t.format, len(t.shape)).levels]


def seed_blocks(program, extent: int, tensors: str = "sparse") -> dict[str, int]:
    """A schedule's ``block`` for one extent: the program's sparse inputs and weights
    (``tensors="sparse"``), or every tensor whose sizes ``extent`` divides (``"all"``:
    dense projections too). Extent 1 seeds nothing (the schedule drops it)."""
    names = sparse_tensors(program) if tensors == "sparse" else \
        [t for t, d in program.tensors.items() if all(n % extent == 0 for n in d.shape)]
    return dict.fromkeys(names, extent)


def index_blocks(assign, blocks: Mapping[str, tuple[int, ...]]) -> dict[str, int]:
    """Index -> extent of one assignment whose tensors have the block extents ``blocks``
    (:func:`tensor_blocks`): what its compile is given as ``block``."""
    return {v: blocks[a.tensor][m] for a in (*accesses(assign.rhs), assign.target)
            if a.tensor in blocks for m, v in enumerate(a.indices) if blocks[a.tensor][m] > 1}


def statement_blocks(program, seeds: Mapping[str, int]) -> dict[str, int]:
    """Index -> extent for a one-statement program (an expression) from seed tensors."""
    from ._parse import parse

    (st,) = program.statements
    return index_blocks(parse(st.text), tensor_blocks(program, seeds))
