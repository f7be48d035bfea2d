"""Writers: they record the result and their consuming ``D`` ends the run."""

from __future__ import annotations

from ir import DONE, EMPTY, Stop

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

    def run(self):
        inp = self.inp
        while True:
            rt = inp.ready()
            if rt < 0:
                return inp
            ft = self.fire_at(rt, 0)
            tok = inp.pop(ft)
            if tok.__class__ is int:
                self.crd.append(tok)
            elif tok.__class__ is Stop:
                self.stops.append((len(self.crd), tok.level))
            elif tok is DONE:
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

    def run(self):
        inp = self.inp
        while True:
            rt = inp.ready()
            if rt < 0:
                return inp
            ft = self.fire_at(rt, 0)
            tok = inp.pop(ft)
            cls = tok.__class__
            if cls is float or cls is int:
                self.vals.append(tok)
            elif tok is DONE:
                self.finish(ft)
                return None
            elif cls is not Stop:
                raise self.error(f"unexpected token {tok!r} on val")
