"""Stream traces: every token written on every edge, with the cycle it was written.

Text format (``samfuse-trace 1``), line oriented so that ``diff`` shows the first
divergence::

    # samfuse-trace 1
    # graph spmv
    edge B_i.crd->X.crd_a crd int
    0 0
    1 1
    3 S0
    5 D

One ``edge <name> <kind> <int|float>`` header per edge (edges sorted by name), then one
``<cycle> <token>`` line per token in write order. Tokens: decimal ints, floats as
``%.9g`` (exact for binary32), ``S<k>``, ``N``, ``D``, ``R``. ``untimed`` traces (HLS
C-simulation) write ``-`` for the cycle.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ._tokens import Block, Token, parse_token, token_text

__all__ = ["EdgeTrace", "Trace", "TraceMismatch", "compare_traces", "TraceFormatError"]

MAGIC = "# samfuse-trace 1"


class TraceFormatError(ValueError):
    """A trace file that does not follow the format; names the file and line."""


@dataclass
class EdgeTrace:
    name: str
    kind: str
    numeric: str = "int"  # "int" or "float": how data tokens are parsed
    tokens: list[Token] = field(default_factory=list)
    cycles: list[int | None] = field(default_factory=list)
    #: read cycle of each token, when the producer of the trace knows it (the Python model
    #: does); not part of the text format, which records writes only
    read_cycles: list[int] | None = None

    def append(self, tok: Token, cycle: int | None) -> None:
        self.tokens.append(tok)
        self.cycles.append(cycle)


@dataclass
class Trace:
    graph: str
    edges: dict[str, EdgeTrace] = field(default_factory=dict)

    def write(self, path: str | Path) -> None:
        Path(path).write_text(self.to_text())

    def to_text(self) -> str:
        lines = [MAGIC, f"# graph {self.graph}"]
        for name in sorted(self.edges):
            et = self.edges[name]
            lines.append(f"edge {name} {et.kind} {et.numeric}")
            lines.extend(f"{'-' if c is None else c} {token_text(t)}"
                         for t, c in zip(et.tokens, et.cycles, strict=True))
        return "\n".join(lines) + "\n"

    @classmethod
    def read(cls, path: str | Path) -> Trace:
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise TraceFormatError(f"cannot read trace {str(path)!r}: {exc.strerror}") from None
        return cls.from_text(text, str(path))

    @classmethod
    def from_text(cls, text: str, where: str = "<trace>") -> Trace:
        lines = text.splitlines()
        if not lines or lines[0].strip() != MAGIC:
            raise TraceFormatError(f"{where}:1: expected {MAGIC!r}")
        trace = cls(graph="")
        current: EdgeTrace | None = None
        numeric: type = int
        for lineno, line in enumerate(lines[1:], start=2):
            if not line.strip():
                continue
            if line.startswith("# graph "):
                trace.graph = line[8:].strip()
            elif line.startswith("#"):
                continue
            elif line.startswith("edge "):
                parts = line.split()
                if len(parts) != 4 or parts[3] not in ("int", "float"):
                    raise TraceFormatError(f"{where}:{lineno}: expected 'edge <name> <kind> "
                                           f"<int|float>', got {line!r}")
                current = EdgeTrace(parts[1], parts[2], parts[3])
                trace.edges[current.name] = current
                numeric = float if parts[3] == "float" else int
            else:
                if current is None:
                    raise TraceFormatError(f"{where}:{lineno}: token line before any 'edge'")
                cyc, _, tok = line.partition(" ")
                try:
                    current.append(parse_token(tok.strip(), numeric),
                                   None if cyc == "-" else int(cyc))
                except (ValueError, IndexError):
                    raise TraceFormatError(f"{where}:{lineno}: expected '<cycle> <token>', "
                                           f"got {line!r}") from None
        return trace


@dataclass(frozen=True)
class TraceMismatch:
    """The first divergence on one edge (``index`` into the token sequence)."""

    edge: str
    index: int
    left: tuple[Token | None, int | None]
    right: tuple[Token | None, int | None]
    what: str

    def __str__(self) -> str:
        return (f"edge {self.edge}: {self.what} at token #{self.index}: "
                f"{_show(self.left)} vs {_show(self.right)}")


def _show(pair: tuple[Token | None, int | None]) -> str:
    tok, cyc = pair
    if tok is None:
        return "<end of stream>"
    return f"{token_text(tok)}@{'-' if cyc is None else cyc}"


def _same_token(a: Token, b: Token) -> bool:
    if a.__class__ is float and b.__class__ is float and a != a and b != b:
        return True  # NaN == NaN in traces
    if a.__class__ is Block and b.__class__ is Block and a != b:
        # NaN == NaN per element too: trace text writes every NaN as "nan", so a NaN's
        # sign and payload do not survive a trace file, as for scalars
        x, y = a.a, b.a
        nan = np.isnan(x)
        return len(x) == len(y) and bool(np.array_equal(nan, np.isnan(y))) and \
            x[~nan].tobytes() == y[~nan].tobytes()
    return a == b


def compare_traces(left: Trace, right: Trace, timed: bool = True,
                   edges: Iterable[str] | None = None) -> list[TraceMismatch]:
    """Per edge, the first token (and, if ``timed``, cycle) where the traces differ."""
    names = sorted(set(left.edges) | set(right.edges)) if edges is None else sorted(edges)
    out: list[TraceMismatch] = []
    for name in names:
        a, b = left.edges.get(name), right.edges.get(name)
        if a is None or b is None:
            out.append(TraceMismatch(name, 0, (None, None), (None, None),
                                     f"edge only in the {'right' if a is None else 'left'}"
                                     " trace"))
            continue
        for i in range(max(len(a.tokens), len(b.tokens))):
            ta = (a.tokens[i], a.cycles[i]) if i < len(a.tokens) else (None, None)
            tb = (b.tokens[i], b.cycles[i]) if i < len(b.tokens) else (None, None)
            if ta[0] is None or tb[0] is None or not _same_token(ta[0], tb[0]):
                out.append(TraceMismatch(name, i, ta, tb, "token differs"))
                break
            if timed and ta[1] is not None and tb[1] is not None and ta[1] != tb[1]:
                out.append(TraceMismatch(name, i, ta, tb, "cycle differs"))
                break
    return out
