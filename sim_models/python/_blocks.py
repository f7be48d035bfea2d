"""Block value semantics (docs/blocks.md): what a firing computes on :class:`ir.Block`
tokens. Every backend computes the same bits:

* elementwise operators apply the scalar rule of ``_values`` to every element (binary32
  arithmetic is correctly rounded, so numpy's float32 operations are that rule);
* a contraction (a mul ALU whose block op folds letters) sums the exact binary64
  products in loop order (:meth:`ir.BlockOp.loops`: contracted letters innermost) in a
  binary64 accumulator from +0.0 and rounds once;
* a reducer folds its block's contracted letters the same way (sum) or by the scalar max
  rule from -inf, then combines the folded block with its accumulator elementwise.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ir import EMPTY, Block, BlockOp

from ._values import _fexp, _frsqrt

__all__ = ["BlockBinary", "BlockFold", "block_unary", "block_add"]

_F32, _F64 = np.float32, np.float64


def _max(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(a >= b, a, b)  # the scalar rule: a if a >= b else b


def _min(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(a <= b, a, b)


_NAN = np.uint32(0x7FC00000).view(_F32)


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The scalar rule (``_values._fdiv``): 0/0 and NaN/0 are the canonical quiet NaN
    (numpy would give the FPU's default NaN, 0xffc00000 on x86, or keep a NaN's payload)."""
    q = np.divide(a, b)
    return np.where((b == 0) & ((a == 0) | np.isnan(a)), _NAN, q)


_ELEMENTWISE: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": _div,
    "max": _max, "min": _min,
}


def _arr(tok, elems: int) -> np.ndarray:
    if tok is EMPTY:
        return np.zeros(elems, dtype=_F32)
    return tok.a if tok.__class__ is Block else np.array([tok], dtype=_F32)


def _sum64(terms, n: int) -> np.ndarray:
    """The contract's sum: binary64 terms added in order from +0.0, rounded once."""
    acc = np.zeros(n, dtype=_F64)
    for t in terms:
        acc += t
    return acc.astype(_F32)


def _token(values: np.ndarray):
    """A 1-element value is a scalar token in every backend (its word is the scalar's)."""
    return Block(values) if len(values) != 1 else float(values[0])


class BlockBinary:
    """A binary ALU on blocks: elementwise with broadcasts, or a mul contraction."""

    def __init__(self, op: str, spec: str, node_id: str) -> None:
        self.bop = BlockOp.parse(spec, 2, f"node {node_id!r}: block")
        self.ia, self.ib = self.bop.index_maps()
        self.na, self.nb = self.bop.operand_elems(0), self.bop.operand_elems(1)
        self.f = _ELEMENTWISE[op]
        self.contract = bool(self.bop.contracted)

    def __call__(self, a, b) -> Block:
        x, y = _arr(a, self.na), _arr(b, self.nb)
        with np.errstate(all="ignore"):
            if not self.contract:
                return _token(self.f(x[self.ia[:, 0]], y[self.ib[:, 0]]))
            x64, y64 = x.astype(_F64), y.astype(_F64)
            return _token(_sum64((x64[self.ia[:, c]] * y64[self.ib[:, c]]
                                  for c in range(self.ia.shape[1])), self.bop.out_elems))


class BlockFold:
    """A reducer's firing on a block: fold the contracted letters, then combine with the
    accumulator elementwise (the scalar reducer rule per element)."""

    def __init__(self, op: str, spec: str, node_id: str) -> None:
        self.bop = BlockOp.parse(spec, 1, f"node {node_id!r}: block")
        (self.ix,) = self.bop.index_maps()
        self.n_in = self.bop.operand_elems(0)
        self.sum = op == "sum"
        self.identity = _token(np.full(self.bop.out_elems, 0.0 if self.sum else -np.inf,
                                       dtype=_F32))

    def fold(self, tok) -> np.ndarray:
        x = _arr(tok, self.n_in)
        if self.ix.shape[1] == 1:
            return x[self.ix[:, 0]]
        with np.errstate(all="ignore"):
            if self.sum:
                x64 = x.astype(_F64)
                return _sum64((x64[self.ix[:, c]] for c in range(self.ix.shape[1])),
                              self.bop.out_elems)
            acc32 = np.full(self.bop.out_elems, -np.inf, dtype=_F32)
            for c in range(self.ix.shape[1]):
                acc32 = _max(acc32, x[self.ix[:, c]])
            return acc32

    def __call__(self, acc, tok):
        y = self.fold(tok)
        held = _arr(acc, len(y))
        with np.errstate(all="ignore"):
            return _token(np.add(held, y) if self.sum else _max(held, y))


def block_add(acc: Block | None, tok, elems: int) -> Block:
    """An accumulator's elementwise sum (``None``: an entry not yet held, i.e. zeros)."""
    x = _arr(tok, elems)
    if acc is None:
        return Block(x + np.float32(0.0))  # 0 + x, so -0.0 becomes +0.0 as in scalars
    with np.errstate(all="ignore"):
        return Block(acc.a + x)


def block_unary(op: str, const: float) -> Callable[[Block], Block]:
    """The ``unary`` primitive on every element of a block."""
    c = np.float32(const)

    def each(fn: Callable[[float], float]) -> Callable[[Block], Block]:
        return lambda blk: Block(np.array([fn(v) for v in blk.a.tolist()], dtype=_F64))

    table: dict[str, Callable[[Block], Block]] = {
        "relu": lambda blk: Block(np.where(blk.a > 0, blk.a, _F32(0.0))),
        "exp": each(_fexp),
        "neg": lambda blk: Block(-blk.a),
        "rsqrt": each(_frsqrt),
        "add_const": lambda blk: Block(blk.a + c),
        "mul_const": lambda blk: Block(blk.a * c),
        "div_const": lambda blk: Block(_div(blk.a, c)),
    }
    fn = table[op]

    def run(blk: Block) -> Block:
        with np.errstate(all="ignore"):
            return fn(blk)
    return run

