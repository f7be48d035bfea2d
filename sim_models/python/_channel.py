"""Contract FIFOs for the event-driven engine.

A channel remembers, per token, the cycle it was written and the cycle it was read. That
is all the timing contract needs: the head is visible to the reader from ``write + 1``;
the writer may push token ``n`` once token ``n - depth`` was read, from ``read + 1``.
Reader and writer advance their own clocks independently; whichever one lacks a fact
(a token not yet written, a read not yet simulated) blocks and is woken by the other.
Consumed history is compacted away so memory stays bounded.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable

__all__ = ["Channel", "Fanout", "NullChannel"]

_COMPACT = 4096


class Channel:
    __slots__ = ("name", "kind", "depth", "toks", "wts", "rts", "head", "base",
                 "reader", "writer", "reader_waiting", "writer_waiting", "wake",
                 "trace_toks", "trace_cycles", "occ", "max_occ", "_keep", "numeric")

    def __init__(self, name: str, kind: str, depth: int | None, wake: Callable[[Any], None],
                 trace: bool = False, stats: bool = True, numeric: str = "int") -> None:
        self.name, self.kind, self.depth, self.numeric = name, kind, depth, numeric
        self.toks: list = []
        self.wts: list[int] = []
        self.rts: list[int] = []
        self.head = 0          # absolute index of the next token to read
        self.base = 0          # absolute index of toks[0]
        self._keep = depth or 0
        self.reader: Any = None
        self.writer: Any = None
        self.reader_waiting = False
        self.writer_waiting = False
        self.wake = wake
        self.trace_toks: list | None = [] if trace else None
        self.trace_cycles: list[int] | None = [] if trace else None
        self.occ: deque[int] | None = deque() if stats else None
        self.max_occ = 0

    # -- reader side ---------------------------------------------------------------------
    def ready(self) -> int:
        """Cycle from which the head is visible, or -1 if it is not written yet."""
        h = self.head - self.base
        if h < len(self.toks):
            return self.wts[h] + 1
        return -1

    def peek(self) -> Any:
        return self.toks[self.head - self.base]

    def pop(self, t: int) -> Any:
        h = self.head - self.base
        tok = self.toks[h]
        self.rts.append(t)
        self.head += 1
        occ = self.occ
        if occ is not None:
            # occupancy just after the write of this token: tokens up to it still unread then
            occ.append(t)
            w = self.wts[h]
            while occ[0] <= w:
                occ.popleft()
            if len(occ) > self.max_occ:
                self.max_occ = len(occ)
        if h > _COMPACT + self._keep:
            cut = h - self._keep
            del self.toks[:cut], self.wts[:cut], self.rts[:cut]
            self.base += cut
        if self.writer_waiting:
            self.writer_waiting = False
            self.wake(self.writer)
        return tok

    # -- writer side ---------------------------------------------------------------------
    def space(self) -> int:
        """Earliest cycle the next push may happen, or -1 if that read is not simulated yet."""
        d = self.depth
        if d is None:
            return 0
        i = self.base + len(self.toks) - d
        if i < 0:
            return 0
        if i < self.head:
            return self.rts[i - self.base] + 1
        return -1

    def push(self, tok: Any, t: int) -> None:
        self.toks.append(tok)
        self.wts.append(t)
        if self.trace_toks is not None:
            self.trace_toks.append(tok)
            self.trace_cycles.append(t)
        if self.reader_waiting:
            self.reader_waiting = False
            self.wake(self.reader)

    # -- end of run ----------------------------------------------------------------------
    def unread(self) -> int:
        return self.base + len(self.toks) - self.head

    def finish_stats(self) -> None:
        """Tokens never read still count towards occupancy."""
        if self.occ is not None:
            self.max_occ = max(self.max_occ, self.unread())

    def __repr__(self) -> str:
        return f"<Channel {self.name} depth={self.depth} unread={self.unread()}>"


class Fanout:
    """One output port feeding several edges: a push needs space on every one of them."""

    __slots__ = ("chans", "blocking")

    def __init__(self, chans: list[Channel]) -> None:
        self.chans = chans
        self.blocking: Channel | None = None

    def space(self) -> int:
        best = 0
        for c in self.chans:
            s = c.space()
            if s < 0:
                self.blocking = c
                return -1
            if s > best:
                best = s
        return best

    def push(self, tok: Any, t: int) -> None:
        for c in self.chans:
            c.push(tok, t)


class NullChannel:
    """An unconnected output: always has space, drops what it is given."""

    __slots__ = ()

    def space(self) -> int:
        return 0

    def push(self, tok: Any, t: int) -> None:
        pass
