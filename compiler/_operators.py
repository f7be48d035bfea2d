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

__all__ = ["BinaryOperator", "OPERATORS", "binary_operator"]

#: ``unary`` steps (op, const) applying an operator with a constant ``c`` to a stream;
#: None: no primitive computes it
ConstSteps = Callable[[float], list[tuple[str, float]] | None]


@dataclass(frozen=True)
class BinaryOperator:
    """One binary operator of the expression language."""

    symbol: str
    #: the ``alu`` primitive's op (also the node's name)
    alu: str
    #: how the operands' coordinates join: ``"intersect"`` (a product or quotient is
    #: zero where one factor is absent) or ``"union"`` (a sum needs every coordinate
    #: some term has); also the joiner primitives' names (``intersect``, ``union_val``)
    join: str
    #: constant folding of two constants (raises ZeroDivisionError for ``x / 0``)
    fold: Callable[[float, float], float]
    #: the steps for ``stream op c`` and for ``c op stream``
    const_right: ConstSteps
    const_left: ConstSteps
    #: the left factor's coordinates bound the right one's (``P · f(…)``, as the
    #: frontend emits masked functions), so a sum inside the right one unites with them
    bounds_right: bool = False

    @property
    def multiplicative(self) -> bool:
        """Zero where one operand is absent: its operands' coordinates intersect."""
        return self.join == "intersect"


OPERATORS: dict[str, BinaryOperator] = {op.symbol: op for op in (
    BinaryOperator("+", "add", "union", operator.add,
                   lambda c: [("add_const", c)], lambda c: [("add_const", c)]),
    BinaryOperator("-", "sub", "union", operator.sub,
                   lambda c: [("add_const", -c)], lambda c: [("neg", 0.0), ("add_const", c)]),
    BinaryOperator("*", "mul", "intersect", operator.mul,
                   lambda c: [("mul_const", c)], lambda c: [("mul_const", c)],
                   bounds_right=True),
    BinaryOperator("/", "div", "intersect", operator.truediv,
                   lambda c: [("div_const", c)], lambda c: None),
)}


def binary_operator(symbol: str) -> BinaryOperator:
    """The table entry of ``symbol`` (the parser admits only these)."""
    assert symbol in OPERATORS, f"unknown binary operator {symbol!r}"
    return OPERATORS[symbol]
