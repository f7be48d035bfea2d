"""``samfuse model``: a bundled PyTorch model through the whole flow, on one command.

torch.export → einsum program → schedule (unfused / partial / full, or the user's YAML)
→ fused regions → graphs → simulation, checked against the eager model. Kept apart from
``cli.py`` because it is the only command that needs torch.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

from compiler import compile_model, fusion_table
from compiler._blocks import seed_blocks
from ir import DEFAULT_HW, Schedule

from ._backend import get_backend
from ._cli_hw import add_hw_options, hw_from_args
from ._files import path_arg, safe_join, writable_dir, write_atomic
from ._model_run import check_lanes_used, run_model

__all__ = ["add_model_parser", "SCHEDULES", "MODEL_NAMES"]

#: the bundled models (``compiler.models.MODELS``), named here so that building the parser
#: (``samfuse --help``) does not import torch; a test keeps the two in step
MODEL_NAMES = ("autoencoder", "bigbird", "gcn", "gpt", "graphsage")

#: the largest seed: torch's generators take 64-bit seeds; study tables store int64
MAX_SEED = (1 << 63) - 1

#: named schedules: what FuseFlow calls unfused, partially fused (per layer), fully fused
SCHEDULES = {"unfused": Schedule.unfused, "partial": Schedule.by_scope, "full": Schedule.fused}


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
    m = sub.add_parser("model", help="compile and simulate a bundled PyTorch model "
                       "under a fusion schedule")
    m.add_argument("model", choices=MODEL_NAMES, help="bundled model")
    m.add_argument("--config", default="small",
                   help="named size of the model (default small; see docs/models.md)")
    m.add_argument("--schedule", default="partial",
                   help="unfused, partial (one region per layer), full, or a YAML file "
                   "(see docs/fusion.md); default partial")
    m.add_argument("--par", action="append", metavar="INDEX=LANES",
                   help="parallel lanes for every region whose kernels output INDEX "
                   "(repeat to nest; docs/parallel.md)")
    m.add_argument("--partition", default="round-robin", choices=("round-robin", "balanced"),
                   help="how lanes share an index (default round-robin)")
    m.add_argument("--block", action="append", metavar="[TENSOR=]EXTENT",
                   help="block sparsity: values are dense blocks of EXTENT along every index "
                   "a blocked tensor meets; EXTENT alone blocks the model's sparse tensors "
                   "(e.g. BigBird's mask), TENSOR=EXTENT names one, '*=EXTENT' every "
                   "tensor whose sizes it divides (docs/blocks.md)")
    m.add_argument("--backend", default="python", help="backend name (default python)")
    m.add_argument("--seed", type=seed_arg, default=0, help="random seed (an int >= 0)")
    m.add_argument("--program", action="store_true", help="print the einsum program")
    m.add_argument("--table", action="store_true",
                   help="print every kernel's fusion table")
    m.add_argument("--out", metavar="DIR", type=path_arg,
                   help="write each kernel's graph JSON into DIR")
    add_hw_options(m, DEFAULT_HW)
    m.add_argument("--mem-trace", metavar="DIR", type=path_arg,
                   help="write each kernel's memory requests into DIR as a Ramulator 2 "
                   "trace, REGION.TENSOR.trace (see docs/memory.md)")
    m.set_defaults(func=lambda args: cmd_model(args, error))


def _schedule(text: str, program) -> Schedule:
    """A named schedule, or a YAML file (checked to exist before the export)."""
    if text in SCHEDULES:
        return SCHEDULES[text](program)
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


def cmd_model(args: argparse.Namespace, error: type[Exception]) -> int:
    try:  # a bad backend is refused before the slow torch import and export
        get_backend(args.backend)
    except KeyError as exc:
        raise error(str(exc.args[0])) from None
    if args.schedule not in SCHEDULES and not Path(args.schedule).is_file():
        raise error(f"--schedule {args.schedule!r}: expected one of {', '.join(SCHEDULES)} "
                    "or a YAML file")
    hw = hw_from_args(args)
    if args.mem_trace and not hw.memory:
        raise error(f"--mem-trace: hardware {hw.name!r} has no memory system "
                    "(dram.enabled is false)")
    out = writable_dir(args.out, "--out") if args.out else None
    traces = writable_dir(args.mem_trace, "--mem-trace") if args.mem_trace else None
    import torch

    from compiler import from_torch, torch_inputs, torch_weights
    from compiler.models import MODELS

    cls = MODELS[args.model]
    if args.config not in cls.default_config:
        raise error(f"--config {args.config!r}: {args.model} has "
                    f"{', '.join(cls.default_config)}")
    model = cls.from_config(args.config, seed=args.seed).eval()
    example = model.example_inputs(seed=args.seed)
    t0 = time.perf_counter()
    program = from_torch(model, example, formats=model.sparse_formats)
    export_s = time.perf_counter() - t0
    if args.program:
        print(program)
    schedule = _schedule(args.schedule, program)
    if args.par:  # replace() re-checks the schedule (lane counts 1..64)
        schedule = dataclasses.replace(schedule, par=_lanes(args.par, error),
                                       partition=args.partition)
    if args.block:
        schedule = dataclasses.replace(schedule, block=block_seeds(args.block, program, error))
        schedule.validate(program)
    binds = {**torch_weights(model, program), **torch_inputs(program, example)}
    compiled = compile_model(program, schedule,
                             stats=binds if schedule.has_lanes or schedule.block else None)
    if args.par:
        check_lanes_used(compiled, schedule.par, args.model)
    print(f"exported   {args.model} ({args.config}) to {len(program.statements)} statements "
          f"in {export_s * 1e3:.0f} ms")
    print(compiled)
    if args.table:
        for reg in compiled.regions:
            for k in reg.kernels:
                print(f"\nfusion table of {reg.name}/{k.target}:\n{fusion_table(k.graph)}")
    if out is not None:
        for reg in compiled.regions:
            for k in reg.kernels:
                write_atomic(safe_join(out, f"{reg.name}.{k.target}.json"),
                             k.graph.to_json() + "\n")
    t0 = time.perf_counter()
    run = run_model(compiled, binds, backend=args.backend, hw=hw, mem_trace=traces,
                    progress=lambda p: print(f"samfuse: {p}", file=sys.stderr, flush=True))
    wall = time.perf_counter() - t0
    print(run)
    with torch.no_grad():
        want = model(*example)
    got = run.outputs[program.outputs[0]]
    want_np = want.to_dense().numpy() if want.is_sparse else want.numpy()
    err = float(np.max(np.abs(got - want_np))) if got.size else 0.0
    ok = bool(np.allclose(got, want_np, rtol=1e-4, atol=1e-5))
    print(f"simulated  {run.cycles} cycles, {run.bytes_moved} bytes moved, {wall:.2f} s wall")
    if hw.memory:
        print(f"hw         {hw.name}: {hw.seconds(run.cycles) * 1e6:.3f} µs at "
              f"{hw.clock_mhz:g} MHz, DRAM {run.dram_read_bytes} B read, "
              f"{run.dram_write_bytes} B written")
    if traces is not None:
        print(f"mem trace  {traces}/REGION.TENSOR.trace (one per kernel)")
    print(f"check      {'PASS' if ok else 'FAIL'}: max |out - eager| = {err:.3g} "
          "(rtol 1e-4, atol 1e-5)")
    return 0 if ok else 1
