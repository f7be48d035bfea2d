"""The ``rtl`` backend: the reference SystemVerilog netlist under cocotb (Icarus/Verilator).

Whole-graph runs: outputs, the contract's cycle count and, with ``trace=True``, every
edge's stream as its contract FIFO recorded it (``+samfuse_trace``), decoded from the
hardware token words into an ``ir.Trace`` that ``compare_traces`` checks cycle for cycle
against the other backends. The simulator is chosen
with ``RtlBackend(simulator=...)`` or ``$SAMFUSE_RTL_SIM`` (default ``icarus``). Also holds
the helper the RTL tests share: recording a Python-model run with each edge's read
cycles (for trace replay). Token words are decoded by the ``ir`` codec and writer
recordings by ``sim_models.python.outputs_from_writers``, as in every backend.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ir import (
    EdgeTrace,
    Graph,
    Hardware,
    HwError,
    Trace,
    decode_token,
    memory_ports,
    onchip_buffers,
    value_elems,
)
from sim_models.python import (
    BufferStats,
    MemRequest,
    NodeStats,
    SimResult,
    SimulationError,
    simulate,
)

from ._backend import Backend, Execution, ToolNotFoundError, register

if TYPE_CHECKING:
    from rtl_hls.rtl.bench import EdgeRecord, ExternalRtl

__all__ = ["RtlBackend", "simulate_with_reads", "trace_from_records", "memory_report",
           "buffer_report"]

@register
class RtlBackend(Backend):
    """Reference RTL, whole graph, under Icarus or Verilator through cocotb."""

    name = "rtl"
    counts_firings = False
    waveforms = True
    #: every knob of docs/timing.md: the netlist renders each node's timing shell and
    #: each FIFO's capacity and visibility (rtl_hls.rtl.netlist)
    timing_knobs = frozenset({"latency", "ii", "startup", "fifo.latency"})
    #: samfuse_onchip_buffer per ir.onchip_buffers entry (docs/rtl.md, "On-chip buffers")
    onchip_buffers = True

    def __init__(self, simulator: str | None = None, vcd: str | Path | None = None,
                 external: ExternalRtl | None = None) -> None:
        """``vcd``: a path without suffix; each run's waveform is copied to it (``.fst``
        from Icarus, ``.vcd`` or ``.fst`` from Verilator, as the simulator writes it).
        ``external``: run those files (a user's exported RTL of the graph, same benches)
        instead of the reference netlist."""
        self.simulator = simulator or os.environ.get("SAMFUSE_RTL_SIM", "icarus")
        self.vcd = None if vcd is None else Path(vcd)
        self.external = external

    @classmethod
    def unavailable(cls) -> str | None:
        from rtl_hls.rtl.bench import simulator_missing

        sim = os.environ.get("SAMFUSE_RTL_SIM", "icarus")
        return simulator_missing(sim)

    def check_depth(self, depth, hw):
        if depth == "graph" and hw is not None and hw.fifo_depth is None:
            raise HwError(f"backend 'rtl' needs bounded FIFOs, but hardware {hw.name!r} sets "
                          "fifo.depth = inf; give a finite one (--hw-set fifo.depth=N or "
                          "--depth N)")

    def execute(self, elab, tensors, *, trace, mem_trace):
        from rtl_hls.rtl.bench import RtlDeadlock, run_graph, simulator_missing

        missing = simulator_missing(self.simulator)
        if missing:
            raise ToolNotFoundError(f"backend 'rtl' ({self.simulator}): {missing}")
        graph, hw = elab.graph, elab.hw
        if any(e.depth is None for e in graph.edges):
            raise HwError("backend 'rtl' needs bounded FIFOs (every edge depth >= 1); give a "
                          "finite depth (--depth N or --hw-set fifo.depth=N)")
        try:
            run = run_graph(graph, tensors, self.simulator, trace=trace, hw=hw,
                            waves=self.vcd, external=self.external)
        except RtlDeadlock as exc:
            raise SimulationError(f"graph {graph.name!r}: {exc}") from None
        result = SimResult(graph.name, {}, run.cycles,
                           trace=trace_from_records(graph, run.edges) if trace else None,
                           wall_seconds=run.wall_seconds, sim_seconds=run.sim_seconds,
                           backend=self.name)
        if hw is not None and hw.memory:
            memory_report(graph, hw, run.bursts, run.mem_stall, result, mem_trace)
            result.buffers = buffer_report(graph, hw, run.bursts, run.buffers)
        return Execution(result, run.levels, run.values, run.acc_peaks)


def memory_report(graph: Graph, hw: Hardware, bursts: list[tuple[int, int, int, int, bool]],
                  stall: Mapping[str, int], result: SimResult, log: bool) -> None:
    """Fill ``result``'s memory fields from the RTL's burst log and stall counters.

    The RTL counts no firings or input/output stalls, so each memory node's ``NodeStats``
    carries only its memory fields (``fires``, ``stall_in``, ``stall_out`` 0,
    ``done_cycle`` -1) and nodes without memory ports have none.
    """
    ports = memory_ports(graph, hw)
    lb = hw.dram.line_bytes
    chans = [0] * hw.dram.channels
    nodes = {p.node: NodeStats(graph.nodes[p.node].op, 0, 0, 0, -1,
                               stall_mem=stall.get(p.node, 0)) for p in ports}
    for _, no, _, lines, write in bursts:
        spec = ports[no]
        chans[spec.channel] += lines * lb
        st = nodes[spec.node]
        st.mem_requests += 1
        if write:
            st.dram_write_bytes += lines * lb
        else:
            st.dram_read_bytes += lines * lb
    result.nodes, result.channel_bytes = nodes, chans
    if log:
        result.mem_requests = [MemRequest(c, no, first, lines, w)
                               for c, no, first, lines, w in bursts]


def buffer_report(graph: Graph, hw: Hardware, bursts: list[tuple[int, int, int, int, bool]],
                  stats: Mapping[str, tuple[int, int, int]]) -> dict[str, BufferStats]:
    """Each on-chip buffer's ``BufferStats``: its fill's bytes from the burst log (the
    fill port's burst at cycle 0), the rest from the buffer's counters."""
    out = {}
    for b in onchip_buffers(graph, hw):
        lines = sum(n for c, no, _, n, w in bursts if no == b.fill_port and c == 0 and not w)
        filled, reads, conflict = stats[b.name]
        out[b.name] = BufferStats(lines * hw.dram.line_bytes, filled if lines else 0, reads,
                                  conflict)
    return out


def trace_from_records(graph: Graph, records: Mapping[str, EdgeRecord]) -> Trace:
    """Decode each edge's FIFO recording (token words: 34 bits, or ``2 + 32*E`` on a block
    value edge) into an ``ir`` trace, with the tokens typed as the Python model types them
    (float32 bits or int32 by graph dtype, ``ir.Block`` for blocks)."""
    edges: dict[str, EdgeTrace] = {}
    widths = value_elems(graph)
    for e in graph.edges:
        rec = records[e.name]
        numeric = "float" if e.kind == "val" and graph.dtype == "float32" else "int"
        elems = widths.get(e.name, 1)
        toks = [decode_token(w, numeric, e.kind, elems) for w in rec.words]
        edges[e.name] = EdgeTrace(e.name, e.kind, numeric, toks, list(rec.writes),
                                  list(rec.reads))
    return Trace(graph.name, edges)


def simulate_with_reads(graph: Graph, inputs: Mapping[str, Any]
                        ) -> tuple[SimResult, dict[str, list[int]]]:
    """A traced Python-model run plus, per edge, the cycle each token was read."""
    res = simulate(graph, inputs, trace=True)
    assert res.trace is not None
    return res, {e.name: res.trace.edges[e.name].read_cycles or [] for e in graph.edges}
