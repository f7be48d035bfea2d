"""Stream tokens.

Data tokens are plain Python numbers (crd/ref: ``int``; val: ``float`` holding an exact
binary32 value, or ``int`` in int32 mode) so that the simulator's hot loops stay cheap.
Control tokens are small immutable objects, never strings and never an overloaded sign
bit: ``Stop(k)``, ``EMPTY`` (SAM's ``N``), ``DONE`` (``D``) and, on repeat-signal streams,
``REPEAT`` (``R``).
"""

from __future__ import annotations

import struct
from typing import Any, Final

import numpy as np

__all__ = ["Stop", "Empty", "Done", "Repeat", "Block", "EMPTY", "DONE", "REPEAT", "Token",
           "is_control", "is_data", "token_text", "parse_token", "stop", "to_f32", "to_i32"]

_F32 = struct.Struct("<f")
_F32_PACK, _F32_UNPACK = _F32.pack, _F32.unpack  # bound once: the models round per op


def to_f32(x: float) -> float:
    """Round a Python float to the nearest binary32 (overflow gives ±inf, like IEEE)."""
    try:
        return _F32_UNPACK(_F32_PACK(x))[0]
    except OverflowError:
        return float("inf") if x > 0 else float("-inf")


def to_i32(x: int) -> int:
    """Wrap to int32 two's complement, like the hardware."""
    return ((x + 0x80000000) & 0xFFFFFFFF) - 0x80000000


class Stop:
    """``S_k``: closes the fiber at level ``k`` and every fiber below it."""

    __slots__ = ("level",)

    def __init__(self, level: int) -> None:
        if level < 0:
            raise ValueError(f"stop level must be >= 0, got {level!r}")
        object.__setattr__(self, "level", level)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Stop tokens are immutable")

    def __eq__(self, other: object) -> bool:
        return other.__class__ is Stop and other.level == self.level  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(("S", self.level))

    def __repr__(self) -> str:
        return f"S{self.level}"

    def __reduce__(self):  # pickles across process boundaries (forked backends)
        return (stop, (self.level,))


_STOPS: list[Stop] = [Stop(k) for k in range(16)]


def stop(level: int) -> Stop:
    """Interned ``Stop(level)`` (stops are compared often; sharing keeps that cheap)."""
    return _STOPS[level] if level < 16 else Stop(level)


class _Singleton:
    __slots__ = ()
    _text = "?"

    def __repr__(self) -> str:
        return self._text

    def __reduce__(self):
        return (_singleton, (self._text,))


class Empty(_Singleton):
    """``N``: a missing operand after a union; loads as 0 in a value array."""

    _text = "N"


class Done(_Singleton):
    """``D``: the stream is over."""

    _text = "D"


class Repeat(_Singleton):
    """``R``: a repeat signal (repeat the current reference once more)."""

    _text = "R"


EMPTY: Final = Empty()
DONE: Final = Done()
REPEAT: Final = Repeat()
_BY_TEXT = {"N": EMPTY, "D": DONE, "R": REPEAT}


def _singleton(text: str) -> _Singleton:
    return _BY_TEXT[text]


class Block:
    """A dense block of binary32 values: one data token of a block value stream.

    Elements are row-major over the stream's intra-block indices (docs/blocks.md). The
    array is read-only and compared bit for bit, so a block is a value like a float:
    shared by every reader of a fork, never changed in place.
    """

    __slots__ = ("a",)

    def __init__(self, a: Any) -> None:
        arr = np.array(a, dtype=np.float32).reshape(-1)
        arr.setflags(write=False)
        object.__setattr__(self, "a", arr)

    @classmethod
    def zeros(cls, elems: int) -> Block:
        return cls(np.zeros(elems, dtype=np.float32))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Block tokens are immutable")

    def __len__(self) -> int:
        return len(self.a)

    def __eq__(self, other: object) -> bool:
        return other.__class__ is Block and self.a.tobytes() == other.a.tobytes()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self.a.tobytes())

    def __repr__(self) -> str:
        return "[" + ",".join("%.9g" % x for x in self.a.tolist()) + "]"  # noqa: UP031

    def __reduce__(self):
        return (Block, (self.a.copy(),))


Token = int | float | Block | Stop | Empty | Done | Repeat
_CONTROL = (Stop, Empty, Done, Repeat)


def is_control(tok: object) -> bool:
    return tok.__class__ in _CONTROL


def is_data(tok: object) -> bool:
    return tok.__class__ not in _CONTROL


def token_text(tok: object) -> str:
    """Trace text of a token: ints in decimal, floats with ``%.9g`` (round-trips binary32)."""
    cls = tok.__class__
    if cls is int:
        return str(tok)
    if cls is float:
        return "%.9g" % tok  # noqa: UP031 - the same spelling as C's printf
    return repr(tok)  # S<k>, N, D, R and blocks ``[v0,v1,...]``


def parse_token(text: str, numeric: type = int) -> Token:
    """Inverse of :func:`token_text`; ``numeric`` is the data type of the stream."""
    if text[0] == "S" and text[1:].isdigit():
        return stop(int(text[1:]))
    if text in _BY_TEXT:
        return _BY_TEXT[text]
    if text[0] == "[" and text[-1] == "]":
        return Block(np.array([float(x) for x in text[1:-1].split(",")], dtype=np.float64))
    if numeric is float:
        return to_f32(float(text))
    return numeric(text)
