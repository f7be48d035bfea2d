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
from string import ascii_lowercase

from ._ast import BinOp, Reduction, walk
from ._errors import LoweringError
from ._normalize import Normalized

__all__ = ["BlockPlan", "block_extents", "grid_sizes"]

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
        if isinstance(b, bool) or not isinstance(b, int) or b < 1:
            raise LoweringError(f"block {name}={b!r}: the extent must be an int >= 1")
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


class BlockPlan:
    """The intra-block letters of one lowering (empty when nothing is blocked)."""

    def __init__(self, norm: Normalized, extents: Mapping[str, int]) -> None:
        self.ext = dict(extents)
        target = norm.assignment.target.indices
        canonical = [*target, *(v for v in norm.indices if v not in target)]
        self.rank = {v: n for n, v in enumerate(canonical)}
        self.letter: dict[str, str] = {}
        free = [c for c in ascii_lowercase if c not in {norm.user[v] for v in canonical}]
        for v in canonical:
            name = norm.user[v]
            if v not in self.ext:
                continue
            fits = len(name) == 1 and name in ascii_lowercase and \
                name not in self.letter.values()
            self.letter[v] = name if fits else free.pop(0)
        #: id(product) -> the sum it is the body of (its blocked indices contract there)
        self.summed = {id(r.body): r for r in walk(norm.assignment.rhs)
                       if isinstance(r, Reduction) and r.op == "sum"}

    def __bool__(self) -> bool:
        return bool(self.ext)

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
    """Statistics of blocked inputs as their block grids: a tensor given at its full
    size becomes the 0/1 pattern of its stored blocks (what the graph iterates); a
    density or a grid-sized tensor is kept."""
    if not extents:
        return dict(stats)
    import numpy as np

    from ir import FiberTree

    out = dict(stats)
    for a in accesses_of(norm):
        x = stats.get(a.tensor)
        block = tuple(extents.get(v, 1) for v in a.indices)
        if x is None or isinstance(x, int | float) or all(b == 1 for b in block) or \
                not hasattr(x, "shape"):
            continue
        full = tuple(sizes[v] * extents.get(v, 1) for v in a.indices)
        if tuple(x.shape) != full:
            continue
        dense = x.to_dense() if isinstance(x, FiberTree) else \
            FiberTree.from_any(x, None).to_dense()
        split = dense.reshape([n for g, b in zip(full, block, strict=True)
                               for n in (g // b, b)])
        out[a.tensor] = np.any(split != 0, axis=tuple(range(1, 2 * len(block), 2))) \
            .astype(np.float32)
    return out


def accesses_of(norm: Normalized):
    from ._ast import accesses

    return accesses(norm.assignment.rhs)
