"""``samfuse sim`` and ``samfuse cosim``: a graph JSON and input files run on one backend
(report, outputs, trace, waveform, memory trace) or on several, traces compared."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ir import Graph, Hardware, at_run_depth
from sim_models.python import InputError, SimResult, SimulationError, bind_inputs, simulate

from ..backends._backend import BACKENDS, backend_names, get_backend
from ..runs._files import path_arg, safe_join, writable_dir
from ..runs._lanes import lane_report
from ._args import (
    CliError,
    add_nonfinite,
    load_graph,
    load_inputs,
    say,
    still_running,
    write_outputs,
    write_trace,
)
from ._hw import add_depth_option, add_hw_options, depth_and_hw
from ._report import fifo_table, memory_lines, sim_json, stats_table, summary_lines

__all__ = ["add_sim_parsers", "cmd_sim", "cmd_cosim"]




def cmd_sim(args: argparse.Namespace) -> int:
    if args.functional and (args.hw != "ideal" or args.hw_set):
        raise CliError("--functional runs carry no timing and no memory system, so --hw "
                       "and --hw-set would change nothing; drop them or the --functional")
    depth, hw = depth_and_hw(args)
    graph = load_graph(args.graph)
    inputs = load_inputs(graph, args.input, args.allow_nonfinite)
    if args.functional and args.backend != "python":
        raise CliError(f"--functional runs the Python model only, not {args.backend!r}")
    if args.functional and (args.trace or args.mem_trace):
        raise CliError("--functional runs carry no timing, so --trace and --mem-trace are "
                       "not available")
    if args.mem_trace and not hw.memory:
        raise CliError(f"--mem-trace: hardware {hw.name!r} has no memory system "
                       "(dram.enabled is false); give --hw hbm2-u280 or another preset")
    trace_dir = writable_dir(args.trace, "--trace") if args.trace else None
    out_dir = writable_dir(args.output_dir, "--output-dir") if args.output_dir else None
    if args.mem_trace:
        writable_dir(Path(args.mem_trace).parent, "--mem-trace")
    vcd = safe_join(writable_dir(args.vcd, "--vcd"), f"{graph.name}.{args.backend}") \
        if args.vcd is not None else None
    with still_running(f"simulating {graph.name!r} on {args.backend}"):
        if args.backend == "python" and vcd is None:
            res = simulate(graph, inputs, trace=bool(args.trace), depth=depth,
                           functional=args.functional, hw=hw, mem_trace=bool(args.mem_trace))
        else:
            res = _run_backend(args.backend, graph, inputs, bool(args.trace), depth, hw,
                               bool(args.mem_trace), vcd)
    files = _write_sim_files(args, res, graph, hw, inputs, trace_dir, out_dir)
    if vcd is not None:
        files["waves"] = [str(p) for p in _waves_written(vcd)]
    if args.json:
        doc = sim_json(res, args.backend, hw, stats=args.stats, files=files,
                       hw_set=args.hw_set)
        lanes = lane_report(graph, res)
        if lanes.work:
            doc.update(lanes=lanes.work, imbalance=lanes.imbalance)
        print(json.dumps(doc))
        return 0
    say(*summary_lines(res, args.backend), *memory_lines(res, hw),
         *lane_report(graph, res).lines())
    if args.stats:
        say("", *stats_table(res, graph, memory=hw.memory))
        say("", *fifo_table(res, at_run_depth(graph, depth, hw)))
    if "trace" in files:
        say(f"trace      {files['trace']}")
    if "mem_trace" in files:
        say(f"mem trace  {files['mem_trace']} ({files['mem_trace_requests']} requests)")
    for path in files.get("waves", []):
        say(f"waves      {path}")
    for path in files.get("outputs", {}).values():
        say(f"output     {path}")
    if out_dir is None:
        say("outputs    not written (use --output-dir DIR)")
    return 0


def _write_sim_files(args: argparse.Namespace, res: SimResult, graph: Graph, hw: Hardware,
                     inputs: dict, trace_dir: Path | None, out_dir: Path | None
                     ) -> dict[str, Any]:
    """Write what the options ask for; returns the paths (strings) by kind."""
    files: dict[str, Any] = {}
    if trace_dir is not None:
        assert res.trace is not None
        files["trace"] = str(write_trace(res.trace, trace_dir, graph.name, args.backend))
    if args.mem_trace:
        from ..runs._memtrace import write_mem_trace

        if res.mem_requests is None:
            raise CliError(f"--mem-trace: backend {args.backend!r} recorded no memory "
                           "requests")
        tensors = {**bind_inputs(graph, inputs), **res.outputs}
        files["mem_trace_requests"] = write_mem_trace(args.mem_trace, graph, hw,
                                                      res.mem_requests, tensors)
        files["mem_trace"] = str(args.mem_trace)
    if out_dir is not None:
        files["outputs"] = {p.stem: str(p) for p in write_outputs(res, out_dir)}
    return files


def _run_backend(name: str, graph: Graph, inputs: dict, trace: bool,
                 depth: int | None | str, hw: Hardware | None = None,
                 mem_trace: bool = False, vcd: Path | None = None) -> SimResult:
    backend = _backend(name, vcd)
    try:
        return backend.run(graph, inputs, trace=trace, depth=depth, hw=hw,
                           mem_trace=mem_trace)
    except (SimulationError, InputError):
        raise
    except RuntimeError as exc:  # a backend's tool failed (compiler, child process…)
        raise CliError(f"backend {name!r} failed: {exc}") from None


def _backend(name: str, vcd: Path | None = None) -> Any:
    try:
        return get_backend(name, vcd)
    except KeyError as exc:
        raise CliError(str(exc.args[0])) from None


def _waves_written(prefix: Path) -> list[Path]:
    """The waveform files a backend wrote for ``prefix`` (``.vcd`` or ``.fst``)."""
    return [p for p in (prefix.with_name(prefix.name + s) for s in (".vcd", ".fst"))
            if p.exists()]


def cmd_cosim(args: argparse.Namespace) -> int:
    names = [n.strip() for n in args.backends.split(",") if n.strip()]
    if len(names) < 2:
        raise CliError(f"--backends needs at least two backends to compare, got {names}; "
                       f"available: {', '.join(backend_names())}")
    for name in names:
        _backend(name)  # unknown or unavailable backends fail before any run
    waving = [n for n in names if BACKENDS[n].waveforms]
    if args.vcd is not None and not waving:
        raise CliError(f"--vcd: none of {', '.join(names)} dumps waveforms; backends with "
                       f"waveforms: {', '.join(n for n, c in BACKENDS.items() if c.waveforms)}")
    depth, hw = depth_and_hw(args)
    graph = load_graph(args.graph)
    inputs = load_inputs(graph, args.input, args.allow_nonfinite)
    trace_dir = writable_dir(args.trace, "--trace") if args.trace else None
    vcd = writable_dir(args.vcd, "--vcd") if args.vcd is not None else None
    from ..backends._compare import compare_backends

    with still_running(f"co-simulating {graph.name!r} on {', '.join(names)}"):
        report = compare_backends(graph, inputs, names, depth=depth, hw=hw, vcd=vcd)
    print(report)
    for name in waving if vcd is not None else ():
        for path in _waves_written(safe_join(vcd, f"{graph.name}.{name}")):
            say(f"waves      {path}")
    if trace_dir is not None:  # each backend's trace (a failed run has none)
        for name, run in report.runs.items():
            if run.result is not None and run.result.trace is not None:
                say(f"trace      {write_trace(run.result.trace, trace_dir, graph.name, name)}")
    return 0 if report.ok else 1




def add_sim_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``sim`` and ``cosim``."""
    s = sub.add_parser("sim", help="simulate a graph on one backend")
    s.add_argument("graph", help="graph JSON")
    s.add_argument("--input", action="append", metavar="NAME=FILE",
                   help="input tensor file (.mtx, .npy, .npz)")
    add_depth_option(s)
    add_nonfinite(s)
    s.add_argument("--trace", metavar="DIR", type=path_arg,
                   help="write the stream trace into DIR")
    s.add_argument("--stats", action="store_true", help="print per-node statistics")
    s.add_argument("--backend", default="python", help="backend name (default python)")
    s.add_argument("--functional", action="store_true",
                   help="untimed functional run (Python model only)")
    s.add_argument("--output-dir", metavar="DIR", type=path_arg,
                   help="write outputs here: .npy (dense) or .mtx (sparse matrices)")
    add_hw_options(s, "ideal")
    s.add_argument("--json", action="store_true",
                   help="print one JSON object (cycles, DRAM bytes, GB/s, …; with --stats "
                   "every node) instead of the text report")
    s.add_argument("--vcd", metavar="DIR", type=path_arg,
                   help="write the run's waveform into DIR as GRAPH.BACKEND.vcd (SystemC) or "
                   ".fst (RTL under Icarus); needs --backend systemc or rtl")
    s.add_argument("--mem-trace", metavar="FILE", type=path_arg,
                   help="write the run's memory requests as a Ramulator 2 LoadStoreTrace "
                   "(needs --hw with memory; see docs/memory.md)")
    s.set_defaults(func=cmd_sim)

    k = sub.add_parser("cosim", help="run a graph on several backends and compare traces")
    k.add_argument("graph")
    k.add_argument("--input", action="append", metavar="NAME=FILE")
    k.add_argument("--backends", default="python,systemc",
                   help="comma-separated backend names (default python,systemc)")
    add_depth_option(k)
    add_nonfinite(k)
    k.add_argument("--trace", metavar="DIR", type=path_arg, help="keep the traces in DIR")
    k.add_argument("--vcd", metavar="DIR", type=path_arg, help="write each waveform-capable "
                   "backend's waveform into DIR as GRAPH.BACKEND.vcd/.fst (systemc, rtl)")
    add_hw_options(k, "ideal")
    k.set_defaults(func=cmd_cosim)
