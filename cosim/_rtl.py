"""The ``rtl`` backend: the reference SystemVerilog netlist under cocotb (Icarus/Verilator).

Whole-graph runs: outputs, the contract's cycle count and, with ``trace=True``, every
edge's stream as its contract FIFO recorded it (``+samfuse_trace``), decoded from the
hardware token words into an ``ir.Trace`` that ``compare_traces`` checks cycle for cycle
against the other backends. The simulator is chosen
with ``RtlBackend(simulator=...)`` or ``$SAMFUSE_RTL_SIM`` (default ``icarus``). Also holds
the helpers the RTL tests share: decoding writer recordings into output tensors and
recording a Python-model run with each edge's read cycles (for trace replay).
"""

from __future__ import annotations

import os
import struct
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ir import (
    DONE,
    EMPTY,
    REPEAT,
    EdgeTrace,
    FiberTree,
    Format,
    Graph,
    Stop,
    Token,
    Trace,
    stop,
)
from sim_models.python import SimResult, SimulationError, bind_inputs, decode_levels, simulate

from ._backend import Backend, ToolNotFoundError, register

if TYPE_CHECKING:
    from rtl_hls.rtl.bench import EdgeRecord

__all__ = ["RtlBackend", "outputs_from_writers", "simulate_with_reads", "encode_token",
           "decode_token", "trace_from_records"]

_TAG_DATA, _TAG_STOP, _TAG_EMPTY, _TAG_DONE = 0, 1, 2, 3


def encode_token(tok: Token, numeric: str) -> int:
    """The 34-bit hardware word of ``tok`` (``numeric``: "float" or "int" data)."""
    if tok.__class__ is Stop:
        return (_TAG_STOP << 32) | tok.level
    if tok is EMPTY:
        return _TAG_EMPTY << 32
    if tok is DONE:
        return _TAG_DONE << 32
    if tok is REPEAT:
        return 0
    if numeric == "float":
        return struct.unpack("<I", struct.pack("<f", tok))[0]
    return int(tok) & 0xFFFFFFFF


def decode_token(word: int, numeric: str, kind: str = "") -> Token:
    """Inverse of :func:`encode_token` (``kind == "repsig"`` decodes tag 0 as ``R``)."""
    tag, payload = word >> 32, word & 0xFFFFFFFF
    if tag == _TAG_STOP:
        return stop(payload)
    if tag == _TAG_EMPTY:
        return EMPTY
    if tag == _TAG_DONE:
        return DONE
    if kind == "repsig":
        return REPEAT
    if numeric == "float":
        return struct.unpack("<f", struct.pack("<I", payload))[0]
    return payload - (1 << 32) if payload >= 1 << 31 and kind == "val" else payload


def _val_words(words: list[int], dtype: str) -> list[Any]:
    if dtype == "float32":
        return [struct.unpack("<f", struct.pack("<I", w))[0] for w in words]
    return [w - (1 << 32) if w >= 1 << 31 else w for w in words]


def outputs_from_writers(graph: Graph,
                         levels: Mapping[str, tuple[list[int], list[tuple[int, int]]]],
                         values: Mapping[str, list[Any]]) -> dict[str, FiberTree]:
    """Output tensors from writer recordings (by node id), decoded like the Python model."""
    outs: dict[str, FiberTree] = {}
    for name, spec in graph.tensors.items():
        if spec.role != "output":
            continue
        lv: dict[int, tuple[list[int], list[tuple[int, int]]]] = {}
        vals = None
        for node in graph.nodes.values():
            if node.params.get("tensor") != name:
                continue
            if node.op == "level_writer":
                lv[node.params["level"]] = levels[node.id]
            elif node.op == "value_writer":
                vals = values[node.id]
        ndim = len(spec.shape)
        if vals is None or sorted(lv) != list(range(ndim)):
            raise SimulationError(f"output {name!r} needs a value writer and level writers "
                                  f"for levels 0..{ndim - 1}; found levels {sorted(lv)}")
        segs = decode_levels([lv[i] for i in range(ndim)])
        fmt = Format.parse(spec.format, ndim)
        outs[name] = FiberTree.from_written(spec.shape, fmt, segs, vals, dtype=graph.dtype)
    return outs


@register
class RtlBackend(Backend):
    """Reference RTL, whole graph, under Icarus or Verilator through cocotb."""

    name = "rtl"

    def __init__(self, simulator: str | None = None) -> None:
        self.simulator = simulator or os.environ.get("SAMFUSE_RTL_SIM", "icarus")

    @classmethod
    def unavailable(cls) -> str | None:
        from rtl_hls.rtl.bench import simulator_missing

        sim = os.environ.get("SAMFUSE_RTL_SIM", "icarus")
        return simulator_missing(sim)

    def run(self, graph, inputs, *, trace=False, depth="graph"):
        from rtl_hls.rtl.bench import run_graph, simulator_missing

        missing = simulator_missing(self.simulator)
        if missing:
            raise ToolNotFoundError(f"backend 'rtl' ({self.simulator}): {missing}")
        if depth != "graph":
            graph = graph.with_depth(depth)
        if any(e.depth is None for e in graph.edges):
            raise ValueError("the rtl backend needs bounded FIFOs (every edge depth >= 1)")
        tensors = bind_inputs(graph, inputs)
        run = run_graph(graph, tensors, self.simulator, trace=trace)
        values = {k: _val_words(v, graph.dtype) for k, v in run.values.items()}
        res = SimResult(graph.name, outputs_from_writers(graph, run.levels, values),
                        run.cycles, trace=trace_from_records(graph, run.edges) if trace else None)
        res.wall_seconds = run.wall_seconds
        res.sim_seconds = run.sim_seconds  # type: ignore[attr-defined]
        return res


def trace_from_records(graph: Graph, records: Mapping[str, EdgeRecord]) -> Trace:
    """Decode each edge's FIFO recording (34-bit words) into an ``ir`` trace, with the
    tokens typed as the Python model types them (float32 bits or int32 by graph dtype)."""
    edges: dict[str, EdgeTrace] = {}
    for e in graph.edges:
        rec = records[e.name]
        numeric = "float" if e.kind == "val" and graph.dtype == "float32" else "int"
        toks = [decode_token(w, numeric, e.kind) for w in rec.words]
        edges[e.name] = EdgeTrace(e.name, e.kind, numeric, toks, list(rec.writes),
                                  list(rec.reads))
    return Trace(graph.name, edges)


def simulate_with_reads(graph: Graph, inputs: Mapping[str, Any]
                        ) -> tuple[SimResult, dict[str, list[int]]]:
    """A traced Python-model run plus, per edge, the cycle each token was read."""
    res = simulate(graph, inputs, trace=True)
    assert res.trace is not None
    return res, {e.name: res.trace.edges[e.name].read_cycles or [] for e in graph.edges}
