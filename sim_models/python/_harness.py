"""Run one primitive on given input token streams: for unit tests and trace replay.

Input tokens are pre-written at given cycles (an ideal source); each output is drained by
an ideal sink that reads every token as soon as it is visible (or every ``sink_period``
cycles, to model a slow consumer). The same firing rules run as in a whole graph.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ir import DONE, Graph, Node, TensorSpec

from ._actor import Actor
from ._channel import Channel, WorkList
from ._engine import ACTORS, _Context, bind_inputs, drain

__all__ = ["run_primitive", "PrimitiveRun"]


class _Sink(Actor):
    op = "_sink"

    def __init__(self, node, ch, period):
        super().__init__(node, {"in": ch}, {}, _Dtype())
        self.inp, self.period = ch, period

    def run(self):
        while True:
            rt = self.inp.ready()
            if rt < 0:
                return self.inp
            ft = self.fire_at(rt, 0)
            self.t = ft + self.period
            if self.inp.pop(ft) is DONE:
                self.finish(ft)
                return None


class _Dtype:
    dtype = "float32"
    cycles: dict[str, int] = {}


class PrimitiveRun:
    """Outputs of :func:`run_primitive`: per port, tokens and their write cycles."""

    def __init__(self, tokens: dict[str, list], cycles: dict[str, list[int]], actor: Actor):
        self.tokens, self.cycles, self.actor = tokens, cycles, actor

    def __repr__(self) -> str:
        return f"PrimitiveRun({self.tokens})"


def run_primitive(op: str, inputs: Mapping[str, Sequence[Any]], *, params: dict | None = None,
                  tensors: Mapping[str, Any] | None = None, tensor_specs: Sequence[TensorSpec] = (),
                  input_cycles: Mapping[str, Sequence[int]] | None = None,
                  depth: int | None = 2, sink_period: int = 1,
                  dtype: str = "float32", elems: Mapping[str, int] | None = None,
                  cycles: int = 1) -> PrimitiveRun:
    """Fire primitive ``op`` on ``inputs`` (port → tokens) until it consumes ``D``.

    ``elems`` gives the elements per value token of block ports (port → count) and
    ``cycles`` the cycles a value-consuming firing takes (docs/blocks.md).

    ``input_cycles`` gives each input token's write cycle (default: token *i* written at
    cycle *i - 1*, so the whole stream is available at the source's full rate).
    """
    node = Node("dut", op, dict(params or {}))
    prim = node.primitive
    # validate parameters through a one-node graph (no edges needed for that check)
    g = Graph.__new__(Graph)
    g.nodes, g.dtype, g.name = {"dut": node}, dtype, "harness"
    g.tensors = {t.name: t for t in tensor_specs}
    Graph._validate_nodes(g)
    ctx = _Context(g, bind_inputs(g, tensors or {}) if tensor_specs else {},
                   ports=dict(elems or {}))
    ctx.dtype = dtype
    ctx.cycles = {"dut": cycles} if cycles > 1 else {}
    work = WorkList()

    ins: dict[str, Channel] = {}
    for port in prim.inputs:
        toks = list(inputs[port.name])
        ch = Channel(f"in.{port.name}", port.kind, None, work)
        cyc = (input_cycles or {}).get(port.name, range(-1, len(toks) - 1))
        for t, c in zip(toks, cyc, strict=True):
            ch.push(t, c)
        ins[port.name] = ch
    outs = {p.name: Channel(f"out.{p.name}", p.kind, depth, work, trace=True)
            for p in prim.outputs}
    actor = ACTORS[op](node, ins, outs, ctx)
    sinks = [_Sink(Node(f"sink_{n}", "root"), ch, sink_period) for n, ch in outs.items()]
    for a in [actor, *sinks]:
        work.wake(a)
    drain(work)
    if not actor.finished:
        raise RuntimeError(f"{op} did not finish: blocked on {actor.blocked!r}")
    return PrimitiveRun({n: ch.trace_toks for n, ch in outs.items()},
                        {n: ch.trace_cycles for n, ch in outs.items()}, actor)
