"""Writers: they record the result and their consuming ``D`` ends the run."""

from __future__ import annotations

from ir import DONE, EMPTY, Stop

from ._actor import Actor

__all__ = ["LevelWriter", "ValueWriter"]


def write_slot(port, done: bool) -> int:
    """Cycle from which the next word may be written (0 if it issues no write), or -1
    while the write it must wait for is not yet acknowledged (docs/timing.md, Memory)."""
    if not (port.partial() if done else port.fills_line()):
        return 0
    h = port.slot()
    return 0 if h is None else port.wait(h)


def flush(port, cycle: int) -> None:
    """``D``: the partly filled line goes out."""
    if port.partial():
        port.flush(cycle)


class LevelWriter(Actor):
    """Appends crds and, for every stop, the crd count and the stop's level.

    Recording every stop (rather than deciding fiber boundaries on the fly) lets the
    result be decoded exactly against the parent level: see ``decode_levels``.
    """

    op = "level_writer"

    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        self.inp = inputs["crd"]
        self.crd: list[int] = []
        self.stops: list[tuple[int, int]] = []
        self.cport, self.sport = ctx.mem_port(self, "crd"), ctx.mem_port(self, "seg")

    def run(self):
        inp, cport, sport = self.inp, self.cport, self.sport
        while True:
            rt = inp.ready()
            if rt < 0:
                return inp
            mt = 0
            if cport is not None:
                tok = inp.peek()
                cls = tok.__class__
                ports = ((cport,) if cls is int else (sport,) if cls is Stop
                         else (cport, sport) if tok is DONE else ())
                for port in ports:
                    m = write_slot(port, tok is DONE)
                    if m < 0:
                        return port
                    if m > mt:
                        mt = m
            ft = self.fire_at(rt, 0, mt)
            tok = inp.pop(ft)
            if tok.__class__ is int:
                self.crd.append(tok)
                if cport is not None:
                    cport.add_word(ft)
            elif tok.__class__ is Stop:
                self.stops.append((len(self.crd), tok.level))
                if sport is not None:
                    sport.add_word(ft)
            elif tok is DONE:
                if cport is not None:
                    flush(cport, ft)
                    flush(sport, ft)
                self.finish(ft)
                return None
            elif tok is not EMPTY:
                raise self.error(f"unexpected token {tok!r} on crd")


class ValueWriter(Actor):
    op = "value_writer"

    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        self.inp = inputs["val"]
        self.vals: list = []
        self.port = ctx.mem_port(self, "vals")

    def run(self):
        inp, port = self.inp, self.port
        while True:
            rt = inp.ready()
            if rt < 0:
                return inp
            mt = 0
            if port is not None:
                tok = inp.peek()
                if tok.__class__ is not Stop:
                    mt = write_slot(port, tok is DONE)
                    if mt < 0:
                        return port
            ft = self.fire_at(rt, 0, mt)
            tok = inp.pop(ft)
            cls = tok.__class__
            if cls is float or cls is int:
                self.vals.append(tok)
                if port is not None:
                    port.add_word(ft)
            elif tok is DONE:
                if port is not None:
                    flush(port, ft)
                self.finish(ft)
                return None
            elif cls is not Stop:
                raise self.error(f"unexpected token {tok!r} on val")
