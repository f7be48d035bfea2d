"""The timing shell: a node's latency, II and start-up (docs/timing.md, "Latency, II and
start-up") applied around every primitive's firing, in one place.

A primitive's actor claims each firing cycle with ``Actor.fire_at`` and pushes at that
cycle; the shell changes only what follows from the knobs: the actor's first cycle
(``startup``), its next cycle after a firing (``ii``, through the firing's occupancy), and
when its pushes become visible (``latency``, carried by each output channel's visibility
delay, which ``ir.elaborate`` gives every edge together with its read latency and
capacity). At the default knobs it changes nothing, so it costs nothing.
"""

from __future__ import annotations

from types import MethodType

from ir import EdgeTiming, NodeTiming

from ._actor import Actor
from ._channel import Channel

__all__ = ["time_actor", "time_channel"]


def _throttled_fire_at(self: Actor, rt: int, st: int, mt: int = 0, cycles: int = 1) -> int:
    """``Actor.fire_at`` at initiation interval ``ii``: a firing occupies its node at
    least ``ii`` cycles (a longer block firing is not slowed further)."""
    return Actor.fire_at(self, rt, st, mt, cycles if cycles > self.interval else self.interval)


def time_actor(actor: Actor, timing: NodeTiming) -> None:
    """Give ``actor`` its start-up cycle and initiation interval."""
    actor.t = timing.startup
    actor.interval = timing.ii
    if timing.ii > 1:
        actor.fire_at = MethodType(_throttled_fire_at, actor)


def time_channel(channel: Channel, timing: EdgeTiming) -> None:
    """Give ``channel`` its capacity and visibility delay (writer latency - 1 + read
    latency)."""
    channel.retime(timing.capacity, timing.visibility)
