"""Progress of long commands on stderr (``study``, ``tune``): a status line and events.

On a terminal the status line is redrawn in place every second, so its elapsed time and
ETA keep moving between finished runs. Anywhere else (a CI log, a file) redrawing would
leave one endless line, so the status is printed as a plain line at most every
``PLAIN_EVERY`` seconds, and once at the end: a log shows the run is alive without
a line per tick. Events (a finished evaluation, a phase) are always plain lines.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["Progress", "PLAIN_EVERY", "clock"]

#: seconds between status lines when stderr is not a terminal
PLAIN_EVERY = 30.0


def clock(seconds: float) -> str:
    """``m:ss``, or ``h:mm:ss`` from an hour."""
    s = int(round(max(seconds, 0.0)))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else \
        f"{s // 60}:{s % 60:02d}"


class Progress:
    """A status line drawn from ``status()`` (called under the lock, so it may read the
    caller's counters) plus permanent event lines; use as a context manager."""

    def __init__(self, status: Callable[[], str], *, enabled: bool = True,
                 stream: TextIO | None = None, tty: bool | None = None,
                 plain_every: float = PLAIN_EVERY, final_line: bool = True) -> None:
        self.status, self.enabled, self.final_line = status, enabled, final_line
        self.stream = stream if stream is not None else sys.stderr
        self.tty = _isatty(self.stream) if tty is None else tty
        self.plain_every = plain_every
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._last_plain = time.perf_counter()
        self._drawn = 0  # characters of the status line on screen (terminal only)
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Progress:
        if self.enabled:
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            self.refresh(timer=True)

    def refresh(self, timer: bool = False) -> None:
        """Redraw the status (terminal), or print it when ``plain_every`` has passed."""
        if not self.enabled:
            return
        with self._lock:
            now = time.perf_counter()
            if self.tty:
                self._draw(self.status())
            elif now - self._last_plain >= self.plain_every:
                self._last_plain = now
                self._line(self.status())

    def event(self, text: str) -> None:
        """A permanent line (the status line, on a terminal, is redrawn below it)."""
        if not self.enabled:
            return
        with self._lock:
            self._clear()
            self._line(text)
            if self.tty:
                self._draw(self.status())

    def close(self) -> None:
        """Stop redrawing; the final status stays as a plain line (unless the events have
        said it all: ``final_line=False``)."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        if not self.enabled:
            return
        with self._lock:
            self._clear()
            if self.final_line:
                self._line(self.status())
            self.enabled = False

    def _draw(self, text: str) -> None:
        pad = max(self._drawn - len(text), 0)
        print(f"\r{text}{' ' * pad}", end="", file=self.stream, flush=True)
        self._drawn = len(text)

    def _clear(self) -> None:
        if self.tty and self._drawn:
            print(f"\r{' ' * self._drawn}\r", end="", file=self.stream, flush=True)
            self._drawn = 0

    def _line(self, text: str) -> None:
        print(text, file=self.stream, flush=True)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
