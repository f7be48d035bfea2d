"""The hardware token word: one encoding for every backend that crosses into bits.

A token on a SystemC, RTL or HLS stream is a 34-bit word: a 2-bit tag above a 32-bit
payload (``docs/streams.md``). Data tokens carry a crd/ref (unsigned), an int32 value
(two's complement) or a float32 value (its binary32 bits); control tokens carry their tag
and, for ``S_k``, the level ``k``. Constants of the ``unary`` primitive travel in the
same 32-bit registers, so an int32 graph's constants must be int32 values. Every
conversion between Python values and bits lives here, so the backends cannot drift.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._tokens import DONE, EMPTY, REPEAT, Block, Stop, Token, stop

__all__ = ["TAG_DATA", "TAG_STOP", "TAG_EMPTY", "TAG_DONE", "PAYLOAD_MASK", "CodecError",
           "f32_bits", "value_bits", "values_from_bits", "encode_token", "decode_token",
           "decode_words", "int_constant", "unary_constant_bits", "INT32_MIN", "INT32_MAX",
           "block_rows", "written_values"]

TAG_DATA, TAG_STOP, TAG_EMPTY, TAG_DONE = 0, 1, 2, 3
PAYLOAD_MASK = 0xFFFFFFFF
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1

_F32 = struct.Struct("<f")
_U32 = struct.Struct("<I")
_POS_INF, _NEG_INF = 0x7F800000, 0xFF800000


class CodecError(ValueError):
    """A value that has no hardware word (e.g. an int32 constant out of range)."""


def f32_bits(x: float) -> int:
    """The binary32 bits of ``x`` rounded to nearest; beyond the range it is ±inf (IEEE
    overflow), as the models compute it."""
    try:
        return _U32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return _POS_INF if x > 0 else _NEG_INF


def value_bits(v: float | int, dtype: str) -> int:
    """The 32-bit payload of a value of a ``dtype`` graph."""
    return f32_bits(float(v)) if dtype == "float32" else int(v) & PAYLOAD_MASK


def values_from_bits(words: Sequence[int] | np.ndarray, dtype: str) -> list[Any]:
    """Payloads back to values (float32 → Python floats, int32 → signed ints)."""
    low = np.asarray(words, dtype=np.uint64).astype(np.uint32)
    return low.view(np.float32 if dtype == "float32" else np.int32).tolist()


def block_rows(words: Sequence[int] | np.ndarray, elems: int) -> np.ndarray:
    """Block value words (binary32 bits, element k of a block at word k) as float32 rows
    of ``elems`` elements: how every bit-level backend decodes blocks (docs/blocks.md)."""
    return np.asarray(words, dtype=np.uint32).view(np.float32).reshape(-1, elems)


def written_values(words: Sequence[int] | np.ndarray, dtype: str, elems: int = 1
                   ) -> list[Any]:
    """A value writer's recorded words as values: numbers (:func:`values_from_bits`), or
    one float32 row per block when its tensor is blocked (``elems`` > 1)."""
    if elems > 1:
        return list(block_rows(words, elems))
    return values_from_bits(words, dtype)


def encode_token(tok: Token, numeric: str, elems: int = 1) -> int:
    """The word of ``tok``: a 2-bit tag above a ``32·elems``-bit payload (34 bits for a
    scalar; docs/blocks.md for blocks, element k in bits [32k, 32k+32)). ``numeric`` is
    ``"float"`` or ``"int"`` (the edge's data: float only for the values of a float32
    graph)."""
    cls = tok.__class__
    shift = 32 * elems
    if cls is Stop:
        return (TAG_STOP << shift) | tok.level
    if tok is EMPTY:
        return TAG_EMPTY << shift
    if tok is DONE:
        return TAG_DONE << shift
    if cls is Block:
        bits = np.asarray(tok.a, dtype=np.float32).view(np.uint32).tolist()
        return sum(b << (32 * k) for k, b in enumerate(bits))
    if tok is REPEAT:
        return 0
    if numeric == "float":
        return f32_bits(tok)
    return int(tok) & PAYLOAD_MASK


def decode_token(word: int, numeric: str, kind: str = "", elems: int = 1) -> Token:
    """Inverse of :func:`encode_token`. ``kind`` is the edge kind: a ``repsig`` data word
    is ``R``; a ``val`` data word is signed (int32) or binary32 (float), or a
    :class:`~ir.Block` of ``elems`` binary32 elements."""
    if elems > 1:
        tag = word >> (32 * elems)
        if tag == TAG_DATA:
            words = [(word >> (32 * k)) & PAYLOAD_MASK for k in range(elems)]
            return Block(block_rows(words, elems)[0])
        word = (tag << 32) | (word & PAYLOAD_MASK)
    tag, payload = word >> 32, word & PAYLOAD_MASK
    if tag == TAG_STOP:
        return stop(payload)
    if tag == TAG_EMPTY:
        return EMPTY
    if tag == TAG_DONE:
        return DONE
    if kind == "repsig":
        return REPEAT
    if numeric == "float":
        return _F32.unpack(_U32.pack(payload))[0]
    if kind == "val":
        return payload - (1 << 32) if payload > INT32_MAX else payload
    return payload


def decode_words(words: np.ndarray, kind: str, numeric: str) -> list[Token]:
    """A whole edge's words at once (vectorised :func:`decode_token`, for traces)."""
    words = np.asarray(words, dtype=np.uint64)
    low = (words & PAYLOAD_MASK).astype(np.uint32)
    if kind == "repsig":
        toks: list = [REPEAT] * len(words)
    elif kind == "val":
        toks = low.view(np.float32 if numeric == "float" else np.int32).tolist()
    else:
        toks = low.tolist()
    tags = (words >> 32).astype(np.uint8)
    for i in np.flatnonzero(tags).tolist():
        t = int(tags[i])
        toks[i] = stop(int(low[i])) if t == TAG_STOP else EMPTY if t == TAG_EMPTY else DONE
    return toks


def int_constant(const: float | int, where: str = "constant") -> int:
    """The int32 value of a ``unary`` constant in an int32 graph.

    The constant register is 32 bits wide in every backend, so the constant must be a
    finite integer in int32 range; anything else is refused rather than clamped
    differently by each backend.
    """
    if isinstance(const, bool) or not isinstance(const, int | float) or \
            (isinstance(const, float) and not (math.isfinite(const) and const.is_integer())):
        raise CodecError(f"{where} {const!r} is not an integer; an int32 graph's constants "
                         "must be int32 values")
    ic = int(const)
    if not INT32_MIN <= ic <= INT32_MAX:
        raise CodecError(f"{where} {ic} is outside int32 [{INT32_MIN}, {INT32_MAX}]; the "
                         "hardware's constant register is 32 bits")
    return ic


def unary_constant_bits(const: float | int, dtype: str, where: str = "constant") -> int:
    """The 32-bit constant register of a ``unary`` node: binary32 bits (float32 graphs)
    or the checked int32 value's two's complement (int32 graphs)."""
    if dtype == "float32":
        return f32_bits(float(const))
    return int_constant(const, where) & PAYLOAD_MASK
