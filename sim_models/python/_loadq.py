"""A value array's load queue (docs/timing.md, "Loads in flight").

With ``dram.load_queue`` = Q > 1 an array with a memory port is two stages joined by a
queue of Q - 1 registers: the *intake* takes the ref at its input's head into the queue
(its read was issued when the ref became visible, room or not), the *output* emits the
oldest queued ref's value once its data is usable, from the cycle it was taken on (the
queue falls through, so a token costs no more latency than without it). Q reads are in
flight: the queued refs' and the head's. Each stage runs on its own clock here; the
actor's ``t`` is the intake's, the earliest cycle it can still issue a read (the memory
system's horizon).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from ir import DONE

from ._actor import StreamError
from ._channel import Channel

__all__ = ["LoadQueue"]


class LoadQueue:
    """The two stages of a queued array; :meth:`run` is the actor's ``run``."""

    def __init__(self, array: Any, q: int) -> None:
        self.a = array
        self.room = q - 1               # queue registers
        self.taken: deque[tuple[Any, Any, int]] = deque()  # (token, handle, taken at)
        self.fired: deque[int] = deque(maxlen=self.room)  # the last firings' cycles
        self.n_in = self.n_out = 0      # refs taken, values emitted
        self.t_out = 0                  # the output's next cycle
        self.head: Any = None           # the head ref's read handle, once issued
        self.in_done = False            # D taken

    def _intake(self) -> bool:
        """Take every ref that can be taken; whether the input is what stops it."""
        a = self.a
        inp, port, words, n = a.inp, a.port, a.words, len(a.vals)
        while not self.in_done:
            rt = inp.ready()
            if rt < 0:
                return True
            c = a.t if a.t >= rt else rt
            tok = inp.peek()
            if tok.__class__ is int:
                if tok >= n:
                    raise StreamError(a.id, self.t_out,
                                      f"reference {tok} is outside the {n} values")
                if self.head is None:
                    self.head = port.read_span(tok * words, words, c)
            j = self.n_in - self.room   # the firing that frees this ref's register
            if j >= 0:
                if self.n_out <= j:
                    return False
                free = self.fired[j - (self.n_out - len(self.fired))] + 1
                if free > c:
                    c = free
            inp.pop(c)
            self.taken.append((tok, self.head if tok.__class__ is int else None, c))
            self.head = None
            self.n_in += 1
            a.t = c + 1
            self.in_done = tok is DONE
        return False

    def _emit(self) -> Channel | Any | None:
        """Emit every value that can be emitted; what stops it (``None``: done or empty)."""
        a = self.a
        out, port = a.out, a.port
        while self.taken:
            tok, h, vis = self.taken[0]
            st = out.space()
            if st < 0:
                return out
            mt = 0
            if h is not None:
                mt = port.wait(h)
                if mt < 0:
                    return port
            t_in = a.t  # the output fires on its own clock, charging the actor's stalls
            a.t = self.t_out
            f = a.fire_at(vis, st, mt)
            self.t_out = a.t
            self.taken.popleft()
            self.n_out += 1
            self.fired.append(f)
            if tok.__class__ is int:
                out.push(a.vals[tok], f)
            elif a.emit_control(tok, f):  # its errors name the output's next cycle
                return None
            a.t = t_in
        return None

    def run(self) -> Channel | Any | None:
        a = self.a
        while True:
            n_in, n_out = self.n_in, self.n_out
            on_input = self._intake()
            stop = self._emit()
            if a.finished:
                return None
            if self.n_in != n_in or self.n_out != n_out:
                continue
            if stop is None:  # nothing queued: the intake waits for its input
                return a.inp
            if on_input:  # the output waits on ``stop``; a new ref must wake it too
                a.inp.reader_waiting = True
            return stop
