"""Contract FIFOs for the event-driven engine.

A channel remembers, per token, the cycle it was written and the cycle it was read. That
is all the timing contract needs: the head is visible to the reader from ``write + 1``;
the writer may push token ``n`` once token ``n - depth`` was read, from ``read + 1``.
Reader and writer advance their own clocks independently; whichever one lacks a fact
(a token not yet written, a read not yet simulated) blocks and is woken by the other.

``push`` and ``pop`` only append to those lists: everything derived from them (the
largest occupancy, the data tokens of a counted edge) is computed in batches when
consumed history is compacted away, so memory stays bounded and the per-token cost is
two appends. A traced channel keeps its whole history, which is then its trace.
"""

from __future__ import annotations

import sys
from collections import deque
from typing import Any

import numpy as np

from ir import is_data

__all__ = ["Channel", "CountingChannel", "Fanout", "NullChannel", "WorkList"]

_COMPACT = 4096


class WorkList(deque):
    """The actors that may be able to fire, each queued at most once."""

    def wake(self, actor: Any) -> None:
        if not actor.queued:
            actor.queued = True
            self.append(actor)


class Channel:
    """A contract FIFO; with ``trace`` it also keeps every token with its write and read
    cycles (``trace_toks``, ``trace_cycles``, ``trace_reads``)."""

    __slots__ = ("name", "kind", "depth", "toks", "wts", "rts", "h", "reader", "writer",
                 "reader_waiting", "writer_waiting", "work", "traced", "stats", "max_occ",
                 "numeric", "_keep", "_compact_at", "_occ_done")

    def __init__(self, name: str, kind: str, depth: int | None, work: WorkList,
                 trace: bool = False, stats: bool = True, numeric: str = "int") -> None:
        self.name, self.kind, self.depth, self.numeric = name, kind, depth, numeric
        self.toks: list = []       # tokens not yet compacted away, in write order
        self.wts: list[int] = []   # their write cycles
        self.rts: list[int] = []   # read cycles of the tokens read so far (same indexing)
        self.h = 0                 # index (into toks) of the next token to read
        self.reader: Any = None
        self.writer: Any = None
        self.reader_waiting = False
        self.writer_waiting = False
        self.work = work
        self.traced = trace
        self.stats = stats
        self.max_occ = 0
        self._keep = depth or 0
        # a traced channel keeps its history (its trace); others cut it every _COMPACT pops
        self._compact_at = sys.maxsize if trace else _COMPACT + self._keep
        self._occ_done = 0         # tokens whose occupancy at write is in max_occ

    # -- reader side ---------------------------------------------------------------------
    def ready(self) -> int:
        """Cycle from which the head is visible, or -1 if it is not written yet."""
        h = self.h
        if h < len(self.toks):
            return self.wts[h] + 1
        return -1

    def peek(self) -> Any:
        return self.toks[self.h]

    def pop(self, t: int) -> Any:
        h = self.h
        tok = self.toks[h]
        self.rts.append(t)
        self.h = h + 1
        if h > self._compact_at:
            self._compact()
        if self.writer_waiting:
            self.writer_waiting = False
            w = self.writer
            if not w.queued:
                w.queued = True
                self.work.append(w)
        return tok

    # -- writer side ---------------------------------------------------------------------
    def space(self) -> int:
        """Earliest cycle the next push may happen, or -1 if that read is not simulated yet."""
        d = self.depth
        if d is None:
            return 0
        i = len(self.toks) - d
        if i < 0:
            return 0
        if i < self.h:
            return self.rts[i] + 1
        return -1

    def push(self, tok: Any, t: int) -> None:
        self.toks.append(tok)
        self.wts.append(t)
        if self.reader_waiting:
            self.reader_waiting = False
            r = self.reader
            if not r.queued:
                r.queued = True
                self.work.append(r)

    # -- history -------------------------------------------------------------------------
    def _compact(self) -> None:
        """Cut the read history the contract no longer needs: the writer's space looks
        ``depth`` tokens back, and the occupancy of a token not yet read looks back to the
        first token still unread when the last read one was written."""
        last = self._occupancy() if self.stats else self.h
        cut = self.h - 1 - self._keep
        if self.depth is None and last < cut:
            cut = last
        if cut > 0:
            self._forget(cut)
            del self.toks[:cut], self.wts[:cut], self.rts[:cut]
            self.h -= cut
            self._occ_done -= cut
        self._compact_at = self.h + _COMPACT

    def _forget(self, cut: int) -> None:
        """Hook: the first ``cut`` tokens are about to be dropped."""

    def _occupancy(self) -> int:
        """Fold the occupancy right after each token read since the last call was written
        into ``max_occ``: tokens p..k, where p is the first token whose read came after
        that write (reads and writes are both in order). Returns p of the last token."""
        lo, hi = self._occ_done, self.h
        if lo >= hi:
            return lo
        first = np.searchsorted(np.asarray(self.rts[:hi]), np.asarray(self.wts[lo:hi]),
                                side="right")
        occ = int((np.arange(lo + 1, hi + 1) - first).max())
        if occ > self.max_occ:
            self.max_occ = occ
        self._occ_done = hi
        return int(first[-1])

    # -- end of run ----------------------------------------------------------------------
    def unread(self) -> int:
        return len(self.toks) - self.h

    def finish_stats(self) -> None:
        """Occupancy of the tokens read since the last compaction; tokens never read
        still count towards it."""
        if self.stats:
            self._occupancy()
            self.max_occ = max(self.max_occ, self.unread())

    @property
    def trace_toks(self) -> list | None:
        return self.toks if self.traced else None

    @property
    def trace_cycles(self) -> list[int] | None:
        return self.wts if self.traced else None

    @property
    def trace_reads(self) -> list[int] | None:
        return self.rts if self.traced else None

    def __repr__(self) -> str:
        return f"<Channel {self.name} depth={self.depth} unread={self.unread()}>"


class CountingChannel(Channel):
    """A channel that also counts its data tokens: the edges the work counters read
    (``ir.counted_edges``), so other channels pay nothing for it."""

    __slots__ = ("_data_cut",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._data_cut = 0  # data tokens among those compacted away

    def _forget(self, cut: int) -> None:
        self._data_cut += sum(map(is_data, self.toks[:cut]))

    @property
    def data(self) -> int:
        """Data tokens written so far."""
        return self._data_cut + sum(map(is_data, self.toks))


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
