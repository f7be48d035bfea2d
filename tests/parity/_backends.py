"""The backends every parity suite runs, and the one comparison each makes with the
Python reference model.

A family module (``test_valjoin.py``, ``test_spacc3.py``, …) parametrises its tests over
``backend`` with :func:`over`; the fixture hands it a :class:`Under`, whose ``check``
runs a graph in that backend's configurations and asserts what the backend can be held
to today:

- ``python``: the reference itself, against the numpy/scipy gold only;
- ``systemc``: every token's write and read cycle, cycles, node statistics, occupancy,
  memory requests and outputs equal to the model's (or the same error), one batch (one
  forked child) per graph;
- ``hls``: C-simulation has no clock: every edge's tokens, the output levels and the
  output words bit for bit;
- ``rtl-icarus``, ``rtl-verilator``: tokens with write and read cycles, the cycle count,
  with a memory system every burst, the bytes per channel, in all and per memory node,
  and each memory node's statistics, the output words bit for bit.

Every backend's outputs are then compared with the gold. Backends whose builds cost
(HLS, RTL) run only the configurations a test names for them (``configs``), so each
graph is built as often as before the suites were merged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from ir import Hardware, compare_traces, encode_token
from sim_models.python import DeadlockError, SimulationError, bind_inputs, simulate

__all__ = ["BACKENDS", "TOOLCHAINS", "RTL", "Under", "over", "python_run",
           "assert_same_result", "assert_replays", "assert_lint_clean", "bits"]

#: every backend a parity test can run on, cheapest first
BACKENDS = ("python", "systemc", "hls", "rtl-icarus", "rtl-verilator")
#: the backends that need a C++ or RTL toolchain (marked ``cosim``)
TOOLCHAINS = frozenset(BACKENDS[1:])
RTL = ("rtl-icarus", "rtl-verilator")
#: a configuration: (FIFO depth, hardware or None for ideal)
Config = tuple[int | None, Hardware | None]
#: what each backend runs when a test names no configurations: the contract's depths on
#: ideal memory where a run is cheap, one build at the graph's depth where it is not
DEFAULT_CONFIGS: dict[str, list[Config]] = {
    "python": [(d, None) for d in (1, 2, 4, None)], "systemc": [(d, None) for d in (1, 2, 4, None)],
    "hls": [(2, None)], "rtl-icarus": [(2, None)], "rtl-verilator": [(2, None)]}


def over(cases: Iterable[Sequence[Any]], ids: Iterable[str] | None = None, *,
         backends: Iterable[str] = BACKENDS,
         only: Mapping[str, Iterable[str]] | None = None) -> list[Any]:
    """``pytest.param(backend, *case)`` for every backend and case; ``only`` restricts a
    backend to the case ids it names (the expensive builds run on a selection, as before
    the merge). Toolchain backends carry the ``cosim`` mark."""
    cases = [tuple(c) for c in cases]
    ids = [str(i) for i in ids] if ids is not None else [
        "-".join(map(str, c)) for c in cases]
    params = []
    for name in backends:
        keep = None if only is None or name not in only else set(only[name])
        marks = [pytest.mark.cosim] if name in TOOLCHAINS else []
        params += [pytest.param(name, *case, id=f"{name}-{cid}", marks=marks)
                   for case, cid in zip(cases, ids, strict=True)
                   if keep is None or cid in keep]
    assert params, "no backend left to run"
    return params


def bits(array: np.ndarray) -> np.ndarray:
    """The 32-bit words of a float32 or int32 array (NaN payloads and -0.0 compared)."""
    return np.ascontiguousarray(array).view(np.uint32)


def python_run(graph, inputs, depth=2, hw=None):
    """The Python model's traced run (with its memory requests when ``hw`` has memory),
    or the :class:`SimulationError` a backend must reproduce."""
    try:
        return simulate(graph, inputs, trace=True, depth=depth, hw=hw,
                        mem_trace=hw is not None and hw.memory)
    except SimulationError as exc:
        return exc


def assert_same_result(py, sc, where: str) -> None:
    """Backend result ``sc`` equals the Python model's ``py``: the same error, or every
    token's write and read cycle, cycles, statistics, memory report and outputs."""
    if isinstance(py, Exception) or isinstance(sc, Exception):
        assert type(py) is type(sc) and str(py) == str(sc), f"{where}: {py!r} vs {sc!r}"
        return
    _assert_same_timed_trace(py, sc, where)
    assert sc.cycles == py.cycles, where
    assert sc.nodes == py.nodes, where
    assert sc.max_occupancy == py.max_occupancy, where
    assert sc.fifos == py.fifos, where  # the FIFO report (docs/timing.md)
    assert (sc.hw, sc.clock_mhz, sc.channel_bytes) == (py.hw, py.clock_mhz,
                                                       py.channel_bytes), where
    assert sc.mem_requests == py.mem_requests, where
    assert set(sc.outputs) == set(py.outputs), where
    for name in py.outputs:
        np.testing.assert_array_equal(sc.dense(name), py.dense(name), err_msg=where)


def _assert_same_timed_trace(py, got, where: str) -> None:
    mismatches = compare_traces(py.trace, got.trace)
    assert not mismatches, f"{where}: " + "; ".join(map(str, mismatches[:3]))
    late = [n for n, et in py.trace.edges.items()
            if got.trace.edges[n].read_cycles != et.read_cycles]
    assert not late, f"{where}: read cycles differ on {late}"


def _bursts(res) -> list[tuple]:
    return [(r.cycle, r.port, r.line, r.lines, r.write) for r in res.mem_requests]


def _memory_stats(res) -> dict[str, tuple]:
    return {n: (s.stall_mem, s.dram_read_bytes, s.dram_write_bytes, s.mem_requests)
            for n, s in res.nodes.items()}


def _assert_same_words(py, got, where: str, levels: bool = False) -> None:
    assert sorted(got.outputs) == sorted(py.outputs), where
    for name, tree in py.outputs.items():
        if levels:
            assert got.outputs[name].levels == tree.levels, f"{where}: levels of {name}"
        np.testing.assert_array_equal(bits(got.outputs[name].to_dense()),
                                      bits(tree.to_dense()), err_msg=f"{where}: {name}")


def assert_replays(graph, inputs: Mapping[str, Any], sim: str) -> list[dict]:
    """Every primitive of ``graph``, replayed in RTL from the Python model's trace at the
    recorded cycles, writes the recorded words at the recorded cycles and reads its
    inputs at the recorded cycles. Returns the replay plan (per edge: words, cycles)."""
    from rtl_hls.rtl.bench import run_trace

    ref = simulate(graph, inputs, trace=True)
    plan = []
    for e in graph.edges:
        et = ref.trace.edges[e.name]
        plan.append({"name": e.name, "depth": e.depth, "writes": et.cycles,
                     "reads": et.read_cycles or [],
                     "tokens": [encode_token(t, et.numeric) for t in et.tokens]})
    obs = run_trace(graph, bind_inputs(graph, inputs), plan, sim)
    bad = []
    for e in plan:
        o = obs[e["name"]]
        if o["tokens"] != e["tokens"] or o["cycles"] != e["writes"]:
            got = list(zip(o["tokens"], o["cycles"], strict=True))
            want = list(zip(e["tokens"], e["writes"], strict=True))
            i = next((k for k, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
                     min(len(got), len(want)))
            bad.append(f"{e['name']}: first difference at token #{i}")
        elif o["reads"] != e["reads"]:
            bad.append(f"{e['name']}: read cycles differ")
    assert not bad, "\n".join(bad)
    return plan


@dataclass
class Under:
    """One backend under test: its name and, for a toolchain, the compiled backend."""

    name: str
    tool: Any = None

    @property
    def sim(self) -> str:
        """The RTL simulator's name (``rtl-icarus`` → ``icarus``)."""
        return self.name.removeprefix("rtl-")

    def configs(self, configs: Mapping[str, Sequence[Config]] | None) -> list[Config]:
        return list((configs or {}).get(self.name, DEFAULT_CONFIGS[self.name]))

    def run(self, graph, inputs, depth: int | None = 2, hw: Hardware | None = None,
            trace: bool = True):
        """One run (the error a failing run raises, returned)."""
        try:
            if self.name == "python":
                return simulate(graph, inputs, trace=trace, depth=depth, hw=hw,
                                mem_trace=hw is not None and hw.memory)
            if self.name == "systemc":
                from cosim import SystemCRun

                (res,) = self.tool.run_batch([SystemCRun(
                    graph, inputs, trace=trace, depth=depth, hw=hw,
                    mem_trace=hw is not None and hw.memory)])
                return res
            return self.tool.run(graph, inputs, trace=trace, depth=depth, hw=hw,
                                 mem_trace=hw is not None and hw.memory)
        except SimulationError as exc:
            return exc

    def check(self, graph, inputs: Mapping[str, Any],
              want: Mapping[str, np.ndarray] | None = None, *,
              configs: Mapping[str, Sequence[Config]] | None = None,
              exact: bool = False, rtol: float = 1e-5, atol: float = 1e-5,
              deadlocks: bool = False) -> list:
        """Run ``graph`` in this backend's configurations: each run equals the Python
        model's as far as this backend can be compared, and its outputs equal ``want``
        (``exact``) or are close to it. A run may deadlock (as the model does) at depth 1,
        or with ``deadlocks`` at any bounded depth. Returns the results, in configuration
        order."""
        todo = self.configs(configs)
        results = self._results(graph, inputs, todo)
        for (depth, hw), got in zip(todo, results, strict=True):
            where = (f"{self.name}: {graph.name} ({graph.dtype}, depth={depth}, "
                     f"hw={hw and hw.name})")
            py = got if self.name == "python" else python_run(graph, inputs, depth, hw)
            self._compare(py, got, hw, where)
            if isinstance(got, DeadlockError) and (depth == 1 or deadlocks and depth is not None):
                continue  # a graph's own reconvergent forks can need two slots on an edge
            assert not isinstance(got, Exception), f"{where}: {got}"
            for name, gold in (want or {}).items():
                if exact:
                    np.testing.assert_array_equal(got.dense(name), gold, err_msg=where)
                else:
                    np.testing.assert_allclose(got.dense(name), gold, rtol=rtol, atol=atol,
                                               err_msg=where)
        return results

    def _results(self, graph, inputs, todo: list[Config]) -> list:
        if self.name == "systemc":  # one forked child for every configuration
            from cosim import SystemCRun

            return self.tool.run_batch([SystemCRun(
                graph, inputs, trace=True, depth=d, hw=hw,
                mem_trace=hw is not None and hw.memory) for d, hw in todo])
        return [self.run(graph, inputs, d, hw) for d, hw in todo]

    def _compare(self, py, got, hw: Hardware | None, where: str) -> None:
        if self.name == "python":
            return
        if self.name == "systemc":
            assert_same_result(py, got, where)
            return
        assert not isinstance(py, Exception), f"{where}: the model failed: {py}"
        assert not isinstance(got, Exception), f"{where}: {got}"
        if self.name == "hls":
            assert got.cycles is None, where  # C-simulation has no clock
            mismatches = compare_traces(py.trace, got.trace, timed=False)
            assert not mismatches, f"{where}: " + "; ".join(map(str, mismatches[:5]))
            _assert_same_words(py, got, where, levels=True)
            return
        _assert_same_timed_trace(py, got, where)
        assert got.cycles == py.cycles, where
        if hw is not None and hw.memory:
            assert _bursts(got) == _bursts(py), where
            assert got.channel_bytes == py.channel_bytes, where
            assert (got.dram_read_bytes, got.dram_write_bytes) == (
                py.dram_read_bytes, py.dram_write_bytes), where
            stats = _memory_stats(got)
            assert stats == {n: v for n, v in _memory_stats(py).items() if n in stats}, where
        _assert_same_words(py, got, where)


def assert_lint_clean(net, tmp_path) -> None:
    """A generated netlist passes ``verilator --lint-only -Wall`` with every primitive
    (skipped without Verilator)."""
    import shutil
    import subprocess

    from rtl_hls.rtl import rtl_sources
    from rtl_hls.rtl.bench import _sim_env, simulator_missing

    reason = simulator_missing("verilator")
    if reason:
        pytest.skip(reason)
    top = tmp_path / f"{net.top}.sv"
    top.write_text(net.text)
    with _sim_env("verilator"):
        out = subprocess.run([shutil.which("verilator") or "verilator", "--lint-only",
                              "-Wall", *map(str, rtl_sources()), str(top),
                              "--top-module", net.top], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
