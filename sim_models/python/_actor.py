"""The actor base class: one instance per graph node, with its own clock.

``run()`` fires as many times as it can and returns the channel it is blocked on
(``None`` once it has consumed ``D``). Each firing happens at the earliest cycle that
satisfies the firing rule in ``docs/primitives.md``: not before the actor's own next
cycle, not before every input it needs is visible, not before every output it writes
has space. Firing rules only ever wait for *more* input or *more* space, so that
earliest cycle is exactly the cycle a lock-step simulator would find.
"""

from __future__ import annotations

from typing import Any

from ir import Node, to_f32, to_i32

from ._channel import Channel

__all__ = ["Actor", "StreamError", "to_f32", "to_i32"]

class StreamError(RuntimeError):
    """A stream broke its nesting rules (misaligned stops, a token of the wrong type)."""

    def __init__(self, node: str, cycle: int, message: str) -> None:
        super().__init__(f"node {node!r} at cycle {cycle}: {message}")
        self.node, self.cycle = node, cycle


class Actor:
    """Shared bookkeeping; subclasses implement ``run``."""

    op = ""

    def __init__(self, node: Node, inputs: dict[str, Channel], outputs: dict[str, Channel],
                 ctx: Any) -> None:
        self.id = node.id
        self.node = node
        self.t = 0              # the next cycle this actor may fire in
        self.interval = 1       # initiation interval (the timing shell sets it, _timing.py)
        self.fires = 0
        self.stall_in = 0       # cycles waiting for an input token
        self.stall_out = 0      # cycles waiting for output space
        self.stall_mem = 0      # cycles waiting for memory data or a write slot
        self.finished = False
        self.done_cycle = -1
        self.blocked: Channel | None = None
        self.queued = False
        for ch in inputs.values():
            ch.reader = self
        for ch in outputs.values():
            for sub in getattr(ch, "chans", (ch,)):
                if isinstance(sub, Channel):
                    sub.writer = self
        self.inputs, self.outputs = inputs, outputs
        self.dtype = ctx.dtype
        #: cycles a value-consuming firing takes (blocks on a bounded datapath), else 1
        self.cycles = ctx.cycles.get(node.id, 1)

    def fire_at(self, rt: int, st: int, mt: int = 0, cycles: int = 1) -> int:
        """Claim the firing cycle: max(own clock, inputs visible ``rt``, memory ready
        ``mt``, space ``st``), charging the stalls in that order. A block firing of
        ``cycles`` > 1 occupies the node until ``ft + cycles`` (docs/blocks.md)."""
        t = self.t
        ft = t if t >= rt else rt
        if rt > t:
            self.stall_in += rt - t
        if mt > ft:
            self.stall_mem += mt - ft
            ft = mt
        if st > ft:
            self.stall_out += st - ft
            ft = st
        self.fires += 1
        self.t = ft + cycles
        return ft

    def ready_all(self, *chans: Channel) -> tuple[int, Channel | None]:
        """(cycle every head is visible, None) or (-1, the input to block on)."""
        rt = -1
        for ch in chans:
            h = ch.h
            if h >= len(ch.toks):
                return -1, ch
            r = ch.wts[h] + ch.vis
            if r > rt:
                rt = r
        return rt, None

    def space_all(self, *chans: Any) -> tuple[int, Any]:
        """(cycle every output has space, None) or (-1, the output to block on)."""
        st = 0
        for ch in chans:
            s = ch.space()
            if s < 0:
                return -1, ch
            if s > st:
                st = s
        return st, None

    def finish(self, cycle: int) -> None:
        self.finished = True
        self.done_cycle = cycle

    def error(self, message: str) -> StreamError:
        return StreamError(self.id, self.t, message)

    def run(self) -> Channel | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe_state(self) -> str:
        """Short state description for deadlock reports."""
        return ""
