"""The ``hls-csim`` backend: the generated Vitis HLS C++ C-simulated with g++ and samfuse's shims.

Generates the design (:func:`rtl_hls.hls.generate`), compiles its testbench once per
design content (cached under ``$XDG_CACHE_HOME/samfuse/hls``, else
``~/.cache/samfuse/hls``), and runs the executable on each input set: the testbench reads
the input arrays at run time, so one build serves any inputs of the graph's shapes.
Results are untimed: outputs and (optionally) per-edge token traces, with ``cycles=None``.
A hardware description with memory (``hw=``) generates the top with ``m_axi`` ports
(docs/hls.md, "Off-chip tensors: m_axi ports"); the tokens on every edge do not change.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from functools import cache
from pathlib import Path
from typing import Any

from ir import (
    ENTRY_BYTES,
    TIMING_KNOBS,
    Graph,
    Hardware,
    Trace,
)
from rtl_hls.hls import SHIM_DIR, TEMPLATE_DIR, HlsDesign, generate, write_design, write_inputs
from sim_models.python import (
    SimResult,
    SimulationError,
)

from ._backend import Backend, Execution, ToolNotFoundError, register

__all__ = ["HlsCsimBackend", "HlsCompileError", "HlsRunError", "hls_cache_dir", "read_writers"]

CXXFLAGS = ("-O2", "-std=c++17", "-w")


class HlsCompileError(RuntimeError):
    """g++ rejected a generated design; the message carries g++'s diagnostics."""


class HlsRunError(SimulationError):
    """The compiled C-simulation failed (a malformed stream, a read from an empty stream)."""


def hls_cache_dir() -> Path:
    """Where compiled designs are kept (``$XDG_CACHE_HOME/samfuse/hls``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "samfuse" / "hls"


def _cxx() -> str | None:
    return os.environ.get("CXX") or shutil.which("g++")


@cache
def _cxx_version(cxx: str) -> str:
    out = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=False)
    return out.stdout.splitlines()[0] if out.stdout else cxx


def _dir_digest(h: Any, directory: Path) -> None:
    for p in sorted(directory.glob("*.h")):
        h.update(p.name.encode())
        h.update(p.read_bytes())


@register
class HlsCsimBackend(Backend):
    """Generated HLS C++ compiled with g++ against samfuse's shim headers; untimed."""

    name = "hls-csim"
    timed = False
    #: every knob is rendered in the generated C++ (codegen's timing shell: pipeline II,
    #: iteration latency and start-up per process, stream storage by read latency);
    #: C-simulation itself is untimed (token-exact under any knobs)
    timing_knobs = frozenset(TIMING_KNOBS)
    #: a buffered array is a local copy its process fills from its m_axi port first; a
    #: materialised intermediate's is an on-chip array argument, with no fill
    #: (rtl_hls/hls/_onchip.py; C-simulation is untimed)
    onchip_buffers = True

    def __init__(self, cache_dir: str | Path | None = None) -> None:
        self.cache_dir = Path(cache_dir) if cache_dir is not None else hls_cache_dir()

    @classmethod
    def unavailable(cls) -> str | None:
        if _cxx() is None:
            return "no C++ compiler: install g++ (or set $CXX)"
        return None

    # -- build --------------------------------------------------------------------------
    def build(self, graph: Graph, hw: Hardware | None = None) -> tuple[HlsDesign, Path]:
        """Generate and compile ``graph``'s testbench (or reuse the cached executable);
        ``hw`` with memory gives the top ``m_axi`` ports, else the recording top."""
        cxx = _cxx()
        if cxx is None:
            raise ToolNotFoundError(f"backend {self.name!r} cannot run here: "
                                    f"{self.unavailable()}")
        # without memory hw sets only timing (block operators' II, the knobs' template
        # arguments, stream storage): at the defaults, the same files as none
        design = generate(graph) if hw is None else generate(graph, hw=hw)
        h = hashlib.sha256()
        for name in sorted(design.files):
            h.update(name.encode())
            h.update(design.files[name].encode())
        _dir_digest(h, TEMPLATE_DIR)
        _dir_digest(h, SHIM_DIR)
        h.update(" ".join((_cxx_version(cxx), *CXXFLAGS)).encode())
        build_dir = self.cache_dir / f"{design.top}-{h.hexdigest()[:16]}"
        exe = build_dir / "tb"
        if exe.exists():
            return design, exe
        # build in a private directory, then rename it into place: concurrent builds of
        # the same design (parallel sweeps sharing the cache) never see half-written files
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f"{build_dir.name}.", dir=self.cache_dir))
        write_design(design, work, copy_templates=False)
        cmd = [cxx, *CXXFLAGS, f"-I{TEMPLATE_DIR}", f"-I{SHIM_DIR}", f"-I{work}",
               str(work / design.top_source), str(work / design.testbench),
               "-o", str(work / "tb")]
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise HlsCompileError(
                f"g++ failed to compile the HLS design of graph {graph.name!r} "
                f"(sources in {work}):\n{_head(out.stderr, 60)}")
        try:
            os.rename(work, build_dir)
        except OSError:  # another process finished the same build first
            shutil.rmtree(work, ignore_errors=True)
        return design, exe

    # -- run ----------------------------------------------------------------------------
    def execute(self, elab, tensors, *, trace, mem_trace):
        """``mem_trace`` is ignored: C-simulation has no clock, so no bursts. A graph's
        unbounded edges get UNBOUNDED_DEPTH (docs/hls.md)."""
        start = time.perf_counter()
        graph = elab.graph
        design, exe = self.build(graph, elab.hw)
        with tempfile.TemporaryDirectory(prefix="samfuse-hls-") as tmp:
            in_dir, out_dir = Path(tmp, "in"), Path(tmp, "out")
            in_dir.mkdir()
            out_dir.mkdir()
            write_inputs(design, tensors, in_dir)
            sim_start = time.perf_counter()
            out = subprocess.run([str(exe), str(in_dir), str(out_dir), "1" if trace else "0"],
                                 capture_output=True, text=True, check=False)
            sim_seconds = time.perf_counter() - sim_start
            if out.returncode != 0:
                raise HlsRunError(f"graph {graph.name!r}: the HLS C-simulation failed "
                                  f"(exit {out.returncode}):\n{_tail(out.stderr, 20)}")
            peaks = read_acc_peaks(graph, out_dir) if elab.hw is not None else None
            levels, words = read_writers(design, out_dir)
            res_trace = Trace.read(out_dir / "trace.txt") if trace else None
        result = SimResult(graph.name, {}, None, trace=res_trace,
                           wall_seconds=time.perf_counter() - start, sim_seconds=sim_seconds,
                           backend=self.name)
        return Execution(result, levels, words, peaks)


def read_acc_peaks(graph: Graph, directory: Path) -> dict[str, int]:
    """The sparse accumulators' peak entry counts (``acc_peaks.txt``): one line per
    accumulator in the order the top calls them, its topological order."""
    words = (directory / "acc_peaks.txt").read_text().split()
    accs = [n for n in graph.topological_order() if graph.nodes[n].op in ENTRY_BYTES]
    if len(words) != len(accs):
        raise HlsRunError(f"graph {graph.name!r}: acc_peaks.txt holds {len(words)} peaks "
                          f"for {len(accs)} sparse accumulators")
    return {n: int(w) for n, w in zip(accs, words, strict=True)}


def _head(text: str, n: int) -> str:
    """The first ``n`` lines: g++'s first error is the one that explains the rest."""
    lines = text.strip().splitlines()
    return "\n".join(lines if len(lines) <= n else [*lines[:n], "..."])


def _tail(text: str, n: int) -> str:
    lines = text.strip().splitlines()
    return "\n".join(lines if len(lines) <= n else ["...", *lines[-n:]])


def read_writers(design: HlsDesign, directory: Path
                 ) -> tuple[dict[str, tuple[list[int], list[tuple[int, int]]]],
                            dict[str, list[int]]]:
    """Each writer's recording from ``writer<k>.txt``: level crds and stops, or value
    words (E words per stored block of a blocked output, docs/blocks.md, "Memory")."""
    levels: dict[str, tuple[list[int], list[tuple[int, int]]]] = {}
    values: dict[str, list[int]] = {}
    for w in design.writers:
        lines = (directory / f"writer{w.index}.txt").read_text().split("\n")
        level = design.graph.nodes[w.node].primitive.writes_level
        if level and design.memory:
            levels[w.node] = _stored_level(lines, w.dense)
        elif level:
            crd = [int(x) for x in lines[1].split()]
            flat = [int(x) for x in lines[2].split()]
            levels[w.node] = (crd, list(zip(flat[::2], flat[1::2], strict=True)))
        else:
            values[w.node] = [int(x) for x in lines[1].split()]
    return levels, values


def _stored_level(lines: list[str], dense: int | None
                  ) -> tuple[list[int], list[tuple[int, int]]]:
    """A level written through m_axi ports: crds and seg words (one per stop, the crds so
    far), or, for a dense level, only its counts: the writer checked that every stop closes
    a full fiber 0..dense-1. Stop levels are not stored (``-1``); decoding ignores them."""
    n, ns = (int(x) for x in lines[0].split())
    if dense is None:
        crd = [int(x) for x in lines[1].split()]
        seg = [int(x) for x in lines[2].split()]
    else:
        assert n == ns * dense, (n, ns, dense)
        crd = list(range(dense)) * ns
        seg = [dense * (j + 1) for j in range(ns)]
    return crd, [(pos, -1) for pos in seg]
