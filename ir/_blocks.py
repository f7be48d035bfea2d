"""Block sparsity: tensors whose stored values are dense blocks, and block operators.

A blocked tensor is a fiber tree over the *block grid* (each mode's size divided by its
block extent) whose every stored value is a dense block, row-major over the modes in
mode order (BCSR for a matrix with ``block=(b, b)``, a b-vector format with ``(b, 1)``).
Its value streams carry :class:`~ir.Block` tokens.

A block operator says which element of each operand block meets which element of the
output block, as an einsum over single letters with their extents::

    ik,kj->ij;i=16,j=16,k=16      a block product (k contracted inside the firing)
    ij,i->ij;i=16,j=16             a row-broadcast elementwise operation
    ij->i;i=16,j=16                a reducer folding j inside the block

Every backend computes it with the same loop nest (:meth:`BlockOp.loops`): output
elements in row-major order, contracted letters innermost in order of first appearance,
so a contraction sums in one order everywhere (docs/blocks.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._catalogue import COMPUTE_PRIMITIVES

__all__ = ["BlockOp", "BlockError", "MAX_BLOCK_ELEMS", "block_grid", "block_view",
           "block_elems", "to_blocks", "from_blocks", "value_elems", "firing_work",
           "block_cycles", "firing_cycles", "written_blocks", "COMPUTE_PRIMITIVES"]

#: the most elements one block may hold (a 256x256 block): a bound every backend can
#: allocate, checked when a graph is loaded rather than discovered as a MemoryError
MAX_BLOCK_ELEMS = 1 << 16



class BlockError(ValueError):
    """A block specification or blocked tensor that cannot be built; names the culprit."""


def block_elems(block: Sequence[int] | None) -> int:
    """Elements of one stored value of a tensor with this block shape (1 if scalar)."""
    return math.prod(block) if block else 1


@dataclass(frozen=True)
class BlockOp:
    """An intra-block einsum: ``operands`` and ``out`` are letter strings, ``dims`` the
    extent of every letter."""

    operands: tuple[str, ...]
    out: str
    dims: Mapping[str, int]

    @classmethod
    def parse(cls, spec: str, arity: int, where: str = "block") -> BlockOp:
        """``"ik,kj->ij;i=16,j=16,k=16"`` with ``arity`` operands; errors name ``where``."""
        try:
            eq, _, dims_text = spec.partition(";")
            lhs, arrow, out = eq.partition("->")
            if not arrow:
                raise ValueError("missing '->'")
            operands = tuple(lhs.split(","))
            dims: dict[str, int] = {}
            for item in dims_text.split(","):
                letter, _, n = item.partition("=")
                dims[letter.strip()] = int(n)
        except ValueError as exc:
            raise BlockError(f"{where} {spec!r}: expected e.g. 'ik,kj->ij;i=16,j=16,k=16' "
                             f"({exc})") from None
        op = cls(operands, out, dims)
        op.check(arity, where, spec)
        return op

    def check(self, arity: int, where: str, spec: str) -> None:
        if len(self.operands) != arity:
            raise BlockError(f"{where} {spec!r}: {len(self.operands)} operands, expected "
                             f"{arity}")
        for part in (*self.operands, self.out):
            if len(set(part)) != len(part) or not all(c.isalpha() for c in part):
                raise BlockError(f"{where} {spec!r}: {part!r} must be distinct letters")
        used = set("".join(self.operands))
        if not set(self.out) <= used:
            raise BlockError(f"{where} {spec!r}: output letters {sorted(set(self.out) - used)}"
                             " appear in no operand")
        if set(self.dims) != used:
            raise BlockError(f"{where} {spec!r}: give the extent of exactly the letters "
                             f"{''.join(sorted(used))}")
        if any(n < 1 for n in self.dims.values()):
            raise BlockError(f"{where} {spec!r}: extents must be >= 1")
        for part in (*self.operands, self.out):
            if self.elems(part) > MAX_BLOCK_ELEMS:
                raise BlockError(f"{where} {spec!r}: a block of {self.elems(part):,} "
                                 f"elements ({part!r}) exceeds the {MAX_BLOCK_ELEMS:,} a "
                                 "block may hold")

    @property
    def contracted(self) -> str:
        """Letters folded inside a firing, in order of first appearance."""
        seen = dict.fromkeys("".join(self.operands))
        return "".join(c for c in seen if c not in self.out)

    def elems(self, letters: str) -> int:
        return math.prod(self.dims[c] for c in letters)

    @property
    def out_elems(self) -> int:
        return self.elems(self.out)

    def operand_elems(self, k: int) -> int:
        return self.elems(self.operands[k])

    @property
    def work(self) -> int:
        """Operations of one firing: one per (output element, contracted element)."""
        return self.out_elems * self.elems(self.contracted)

    def loops(self) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...], int]:
        """The loop nest every backend runs: ``(extents, strides, n_out_loops)``.

        Loops are the output letters (row-major) then the contracted letters;
        ``strides[k][l]`` is operand ``k``'s element stride along loop ``l`` (0 when the
        operand does not carry that letter: a broadcast). The output index is the
        row-major position over the first ``n_out_loops`` loops.
        """
        letters = self.out + self.contracted
        extents = tuple(self.dims[c] for c in letters)
        strides = []
        for part in self.operands:
            stride, s = {}, 1
            for c in reversed(part):
                stride[c] = s
                s *= self.dims[c]
            strides.append(tuple(stride.get(c, 0) for c in letters))
        return extents, tuple(strides), len(self.out)

    def index_maps(self) -> tuple[np.ndarray, ...]:
        """Per operand, an ``(out_elems, contracted_elems)`` array of element offsets:
        entry ``[o, c]`` is the element met at output ``o`` and contraction step ``c``."""
        extents, strides, n_out = self.loops()
        grids = np.indices(extents).reshape(len(extents), -1) if extents else \
            np.zeros((0, 1), dtype=np.int64)
        inner = self.elems(self.contracted)
        return tuple((np.asarray(s, dtype=np.int64) @ grids).reshape(self.out_elems, inner)
                     for s in strides)

    def __str__(self) -> str:
        dims = ",".join(f"{c}={self.dims[c]}" for c in sorted(self.dims))
        return f"{','.join(self.operands)}->{self.out};{dims}"


def block_grid(shape: Sequence[int], block: Sequence[int]) -> tuple[int, ...]:
    """The block grid of a tensor of ``shape`` cut into ``block``s (sizes divisible)."""
    return tuple(n // b for n, b in zip(shape, block, strict=True))


def block_view(array: np.ndarray, block: Sequence[int]) -> np.ndarray:
    """``array`` seen as ``(*grid, *block)``: element ``[g..., e...]`` is element ``e`` of
    block ``g`` (a view, so writing into it writes ``array``)."""
    nd = len(block)
    split = array.reshape([x for g, b in zip(block_grid(array.shape, block), block,
                                             strict=True) for x in (g, b)])
    return split.transpose([*range(0, 2 * nd, 2), *range(1, 2 * nd, 2)])


def to_blocks(dense: np.ndarray, fmt: Any, block: Sequence[int], dtype: str = "float32"):
    """A blocked :class:`~ir.FiberTree` of ``dense`` in ``fmt``: compressed levels store a
    block when any of its elements is nonzero, dense levels store every block."""
    from ._formats import Format
    from ._storage import FiberTree

    dense = np.asarray(dense)
    block = tuple(int(b) for b in block)
    if len(block) != dense.ndim:
        raise BlockError(f"block {block} has {len(block)} extents for a {dense.ndim}-d tensor")
    bad = [(m, n, b) for m, (n, b) in enumerate(zip(dense.shape, block, strict=True))
           if b < 1 or n % b]
    if bad:
        m, n, b = bad[0]
        raise BlockError(f"mode {m} has size {n}, not a multiple of its block extent {b}")
    grid = block_grid(dense.shape, block)
    nd = dense.ndim
    blocks = block_view(dense, block).reshape(*grid, block_elems(block))
    fmt = Format.parse(fmt, nd) if not isinstance(fmt, Format) else fmt
    if all(level == "dense" for level in fmt.levels):
        keep = np.ones(grid, dtype=bool)
    else:
        keep = np.any(blocks != 0, axis=-1)
    coords = np.nonzero(keep)
    # the tree of the kept blocks' numbers (1-based; a dense level's unkept blocks hold 0)
    order = FiberTree.from_coo(np.array(coords).reshape(nd, -1),
                               np.arange(1, len(coords[0]) + 1), grid, fmt, dtype="int32")
    pos = order.vals.astype(np.int64) - 1
    stored = blocks[keep]
    vals = np.zeros((len(pos), block_elems(block)), dtype=np.float32)
    vals[pos >= 0] = stored[pos[pos >= 0]]
    return FiberTree._trusted(grid, fmt, order.levels, vals, block=block)


def from_blocks(tree) -> np.ndarray:
    """The dense full-size array of a blocked tree (inverse of :func:`to_blocks`)."""
    block = tree.block
    scrd = tree._storage_coords()
    coords = np.empty_like(scrd)
    coords[list(tree.format.mode_order)] = scrd
    out = np.zeros(tree.full_shape, dtype=tree.vals.dtype)
    block_view(out, block)[tuple(coords)] = tree.vals.reshape(-1, *block)
    return out


def value_elems(graph) -> dict[str, int]:
    """Elements per value token of every ``val`` edge (1 = scalar), inferred from the
    tensors' blocks and the block operators; inconsistent widths are a
    :class:`BlockError` naming the node."""
    widths: dict[str, int] = {}
    for nid in graph.topological_order():
        node = graph.nodes[nid]
        ins = {p: widths.get(e.name, 1) for p, e in graph.in_edges[nid].items()
               if e.kind == "val"}
        out = _output_elems(graph, node, ins)
        for edges in graph.out_edges[nid].values():
            for e in edges:
                if e.kind == "val":
                    widths[e.name] = out
    return widths


def _output_elems(graph, node, ins: dict[str, int]) -> int:
    prim = node.primitive
    spec = node.params.get("block", "")
    if prim.reads_values:  # a value array: its tensor's blocks
        t = graph.tensors[node.params["tensor"]]
        return block_elems(t.block)
    if prim.block_arity:
        ports = tuple(p.name for p in prim.inputs if p.kind == "val")
        if not spec:
            wide = {p: n for p, n in ins.items() if n != 1}
            if wide:
                raise BlockError(f"node {node.id!r}: input {', '.join(wide)} carries blocks "
                                 f"of {max(wide.values())} elements but the node has no "
                                 "block parameter")
            return 1
        bop = BlockOp.parse(spec, len(ports), f"node {node.id!r}: block")
        if prim.block_arity == 2 and bop.contracted and node.params["op"] != "mul":
            raise BlockError(f"node {node.id!r}: block {spec!r} contracts "
                             f"{bop.contracted!r}, which only a mul ALU can (a sum of "
                             "products); use an elementwise block for "
                             f"{node.params['op']}")
        for k, port in enumerate(ports):
            if ins.get(port, 1) != bop.operand_elems(k):
                raise BlockError(f"node {node.id!r}: input {port} carries {ins.get(port, 1)}-"
                                 f"element values but block {spec!r} reads "
                                 f"{bop.operand_elems(k)}")
        return bop.out_elems
    if not ins:
        return 1
    sizes = set(ins.values())
    if len(sizes) > 1:
        raise BlockError(f"node {node.id!r}: its value inputs carry blocks of different "
                         f"sizes {ins}")
    return sizes.pop()


def firing_work(node, elems_in: int) -> int:
    """Operations of one value-consuming firing of ``node`` whose input values have
    ``elems_in`` elements (docs/blocks.md): the block op's work for an ALU or reducer,
    one per element for unary operators and accumulators, 1 for everything else."""
    if not node.primitive.compute:
        return 1
    spec = node.params.get("block", "")
    if spec:
        return BlockOp.parse(spec, node.primitive.block_arity).work
    return elems_in


def firing_cycles(node, hw, elems_in: int) -> int:
    """Cycles one value-consuming firing of ``node`` occupies on ``hw`` (docs/blocks.md):
    ``ceil(work / macs_per_cycle)`` for a compute node, else 1; ``hw`` None or
    ``macs_per_cycle`` 0 = unbounded compute."""
    if not node.primitive.compute or hw is None or hw.compute.macs_per_cycle == 0:
        return 1
    return hw.firing_cycles(firing_work(node, elems_in))


def block_cycles(graph, hw, widths: Mapping[str, int] | None = None) -> dict[str, int]:
    """Cycles a value-consuming firing occupies each compute node whose firings take more
    than one (docs/blocks.md); absent nodes take one. ``hw`` None = unbounded compute;
    ``widths`` is :func:`value_elems` when the caller has it already."""
    if hw is None or hw.compute.macs_per_cycle == 0:
        return {}
    widths = value_elems(graph) if widths is None else widths
    out: dict[str, int] = {}
    for nid, node in graph.nodes.items():
        elems = max((widths.get(e.name, 1) for e in graph.in_edges[nid].values()
                     if e.kind == "val"), default=1)
        cycles = firing_cycles(node, hw, elems)
        if cycles > 1:
            out[nid] = cycles
    return out


def written_blocks(shape: Sequence[int], block: Sequence[int], fmt: Any,
                   segs_crds: Sequence[tuple[Sequence[int], Sequence[int]]],
                   blocks: Sequence[Any]):
    """A blocked output tree from level writers' output over the block grid and the value
    writer's blocks (each a :class:`~ir.Block` or an array of its elements)."""
    from ._storage import FiberTree

    block = tuple(block)
    grid = block_grid(shape, block)
    order = FiberTree.from_written(grid, fmt, segs_crds, np.arange(1, len(blocks) + 1),
                                   dtype="int32")
    elems = block_elems(block)
    rows = np.zeros((len(blocks) + 1, elems), dtype=np.float32)
    for k, b in enumerate(blocks):
        rows[k + 1] = getattr(b, "a", b)
    return FiberTree._trusted(grid, order.format, order.levels, rows[order.vals], block=block)
