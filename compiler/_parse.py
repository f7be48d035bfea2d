"""Text → :class:`Assignment`: a small recursive-descent parser for tensor index notation.

Grammar (``docs/compiler.md`` has the prose)::

    statement := target '=' expr
    target    := NAME [ '(' [ names ] ')' ]
    expr      := term ( ('+' | '-') term )*
    term      := factor ( ('*' | '/') factor )*
    factor    := '-' factor | reduction | primary
    reduction := ('sum' | 'max') '(' names ')' term
    primary   := NUMBER | call | NAME [ '(' [ names ] ')' ] | '(' expr ')'
    call      := ('relu' | 'exp' | 'rsqrt') '(' expr ')'
    names     := NAME ( ',' NAME )*

A reduction's body is the whole product/quotient chain that follows it, as in written
mathematics: ``sum(k) C(i,k) * D(k,j) + E(i,j)`` is ``(Σ_k C·D) + E``. Errors point at the
column of the offending token and say what was expected there.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ._ast import FUNCTIONS, Access, Assignment, BinOp, Call, Const, Expr, Neg, Reduction
from ._errors import ParseError

__all__ = ["parse", "REDUCTION_OPS", "RESERVED", "MAX_EXPR_DEPTH"]

REDUCTION_OPS = ("sum", "max")
#: names that cannot name a tensor
RESERVED = REDUCTION_OPS + FUNCTIONS
#: the deepest expression tree (operators, parentheses, calls, reductions, one level each)
#: the compiler's recursive passes take; a fully fused GPT layer is 50 deep
MAX_EXPR_DEPTH = 100

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<number>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>[()=+\-*/,])
""", re.VERBOSE)


@dataclass(frozen=True)
class _Tok:
    kind: str  # "name", "number", "punct" or "end"
    text: str
    col: int  # 1-based

    def describe(self) -> str:
        if self.kind == "end":
            return "the end of the expression"
        if self.kind == "name":
            return f"name {self.text!r}"
        if self.kind == "number":
            return f"number {self.text}"
        return repr(self.text)


def _tokenize(text: str) -> list[_Tok]:
    toks, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ParseError(f"unexpected character {text[pos]!r}; expected a tensor "
                             "name, a number, or one of ( ) = + - * / ,", text, pos + 1)
        if m.lastgroup != "ws":
            toks.append(_Tok(m.lastgroup or "", m.group(), pos + 1))
        pos = m.end()
    toks.append(_Tok("end", "", len(text) + 1))
    return toks


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokenize(text)
        self.pos = 0
        self.nesting = 0  # open parentheses, calls, negations and reductions

    def nest(self, tok: _Tok) -> None:
        """Enter one level of recursion, refusing more than :data:`MAX_EXPR_DEPTH`."""
        self.nesting += 1
        if self.nesting > MAX_EXPR_DEPTH:
            raise _too_deep(self.text, tok.col)

    # -- helpers ------------------------------------------------------------------------
    @property
    def tok(self) -> _Tok:
        return self.toks[self.pos]

    def advance(self) -> _Tok:
        t = self.toks[self.pos]
        self.pos += 1
        return t

    def error(self, expected: str, tok: _Tok | None = None) -> ParseError:
        tok = tok or self.tok
        return ParseError(f"expected {expected}, found {tok.describe()}", self.text, tok.col)

    def expect(self, text: str, what: str) -> _Tok:
        if self.tok.kind == "punct" and self.tok.text == text:
            return self.advance()
        raise self.error(what)

    def at(self, *texts: str) -> bool:
        return self.tok.kind == "punct" and self.tok.text in texts

    # -- grammar ------------------------------------------------------------------------
    def statement(self) -> Assignment:
        if self.tok.kind != "name":
            raise self.error("the output tensor, e.g. 'X(i,j)'")
        target = self.access(self.advance(), "the output's index list")
        if target.tensor in RESERVED:
            what = "a reduction" if target.tensor in REDUCTION_OPS else "a function"
            raise ParseError(f"{target.tensor!r} is {what} and cannot name the output "
                             "tensor", self.text, target.col)
        self.expect("=", "'=' after the output tensor")
        if self.tok.kind == "end":
            raise self.error("an expression after '='")
        rhs = self.expr()
        if self.tok.kind != "end":
            raise self.error("an operator (+ - * /) or the end of the expression")
        return Assignment(target, rhs, self.text)

    def expr(self) -> Expr:
        left = self.term()
        while self.at("+", "-"):
            op = self.advance()
            left = BinOp(op.text, left, self.term(), op.col)
        return left

    def term(self) -> Expr:
        left = self.factor()
        while self.at("*", "/"):
            op = self.advance()
            left = BinOp(op.text, left, self.factor(), op.col)
        return left

    def factor(self) -> Expr:
        tok = self.tok
        if self.at("-"):
            self.advance()
            self.nest(tok)
            inner = self.factor()
            self.nesting -= 1
            return Neg(inner, tok.col)
        if tok.kind == "name" and tok.text in REDUCTION_OPS:
            return self.reduction()
        return self.primary()

    def reduction(self) -> Reduction:
        op = self.advance()
        self.expect("(", f"'(' and the reduced index variables after {op.text!r}, "
                         f"e.g. '{op.text}(k)'")
        if self.at(")"):
            raise self.error(f"at least one index variable to reduce in {op.text}(...)")
        names = self.names(f"the index list of {op.text}(...)")
        if self.tok.kind == "end" or self.at(")", "+", "*", "/", ",", "="):
            raise self.error(f"the body of {op.text}({','.join(names)}), e.g. "
                             f"'{op.text}({names[0]}) B(i,{names[0]})'")
        self.nest(op)
        body = self.term()
        self.nesting -= 1
        return Reduction(op.text, names, body, op.col)

    def primary(self) -> Expr:
        tok = self.tok
        if tok.kind == "number":
            self.advance()
            value = float(tok.text)
            if not math.isfinite(value):
                raise ParseError(f"number {tok.text} is too large for a float", self.text,
                                 tok.col)
            return Const(value, tok.col)
        if tok.kind == "name" and tok.text in FUNCTIONS:
            return self.call()
        if tok.kind == "name":
            if self.is_call():
                raise ParseError(f"unknown function {tok.text!r}; the known functions are "
                                 f"{', '.join(FUNCTIONS)} (a tensor access lists index "
                                 "variables only, e.g. 'B(i,j)')", self.text, tok.col)
            return self.access(self.advance(), f"the index list of {tok.text!r}")
        if self.at("("):
            self.advance()
            self.nest(tok)
            inner = self.expr()
            self.expect(")", "')' to close the '(' at column " + str(tok.col))
            self.nesting -= 1
            return inner
        raise self.error("a tensor access such as 'B(i,j)', a number, a reduction "
                         "such as 'sum(k) ...', a function such as 'relu(...)', '-' or '('")

    def call(self) -> Call:
        fn = self.advance()
        self.expect("(", f"'(' after the function {fn.text!r}, e.g. '{fn.text}(B(i,j))'")
        if self.at(")"):
            raise self.error(f"an expression as the argument of {fn.text}(...)")
        self.nest(fn)
        arg = self.expr()
        self.expect(")", f"')' to close {fn.text}( at column {fn.col}")
        self.nesting -= 1
        return Call(fn.text, arg, fn.col)

    def is_call(self) -> bool:
        """``NAME (`` followed by a number, an operator, ``(`` or an access: a call."""
        nxt = self.toks[self.pos + 1:self.pos + 4]
        if len(nxt) < 3 or nxt[0].text != "(" or nxt[0].kind != "punct":
            return False
        first, after = nxt[1], nxt[2]
        if first.kind == "punct" and first.text == ")":
            return False
        if first.kind != "name":
            return True
        return after.kind == "punct" and after.text == "("

    def access(self, name: _Tok, what: str) -> Access:
        if not self.at("("):
            return Access(name.text, (), name.col)  # a scalar (rank-0) tensor
        self.advance()
        if self.at(")"):
            self.advance()
            return Access(name.text, (), name.col)
        names = self.names(what)
        return Access(name.text, names, name.col)

    def names(self, what: str) -> tuple[str, ...]:
        out = []
        while True:
            if self.tok.kind != "name":
                raise self.error(f"an index variable in {what}")
            out.append(self.advance().text)
            if self.at(")"):
                self.advance()
                return tuple(out)
            if not self.at(","):
                raise self.error(f"',' or ')' in {what}")
            self.advance()


def parse(text: str) -> Assignment:
    """Parse ``X(i,j) = B(i,k) * C(k,j)``-style text; raises :class:`ParseError`."""
    if not isinstance(text, str):
        raise TypeError(f"expression must be a str, got {type(text).__name__}")
    if "\n" in text.strip():
        raise ParseError("an expression is a single line; found a line break", text.strip(),
                         text.strip().index("\n") + 1)
    assign = _Parser(text.strip()).statement()
    _check_depth(assign)
    return assign


def _too_deep(text: str, col: int) -> ParseError:
    return ParseError(f"the expression nests more than {MAX_EXPR_DEPTH} levels deep "
                      "(operators, parentheses, calls); split it into several statements",
                      text, col)


def _check_depth(assign: Assignment) -> None:
    """Refuse a tree deeper than :data:`MAX_EXPR_DEPTH` (``B + B + … + B`` is parsed by a
    loop but nests one level per term), walking it without recursion."""
    stack: list[tuple[Expr, int]] = [(assign.rhs, 1)]
    while stack:
        e, d = stack.pop()
        if d > MAX_EXPR_DEPTH and not isinstance(e, Access | Const):
            raise _too_deep(assign.source, getattr(e, "col", 1) or 1)
        stack.extend((c, d + 1) for c in (getattr(e, "left", None), getattr(e, "right", None),
                                          getattr(e, "operand", None), getattr(e, "arg", None),
                                          getattr(e, "body", None)) if c is not None)
