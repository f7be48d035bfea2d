"""``samfuse model``: a bundled PyTorch model through the whole flow, on one command.

torch.export → einsum program → schedule (unfused / partial / full, or the user's YAML)
→ fused regions → graphs → simulation, checked against the eager model. Kept apart from
``cli.py`` because it is the only command that needs torch.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from compiler import NAMED_SCHEDULES, buffer_model, fusion_table, parse_buffer
from compiler._blocks import seed_blocks
from ir import DEFAULT_HW, PARTITIONS, Schedule, check_assoc

from ..backends._backend import get_backend
from ..runs._config import MAX_SEED
from ..runs._files import path_arg, safe_join, writable_dir, write_atomic
from ..runs._model_json import model_json
from ..runs._model_run import (
    bundled_model,
    check_lanes_used,
    compare_outputs,
    compile_for_run,
    run_model,
)
from ._hw import add_depth_option, add_hw_options, depth_and_hw

__all__ = ["add_model_parser", "MODEL_NAMES"]

#: the bundled models (``compiler.models.MODELS``), named here so that building the parser
#: (``samfuse --help``) does not import torch; a test keeps the two in step
MODEL_NAMES = ("autoencoder", "bigbird", "gcn", "gpt", "graphsage")



def seed_arg(text: str) -> int:
    """An argparse type for ``--seed``: numpy's generators take only seeds >= 0, so a
    negative one is a usage error here rather than a traceback after the run starts."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"seed {text!r}: expected an integer >= 0")
    if value > MAX_SEED:
        raise argparse.ArgumentTypeError(f"seed {text!r}: expected an integer below 2^63 "
                                         "(torch seeds are 64-bit)")
    return value


def add_model_parser(sub: argparse._SubParsersAction, error: type[Exception]) -> None:
    """Register the ``model`` subcommand; ``error`` is the CLI's user-error class."""
    m = sub.add_parser("model", help="compile and simulate a bundled PyTorch model (or an "
                       "MLIR file) under a fusion schedule")
    m.add_argument("model", metavar="MODEL",
                   help=f"bundled model ({', '.join(MODEL_NAMES)}) or an MLIR file FILE.mlir "
                   "(linalg on tensors; docs/frontend.md)")
    m.add_argument("--config", default="small",
                   help="named configuration of the model (default small; gcn and "
                   "graphsage: also cora, cora-ml, dblp, collab, mag and NAME-fuseflow for "
                   "FuseFlow's artifact settings; see docs/models.md)")
    m.add_argument("--schedule", default="partial",
                   help="unfused, partial (one region per layer), full, or a YAML file "
                   "(see docs/fusion.md); default partial")
    m.add_argument("--par", action="append", metavar="INDEX=LANES",
                   help="parallel lanes for every region whose kernels output INDEX "
                   "(repeat to nest; docs/parallel.md)")
    m.add_argument("--partition", default="round-robin", choices=PARTITIONS,
                   help="how lanes share an index (default round-robin)")
    m.add_argument("--block", action="append", metavar="[TENSOR=]EXTENT",
                   help="block sparsity: values are dense blocks of EXTENT along every index "
                   "a blocked tensor meets; EXTENT alone blocks the model's sparse tensors "
                   "(e.g. BigBird's mask), TENSOR=EXTENT names one, '*=EXTENT' every "
                   "tensor whose sizes it divides (docs/blocks.md)")
    m.add_argument("--assoc", metavar="ASSOC",
                   help="association of every chain of products (Â·(X·W) vs (Â·X)·W): "
                   "as-written (default), left, right or cost (the cheapest per region by "
                   "the compiler's cost model, priced on the model's data); overrides a "
                   "YAML schedule's own assoc, not its regions' (docs/fusion.md)")
    m.add_argument("--backend", default="python",
                   help="backend name (default python; auto: SystemC for large graphs)")
    m.add_argument("--seed", type=seed_arg, default=0, help="random seed (an int >= 0)")
    m.add_argument("--input", action="append", metavar="NAME=FILE",
                   help="MLIR files: a tensor (.mtx, .npy, .npz) for an argument or constant "
                   "of the function; others come from the file or are generated from --seed")
    m.add_argument("--func", dest="function",
                   help="MLIR files: the function to run (default: the only one, else @main)")
    m.add_argument("--program", action="store_true", help="print the einsum program")
    m.add_argument("--table", action="store_true",
                   help="print every kernel's fusion table")
    m.add_argument("--out", metavar="DIR", type=path_arg,
                   help="write each kernel's graph JSON and the inputs it read into DIR "
                   "(REGION.TENSOR.json, REGION.TENSOR.INPUT.npy/.mtx), so 'samfuse sim' "
                   "can re-run one kernel alone")
    m.add_argument("--vcd", metavar="DIR", type=path_arg,
                   help="write each kernel's waveform into DIR as "
                   "REGION.TENSOR.BACKEND.vcd/.fst (needs --backend systemc or rtl)")
    m.add_argument("--json", action="store_true",
                   help="end with one JSON line: cycles, DRAM bytes, FLOPs and memory "
                   "accesses in total and per region, with the heuristic's estimates "
                   "(docs/cli.md)")
    m.add_argument("--buffer", metavar="auto|none|NAMES",
                   help="which inputs' arrays live in on-chip buffers on hardware with "
                   "memory: auto (the compiler's rule: arrays re-read or gathered, within "
                   "onchip.bytes; the default on backends that render buffers), none, or "
                   "tensors / tensor.array names, comma separated (X,A.crd1); a YAML "
                   "schedule's own buffer wins (docs/timing.md, 'On-chip buffers')")
    add_hw_options(m, DEFAULT_HW)
    add_depth_option(m)
    m.add_argument("--mem-trace", metavar="DIR", type=path_arg,
                   help="write each kernel's memory requests into DIR as a Ramulator 2 "
                   "trace, REGION.TENSOR.trace (see docs/memory.md)")
    m.set_defaults(func=lambda args: cmd_model(args, error))


def _schedule(text: str, program) -> Schedule:
    """A named schedule, or a YAML file (checked to exist before the export)."""
    if text in NAMED_SCHEDULES:
        return NAMED_SCHEDULES[text](program)
    return Schedule.from_yaml(Path(text).read_text())


def _lanes(items: list[str], error: type[Exception]) -> dict[str, int]:
    """``--par i=4`` options: index -> lanes (1..64; the schedule checks the range)."""
    out = {}
    for item in items:
        name, eq, n = item.partition("=")
        if not eq or not name.strip() or not n.strip().isdigit():
            raise error(f"--par {item!r}: expected INDEX=LANES, e.g. i=4")
        out[name.strip()] = int(n)
    return out


def block_seeds(items: list[str], program, error: type[Exception]) -> dict[str, int]:
    """``--block 16`` (the program's sparse inputs and weights), ``--block mask=16`` (one
    tensor), ``--block '*=16'`` (every tensor whose sizes 16 divides: dense projections
    too): seed tensor -> extent."""
    out: dict[str, int] = {}
    for item in items:
        name, eq, n = item.rpartition("=")
        name = name.strip()
        if not n.strip().isdigit() or int(n) < 1 or (eq and not name):
            raise error(f"--block {item!r}: expected EXTENT, TENSOR=EXTENT or '*=EXTENT', "
                        "e.g. 16 or mask=16")
        b = int(n)
        out.update({name: b} if eq and name != "*" else
                   seed_blocks(program, b, "all" if eq else "sparse"))
    if items and not out:
        raise error(f"--block {items[0]!r}: the model has no sparse tensor to block; name "
                    "one with TENSOR=EXTENT")
    return out


def _rerun_hint(compiled, out: Path, hw: str) -> str:
    """The ``samfuse sim`` command that re-runs the first kernel from ``--out`` files."""
    reg = compiled.regions[0]
    k = reg.kernels[0]
    files = {p.name.split(".")[-2]: p for p in sorted(out.glob(f"{reg.name}.{k.target}.*"))
             if p.suffix in (".npy", ".mtx")}
    inputs = " ".join(f"--input {t}={files[t]}" for t in k.inputs if t in files)
    return f"samfuse sim {out / f'{reg.name}.{k.target}.json'} {inputs} --hw {hw}"


def cmd_model(args: argparse.Namespace, error: type[Exception]) -> int:
    from ._mlir import is_mlir_file, mlir_frontend

    mlir = is_mlir_file(args.model)
    if not mlir and args.model not in MODEL_NAMES:
        raise error(f"model {args.model!r}: expected one of {', '.join(MODEL_NAMES)} or an "
                    "MLIR file (FILE.mlir)")
    if not mlir and (args.input or args.function):
        raise error("--input and --func apply to MLIR files; a bundled model makes its own "
                    "inputs from --seed")
    try:  # a bad backend is refused before the slow torch import and export
        runner = get_backend(args.backend)
        if args.vcd is not None:
            get_backend(args.backend, Path(args.vcd) / "probe")
    except KeyError as exc:
        raise error(str(exc.args[0])) from None
    if args.schedule not in NAMED_SCHEDULES and not Path(args.schedule).is_file():
        raise error(f"--schedule {args.schedule!r}: expected one of {', '.join(NAMED_SCHEDULES)} "
                    "or a YAML file")
    if args.assoc is not None:
        check_assoc("--assoc", args.assoc)
    depth, hw = depth_and_hw(args)
    if args.mem_trace and not hw.memory:
        raise error(f"--mem-trace: hardware {hw.name!r} has no memory system "
                    "(dram.enabled is false)")
    out = writable_dir(args.out, "--out") if args.out else None
    traces = writable_dir(args.mem_trace, "--mem-trace") if args.mem_trace else None
    waves = writable_dir(args.vcd, "--vcd") if args.vcd is not None else None
    label, program, binds, gold, export_s = (mlir_frontend if mlir else _torch_frontend)(
        args, error)
    if args.program:
        print(program)
    schedule = _schedule(args.schedule, program)
    if args.par:  # replace() re-checks the schedule (lane counts 1..64)
        schedule = dataclasses.replace(schedule, par=_lanes(args.par, error),
                                       partition=args.partition)
    if args.block:
        schedule = dataclasses.replace(schedule, block=block_seeds(args.block, program, error))
        schedule.validate(program)
    if args.assoc is not None:
        schedule = dataclasses.replace(schedule, assoc=args.assoc)
    buffer = parse_buffer(args.buffer) if args.buffer is not None else \
        "auto" if runner.onchip_buffers else "none"
    compiled = compile_for_run(program, schedule, hw, buffer, binds)
    compiled = buffer_model(compiled, hw, buffer, binds)
    if args.par:
        check_lanes_used(compiled, schedule.par, args.model)
    print(f"{'read' if mlir else 'exported':10} {label} to {len(program.statements)} "
          f"statements in {export_s * 1e3:.0f} ms")
    if args.program and compiled.program is not program:
        print(f"re-associated ({args.assoc or 'per region'}):\n{compiled.program}")
    print(compiled)
    if args.table:
        print_tables(compiled)
    if out is not None:
        write_graphs(compiled, out)
    t0 = time.perf_counter()
    run = run_model(compiled, binds, backend=args.backend, depth=depth, hw=hw, mem_trace=traces,
                    progress=lambda p: print(f"samfuse: {p}", file=sys.stderr, flush=True),
                    trace=args.json and not runner.counts_work, inputs_dir=out, vcd=waves)
    wall = time.perf_counter() - t0
    print(run)
    err, ok = compare_outputs(run.outputs, gold)
    print(f"simulated  {run.cycles} cycles, {run.bytes_moved} bytes moved, {wall:.2f} s wall")
    if hw.memory:
        print(f"hw         {hw.name}: {hw.seconds(run.cycles) * 1e6:.3f} µs at "
              f"{hw.clock_mhz:g} MHz, DRAM {run.dram_read_bytes} B read, "
              f"{run.dram_write_bytes} B written")
    if traces is not None:
        print(f"mem trace  {traces}/REGION.TENSOR.trace (one per kernel)")
    if waves is not None:
        print(f"waves      {waves}/REGION.TENSOR.{args.backend}.vcd/.fst (one per kernel)")
    if out is not None:
        print(f"wrote      {out}/REGION.TENSOR.json and the inputs each kernel read; re-run "
              f"one alone: {_rerun_hint(compiled, out, hw.name)}")
    print(f"check      {'PASS' if ok else 'FAIL'}: max |out - {'numpy' if mlir else 'eager'}|"
          f" = {err:.3g} (rtol 1e-4, atol 1e-5)")
    if args.json:
        print(json.dumps({**model_json(compiled, run, depth), "correct": ok}))
    return 0 if ok else 1


def _torch_frontend(args: argparse.Namespace, error: type[Exception]
                    ) -> tuple[str, Any, dict[str, Any], np.ndarray, float]:
    """A bundled model: label, program (torch.export), bound tensors, the eager output
    (the gold) and the export's seconds."""
    from compiler.models import MODELS

    cls = MODELS[args.model]
    if args.config not in cls.default_config:
        raise error(f"--config {args.config!r}: {args.model} has "
                    f"{', '.join(cls.default_config)}")
    program, binds, gold, export_s = bundled_model(args.model, args.config, args.seed)
    return f"{args.model} ({args.config})", program, binds, gold, export_s


def print_tables(compiled: Any) -> None:
    """Every kernel's fusion table (``--table``)."""
    for reg in compiled.regions:
        for k in reg.kernels:
            print(f"\nfusion table of {reg.name}/{k.target}:\n{fusion_table(k.graph)}")


def write_graphs(compiled: Any, out: Path) -> int:
    """Every kernel's graph JSON into ``out`` as ``REGION.TARGET.json``; returns how many."""
    n = 0
    for reg in compiled.regions:
        for k in reg.kernels:
            write_atomic(safe_join(out, f"{reg.name}.{k.target}.json"),
                         k.graph.to_json() + "\n")
            n += 1
    return n
