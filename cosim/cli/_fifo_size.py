"""``samfuse fifo-size GRAPH --input ... [--tolerance 0.01] [-o OUT]``: the smallest
FIFO depth per edge that keeps the run's cycles within a tolerance of unbounded FIFOs,
written as a graph with those depths (``cosim.runs._fifo_size``; docs/cli.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..runs._fifo_size import size_fifos
from ..runs._files import path_arg, writable_dir
from ._args import CliError, add_nonfinite, load_graph, load_inputs, say, still_running
from ._hw import add_hw_options, hw_from_args

__all__ = ["add_fifo_size_parser", "cmd_fifo_size"]


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"tolerance {text!r}: expected a number >= 0, "
                                         "e.g. 0.01 for 1 %")
    return value


def cmd_fifo_size(args: argparse.Namespace) -> int:
    hw = hw_from_args(args)
    graph = load_graph(args.graph)
    inputs = load_inputs(graph, args.input, args.allow_nonfinite)
    out = Path(args.output) if args.output else Path(f"{graph.name}.sized.json")
    writable_dir(out.parent, "--output")
    with still_running(f"sizing the FIFOs of {graph.name!r}"):
        try:
            found = size_fifos(graph, inputs, hw, args.tolerance)
        except ValueError as exc:
            raise CliError(str(exc)) from None
    assert found.graph is not None
    found.graph.to_json(out)
    if args.json:
        print(json.dumps({"graph": str(out), "cycles": found.cycles,
                          "reference_cycles": found.reference_cycles,
                          "budget": found.budget, "runs": found.runs,
                          "depths": found.depths, "peaks": found.peaks}))
        return 0
    total = sum(found.depths.values())
    say(f"reference  {found.reference_cycles} cycles with unbounded FIFOs (hw {hw.name})",
        f"sized      {found.cycles} cycles (budget {found.budget}, tolerance "
        f"{args.tolerance:g}); {total} slots in all, {found.runs} simulations", "",
        *found.rows(), "", f"graph      {out}")
    return 0


def add_fifo_size_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fifo-size", help="find the smallest FIFO depth per edge that keeps "
                       "the cycles within a tolerance; writes the graph with those depths")
    p.add_argument("graph", help="graph JSON")
    p.add_argument("--input", action="append", metavar="NAME=FILE",
                   help="input tensor file (.mtx, .npy, .npz)")
    p.add_argument("--tolerance", type=_tolerance, default=0.01, metavar="FRACTION",
                   help="allowed slow-down against unbounded FIFOs (default 0.01 = 1 %%)")
    p.add_argument("-o", "--output", metavar="FILE", type=path_arg,
                   help="the sized graph JSON (default GRAPH_NAME.sized.json)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_hw_options(p, "ideal")
    add_nonfinite(p)
    p.set_defaults(func=cmd_fifo_size)
