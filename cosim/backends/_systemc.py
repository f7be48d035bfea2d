"""The SystemC backend: the C++ SystemC models of sim_models/systemc, driven through cppyy.

SystemC elaborates once per process and cannot be restarted, so the parent only loads
the compiled models (once), and every simulation — or batch of
simulations, elaborated side by side in one design — runs in a forked child. The child
returns plain data; the parent decodes it into the same :class:`SimResult` (outputs,
cycles, node statistics, occupancy, trace) and the same errors as the Python model.
A child that crashes or exceeds the timeout becomes a :class:`SystemCError`.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ir import (
    AS_GIVEN,
    TIMING_KNOBS,
    WRITER_PRIMITIVES,
    Block,
    EdgeTrace,
    Elaboration,
    FiberTree,
    Graph,
    Hardware,
    StorageError,
    Trace,
    block_elems,
    block_rows,
    counted_edges,
    decode_token,
    decode_words,
    elaborate,
    memory_ports,
    run_cycles,
    value_elems,
    written_values,
)
from sim_models.python import (
    BufferStats,
    DeadlockError,
    FifoStats,
    MemRequest,
    NodeStats,
    SimResult,
    SimulationError,
    bind_inputs,
    check_onchip,
    deadlock_error,
    outputs_from_writers,
)

from ._backend import Backend, Execution, register
from ._systemc_child import (
    NetPlan,
    RawEdge,
    RawMemory,
    RawNet,
    child_main,
    plan_net,
    prepare,
    warm_seconds,
)
from ._systemc_load import load_seconds, missing, models_library

__all__ = ["SystemCBackend", "SystemCError", "SystemCRun"]


class SystemCError(RuntimeError):
    """SystemC or the simulating child failed (an sc_report, a crash, a timeout)."""


@dataclass
class SystemCRun:
    """One run of a batch: a graph, its inputs and how to run it (``hw``: the simulated
    hardware, None = ideal; ``mem_trace``: log every memory burst)."""

    graph: Graph
    inputs: Mapping[str, Any]
    trace: bool = False
    depth: int | None | str = "graph"
    hw: Hardware | None = None
    mem_trace: bool = False


@register
class SystemCBackend(Backend):
    """Clocked SystemC models of every primitive, cycle-exact with the Python model.

    ``per_module_processes`` gives every primitive its own SC_METHOD (slower, same
    cycles); ``vcd`` dumps each edge's handshake to ``<vcd>.vcd``; ``timeout`` (seconds,
    default ``$SAMFUSE_SYSTEMC_TIMEOUT`` or 3600) bounds each child; ``max_cycles`` stops
    a run early (0 = no limit).
    """

    name = "systemc"
    counts_work = True
    waveforms = True
    timing_knobs = frozenset(TIMING_KNOBS)
    onchip_buffers = True

    def __init__(self, *, per_module_processes: bool = False, vcd: str | Path | None = None,
                 timeout: float | None = None, max_cycles: int = 0) -> None:
        self.per_module_processes = per_module_processes
        self.vcd = None if vcd is None else str(vcd)
        self.timeout = timeout if timeout is not None else \
            float(os.environ.get("SAMFUSE_SYSTEMC_TIMEOUT", "3600"))
        self.max_cycles = max_cycles
        #: wall-clock split of the last batch: load (the compiled library, once per
        #: process), warm-up (cppyy's call wrappers, once per process), fork, elaborate,
        #: simulate, extract, decode
        self.last_timings: dict[str, float] = {}

    @classmethod
    def unavailable(cls) -> str | None:
        return missing()

    @staticmethod
    def build_library() -> Path:
        """Compile the models into the cached library now (else on first use); its path."""
        return models_library()

    def execute(self, elab, tensors, *, trace, mem_trace):
        (out,) = self.run_batch([SystemCRun(elab.graph, tensors, trace, AS_GIVEN, elab.hw,
                                            mem_trace)])
        if isinstance(out, Exception):
            raise out
        return Execution(out)

    def run_batch(self, runs: Sequence[SystemCRun]) -> list[SimResult | Exception]:
        """Run several graphs in one child (one elaboration). Input errors raise here;
        per-run failures (deadlock, stream error, undecodable output) are returned in
        place, as the exception the Python model would raise."""
        prepare()
        start = time.perf_counter()
        elabs = [elaborate(r.graph, r.hw, r.depth) for r in runs]
        if self.per_module_processes and any(e.buffers for e in elabs):
            raise SystemCError("on-chip buffers need the fused evaluation (a buffer serves a "
                               "cycle's reads in port order, which per-module processes do "
                               "not keep); run without per_module_processes")
        graphs = [e.graph for e in elabs]
        bound = [bind_inputs(g, r.inputs) for g, r in zip(graphs, runs, strict=True)]
        plans = [plan_net(e.graph, b, trace=r.trace, depth="graph", max_cycles=self.max_cycles,
                          hw=r.hw, mem_trace=r.mem_trace, elab=e)
                 for e, r, b in zip(elabs, runs, bound, strict=True)]
        forked = time.perf_counter()
        raws, timings = self._fork(plans)
        received = time.perf_counter()
        results = [_decode_or_error(e, raw, r.hw)
                   for e, r, raw in zip(elabs, runs, raws, strict=True)]
        done = time.perf_counter()
        self.last_timings = {
            "load": load_seconds(), "warm_up": warm_seconds(), "plan": forked - start,
            "fork": timings["entered"] - forked, "elaborate": timings["elaborate"],
            "simulate": timings["simulate"], "extract": timings["extract"],
            "transfer": received - forked - (timings["entered"] - forked)
            - timings["elaborate"] - timings["simulate"] - timings["extract"],
            "decode": done - received, "clock_cycles": timings["clock_cycles"]}
        for res in results:
            if isinstance(res, SimResult):
                res.wall_seconds, res.sim_seconds = done - start, timings["simulate"]
                res.backend = self.name
        return results

    # -- the child process ---------------------------------------------------------------
    def _fork(self, plans: list[NetPlan]) -> tuple[list[RawNet], dict[str, float]]:
        ctx = multiprocessing.get_context("fork")
        recv, send = ctx.Pipe(duplex=False)
        fd, crash_log = tempfile.mkstemp(prefix="samfuse-systemc-crash-", suffix=".txt")
        os.close(fd)
        proc = ctx.Process(target=child_main, args=(send, plans, self.per_module_processes,
                                                    self.vcd, crash_log), daemon=True)
        proc.start()
        send.close()
        try:
            return self._receive(proc, recv, crash_log)
        finally:
            if Path(crash_log).exists() and Path(crash_log).stat().st_size == 0:
                Path(crash_log).unlink()

    def _receive(self, proc: Any, recv: Any, crash_log: str
                 ) -> tuple[list[RawNet], dict[str, float]]:
        try:
            if not recv.poll(self.timeout):
                proc.kill()
                proc.join()
                raise SystemCError(f"SystemC simulation timed out after {self.timeout:g} s "
                                   "(the child was killed); raise SAMFUSE_SYSTEMC_TIMEOUT or "
                                   "set max_cycles")
            msg = recv.recv()
        except EOFError:
            proc.join()
            report = Path(crash_log)
            where = f"; crash report in {report}" if report.exists() and \
                report.stat().st_size else ""
            raise SystemCError(f"the SystemC child process died without a result "
                               f"({_exit_text(proc.exitcode)}){where}") from None
        finally:
            recv.close()
        proc.join()
        if msg[0] == "error":
            raise SystemCError(f"SystemC simulation failed: {msg[1]}")
        return msg[1], msg[2]


def _exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


# -- decoding the child's data -------------------------------------------------------------

def _fifo_report(edge: RawEdge, cycles: int) -> FifoStats:
    """The FIFO report over ``[0, E)``, E = the run's cycles or the cycle after the edge's
    last event (docs/timing.md): the child counted up to ``counted_to``; the cycles after
    it start with the occupancy it left."""
    end = max(cycles, edge.counted_to)
    rest = end - edge.counted_to
    full = rest if edge.depth is not None and edge.occ_start == edge.depth else 0
    empty = rest if edge.occ_start == 0 else 0
    return FifoStats(edge.max_occ, edge.full_cycles + full, edge.empty_cycles + empty)


def _decode_or_error(elab: Elaboration, raw: RawNet, hw: Hardware | None
                     ) -> SimResult | Exception:
    try:
        return _decode(elab, raw, hw)
    except (SimulationError, StorageError) as exc:  # what simulate() would raise
        return exc


def _decode(elab: Elaboration, raw: RawNet, hw: Hardware | None
            ) -> SimResult | SimulationError:
    graph = elab.graph
    if raw.status == "deadlock":
        return _deadlock(raw)
    if raw.status == "error":
        err = raw.error
        assert err is not None
        blocks = err.blocks or (None,) * len(err.toks)
        toks = [_token(w, k, graph.dtype, b)
                for w, k, b in zip(err.toks, err.kinds, blocks, strict=True)]
        text = err.format.format(*(repr(t) for t in toks))
        return SimulationError(f"graph {graph.name!r}: node {err.node!r} at cycle "
                               f"{err.cycle}: {text}")
    if raw.status != "done":
        return SimulationError(f"graph {graph.name!r}: SystemC run stopped at cycle "
                               f"{raw.end_cycle} ({raw.status})")
    if hw is not None:
        check_onchip(graph, raw.nodes, hw)
    mem = raw.memory
    cycles = run_cycles([elab.end_cycle(n.id, n.done_cycle) for n in raw.nodes
                         if n.op in WRITER_PRIMITIVES], mem.max_ack if mem is not None else 0)
    result = SimResult(graph.name, _outputs(graph, raw), cycles)
    traffic = _node_traffic(graph, mem, hw)
    result.nodes = {n.id: NodeStats(n.op, n.fires, n.stall_in, n.stall_out, n.done_cycle,
                                    n.stall_mem, *traffic.get(n.id, (0, 0, 0)))
                    for n in raw.nodes}
    result.max_occupancy = {e.name: e.max_occ for e in raw.edges}
    result.fifos = {e.name: _fifo_report(e, cycles) for e in raw.edges}
    counted = counted_edges(graph)
    result.data_tokens = {e.name: e.data for e in raw.edges if e.name in counted}
    if hw is not None:
        result.hw, result.clock_mhz = hw.name, hw.clock_mhz
    if mem is not None:
        result.channel_bytes = mem.channel_bytes
        result.buffers = {b.name: BufferStats(lines * hw.dram.line_bytes, filled, reads,
                                              conflict)
                          for b, (lines, filled, reads, conflict)
                          in zip(elab.buffers, mem.buffers, strict=True)}
        if mem.log is not None:
            result.mem_requests = [MemRequest(int(c), int(p), int(f), int(n), bool(w))
                                   for c, p, f, n, w in mem.log.tolist()]
    if raw.edges and raw.edges[0].words is not None:
        kinds = {e.name: e.kind for e in graph.edges}
        widths = value_elems(graph)
        result.trace = Trace(graph.name, {
            e.name: _edge_trace(e.name, kinds[e.name], graph.dtype, e, widths.get(e.name, 1))
            for e in raw.edges})
    return result


def _node_traffic(graph: Graph, mem: RawMemory | None, hw: Hardware | None
                  ) -> dict[str, tuple[int, int, int]]:
    """Per node: (read bytes, write bytes, bursts) from the per-port counts."""
    if mem is None or hw is None:
        return {}
    out: dict[str, list[int]] = {}
    for spec, (bursts, lines) in zip(memory_ports(graph, hw), mem.ports, strict=True):
        acc = out.setdefault(spec.node, [0, 0, 0])
        acc[1 if spec.write else 0] += lines * hw.dram.line_bytes
        acc[2] += bursts
    return {n: (r, w, b) for n, (r, w, b) in out.items()}


def _outputs(graph: Graph, raw: RawNet) -> dict[str, FiberTree]:
    """Output tensors from the writers' records (numpy arrays from the child)."""
    levels, values = {}, {}
    for nid, rec in raw.writers.items():
        node = graph.nodes[nid]
        if node.primitive.writes_level:
            crd, pos, lvl = rec
            levels[nid] = (crd.tolist(), list(zip(pos.tolist(), lvl.tolist(), strict=True)))
        else:
            block = graph.tensors[node.params["tensor"]].block
            values[nid] = written_values(rec[0], graph.dtype, block_elems(block))
    return outputs_from_writers(graph, levels, values)


#: the child's edge-kind letters (crd/ref, value, repeat signal; blank: an unused slot)
_KINDS = {"c": "", "v": "val", "r": "repsig"}
#: a data word whose payload is a block handle (samfuse_token.h BLOCK_FLAG)
_BLOCK_FLAG = 1 << 34


def _token(word: int, kind: str, dtype: str, block: np.ndarray | None = None) -> Any:
    """One hardware word as a Python token; ``kind``: c crd/ref, v value, r repsig;
    a block token's words come in ``block``."""
    if word & _BLOCK_FLAG:
        assert block is not None
        return Block(block_rows(block, len(block))[0])
    numeric = "float" if kind == "v" and dtype == "float32" else "int"
    return decode_token(word, numeric, _KINDS.get(kind, ""))


def _edge_trace(name: str, kind: str, dtype: str, edge: RawEdge, elems: int) -> EdgeTrace:
    assert edge.words is not None and edge.cycles is not None and edge.reads is not None
    numeric = "float" if kind == "val" and dtype == "float32" else "int"
    words = edge.words
    if elems == 1:
        toks = decode_words(words, kind, numeric)
    else:  # block handles -> the words the child recorded at each push
        is_block = (words & np.uint64(_BLOCK_FLAG)) != 0
        toks = decode_words(np.where(is_block, np.uint64(0), words), kind, numeric)
        rows = block_rows(edge.block_words, elems)  # type: ignore[arg-type]
        for i, row in zip(np.flatnonzero(is_block).tolist(), rows, strict=True):
            toks[i] = Block(row)
    return EdgeTrace(name, kind, numeric, toks, edge.cycles.tolist(), edge.reads.tolist())


def _deadlock(raw: RawNet) -> DeadlockError:
    """The report the Python model gives: blocked nodes, their edges, a wait-for cycle."""
    edges = {e.name: e for e in raw.edges}
    blocked, waits_on = [], {}
    for n in raw.nodes:
        if n.finished or n.blocked is None:
            continue
        e = edges[n.blocked]
        if n.blocked_on_input:
            why = "input empty" + ("; its producer has finished" if e.writer_finished else "")
            other = e.writer
        else:
            why = f"output full ({e.unread}/{e.depth} tokens unread)"
            other = e.reader
        blocked.append((n.id, n.blocked, why))
        waits_on[n.id] = other
    return deadlock_error(raw.end_cycle, blocked, waits_on)
