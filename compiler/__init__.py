"""The samfuse compiler: tensor index expressions → SAMML ``ir.Graph``.

Takes one expression in index notation (``X(i,j) = B(i,k) * C(k,j)``) with storage
formats, shapes and optionally a dataflow order, and produces a validated graph of SAM
primitives that any backend can run. ``docs/compiler.md`` documents the syntax, the
lowering rules, transposes and limits.
"""

from ._ast import Access, Assignment, BinOp, Const, Expr, Neg, Reduction
from ._compile import compile_expression, parse_order
from ._errors import CompileError, LoweringError, ParseError
from ._normalize import Normalized, normalize
from ._parse import parse

__all__ = [
    # entry point
    "compile_expression",
    # passes
    "parse", "normalize", "parse_order", "Normalized",
    # expression tree
    "Assignment", "Access", "Const", "Neg", "BinOp", "Reduction", "Expr",
    # errors
    "CompileError", "ParseError", "LoweringError",
]
