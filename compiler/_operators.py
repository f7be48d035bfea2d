"""The binary operators ``+ - * /``: what the lowering and the passes ask of each.

One table instead of ``op in "*/"`` tests: whether an operator is multiplicative (its
operands' coordinates intersect, one zero operand makes it zero) or additive (they
unite, every operand must be zero), the ALU op computing it, how it folds constants,
and the ``unary`` steps that apply it when one side is a constant.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["BinaryOperator", "OPERATORS"]

#: ``unary`` steps (op, const) applying an operator with a constant ``c`` to a stream;
#: None: no primitive computes it
ConstSteps = Callable[[float], list[tuple[str, float]] | None]


@dataclass(frozen=True)
class BinaryOperator:
    """One binary operator of the expression language."""

    symbol: str
    #: the ``alu`` primitive's op (also the node's name)
    alu: str
    #: constant folding of two constants (raises ZeroDivisionError for ``x / 0``)
    fold: Callable[[float, float], float]
    #: the steps for ``stream op c`` and for ``c op stream``
    const_right: ConstSteps
    const_left: ConstSteps
    #: zero where one operand is absent (a product or quotient), so the operands'
    #: coordinates intersect; else (a sum) they unite: every coordinate some term has
    multiplicative: bool = False
    #: the left factor's coordinates bound the right one's (``P · f(…)``, as the
    #: frontend emits masked functions), so a sum inside the right one unites with them
    bounds_right: bool = False

    @property
    def join(self) -> str:
        """How the operands' coordinates join, as the joiner primitives are named
        (``intersect``/``union``, and ``intersect_val``/``union_val`` with rows)."""
        return "intersect" if self.multiplicative else "union"


OPERATORS: dict[str, BinaryOperator] = {op.symbol: op for op in (
    BinaryOperator("+", "add", operator.add,
                   lambda c: [("add_const", c)], lambda c: [("add_const", c)]),
    BinaryOperator("-", "sub", operator.sub,
                   lambda c: [("add_const", -c)], lambda c: [("neg", 0.0), ("add_const", c)]),
    BinaryOperator("*", "mul", operator.mul,
                   lambda c: [("mul_const", c)], lambda c: [("mul_const", c)],
                   multiplicative=True, bounds_right=True),
    BinaryOperator("/", "div", operator.truediv,
                   lambda c: [("div_const", c)], lambda c: None, multiplicative=True),
)}

