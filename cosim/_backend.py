"""One Backend interface; each backend is a subclass registered by name.

A backend runs a graph on input tensors and returns a :class:`SimResult` (outputs, cycle
count, per-node statistics, optional per-edge trace). Backends that need external tools
say what is missing through :meth:`Backend.unavailable` and raise
:class:`ToolNotFoundError` when asked to run without them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

from ir import Graph, Hardware
from sim_models.python import SimResult, check_onchip, simulate

__all__ = ["Backend", "PythonBackend", "AutoBackend", "AUTO_SYSTEMC_TOKENS",
           "ToolNotFoundError", "register", "get_backend", "backend_names", "BACKENDS"]


def check_peaks(graph: Graph, peaks: Mapping[str, int], hw: Hardware) -> None:
    """The on-chip buffer rule (docs/timing.md, "Memory") on a backend's per-accumulator
    peak entry counts: the Python model's own check, on the graph's sparse accumulators
    in node order (so the error names them as the model does)."""
    check_onchip(graph, [SimpleNamespace(id=n.id, op=n.op, peak=peaks.get(n.id, 0))
                         for n in graph.nodes.values() if n.primitive.acc_levels], hw)


class ToolNotFoundError(RuntimeError):
    """A backend's external tool (compiler, simulator, library) is not installed."""


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

    @classmethod
    def unavailable(cls) -> str | None:
        """``None`` when usable here, else a one-line reason naming what is missing."""
        return None

    @abstractmethod
    def run(self, graph: Graph, inputs: Mapping[str, Any], *, trace: bool = False,
            depth: int | None | str = "graph", hw: Hardware | None = None,
            mem_trace: bool = False) -> SimResult:
        """Run ``graph``; ``depth`` overrides every FIFO depth unless it is ``"graph"``.

        ``hw`` is the simulated hardware (``None`` = ``ideal``: no memory system);
        ``mem_trace`` asks for every memory burst in ``SimResult.mem_requests``.
        """


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

    for mod in ("cosim._systemc", "cosim._hls", "cosim._rtl"):
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:
                raise


@register
class PythonBackend(Backend):
    """The reference cycle model."""

    name = "python"
    counts_work = True

    def run(self, graph, inputs, *, trace=False, depth="graph", hw=None, mem_trace=False):
        return simulate(graph, inputs, trace=trace, depth=depth, hw=hw, mem_trace=mem_trace)


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

    def run(self, graph, inputs, *, trace=False, depth="graph", hw=None, mem_trace=False):
        if self.choose(graph, inputs) == "python":
            return simulate(graph, inputs, trace=trace, depth=depth, hw=hw,
                            mem_trace=mem_trace)
        if self._systemc is None:
            self._systemc = BACKENDS["systemc"]()
        return self._systemc.run(graph, inputs, trace=trace, depth=depth, hw=hw,
                                 mem_trace=mem_trace)
