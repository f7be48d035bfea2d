"""Value semantics shared by every backend: binary32 or int32, rounded after each op.

float32: each operation is computed in binary64 and rounded once to binary32 (exact
IEEE results for add/sub/mul/div/sqrt; exp is the binary64 exp rounded to binary32).
int32: two's complement wrap-around; division truncates toward zero; x / 0 = 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ir import int_constant

from ._actor import to_f32, to_i32

__all__ = ["binary_op", "unary_op", "reduce_identity", "zero"]

_INF = float("inf")


def _fdiv(a: float, b: float) -> float:
    if b == 0.0:
        if a == 0.0 or a != a:
            return math.nan
        return math.copysign(_INF, a) * math.copysign(1.0, b)
    return a / b


def _idiv(a: int, b: int) -> int:
    """Truncating division; ``x / 0 = 0`` and ``INT32_MIN / -1`` wraps, as in hardware."""
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return to_i32(q if (a >= 0) == (b >= 0) else -q)


def _fexp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return _INF


def _frsqrt(x: float) -> float:
    if x > 0.0:
        return 1.0 / math.sqrt(x)
    if x == 0.0:
        return math.copysign(_INF, x)
    return math.nan


def _max(a, b):
    return a if a >= b else b


def _min(a, b):
    return a if a <= b else b


_FLOAT_BIN: dict[str, Callable] = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": _fdiv, "max": _max, "min": _min,
}
_INT_BIN: dict[str, Callable] = {**_FLOAT_BIN, "div": _idiv}


#: the float32 operations most graphs run, rounded without a second call
_FLOAT_ROUNDED: dict[str, Callable] = {
    "add": lambda a, b: to_f32(a + b), "sub": lambda a, b: to_f32(a - b),
    "mul": lambda a, b: to_f32(a * b),
}


def binary_op(op: str, dtype: str) -> Callable:
    """The rounded binary operation ``op`` for ``dtype``."""
    if dtype == "float32":
        f = _FLOAT_BIN[op]
        if op in ("max", "min"):
            return f
        return _FLOAT_ROUNDED.get(op) or (lambda a, b: to_f32(f(a, b)))
    f = _INT_BIN[op]
    return lambda a, b: to_i32(f(a, b))


def unary_op(op: str, const: float, dtype: str) -> Callable:
    """The rounded unary operation ``op`` (with its constant) for ``dtype``."""
    if dtype == "float32":
        c = to_f32(const)
        table: dict[str, Callable] = {
            "relu": lambda x: x if x > 0.0 else 0.0,
            "exp": lambda x: to_f32(_fexp(x)),
            "neg": lambda x: -x,
            "rsqrt": lambda x: to_f32(_frsqrt(x)),
            "add_const": lambda x: to_f32(x + c),
            "mul_const": lambda x: to_f32(x * c),
            "div_const": lambda x: to_f32(_fdiv(x, c)),
        }
        return table[op]
    ic = int_constant(const)
    itable: dict[str, Callable] = {
        "relu": lambda x: x if x > 0 else 0,
        "exp": lambda x: to_i32(int(_fexp(float(x)))) if x < 22 else 0x7FFFFFFF,
        "neg": lambda x: to_i32(-x),
        "rsqrt": lambda x: 0 if x <= 0 else int(_frsqrt(float(x))),
        "add_const": lambda x: to_i32(x + ic),
        "mul_const": lambda x: to_i32(x * ic),
        "div_const": lambda x: _idiv(x, ic),
    }
    return itable[op]


def reduce_identity(op: str, dtype: str) -> float | int:
    if op == "sum":
        return 0.0 if dtype == "float32" else 0
    return -_INF if dtype == "float32" else -0x80000000


def zero(dtype: str) -> float | int:
    return 0.0 if dtype == "float32" else 0
