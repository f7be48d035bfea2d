"""The ``samfuse`` command line: compile, simulate, co-simulate, render, models, a demo.

``main(argv)`` returns an exit status (0 success, 1 an error or a failed check, 2 a usage
error) and never lets a user error escape as a traceback: every error class the project
raises for bad input is caught and printed as one line on stderr (compile errors add the
expression with a caret). ``docs/cli.md`` documents every command.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from compiler import (
    CompileError,
    compile_expression,
    explain_orders,
    fusion_table,
    parse,
    tensor_ranks,
)
from ir import (
    RENDER_FORMATS,
    SCHEMA,
    FiberTree,
    FormatError,
    Graph,
    GraphError,
    Hardware,
    HwError,
    ProgramError,
    ScheduleError,
    StorageError,
    TraceFormatError,
    check_assoc,
    check_fits,
    from_path,
    mtx_vector_shape,
    tensor_file_header,
)
from ir import render as render_graph
from sim_models.python import InputError, SimResult, SimulationError, bind_inputs, simulate

from ..backends._backend import BACKENDS, ToolNotFoundError, backend_names, get_backend
from ..runs._files import atomic_path, path_arg, safe_join, writable_dir, write_atomic, write_tensor
from ..runs._lanes import lane_report
from ._hw import add_depth_option, add_hw_options, add_hw_parser, depth_and_hw, depth_arg
from ._mlir import compile_mlir, is_mlir_file
from ._model import add_model_parser, seed_arg
from ._report import memory_lines, sim_json, stats_table, summary_lines
from ._study import add_study_parsers
from ._tune import add_tune_parser

__all__ = ["main", "build_parser", "CliError"]

PROG = "samfuse"
#: seconds before the first progress line, and between lines
PROGRESS_DELAY, PROGRESS_EVERY = 2.0, 10.0


class CliError(Exception):
    """A user error found by the command line itself (bad NAME=VALUE, missing file…)."""


# -- argument helpers --------------------------------------------------------------------

def _pairs(items: Sequence[str] | None, option: str, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise CliError(f"{option} expects NAME={what}, got {item!r}")
        if name.strip() in out:
            raise CliError(f"{option} gives {name.strip()!r} twice")
        out[name.strip()] = value.strip()
    return out


#: suffixes of the tensor files ``--shape`` and ``--input`` read
TENSOR_SUFFIXES = (".mtx", ".npy", ".npz")


def _shape(name: str, text: str, ndim: int | None = None) -> tuple[int, ...]:
    """``34x16``, ``34,16``, ``""`` (a scalar), or a tensor file to take the shape from
    (an n x 1 Matrix Market file gives a vector's shape where ``ndim`` is 1)."""
    parts = [p for p in text.replace("x", ",").split(",") if p.strip()]
    if all(p.strip().isdigit() for p in parts):
        if any(int(p) < 1 for p in parts):
            raise CliError(f"--shape {name}={text}: every size must be an integer >= 1")
        return tuple(int(p) for p in parts)
    if Path(text).suffix.lower() in TENSOR_SUFFIXES or Path(text).exists():
        head = tensor_file_header(text) if Path(text).is_file() else None
        if head is not None:  # the header alone: the data is not needed
            vector = mtx_vector_shape(head[0]) if ndim == 1 and text.endswith(".mtx") else None
            return vector or head[0]
        return _read_tensor(name, text, ndim, "--shape").shape
    raise CliError(f"--shape {name}={text}: expected sizes such as 34x16 or a tensor "
                   "file (.mtx, .npy, .npz) to read the shape from")


def _load_graph(path: str) -> Graph:
    """Read graph JSON; a missing, special, binary or non-JSON file is a one-line user
    error saying which of these it is."""
    file = Path(path)
    if not file.exists():
        raise CliError(f"graph file {path!r} does not exist")
    if file.is_dir():
        raise CliError(f"graph file {path!r} is a folder; give the graph JSON written by "
                       f"'{PROG} compile -o'")
    if not file.is_file():
        raise CliError(f"graph file {path!r} is not a regular file (a device or a pipe); "
                       f"give the graph JSON written by '{PROG} compile -o'")
    hint = f"expected the graph JSON written by '{PROG} compile -o'"
    try:
        data = json.loads(file.read_text())
    except UnicodeDecodeError:
        raise CliError(f"graph file {path!r} is not text; {hint}") from None
    except (json.JSONDecodeError, RecursionError) as exc:
        why = exc if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise CliError(f"graph file {path!r} is not valid JSON ({why}); {hint}") from None
    if not isinstance(data, dict):
        raise CliError(f"graph file {path!r} holds a JSON {type(data).__name__}, not an "
                       f"object; {hint}")
    if "schema" not in data:
        raise CliError(f"graph file {path!r} has no 'schema' key, so it is not samfuse graph "
                       f"JSON; {hint} (it starts with \"schema\": \"{SCHEMA}\")")
    return Graph.from_dict(data)


def _load_inputs(graph: Graph, items: Sequence[str] | None,
                 nonfinite: bool = False) -> dict[str, FiberTree]:
    """Read ``NAME=FILE`` inputs in the graph's formats; names are checked first. Values
    that are NaN, infinite or beyond float32's range (1e40 would become inf) are refused
    unless ``nonfinite``: IEEE-754 special values are then simulated as they are."""
    given = _pairs(items, "--input", "FILE")
    wanted = sorted(n for n, t in graph.tensors.items() if t.role == "input")
    extra = sorted(set(given) - set(wanted))
    if extra:
        raise CliError(f"graph {graph.name!r} has no input tensor(s) {extra}; it reads "
                       f"{wanted}")
    missing = [n for n in wanted if n not in given]
    if missing:
        raise CliError(f"graph {graph.name!r} needs --input for {missing} (it reads "
                       f"{wanted})")
    out = {}
    for name in wanted:
        path = Path(given[name])
        if not path.is_file():
            raise CliError(f"input {name!r}: no such file {str(path)!r}")
        spec = graph.tensors[name]
        _check_size(name, path, spec.shape, spec.format, graph.dtype)
        try:
            with np.errstate(over="ignore", invalid="ignore"):  # refused below
                out[name] = from_path(path, spec.format, dtype=graph.dtype,
                                      ndim=len(spec.shape))
        except (StorageError, FormatError) as exc:
            text = str(exc)
            if text.startswith(("cannot read", "tensor file", ".npy file")):
                raise  # already names the file
            raise CliError(f"input {name!r} ({str(path)!r}): {text}") from None
        bad = np.flatnonzero(~np.isfinite(out[name].vals)) if not nonfinite else ()
        if len(bad):
            raise CliError(f"input {name!r} ({str(path)!r}): {len(bad)} value(s) are NaN, "
                           "infinite or beyond float32's range (+-3.4e38), the first "
                           f"{out[name].vals.flat[bad[0]]}; give --allow-nonfinite to "
                           "simulate IEEE-754 special values as they are")
    return out




def _check_size(name: str, path: Path, want: tuple[int, ...], fmt_spec: str,
                dtype: str) -> None:
    """Refuse, from the file header, an input whose shape differs from the graph's or whose
    storage would not fit in memory, before anything is allocated."""
    head = tensor_file_header(path)
    if head is None:
        return
    shape, nnz = head
    if len(want) == 1 and path.suffix.lower() == ".mtx" and mtx_vector_shape(shape):
        shape = mtx_vector_shape(shape)  # an n x 1 or 1 x n matrix stores a vector
    if shape != tuple(want):
        raise CliError(f"tensor {name!r}: shape {shape} but the graph expects {tuple(want)} "
                       f"(header of {str(path)!r})")
    from ir import Format

    try:
        fmt = Format.parse(fmt_spec, len(shape))
    except FormatError:
        return
    try:
        check_fits(f"input {name!r}", shape, fmt, dtype, nnz)
    except StorageError as exc:
        raise CliError(str(exc)) from None


@contextmanager
def _progress(label: str, delay: float = PROGRESS_DELAY,
              every: float = PROGRESS_EVERY) -> Iterator[None]:
    """Periodic "still running" lines on stderr for runs longer than ``delay`` seconds."""
    done = threading.Event()
    start = time.perf_counter()

    def tick() -> None:
        wait = delay
        while not done.wait(wait):
            print(f"{PROG}: {label}… {time.perf_counter() - start:.0f} s", file=sys.stderr,
                  flush=True)
            wait = every

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


# -- reporting ---------------------------------------------------------------------------

def _write_outputs(res: SimResult, out_dir: Path) -> list[Path]:
    """Dense outputs (and any that is not a matrix) as .npy, sparse matrices as .mtx."""
    return [write_tensor(tree, out_dir, name) for name, tree in res.outputs.items()]


def _write_trace(trace: Any, out_dir: Path, graph: str, backend: str) -> Path:
    path = safe_join(out_dir, f"{graph}.{backend}.trace")
    with atomic_path(path) as tmp:
        trace.write(tmp)
    return path


def _say(*lines: str) -> None:
    for line in lines:
        print(line)


# -- commands ----------------------------------------------------------------------------

def cmd_compile(args: argparse.Namespace) -> int:
    if is_mlir_file(args.expr):
        return compile_mlir(args, CliError)
    formats = _pairs(args.format, "--format", "FORMAT")
    ranks = tensor_ranks(parse(args.expr))  # how each tensor file is to be read
    shapes = {n: _shape(n, v, ranks.get(n))
              for n, v in _pairs(args.shape, "--shape", "SHAPE").items()}
    sizes = {}
    for n, v in _pairs(args.size, "--size", "N").items():
        if not v.isdigit() or int(v) < 1:
            raise CliError(f"--size {n}={v}: expected an integer >= 1")
        sizes[n] = int(v)
    depth = args.depth if args.depth != "graph" else 2
    stats: dict[str, Any] = dict(_densities(args.density))
    for name, path in _pairs(args.input, "--input", "FILE").items():
        tensor = _read_tensor(name, path, ranks.get(name))
        stats[name] = tensor
        shapes.setdefault(name, tensor.shape)
    par = {}
    for name, text in _pairs(args.par, "--par", "LANES").items():
        if not text.isdigit():
            raise CliError(f"--par {name}={text}: expected a number of lanes")
        par[name] = int(text)
    block = {}
    for name, text in _pairs(args.block, "--block", "EXTENT").items():
        if not text.isdigit() or int(text) < 1:
            raise CliError(f"--block {name}={text}: expected a block extent >= 1")
        block[name] = int(text)
    graph = compile_expression(args.expr, formats, shapes, sizes=sizes, order=args.order,
                               reduce=args.reduce, dtype=args.dtype, depth=depth,
                               transpose=not args.no_transpose, name=args.name, stats=stats,
                               par=par, partition=args.partition,
                               lane_buffer=args.lane_buffer, block=block,
                               assoc=check_assoc("--assoc", args.assoc))
    if args.explain:
        print(explain_orders(graph, stats))
    if args.table:
        print(fusion_table(graph))
    if args.output is None:
        if not (args.table or args.explain):
            print(graph.to_json())
        return 0
    graph.to_json(args.output)
    meta = graph.meta
    moved = ", ".join(f"{t} {v['requested']}→{v['bound']}"
                      for t, v in meta["transposed"].items()) or "none"
    _say(f"wrote {args.output}: {len(graph.nodes)} nodes, {len(graph.edges)} edges",
         f"order      {','.join(meta['order'])}",
         *([f"assoc      {args.assoc}: {meta['expression']}"]
           if args.assoc != "as-written" else []),
         *_parallel_lines(meta),
         *([f"block      {', '.join(f'{i}={b}' for i, b in meta['block'].items())}"]
           if "block" in meta else []),
         f"reductions {', '.join(meta['reductions']) or 'none'}",
         f"transposed {moved}")
    return 0


def _read_tensor(name: str, path: str, ndim: int | None = None,
                 option: str = "--input") -> FiberTree:
    """A tensor file given with --input or --shape: .mtx, .npy or scipy .npz (an n x 1 or
    1 x n Matrix Market file as a vector where the expression's ``ndim`` is 1)."""
    if not Path(path).is_file():
        raise CliError(f"{option} {name}={path}: no such file")
    try:
        return from_path(path, ndim=ndim)
    except (ValueError, OSError) as exc:
        raise CliError(f"{option} {name}={path}: {exc}") from None


def _parallel_lines(meta: dict[str, Any]) -> list[str]:
    par = meta.get("parallel")
    if not par:
        return []
    lanes = " x ".join(f"{v}={n}" for v, n in par["par"].items())
    ranges = "; ".join(f"{v}: " + " ".join(f"[{lo},{hi})" for lo, hi in r)
                       for v, r in par["ranges"].items())
    lines = [f"lanes      {lanes}, {par['partition']}, buffer {par['lane_buffer']} tokens",
             f"ranges     {ranges}"]
    if par.get("expected_imbalance"):
        lines.append("imbalance  " + ", ".join(
            f"{v} {x:.3f}" for v, x in par["expected_imbalance"].items())
            + " expected (largest lane / mean, measured on --input data)")
    return lines


def _densities(items: Sequence[str] | None) -> dict[str, float]:
    """``--density NAME=P`` pairs: the statistics the order search costs orders with."""
    out = {}
    for name, text in _pairs(items, "--density", "P").items():
        try:
            out[name] = float(text)
        except ValueError:
            out[name] = -1.0
        if not 0.0 <= out[name] <= 1.0:
            raise CliError(f"--density {name}={text}: expected a fraction in [0, 1]")
    return out


def cmd_sim(args: argparse.Namespace) -> int:
    if args.functional and (args.hw != "ideal" or args.hw_set):
        raise CliError("--functional runs carry no timing and no memory system, so --hw "
                       "and --hw-set would change nothing; drop them or the --functional")
    depth, hw = depth_and_hw(args)
    graph = _load_graph(args.graph)
    inputs = _load_inputs(graph, args.input, args.allow_nonfinite)
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
    with _progress(f"simulating {graph.name!r} on {args.backend}"):
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
    _say(*summary_lines(res, args.backend), *memory_lines(res, hw),
         *lane_report(graph, res).lines())
    if args.stats:
        _say("", *stats_table(res, graph, memory=hw.memory))
    if "trace" in files:
        _say(f"trace      {files['trace']}")
    if "mem_trace" in files:
        _say(f"mem trace  {files['mem_trace']} ({files['mem_trace_requests']} requests)")
    for path in files.get("waves", []):
        _say(f"waves      {path}")
    for path in files.get("outputs", {}).values():
        _say(f"output     {path}")
    if out_dir is None:
        _say("outputs    not written (use --output-dir DIR)")
    return 0


def _write_sim_files(args: argparse.Namespace, res: SimResult, graph: Graph, hw: Hardware,
                     inputs: dict, trace_dir: Path | None, out_dir: Path | None
                     ) -> dict[str, Any]:
    """Write what the options ask for; returns the paths (strings) by kind."""
    files: dict[str, Any] = {}
    if trace_dir is not None:
        assert res.trace is not None
        files["trace"] = str(_write_trace(res.trace, trace_dir, graph.name, args.backend))
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
        files["outputs"] = {p.stem: str(p) for p in _write_outputs(res, out_dir)}
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
    graph = _load_graph(args.graph)
    inputs = _load_inputs(graph, args.input, args.allow_nonfinite)
    trace_dir = writable_dir(args.trace, "--trace") if args.trace else None
    vcd = writable_dir(args.vcd, "--vcd") if args.vcd is not None else None
    from ..backends._compare import compare_backends

    with _progress(f"co-simulating {graph.name!r} on {', '.join(names)}"):
        report = compare_backends(graph, inputs, names, depth=depth, hw=hw, vcd=vcd)
    print(report)
    for name in waving if vcd is not None else ():
        for path in _waves_written(safe_join(vcd, f"{graph.name}.{name}")):
            _say(f"waves      {path}")
    if trace_dir is not None:  # each backend's trace (a failed run has none)
        for name, run in report.runs.items():
            if run.result is not None and run.result.trace is not None:
                _say(f"trace      {_write_trace(run.result.trace, trace_dir, graph.name, name)}")
    return 0 if report.ok else 1


def cmd_show(args: argparse.Namespace) -> int:
    out = Path(args.output) if args.output else Path(args.graph).with_suffix(".svg")
    fmt = out.suffix.lstrip(".").lower()
    if fmt not in RENDER_FORMATS:
        raise CliError(f"-o {str(out)!r}: unsupported format {fmt or 'without suffix'!r}; "
                       f"use {', '.join('.' + f for f in RENDER_FORMATS)}")
    writable_dir(out.parent, "-o")
    graph = _load_graph(args.graph)
    _render(graph, out)
    ops: dict[str, int] = {}
    for n in graph.nodes.values():
        ops[n.op] = ops.get(n.op, 0) + 1
    _say(f"wrote {out}: {len(graph.nodes)} nodes, {len(graph.edges)} edges",
         "primitives " + ", ".join(f"{op}×{k}" for op, k in sorted(ops.items())))
    return 0


def _render(graph: Graph, path: Path) -> None:
    try:
        with atomic_path(path) as tmp:
            render_graph(graph, tmp)
    except RuntimeError as exc:  # Graphviz's dot is missing
        raise CliError(str(exc)) from None


DEMO_EXPR = "X(i,j) = A(i,k) * H(k,j)"
#: a demo run of the karate club with this many feature columns takes about a minute
DEMO_MAX_FEATURES = 4096


def _karate_inputs(features: int, seed: int) -> tuple[Any, np.ndarray]:
    """The demo's operands: the karate club's adjacency (34×34, CSR, ships with networkx)
    and seeded dense features (34 × ``features``)."""
    import networkx as nx
    import scipy.sparse as sp

    if not 1 <= features <= DEMO_MAX_FEATURES:
        raise CliError(f"--features {features}: expected 1..{DEMO_MAX_FEATURES} columns "
                       "(the demo simulates 34 x N dense features token by token; give "
                       "`samfuse sim` your own inputs for bigger runs)")
    A = sp.csr_array(nx.to_scipy_sparse_array(nx.karate_club_graph(), weight=None,
                                              dtype=np.float32))
    H = np.random.default_rng(seed).standard_normal((A.shape[1], features))
    return A, H.astype(np.float32)


def cmd_example_data(args: argparse.Namespace) -> int:
    """``b.mtx`` and ``c.npy``: the README tour's inputs (the demo's operands)."""
    A, H = _karate_inputs(args.features, args.seed)
    out = writable_dir(args.dir, "DIR")
    b, c = out / "b.mtx", out / "c.npy"
    with atomic_path(b) as tmp:
        FiberTree.from_any(A, "csr").to_mtx(tmp)
    with atomic_path(c) as tmp:
        np.save(tmp, H)
    _say(f"wrote {b}: karate club adjacency {A.shape[0]}x{A.shape[1]}, {A.nnz} nonzeros",
         f"wrote {c}: dense {H.shape[0]}x{H.shape[1]} float32 (seed {args.seed})")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """Karate-club adjacency (34×34, ships with networkx) times seeded dense features."""
    A, H = _karate_inputs(args.features, args.seed)
    out = writable_dir(args.out, "--out")
    t0 = time.perf_counter()
    graph = compile_expression(DEMO_EXPR, {"A": "csr"}, {"A": A.shape, "H": H.shape},
                               order=args.order, name="demo_spmm")
    compile_s = time.perf_counter() - t0
    write_atomic(out / "graph.json", graph.to_json() + "\n")
    with _progress("simulating the demo"):
        res = simulate(graph, {"A": A, "H": H})
    want = A @ H
    got = res.dense("X")
    err = float(np.max(np.abs(got - want))) if got.size else 0.0
    ok = bool(np.allclose(got, want, rtol=1e-4, atol=1e-4))
    _say(f"demo       {DEMO_EXPR}",
         f"inputs     A: karate club adjacency {A.shape[0]}x{A.shape[1]}, {A.nnz} nonzeros "
         f"(csr); H: dense {H.shape[0]}x{H.shape[1]} (seed {args.seed})",
         f"compiled   {len(graph.nodes)} nodes, {len(graph.edges)} edges in "
         f"{compile_s * 1e3:.1f} ms; order {','.join(graph.meta['order'])}; "
         f"{', '.join(graph.meta['reductions'])}",
         *summary_lines(res, "python"),
         f"check      {'PASS' if ok else 'FAIL'}: max |X - A@H| = {err:.3g} against scipy "
         "(rtol 1e-4, atol 1e-4)")
    with atomic_path(out / "X.npy") as tmp:
        np.save(tmp, got)
    try:
        _render(graph, out / "graph.svg")
        _say(f"wrote      {out / 'graph.json'}, {out / 'graph.svg'}, {out / 'X.npy'}")
    except CliError as exc:
        print(f"{PROG}: warning: {exc}", file=sys.stderr)
        _say(f"wrote      {out / 'graph.json'}, {out / 'X.npy'}")
    return 0 if ok else 1


# -- parser and entry point ----------------------------------------------------------------

def _add_nonfinite(p: argparse.ArgumentParser) -> None:
    p.add_argument("--allow-nonfinite", action="store_true",
                   help="accept NaN, infinite and out-of-range float32 input values (refused "
                   "by default)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Compile sparse tensor expressions to "
                                "SAM dataflow graphs and simulate them.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    c = sub.add_parser("compile", help="compile an index expression (or an MLIR file) to "
                       "graph JSON")
    c.add_argument("expr", help="e.g. 'X(i,j) = B(i,k) * C(k,j)' (see docs/compiler.md), or "
                   "an MLIR file FILE.mlir (docs/frontend.md)")
    c.add_argument("--schedule", help="MLIR files: unfused (default), partial, full or a YAML "
                   "schedule; -o then names a folder for every kernel's graph")
    c.add_argument("--func", dest="function",
                   help="MLIR files: the function (default: the only one, else @main)")
    c.add_argument("--format", action="append", metavar="NAME=FORMAT",
                   help="storage format of a tensor: csr, csc, dcsr, dense, dc, cc:1,0 … "
                   "(default dense)")
    c.add_argument("--shape", action="append", metavar="NAME=SHAPE",
                   help="tensor shape, 34x16, or a tensor file to read it from")
    c.add_argument("--size", action="append", metavar="INDEX=N", help="size of an index")
    c.add_argument("--order", help="dataflow order, e.g. i,k,j (default: chosen)")
    c.add_argument("--reduce", default="sum", choices=("sum", "max"),
                   help="reduction for indices absent from the output (default sum)")
    c.add_argument("--dtype", default="float32", choices=("float32", "int32"))
    c.add_argument("--depth", type=depth_arg, default="graph", help="FIFO depth (default 2)")
    c.add_argument("--no-transpose", action="store_true",
                   help="reject discordant operands instead of transposing them")
    c.add_argument("--name", help="graph name (default einsum)")
    c.add_argument("-o", "--output", type=path_arg, help="graph JSON to write (default: stdout)")
    c.add_argument("--table", action="store_true",
                   help="print the fusion table (rows: order + val, columns: tensor views, "
                   "cells: the nodes made there) instead of the JSON; -o still writes it")
    c.add_argument("--explain", action="store_true",
                   help="list every candidate order with its estimated cost (or why it is "
                   "invalid), the chosen one marked *, instead of the JSON")
    c.add_argument("--input", action="append", metavar="NAME=FILE",
                   help="an input tensor (.mtx, .npy, .npz): its shape, and the data the order "
                   "search and a balanced partition measure")
    c.add_argument("--par", action="append", metavar="INDEX=LANES",
                   help="run an output index on LANES parallel lanes (repeat to nest, e.g. "
                   "--par i=4 --par j=4); see docs/parallel.md")
    c.add_argument("--partition", default="round-robin", choices=("round-robin", "balanced"),
                   help="how lanes share an index: dealt in turn (crd mod lanes), or "
                   "contiguous ranges of equal work measured on --input data (default "
                   "round-robin)")
    c.add_argument("--block", action="append", metavar="INDEX=EXTENT",
                   help="block an index: the graph iterates blocks of EXTENT and its values "
                   "are dense blocks (repeat per index, e.g. --block i=16 --block j=16); "
                   "see docs/blocks.md")
    c.add_argument("--lane-buffer", type=int, metavar="TOKENS",
                   help="output buffer per lane in front of the merges (default: 1024 for "
                   "round-robin, a lane's expected output for balanced)")
    c.add_argument("--density", action="append", metavar="NAME=P",
                   help="expected fraction of non-zeros of a sparse input, for the order "
                   "search's cost (default 0.1; dense inputs 1)")
    c.add_argument("--assoc", default="as-written", metavar="ASSOC",
                   help="association of a chain of three or more products: as-written "
                   "(default), left ((A·B)·C), right (A·(B·C)) or cost (the cheapest by the "
                   "order search's cost); see docs/fusion.md")
    c.set_defaults(func=cmd_compile)

    s = sub.add_parser("sim", help="simulate a graph on one backend")
    s.add_argument("graph", help="graph JSON")
    s.add_argument("--input", action="append", metavar="NAME=FILE",
                   help="input tensor file (.mtx, .npy, .npz)")
    add_depth_option(s)
    _add_nonfinite(s)
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
    _add_nonfinite(k)
    k.add_argument("--trace", metavar="DIR", type=path_arg, help="keep the traces in DIR")
    k.add_argument("--vcd", metavar="DIR", type=path_arg, help="write each waveform-capable "
                   "backend's waveform into DIR as GRAPH.BACKEND.vcd/.fst (systemc, rtl)")
    add_hw_options(k, "ideal")
    k.set_defaults(func=cmd_cosim)

    w = sub.add_parser("show", help="render a graph to SVG/PNG/PDF/DOT with Graphviz")
    w.add_argument("graph")
    w.add_argument("-o", "--output", type=path_arg, help="output file (default: GRAPH with .svg)")
    w.set_defaults(func=cmd_show)

    d = sub.add_parser("demo", help="compile and simulate karate-club A times features H")
    d.add_argument("--out", default="samfuse-demo", type=path_arg, help="output directory "
                   "(default ./samfuse-demo)")
    d.add_argument("--features", type=int, default=16, help="columns of H (default 16)")
    d.add_argument("--seed", type=seed_arg, default=0, help="seed of H (an int >= 0)")
    d.add_argument("--order", help="dataflow order (default: chosen by the compiler)")
    d.set_defaults(func=cmd_demo)

    x = sub.add_parser("example-data", help="write the README tour's inputs: b.mtx (the "
                       "karate club's adjacency, 34x34) and c.npy (dense 34x16 features)")
    x.add_argument("dir", nargs="?", default=".", help="folder to write into (default .)")
    x.add_argument("--features", type=int, default=16, help="columns of c (default 16)")
    x.add_argument("--seed", type=seed_arg, default=0, help="seed of c (an int >= 0)")
    x.set_defaults(func=cmd_example_data)

    add_hw_parser(sub)
    add_model_parser(sub, CliError)
    add_study_parsers(sub, CliError)
    add_tune_parser(sub, CliError)
    return p


#: errors that mean "bad input", printed as one line
USER_ERRORS: tuple[type[BaseException], ...] = (
    CliError, CompileError, GraphError, FormatError, StorageError, TraceFormatError,
    InputError, SimulationError, ToolNotFoundError, ProgramError, ScheduleError, HwError,
    OSError)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``samfuse`` command line; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help or a usage error, already printed by argparse
        return int(exc.code or 0)
    try:
        with _sigterm_as_interrupt():
            return args.func(args)
    except BrokenPipeError:  # stdout closed early (``samfuse compile … | head``)
        _silence_stdout()
        return 0
    except USER_ERRORS as exc:
        print(f"{PROG}: error: {_message(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (``kill``, a batch scheduler's time limit) ends a command like Ctrl-C: the
    finished runs of a study or tuning run are cached, worker pools are shut down, and the
    exit status is 130, instead of dying at once with -15 and leaked semaphores."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail too."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _message(exc: BaseException) -> str:
    if isinstance(exc, CompileError):
        return str(exc)  # the message, then the expression with a caret
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.strerror or exc}: {exc.filename!r}"
    text = str(exc)
    if isinstance(exc, SimulationError) and "\n" in text:
        return text  # a deadlock lists the blocked nodes below its first line
    return text.splitlines()[0] if text else type(exc).__name__


if __name__ == "__main__":
    sys.exit(main())
