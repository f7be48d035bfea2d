"""User-facing compiler errors: they say what was wrong, where, and what was expected."""

from __future__ import annotations

__all__ = ["CompileError", "ParseError", "LoweringError"]


class CompileError(ValueError):
    """An expression, format or order the compiler cannot accept (a user error).

    When the problem has a place in the expression, ``source`` and ``col`` (1-based)
    are set and ``str()`` shows the expression with a caret under that column.
    """

    def __init__(self, message: str, source: str | None = None, col: int | None = None):
        self.message, self.source, self.col = message, source, col
        super().__init__(self._render())

    def _render(self) -> str:
        if self.source is None or self.col is None:
            return self.message
        where = f"column {self.col}: {self.message}"
        return f"{where}\n  {self.source}\n  {' ' * (self.col - 1)}^"


class ParseError(CompileError):
    """The expression text is malformed."""


class LoweringError(CompileError):
    """A well-formed expression that cannot be lowered for the given formats or order."""
