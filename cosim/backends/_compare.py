"""Run one graph on several backends and say where they disagree.

The first backend named is the reference. For every other backend the report gives, per
edge, the first differing token or cycle (``ir.compare_traces``), the cycle counts side
by side, and whether the output tensors agree (float32: ``np.allclose`` with
``rtol=1e-5``; int32: exact). A backend that raises (deadlock, stream error) is reported
with its message; two backends' outputs agree on a failure when the messages are equal,
but a report with any failed backend is never ``ok``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ir import Graph, Hardware, TraceMismatch, compare_traces
from sim_models.python import SimResult

from ._backend import BACKENDS, get_backend

__all__ = ["BackendRun", "CosimReport", "compare_backends"]


@dataclass
class BackendRun:
    """What one backend produced: a result or the exception it raised."""

    backend: str
    result: SimResult | None
    error: Exception | None
    wall_seconds: float
    timed: bool = True

    @property
    def status(self) -> str:
        return "ok" if self.error is None else type(self.error).__name__


@dataclass
class CosimReport:
    """Agreement of every backend with the reference (the first backend)."""

    graph: str
    reference: str
    runs: dict[str, BackendRun]
    #: per non-reference backend: the first difference on each differing edge
    mismatches: dict[str, list[TraceMismatch]] = field(default_factory=dict)
    #: per non-reference backend: outputs (or failure messages) agree with the reference
    outputs_agree: dict[str, bool] = field(default_factory=dict)

    @property
    def cycles(self) -> dict[str, int | None]:
        return {name: (r.result.cycles if r.result else None) for name, r in self.runs.items()}

    @property
    def ok(self) -> bool:
        """Every backend ran to completion and agrees with the reference on outputs,
        cycles and traces. A failure is never agreement, even when every backend fails the
        same way (all-deadlock would otherwise compare ``None`` cycles equal)."""
        if any(r.error is not None or r.result is None for r in self.runs.values()):
            return False
        ref = self.cycles[self.reference]
        return all(self.outputs_agree.values()) and \
            not any(self.mismatches.values()) and \
            all(c == ref for name, c in self.cycles.items() if self.runs[name].timed)

    def __str__(self) -> str:
        head = f"cosim {self.graph!r}: reference {self.reference}, " + \
            ("all backends agree" if self.ok else "MISMATCH")
        rows = [("backend", "status", "cycles", "firings", "wall s", "outputs", "traces")]
        for name, run in self.runs.items():
            res = run.result
            ref = name == self.reference
            traces = "-" if ref or res is None or res.trace is None else \
                "equal" if not self.mismatches.get(name) else \
                f"{len(self.mismatches[name])} edge(s) differ"
            # a backend that failed (or whose reference failed) has no outputs to compare
            failed = run.error is not None or self.runs[self.reference].error is not None
            outputs = "-" if ref else "not run" if failed else \
                "agree" if self.outputs_agree.get(name) else "DIFFER"
            rows.append((name, run.status, "-" if res is None or res.cycles is None
                         else str(res.cycles),
                         "n/a" if not BACKENDS[name].counts_firings else
                         "-" if res is None or not res.nodes else str(res.firings),
                         f"{run.wall_seconds:.3f}", outputs, traces))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = [head] + ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True))
                          .rstrip() for r in rows]
        for name, run in self.runs.items():
            if run.error is not None:
                lines.append(f"{name} failed: {run.error}")
            for mm in self.mismatches.get(name, []):
                lines.append(f"{name} vs {self.reference}: {mm}")
        return "\n".join(lines)


def compare_backends(graph: Graph, inputs: Mapping[str, Any], backends: Sequence[str],
                     depth: int | None | str = "graph", trace: bool = True,
                     hw: Hardware | None = None, vcd: str | Path | None = None
                     ) -> CosimReport:
    """Run ``graph`` on each named backend (the first is the reference) and compare;
    every backend simulates the same hardware ``hw`` (``None``: ``ideal``). With ``vcd``
    (a folder) every backend that can dumps its waveform there, ``GRAPH.BACKEND.vcd``
    (or ``.fst``)."""
    if not backends:
        raise ValueError("compare_backends needs at least one backend name, got []")
    runs: dict[str, BackendRun] = {}
    for name in backends:
        backend = get_backend(name)
        if vcd is not None and backend.waveforms:
            backend = get_backend(name, Path(vcd) / f"{graph.name}.{name}")
        start = time.perf_counter()
        try:
            res: SimResult | None = backend.run(graph, inputs, trace=trace, depth=depth,
                                               hw=hw)
            err: Exception | None = None
        except Exception as exc:  # noqa: BLE001 - a failing backend is part of the report
            res, err = None, exc
        runs[name] = BackendRun(name, res, err, time.perf_counter() - start, backend.timed)
    ref = runs[backends[0]]
    report = CosimReport(graph.name, backends[0], runs)
    for name, run in runs.items():
        if name == ref.backend:
            continue
        report.outputs_agree[name] = _outputs_agree(ref, run, graph.dtype)
        a, b = ref.result, run.result
        if a is not None and b is not None and a.trace is not None and b.trace is not None:
            report.mismatches[name] = compare_traces(a.trace, b.trace,
                                                     timed=ref.timed and run.timed)
    return report


def _outputs_agree(ref: BackendRun, other: BackendRun, dtype: str) -> bool:
    if ref.error is not None or other.error is not None:
        return str(ref.error) == str(other.error)
    a, b = ref.result, other.result
    assert a is not None and b is not None
    if set(a.outputs) != set(b.outputs):
        return False
    for name in a.outputs:
        x, y = a.dense(name), b.dense(name)
        if x.shape != y.shape:
            return False
        if dtype == "float32":
            if not np.allclose(x, y, rtol=1e-5, equal_nan=True):
                return False
        elif not np.array_equal(x, y):
            return False
    return True
