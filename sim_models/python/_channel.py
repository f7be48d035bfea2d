"""Contract FIFOs for the event-driven engine.

A channel remembers, per token, the cycle it was written and the cycle it was read. That
is all the timing contract needs: the head is visible to the reader from ``write + vis``
(``write + 1`` at the default timing knobs); the writer may push token ``n`` once token
``n - depth`` was read, from ``read + 1``.
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
                 "numeric", "_keep", "_compact_at", "_occ_done", "vis", "acct", "prev_r",
                 "full_cycles", "empty_cycles")

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
        #: cycles from a push to the head being visible: the writer's latency - 1 + the
        #: FIFO's read latency (docs/timing.md); 1 at the default knobs
        self.vis = 1
        # the FIFO report (docs/timing.md): tokens before ``acct`` are counted in the full
        # and empty cycles; ``prev_r`` is the read cycle of token ``acct - 1`` once cut
        self.acct = 0
        self.prev_r = -1
        self.full_cycles = self.empty_cycles = 0

    # -- reader side ---------------------------------------------------------------------
    def ready(self) -> int:
        """Cycle from which the head is visible, or -1 if it is not written yet."""
        h = self.h
        if h < len(self.toks):
            return self.wts[h] + self.vis
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
            if self.stats:
                self._account()
                if 0 < self.acct <= cut:
                    self.prev_r = self.rts[self.acct - 1]
                self.acct -= cut
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

    def retime(self, capacity: int | None, vis: int) -> None:
        """Set the capacity and visibility delay the elaboration gives the edge (before
        the run; the timing shell, ``_timing.py``)."""
        self.depth, self.vis = capacity, vis
        self._keep = capacity or 0
        if not self.traced:
            self._compact_at = _COMPACT + self._keep

    # -- the FIFO report -----------------------------------------------------------------
    def _account(self, end: int = -1) -> None:
        """Add the full and empty cycles of the tokens whose intervals are known: token n
        makes the FIFO start full in cycles ``(w[n], r[n - cap + 1]]`` and leaves it empty
        in ``(r[n - 1], w[n]]``. With ``end`` (the report's end), an unread token is read
        at ``end - 1`` (it stays to the end) and every token is counted."""
        wts, rts, h, cap = self.wts, self.rts, self.h, self.depth
        n0, stop = self.acct, len(wts)
        if end < 0:
            stop = min(stop, h + 1, stop if cap is None else h + cap - 1)
        if stop <= n0:
            return
        # reads[k] = read cycle of token k - 1 (reads[0]: the token before the list)
        known = min(stop, h)
        reads = np.empty(stop + 1, dtype=np.int64)
        reads[0] = self.prev_r
        reads[1:known + 1] = rts[:known]
        reads[known + 1:] = end - 1  # unread at the end: stays to the end of the report
        n = np.arange(n0, stop)
        w = np.asarray(wts[n0:stop], dtype=np.int64)
        self.empty_cycles += int(np.maximum(w - reads[n], 0).sum())
        if cap is not None:
            ok = n >= cap - 1
            self.full_cycles += int(np.maximum(reads[n[ok] - cap + 2] - w[ok], 0).sum())
        self.acct = stop

    def fifo_report(self, cycles: int) -> tuple[int, int, int]:
        """(peak, full cycles, empty cycles) over the cycles ``[0, E)``, E = the run's
        cycle count or 1 + the edge's last read or write if later (docs/timing.md)."""
        last_r = self.rts[self.h - 1] if self.h > 0 else self.prev_r
        end = max(cycles, 1 + max(self.wts[-1] if self.wts else -1, last_r))
        self._account(end)
        tail = end - 1 - last_r if self.h == len(self.toks) else 0
        return self.max_occ, self.full_cycles, self.empty_cycles + tail

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
