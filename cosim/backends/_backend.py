"""One Backend interface; each backend is a subclass registered by name.

A backend runs a graph on input tensors and returns a :class:`SimResult` (outputs, cycle
count, per-node statistics, optional per-edge trace). :meth:`Backend.run` is the template
every backend shares: it loads the hardware, elaborates the graph at the run's FIFO depth
(``ir.elaborate``), binds the inputs, calls the backend's :meth:`Backend.execute`, then
checks the on-chip buffer rule on the accumulators' peaks and decodes the writers'
records into output tensors. Backends that need external tools say what is missing
through :meth:`Backend.unavailable` and raise :class:`ToolNotFoundError` when asked to
run without them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

from ir import (
    AS_GIVEN,
    TIMING_KNOBS,
    Elaboration,
    FiberTree,
    Graph,
    Hardware,
    HwError,
    block_elems,
    elaborate,
    load_hw,
    written_values,
)
from sim_models.python import (
    SimResult,
    bind_inputs,
    check_onchip,
    outputs_from_writers,
    simulate,
)

__all__ = ["Backend", "PythonBackend", "AutoBackend", "AUTO_SYSTEMC_TOKENS", "Execution",
           "ToolNotFoundError", "register", "get_backend", "backend_names", "BACKENDS"]


def check_peaks(graph: Graph, peaks: Mapping[str, int], hw: Hardware) -> None:
    """The on-chip buffer rule (docs/timing.md, "Memory") on a backend's per-accumulator
    peak entry counts: the Python model's own check, on the graph's sparse accumulators
    in node order (so the error names them as the model does)."""
    check_onchip(graph, [SimpleNamespace(id=n.id, op=n.op, peak=peaks.get(n.id, 0))
                         for n in graph.nodes.values() if n.primitive.acc_levels], hw)


class ToolNotFoundError(RuntimeError):
    """A backend's external tool (compiler, simulator, library) is not installed."""


@dataclass
class Execution:
    """What :meth:`Backend.execute` hands back to :meth:`Backend.run` to finish."""

    result: SimResult
    #: the writers' records, when the outputs are still to be decoded (``result.outputs``
    #: is then filled by ``run``): each level writer's (crds, (stop position, level)
    #: pairs) and each value writer's recorded words
    levels: Mapping[str, Any] | None = None
    value_words: Mapping[str, Any] | None = None
    #: each sparse accumulator's peak entry count, when the on-chip buffer rule is still
    #: to be checked (a backend that checks it itself leaves None)
    acc_peaks: Mapping[str, int] | None = None


class Backend(ABC):
    name: ClassVar[str] = ""
    #: whether the backend's traces carry cycles (HLS C-simulation does not)
    timed: ClassVar[bool] = True
    #: whether an untraced run counts its data tokens (``SimResult.data_tokens``, the
    #: work counters); a backend without them counts work from a traced run
    counts_work: ClassVar[bool] = False
    #: whether ``SimResult.firings`` and the nodes' ``fires`` are counted (the RTL's
    #: FIFOs see tokens, not firings, so reports print "n/a" instead of a 0)
    counts_firings: ClassVar[bool] = True
    #: whether the backend can dump waveforms: constructed with ``vcd=PREFIX`` it writes
    #: ``PREFIX.vcd`` (or ``.fst``) per run (``samfuse sim/cosim/model --vcd DIR``)
    waveforms: ClassVar[bool] = False
    #: the timing knobs (``ir.TIMING_KNOBS``) the backend renders; a run that sets
    #: another off its default is refused (docs/timing.md, "Which backend renders what")
    timing_knobs: ClassVar[frozenset[str]] = frozenset()
    #: whether the backend renders on-chip buffers (docs/timing.md, "On-chip buffers"); a
    #: run with buffered arrays on memory hardware is refused by one that does not
    onchip_buffers: ClassVar[bool] = False

    @classmethod
    def unavailable(cls) -> str | None:
        """``None`` when usable here, else a one-line reason naming what is missing."""
        return None

    def run(self, graph: Graph, inputs: Mapping[str, Any], *, trace: bool = False,
            depth: int | None | str = "graph", hw: Hardware | str | None = None,
            mem_trace: bool = False) -> SimResult:
        """Run ``graph``; ``depth`` overrides every FIFO depth unless it is ``"graph"``.

        ``hw`` is the simulated hardware (``None`` = ``ideal``: no memory system; a
        preset's name or a file as ``ir.load_hw`` takes it); ``mem_trace`` asks for every
        memory burst in ``SimResult.mem_requests``.
        """
        machine = None if hw is None else load_hw(hw)
        self.check_depth(depth, machine)
        elab = elaborate(graph, machine, depth)
        self.check_timing(elab)
        if elab.buffers and not self.onchip_buffers:
            raise HwError(f"backend {self.name!r} does not render on-chip buffers yet "
                          f"({', '.join(b.name for b in elab.buffers)} are buffered on "
                          f"{machine.name!r}); run it on the python or systemc backend, or "
                          "without buffers (--buffer none, or no buffer in the graph's "
                          "tensors)")
        tensors = bind_inputs(elab.graph, inputs)
        done = self.execute(elab, tensors, trace=trace, mem_trace=mem_trace)
        res, graph = done.result, elab.graph
        if machine is not None:
            if done.acc_peaks is not None:
                check_peaks(graph, done.acc_peaks, machine)
            res.hw, res.clock_mhz = machine.name, machine.clock_mhz
        if done.value_words is not None:
            values = {nid: written_values(
                words, graph.dtype, block_elems(graph.tensors[graph.nodes[nid].params["tensor"]]
                                                .block))
                for nid, words in done.value_words.items()}
            res.outputs = outputs_from_writers(graph, done.levels or {}, values)
        return res

    def check_timing(self, elab: Elaboration) -> None:
        """Refuse timing knobs the backend does not render, rather than ignore them."""
        missing = sorted(elab.knobs_used() - self.timing_knobs)
        if missing:
            raise HwError(f"backend {self.name!r} does not render the timing knob(s) "
                          f"{', '.join(missing)} (hardware {elab.hw.name!r} or the graph's "
                          f"node parameters set them); it renders "
                          f"{', '.join(sorted(self.timing_knobs)) or 'none'}")

    def check_depth(self, depth: int | None | str, hw: Hardware | None) -> None:
        """Refuse a run depth the backend cannot build (before elaboration); every
        backend but the RTL takes any."""
        return None

    @abstractmethod
    def execute(self, elab: Elaboration, tensors: Mapping[str, FiberTree], *, trace: bool,
                mem_trace: bool) -> Execution:
        """Run the elaborated graph (``elab.graph`` at the run's depths) on the bound
        ``tensors``: the backend's own part of :meth:`run`."""


BACKENDS: dict[str, type[Backend]] = {}


def register(cls: type[Backend]) -> type[Backend]:
    """Class decorator: make a backend reachable by its ``name``."""
    BACKENDS[cls.name] = cls
    return cls


def backend_names() -> list[str]:
    _load_optional()
    return sorted(BACKENDS)


def get_backend(name: str, vcd: str | Path | None = None) -> Backend:
    """Instantiate a registered backend, or raise a clear error; ``vcd`` (a path without
    suffix) asks it for waveforms, which only backends with ``waveforms`` write."""
    _load_optional()
    if name not in BACKENDS:
        raise KeyError(f"unknown backend {name!r}; available: {', '.join(sorted(BACKENDS))}")
    cls = BACKENDS[name]
    reason = cls.unavailable()
    if reason:
        raise ToolNotFoundError(f"backend {name!r} cannot run here: {reason}")
    if vcd is None:
        return cls()
    if not cls.waveforms:
        have = ", ".join(n for n, c in sorted(BACKENDS.items()) if c.waveforms)
        raise KeyError(f"backend {name!r} has no waveforms to dump; backends with "
                       f"waveforms: {have}")
    return cls(vcd=vcd)  # type: ignore[call-arg]


def _load_optional() -> None:
    """Import backend modules so their ``@register`` runs (each is optional)."""
    import importlib

    for mod in ("cosim.backends._systemc", "cosim.backends._hls", "cosim.backends._rtl"):
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:
                raise


@register
class PythonBackend(Backend):
    """The reference cycle model."""

    name = "python"
    onchip_buffers = True
    counts_work = True
    timing_knobs = frozenset(TIMING_KNOBS)

    def execute(self, elab, tensors, *, trace, mem_trace):
        return Execution(simulate(elab.graph, tensors, trace=trace, depth=AS_GIVEN, hw=elab.hw,
                                  mem_trace=mem_trace))


#: ``auto`` runs a graph on SystemC when the cost heuristic expects at least this many
#: stream tokens on its edges: SystemC simulates about 20x faster than the Python model
#: but pays about 0.5 s once per process (loading the compiled models) and 20-40 ms per
#: run (a forked child), so below this the Python model finishes first (docs/cli.md)
AUTO_SYSTEMC_TOKENS = 200_000


@register
class AutoBackend(Backend):
    """SystemC for large graphs where it is installed, else the Python model: both give
    the same outputs, cycles and statistics; ``SimResult.backend`` says which ran."""

    name = "auto"
    timing_knobs = frozenset(TIMING_KNOBS)
    onchip_buffers = True  # it runs the Python model or SystemC, which render them

    def __init__(self) -> None:
        self._systemc: Backend | None = None
        _load_optional()
        systemc = BACKENDS.get("systemc")
        self._systemc_ok = systemc is not None and systemc.unavailable() is None

    def choose(self, graph: Graph, inputs: Mapping[str, Any]) -> str:
        """The backend this graph runs on: its expected tokens against the threshold."""
        if not self._systemc_ok:
            return "python"
        from compiler import estimate  # noqa: PLC0415 - cosim sits above the compiler

        try:
            tokens = sum(estimate(graph, inputs).tokens.values())
        except (ValueError, KeyError, ZeroDivisionError):  # no estimate: the safe choice
            return "python"
        return "systemc" if tokens >= AUTO_SYSTEMC_TOKENS else "python"

    def execute(self, elab, tensors, *, trace, mem_trace):  # pragma: no cover - run decides
        raise AssertionError("AutoBackend.run delegates whole runs")

    def run(self, graph, inputs, *, trace=False, depth="graph", hw=None, mem_trace=False):
        if self.choose(graph, inputs) == "python":
            return simulate(graph, inputs, trace=trace, depth=depth, hw=hw,
                            mem_trace=mem_trace)
        if self._systemc is None:
            self._systemc = BACKENDS["systemc"]()
        return self._systemc.run(graph, inputs, trace=trace, depth=depth, hw=hw,
                                 mem_trace=mem_trace)
