"""Writers: they record the result and their consuming ``D`` ends the run."""

from __future__ import annotations

from ir import DONE, EMPTY, Block, Stop

from ._actor import Actor

__all__ = ["LevelWriter", "ValueWriter"]


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
                    m = port.slot(tok is DONE)
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
                    cport.flush(ft)
                    sport.flush(ft)
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
        self.words = ctx.elems_in(node, "val")  # memory words per value (block elements)

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
                    mt = port.slot(tok is DONE, self.words)
                    if mt < 0:
                        return port
            ft = self.fire_at(rt, 0, mt)
            tok = inp.pop(ft)
            cls = tok.__class__
            if cls is float or cls is int or cls is Block:
                self.vals.append(tok)
                if port is not None:
                    port.add_word(ft, self.words)
            elif tok is DONE:
                if port is not None:
                    port.flush(ft)
                self.finish(ft)
                return None
            elif cls is not Stop:
                raise self.error(f"unexpected token {tok!r} on val")
