"""The operator table (compiler/_operators.py) against numpy's arithmetic."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler._operators import OPERATORS

NUMPY = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}
#: what each ``unary`` op computes on a stream value ``x`` (docs/primitives.md)
UNARY = {"neg": lambda x, c: -x, "add_const": lambda x, c: x + c,
         "mul_const": lambda x, c: x * c, "div_const": lambda x, c: x / c}
FINITE = st.floats(-1e3, 1e3, allow_nan=False).filter(lambda v: abs(v) > 1e-3)


def _apply(steps: list[tuple[str, float]], x: float) -> float:
    for op, c in steps:
        x = UNARY[op](x, c)
    return x


@pytest.mark.parametrize("symbol", sorted(NUMPY))
@settings(max_examples=30, deadline=None)
@given(x=FINITE, c=FINITE)
def test_constant_forms_compute_the_operator(symbol: str, x: float, c: float) -> None:
    op = OPERATORS[symbol]
    assert op.fold(x, c) == pytest.approx(float(NUMPY[symbol](x, c)))
    assert _apply(op.const_right(c), x) == pytest.approx(float(NUMPY[symbol](x, c)))
    left = op.const_left(c)
    if left is None:  # only the reverse division has no primitive
        assert symbol == "/"
    else:
        assert _apply(left, x) == pytest.approx(float(NUMPY[symbol](c, x)))


def _primitive(symbol: str, a: float, b: float) -> float:
    """What the ALU computes: numpy's arithmetic, with x / 0 = 0 (docs/primitives.md)."""
    return 0.0 if symbol == "/" and b == 0 else float(NUMPY[symbol](a, b))


@pytest.mark.parametrize("symbol", sorted(NUMPY))
def test_join_follows_what_an_absent_operand_makes(symbol: str) -> None:
    """Intersect exactly when one absent (zero) operand makes the result zero."""
    op = OPERATORS[symbol]
    x = 3.0
    annihilates = _primitive(symbol, x, 0.0) == 0 and _primitive(symbol, 0.0, x) == 0
    assert op.multiplicative == annihilates
    assert op.join == ("intersect" if annihilates else "union")


def test_operators_are_the_parser_and_catalogue_ones() -> None:
    from ir import BINARY_OPS, UNARY_OPS
    assert {o.alu for o in OPERATORS.values()} <= set(BINARY_OPS)
    assert {step for o in OPERATORS.values() for c in (2.0,)
            for steps in (o.const_right(c), o.const_left(c) or [])
            for step, _ in steps} <= set(UNARY_OPS)
