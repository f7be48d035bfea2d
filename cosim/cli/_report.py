"""What ``samfuse sim`` (and ``demo``) print about a run: the summary lines, the per-node
table, and the same facts as one JSON object for scripts (``sim --json``).

With a hardware that has memory the summary adds the run's time at the hardware's clock
and its DRAM traffic, and the table adds each node's memory stalls, bytes and bursts
(docs/timing.md, "Memory"); on ``ideal`` hardware both are exactly what they were before
memory existed.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ir import Graph, Hardware
from sim_models.python import SimResult

__all__ = ["summary_lines", "memory_lines", "stats_table", "sim_json", "fifo_table"]


def ran_on(res: SimResult, backend: str) -> str:
    """The backend that ran: the requested one, or what ``auto`` chose (``systemc
    (auto)``)."""
    return f"{res.backend} (auto)" if backend == "auto" else backend
def counts_firings(backend: str) -> bool:
    """Whether ``backend`` counts firings (the RTL does not: its reports say n/a)."""
    from ..backends._backend import BACKENDS

    cls = BACKENDS.get(backend)
    return cls is None or cls.counts_firings


def summary_lines(res: SimResult, backend: str) -> list[str]:
    wall = max(res.wall_seconds, 1e-9)
    counted = counts_firings(backend)
    lines = [f"graph      {res.graph} on {ran_on(res, backend)}"]
    if res.cycles is None:
        lines.append("cycles     - (functional run: no timing)")
    else:
        lines.append(f"cycles     {res.cycles}")
    lines.append(f"firings    {res.firings}" if counted else
                 f"firings    n/a (the {backend} backend counts tokens, not firings)")
    lines.append(f"wall time  {res.wall_seconds:.3f} s")
    rates = [f"{res.firings / wall:,.0f} firings/s"] if counted else []
    if res.cycles is not None:
        rates.append(f"{res.cycles / wall:,.0f} cycles/s")
    lines.append(f"throughput {', '.join(rates) or '-'}")
    return lines


def _bursts(res: SimResult) -> int:
    return sum(s.mem_requests for s in res.nodes.values())


def memory_lines(res: SimResult, hw: Hardware) -> list[str]:
    """The hardware, the simulated time and the DRAM traffic (nothing on ideal memory)."""
    if not hw.memory:
        return []
    peak = hw.peak_gbps()
    got = res.achieved_gbps()
    time = "-" if res.cycles is None else f"{hw.seconds(res.cycles) * 1e6:.3f} µs"
    return [f"hw         {hw.name}: {hw.clock_mhz:g} MHz, {hw.dram.channels} channel(s), "
            f"peak {peak:.1f} GB/s",
            f"time       {time} at {hw.clock_mhz:g} MHz",
            f"dram       {res.dram_read_bytes} B read, {res.dram_write_bytes} B written in "
            f"{_bursts(res)} bursts: {got:.2f} GB/s ({got / peak:.1%} of peak)"]


_COLUMNS = (("fires", 8), ("stall_in", 9), ("stall_out", 9), ("done", 8))
_MEM_COLUMNS = (("stall_mem", 9), ("dram_rd_B", 10), ("dram_wr_B", 10), ("bursts", 7))
_FIELDS = {"done": "done_cycle", "dram_rd_B": "dram_read_bytes",
           "dram_wr_B": "dram_write_bytes", "bursts": "mem_requests"}


def stats_table(res: SimResult, graph: Graph, memory: bool = False) -> list[str]:
    """One row per node in topological order; ``memory`` adds the memory columns."""
    order = [n for n in graph.topological_order() if n in res.nodes]
    width = max([len(n) for n in order] + [4])
    cols = _COLUMNS + (_MEM_COLUMNS if memory else ())
    counted = counts_firings(res.backend)
    rows = [f"{'node':<{width}}  {'op':<15}" + "".join(f" {c:>{w}}" for c, w in cols)]
    for nid in order:
        s = res.nodes[nid]
        rows.append(f"{nid:<{width}}  {s.op:<15}" + "".join(
            f" {_cell(s, c, counted):>{w}}" for c, w in cols))
    return rows


def _cell(stats: object, col: str, counted: bool) -> str:
    """A statistic, or n/a where the backend does not count it (the RTL's firings,
    input/output stalls and done cycles)."""
    if not counted and col in ("fires", "stall_in", "stall_out", "done"):
        return "n/a"
    return str(getattr(stats, _FIELDS.get(col, col)))


def sim_json(res: SimResult, backend: str, hw: Hardware, *, stats: bool,
             files: dict[str, Any], hw_set: list[str] | None = None) -> dict[str, Any]:
    """The run as one JSON-able object; ``files`` names what was written (outputs,
    traces), ``hw_set`` the overrides applied to ``hw``, ``stats`` adds every node's
    statistics."""
    doc: dict[str, Any] = {
        "graph": res.graph, "backend": ran_on(res, backend), "hw": hw.name, "hw_set": hw_set or [],
        "clock_mhz": hw.clock_mhz,
        "cycles": res.cycles,
        "seconds": None if res.cycles is None else hw.seconds(res.cycles),
        "wall_seconds": res.wall_seconds,
        "firings": res.firings if counts_firings(backend) else None,
        "dram_read_bytes": res.dram_read_bytes, "dram_write_bytes": res.dram_write_bytes,
        "mem_requests": _bursts(res), "achieved_gbps": res.achieved_gbps(),
        "peak_gbps": hw.peak_gbps() if hw.memory else None,
        "channel_bytes": list(res.channel_bytes),
        **files}
    if stats:
        doc["nodes"] = {nid: vars(s).copy() for nid, s in res.nodes.items()}
        doc["max_occupancy"] = dict(res.max_occupancy)
    if res.fifos:  # the FIFO report (docs/timing.md), on every run that has one
        doc["fifos"] = {name: dataclasses.asdict(f) for name, f in res.fifos.items()}
    return doc


def fifo_table(res: SimResult, graph: Graph) -> list[str]:
    """The FIFO report, one row per edge: depth, peak occupancy, cycles starting full and
    empty (docs/timing.md, "FIFO report")."""
    if not res.fifos:
        return []
    depth = {e.name: "inf" if e.depth is None else str(e.depth) for e in graph.edges}
    width = max(len(n) for n in res.fifos)
    rows = [f"{'edge':<{width}}  {'depth':>6} {'peak':>6} {'full':>8} {'empty':>8}"]
    rows += [f"{n:<{width}}  {depth.get(n, '?'):>6} {f.peak:>6} {f.full_cycles:>8} "
             f"{f.empty_cycles:>8}" for n, f in res.fifos.items()]
    return rows
