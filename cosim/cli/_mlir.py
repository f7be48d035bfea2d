"""``samfuse compile FILE.mlir`` and the MLIR side of ``samfuse model FILE.mlir``.

An MLIR file (linalg on tensors, ``#sparse_tensor.encoding`` formats) goes through
``compiler.read_mlir`` to an einsum program; its inputs are the function's arguments and
its weights the file's constants. Tensors come from ``--input NAME=FILE``, then from the
file's constants, then are generated from ``--seed`` at their declared shape and format
(elided constants and arguments not given); the result is checked against the numpy
oracle (``compiler.evaluate``) on the same tensors.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np

from compiler import compile_model

from ..runs._files import writable_dir
from ._args import refuse_nonfinite

__all__ = ["is_mlir_file", "compile_mlir", "mlir_frontend", "read_inputs"]

#: compile options that describe one expression; an MLIR file fixes these itself
_EXPRESSION_ONLY = {"shape": "--shape", "size": "--size", "order": "--order",
                    "explain": "--explain", "no_transpose": "--no-transpose",
                    "block": "--block", "density": "--density", "lane_buffer": "--lane-buffer"}


def is_mlir_file(text: str) -> bool:
    """A command's model or expression argument that names an MLIR file."""
    return text.endswith(".mlir") and "=" not in text


def read_inputs(items: list[str] | None, error: type[Exception]) -> dict[str, Any]:
    """``--input NAME=FILE`` (.mtx, .npy, .npz) as dense arrays, by tensor name."""
    from ir import FiberTree

    out: dict[str, Any] = {}
    for item in items or []:
        name, eq, path = item.partition("=")
        if not eq or not name.strip() or not path.strip():
            raise error(f"--input {item!r}: expected NAME=FILE")
        if not Path(path).is_file():
            raise error(f"--input {name}={path}: no such file")
        try:
            with np.errstate(over="ignore", invalid="ignore"):  # refused below
                out[name.strip()] = FiberTree.from_any(path).to_dense()
        except (ValueError, OSError) as exc:
            raise error(f"--input {name}={path}: {exc}") from None
        refuse_nonfinite(f"--input {name}={path}", out[name.strip()],
                         "an MLIR program's float32 tensors cannot hold them")
    return out


def _formats(items: list[str] | None, error: type[Exception]) -> dict[str, str]:
    out = {}
    for item in items or []:
        name, eq, fmt = item.partition("=")
        if not eq or not name.strip() or not fmt.strip():
            raise error(f"--format {item!r}: expected NAME=FORMAT")
        out[name.strip()] = fmt.strip()
    return out


def compile_mlir(args: argparse.Namespace, error: type[Exception]) -> int:
    """``samfuse compile FILE.mlir``: print the program and its compiled regions; ``-o``
    names a folder for every kernel's graph JSON (``REGION.TARGET.json``)."""
    from compiler import NAMED_SCHEDULES, mlir_tensors, read_mlir

    from ._model import _lanes, _schedule, print_tables, write_graphs

    for key, option in _EXPRESSION_ONLY.items():
        if getattr(args, key, None):
            raise error(f"{option} applies to an expression; an MLIR file declares its own "
                        "shapes and formats (use --format, --schedule, --par)")
    if args.reduce != "sum" or args.dtype != "float32":
        raise error("--reduce and --dtype apply to an expression; an MLIR file's "
                    "reductions come from its ops and its programs are float32")
    out = writable_dir(args.output, "-o") if args.output else None
    model = read_mlir(args.expr, func=args.function, name=args.name,
                      formats=_formats(args.format, error))
    program = model.program
    schedule_text = args.schedule or "unfused"
    if schedule_text not in NAMED_SCHEDULES and not Path(schedule_text).is_file():
        raise error(f"--schedule {schedule_text!r}: expected one of {', '.join(NAMED_SCHEDULES)} "
                    "or a YAML file")
    schedule = _schedule(schedule_text, program)
    if args.par:
        schedule = dataclasses.replace(schedule, par=_lanes(args.par, error),
                                       partition=args.partition)
    stats = mlir_tensors(model, 0, read_inputs(args.input, error)) \
        if schedule.has_lanes else None
    depth = args.depth if args.depth != "graph" else 2
    compiled = compile_model(program, schedule, depth=depth, stats=stats)
    print(program)
    print(compiled)
    if args.table:
        print_tables(compiled)
    if out is not None:
        n = write_graphs(compiled, out)
        print(f"wrote {n} graph(s) into {out}")
    return 0


def mlir_frontend(args: argparse.Namespace, error: type[Exception]
                  ) -> tuple[str, Any, dict[str, Any], Any, float]:
    """The MLIR half of ``samfuse model``: label, program, bound tensors, gold (numpy
    oracle, every result of the function) and the frontend's seconds."""
    from compiler import evaluate, mlir_tensors, read_mlir

    if args.config != "small":
        raise error("--config names a bundled model's size; an MLIR file has its own")
    t0 = time.perf_counter()
    model = read_mlir(args.model, func=args.function)
    seconds = time.perf_counter() - t0
    binds = mlir_tensors(model, args.seed, read_inputs(args.input, error))
    program = model.program
    values = evaluate(program, binds)
    gold = {name: values[name] for name in program.outputs}
    return Path(args.model).name, program, binds, gold, seconds
