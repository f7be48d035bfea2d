"""The locator: a coordinate stream addresses a dense level directly (SAM's *locate*).

Instead of scanning all ``n`` coordinates of a dense level and intersecting them with a
sparser stream, each coordinate ``c`` of the sparser stream, with the dense level's parent
position ``r`` aligned to it, becomes the dense child position ``r * n + c`` in one cycle.
"""

from __future__ import annotations

from ir import DONE, EMPTY, Stop

from ._actor import Actor

__all__ = ["Locate"]


class Locate(Actor):
    """``ref = ref_in * n + crd_in`` on aligned streams; ``N`` on either gives ``N``."""

    op = "locate"

    def __init__(self, node, inputs, outputs, ctx):
        super().__init__(node, inputs, outputs, ctx)
        self.crd, self.ref, self.out = inputs["crd_in"], inputs["ref_in"], outputs["ref"]
        # the dense level addresses itself (``DenseLevel.locate``)
        self.level = ctx.level(node)
        self.size = self.level.size
        self.nfib = ctx.fibers(node)

    def run(self):
        crd_ch, ref_ch, out, n, nfib = self.crd, self.ref, self.out, self.size, self.nfib
        locate = self.level.locate
        while True:
            rt = crd_ch.ready()
            if rt < 0:
                return crd_ch
            r2 = ref_ch.ready()
            if r2 < 0:
                return ref_ch
            st = out.space()
            if st < 0:
                return out
            c, r = crd_ch.peek(), ref_ch.peek()
            if c.__class__ is int and r.__class__ is int:
                if not 0 <= c < n:
                    raise self.error(f"coordinate {c} is outside the dense level of size {n}")
                if not 0 <= r < nfib:
                    raise self.error(f"reference {r} is outside the level's {nfib} fibers")
                res = locate(r, c)
            elif (c.__class__ is int or c is EMPTY) and (r.__class__ is int or r is EMPTY):
                res = EMPTY
            elif (c.__class__ is Stop or c is DONE) and c == r:
                res = c
            else:
                raise self.error(f"misaligned streams: crd_in holds {c!r} while ref_in "
                                 f"holds {r!r}")
            ft = self.fire_at(rt if rt > r2 else r2, st)
            crd_ch.pop(ft)
            ref_ch.pop(ft)
            out.push(res, ft)
            if res is DONE:
                self.finish(ft)
                return None
