"""``samfuse compile``: an index expression (or an MLIR file) to graph JSON, a fusion table
or the orders' costs."""

from __future__ import annotations

import argparse
from typing import Any

from compiler import (
    buffer_graph,
    check_buffer_names,
    compile_expression,
    explain_orders,
    fusion_table,
    parse,
    parse_buffer,
    tensor_ranks,
)
from ir import DEFAULT_HW, PARTITIONS, buffered_arrays, check_assoc

from ..runs._files import path_arg
from ._args import CliError, input_densities, name_value_pairs, parse_shape, read_tensor, say
from ._hw import add_hw_options, depth_arg, hw_from_args
from ._mlir import compile_mlir, is_mlir_file

__all__ = ["add_compile_parser", "cmd_compile"]


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


def _buffers(graph) -> list[str]:
    return [f"{t.name}.{a}" for t in graph.tensors.values() for a in buffered_arrays(t)]


def cmd_compile(args: argparse.Namespace) -> int:
    if is_mlir_file(args.expr):
        return compile_mlir(args, CliError)
    formats = name_value_pairs(args.format, "--format", "FORMAT")
    ranks = tensor_ranks(parse(args.expr))  # how each tensor file is to be read
    shapes = {n: parse_shape(n, v, ranks.get(n))
              for n, v in name_value_pairs(args.shape, "--shape", "SHAPE").items()}
    sizes = {}
    for n, v in name_value_pairs(args.size, "--size", "N").items():
        if not v.isdigit() or int(v) < 1:
            raise CliError(f"--size {n}={v}: expected an integer >= 1")
        sizes[n] = int(v)
    depth = args.depth if args.depth != "graph" else 2
    stats: dict[str, Any] = dict(input_densities(args.density))
    for name, path in name_value_pairs(args.input, "--input", "FILE").items():
        tensor = read_tensor(name, path, ranks.get(name))
        stats[name] = tensor
        shapes.setdefault(name, tensor.shape)
    par = {}
    for name, text in name_value_pairs(args.par, "--par", "LANES").items():
        if not text.isdigit():
            raise CliError(f"--par {name}={text}: expected a number of lanes")
        par[name] = int(text)
    block = {}
    for name, text in name_value_pairs(args.block, "--block", "EXTENT").items():
        if not text.isdigit() or int(text) < 1:
            raise CliError(f"--block {name}={text}: expected a block extent >= 1")
        block[name] = int(text)
    graph = compile_expression(args.expr, formats, shapes, sizes=sizes, order=args.order,
                               reduce=args.reduce, dtype=args.dtype, depth=depth,
                               transpose=not args.no_transpose, name=args.name, stats=stats,
                               par=par, partition=args.partition,
                               lane_buffer=args.lane_buffer, block=block,
                               assoc=check_assoc("--assoc", args.assoc))
    if args.buffer is not None:  # the graph carries the choice (docs/timing.md)
        choice = parse_buffer(args.buffer)
        if not isinstance(choice, str):
            check_buffer_names(choice, [n for n, t in graph.tensors.items()
                                        if t.role == "input"], "--buffer")
        graph = buffer_graph(graph, hw_from_args(args), choice, stats)
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
    say(f"wrote {args.output}: {len(graph.nodes)} nodes, {len(graph.edges)} edges",
         f"order      {','.join(meta['order'])}",
         *([f"assoc      {args.assoc}: {meta['expression']}"]
           if args.assoc != "as-written" else []),
         *_parallel_lines(meta),
         *([f"block      {', '.join(f'{i}={b}' for i, b in meta['block'].items())}"]
           if "block" in meta else []),
         *([f"buffers    {', '.join(_buffers(graph)) or 'none'}"]
           if args.buffer is not None else []),
         f"reductions {', '.join(meta['reductions']) or 'none'}",
         f"transposed {moved}")
    return 0




def add_compile_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``compile``."""
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
    c.add_argument("--partition", default="round-robin", choices=PARTITIONS,
                   help="how lanes share an index: dealt in turn (crd mod lanes), or "
                   "contiguous ranges of equal work measured on --input data, or (position) "
                   "windows of the level below's positions so a heavy row spans lanes "
                   "(default round-robin)")
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
    c.add_argument("--buffer", metavar="auto|none|NAMES",
                   help="hold inputs' arrays in on-chip buffers (the graph's tensors[].buffer): "
                   "auto (the compiler's rule on --hw), none, or tensors / tensor.array "
                   "names, comma separated (x,A.crd1); default: none (docs/timing.md)")
    add_hw_options(c, DEFAULT_HW)
    c.set_defaults(func=cmd_compile)
