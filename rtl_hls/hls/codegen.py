"""Vitis HLS C++ from an ``ir.Graph``: a dataflow top, a file-driven testbench, a TCL script.

:func:`generate` returns an :class:`HlsDesign` holding the text of

* ``<graph>_top.cpp``: ``void <graph>_top(...)`` with ``#pragma HLS dataflow``, one
  ``hls::stream`` per graph edge (``#pragma HLS stream depth`` = the edge's depth; a lane
  merge's inputs, the lane buffers, are bound to BRAM when deep), one call of a primitive
  template (``templates/<op>.h``) per node in topological order, and
  ``m_axi`` interfaces for every input array (seg/crd per compressed level, vals) and every
  writer's output arrays; with a hardware description that has memory, one ``m_axi``
  pointer per ``ir.memory_ports`` port on its channel's bundle instead (:mod:`._maxi`).
  A forked output port writes each of its edges
  (``samfuse::fork``); a port without edges discards (``samfuse::Discard``).
* ``<graph>_tb.cpp``: ``main(in_dir, out_dir, trace)`` reads the input arrays from text
  files, calls the top (again, with larger output arrays, if a writer overflowed), and
  writes each writer's crds/stops/values and the per-edge untimed trace
  (``# samfuse-trace 1``).
* ``run_hls.tcl``: csim, csynth, cosim with ``-trace_level all`` and IP export in Vitis HLS.

C-simulation runs the processes of the top one after another with unbounded streams
(``shim/hls_stream.h``), which is exact because the graphs are DAGs and every primitive
reads its inputs in a data-determined order (a Kahn network): per-edge token sequences do
not depend on scheduling. Under ``__SYNTHESIS__`` the same body is the dataflow region.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from string import Template

import numpy as np

from ir import (
    BINARY_OPS,
    CATALOGUE,
    UNARY_OPS,
    BlockOp,
    Edge,
    FiberTree,
    Graph,
    Hardware,
    Node,
    NodeElab,
    elaborate,
    f32_bits,
    int_constant,
    memory_ports,
    position_windows,
)

from ._design import ArrayArg, HlsDesign, MemArg, WriterArgs, ident, level_size, writer_nodes
from ._maxi import (
    mem_args,
    mem_inputs,
    mem_node_arrays,
    mem_pragmas,
    mem_signature_params,
    mem_tb_slots,
    mem_writers,
)
from ._onchip import buffered, chip_args, onchip_process

__all__ = ["generate", "HlsDesign", "ArrayArg", "MemArg", "WriterArgs", "write_design",
           "TEMPLATE_DIR",
           "SHIM_DIR", "write_inputs", "UNBOUNDED_DEPTH", "DEFAULT_MEM_DEPTH", "template_path",
           "LANE_BUFFER_BRAM_DEPTH"]

HERE = Path(__file__).resolve().parent
TEMPLATE_DIR = HERE / "templates"
SHIM_DIR = HERE / "shim"
#: FIFO depth given to edges the graph leaves unbounded (``depth=None``): deep enough for
#: the small test tensors; a real design should bound such edges itself
UNBOUNDED_DEPTH = 8192
#: ``depth`` of each ``m_axi`` port (words the cosim memory model allocates)
DEFAULT_MEM_DEPTH = 4096
#: a lane buffer (an input FIFO of a lane merge, docs/parallel.md) at least this deep is
#: bound to block RAM; shallower ones are left to Vitis (shift registers)
LANE_BUFFER_BRAM_DEPTH = 128

#: the templates' operator enumerators (samfuse_hls.h): the catalogue's names, upper case
_BINOP = {op: f"OP_{op.upper()}" for op in BINARY_OPS}
_UNOP = {op: f"UOP_{op.upper()}" for op in UNARY_OPS}
#: how the testbench prints a token's data payload: unsigned, signed, float, or "R"
_PRINT = {"crd": 0, "ref": 0, "repsig": 3}


def template_path(op: str) -> Path:
    """The HLS template header of catalogue primitive ``op``."""
    return TEMPLATE_DIR / f"{op}.h"


def generate(graph: Graph, *, hw: Hardware | None = None, mem_depth: int = DEFAULT_MEM_DEPTH,
             part: str = "xcu250-figd2104-2L-e", clock_ns: float | None = None
             ) -> HlsDesign:
    """Generate the HLS top, testbench and TCL script of ``graph``.

    ``hw`` with memory (``hw.memory``) makes every off-chip array an ``m_axi`` port of its
    ``ir.memory_ports`` channel, and the TCL script exports a Vitis kernel (``xo``) clocked
    at ``hw.clock_mhz``; ``None`` or ideal memory gives the recording top (4 ns, IP catalog).
    ``clock_ns`` overrides the clock either way. Block graphs (docs/blocks.md) get block
    value streams and block operators; ``hw`` also sets each block operator's initiation
    interval and every node's timing knobs (:func:`_timing_shell`, docs/hls.md "Timing
    knobs"). Every node's derived parameters come from ``ir.elaborate(graph, hw)``.
    """
    top = f"{ident(graph.name)}_top"
    edges = sorted(graph.edges, key=lambda e: e.name)
    eid = {e.name: i for i, e in enumerate(edges)}
    design = _design(graph, top, edges, hw)
    design.elab = elaborate(graph, hw)
    design.elems = dict(design.elab.widths)
    design.cycles = design.elab.cycles
    arrays = mem_node_arrays(design) if design.memory else _node_arrays(design)
    processes: list[str] = []  # nodes with on-chip buffers run in their own function
    body = [_call(design, graph.nodes[n], eid, arrays.get(n, []), processes)
            for n in graph.topological_order()]
    design.files = {
        f"{top}.h": _header(design),
        f"{top}.cpp": _top_source(design, body, mem_depth, processes),
        f"{top}_tb.cpp": _testbench(design),
        "run_hls.tcl": _tcl(design, part, _clock_ns(hw, clock_ns)),
    }
    return design


def _design(graph: Graph, top: str, edges: list[Edge], hw: Hardware | None) -> HlsDesign:
    """The top's arguments: recording arrays, or m_axi ports when ``hw`` has memory."""
    if hw is None or not hw.memory:
        return HlsDesign(graph, top, edges, _input_args(graph), _writer_args(graph))
    mem = mem_args(graph, hw)
    chip = chip_args(graph, memory_ports(graph, hw))
    return HlsDesign(graph, top, edges, mem_inputs(mem, chip), mem_writers(graph, mem, chip),
                     hw=hw, mem=mem, chip=chip)


def write_design(design: HlsDesign, directory: str | Path, *, copy_templates: bool = True
                 ) -> Path:
    """Write the design's files (and, by default, the templates it includes) to ``directory``.

    The copy of ``templates/`` makes the directory self-contained for Vitis HLS; the shim
    headers are not copied, because Vitis must use its own ``hls_stream.h``/``ap_int.h``.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    for name, text in design.files.items():
        (out / name).write_text(text)
    if copy_templates:
        shutil.copytree(TEMPLATE_DIR, out / "templates", dirs_exist_ok=True)
    return out


def write_inputs(design: HlsDesign, tensors: Mapping[str, FiberTree], directory: str | Path
                 ) -> Path:
    """The testbench's input files: one ``<array>.txt`` per top input array (word count,
    then the words). ``tensors`` are fiber trees in the graph's formats
    (``sim_models.python.bind_inputs``)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for arg in design.inputs:
        tree = tensors[arg.tensor]
        if arg.what == "vals":  # a blocked tensor's value p is words [p*E, p*E + E)
            words = np.ascontiguousarray(tree.vals).view(np.uint32).reshape(-1)
        else:
            lv = tree.levels[arg.level]
            words = np.asarray(lv.seg if arg.what == "seg" else lv.crd, dtype=np.int64)
        np.savetxt(directory / f"{arg.name}.txt", words.astype(np.uint64), fmt="%d",
                   header=str(len(words)), comments="")
    return directory


# -- arguments ---------------------------------------------------------------------------
def _input_args(graph: Graph) -> list[ArrayArg]:
    """Arrays of the input tensors the graph's nodes read (in tensor, then level order)."""
    levels: dict[str, set[int]] = {}
    vals: set[str] = set()
    for node in graph.nodes.values():
        if node.primitive.reads_compressed:  # a compressed level: seg and crd arrays
            levels.setdefault(node.params["tensor"], set()).add(node.params["level"])
        elif node.primitive.reads_values:
            vals.add(node.params["tensor"])
    args = []
    for k, tensor in enumerate(sorted(set(levels) | vals)):
        t = ident(tensor)
        for lv in sorted(levels.get(tensor, ())):
            args.append(ArrayArg(f"in{k}_{t}_seg{lv}", tensor, "seg", lv))
            args.append(ArrayArg(f"in{k}_{t}_crd{lv}", tensor, "crd", lv))
        if tensor in vals:
            args.append(ArrayArg(f"in{k}_{t}_vals", tensor, "vals"))
    return args


def _writer_args(graph: Graph) -> list[WriterArgs]:
    out = []
    for k, nid in enumerate(writer_nodes(graph)):
        node = graph.nodes[nid]
        p = f"out{k}_{ident(nid)}"
        arrays = (f"{p}_crd", f"{p}_stop_pos", f"{p}_stop_lvl", f"{p}_counts") \
            if node.primitive.writes_level else (f"{p}_vals", f"{p}_counts")
        out.append(WriterArgs(nid, node.op, k, arrays))
    return out


def _node_arrays(design: HlsDesign) -> dict[str, list[str]]:
    """The trailing C arguments of each node with arrays in a recording top."""
    args: dict[str, list[str]] = {}
    for nid, node in design.graph.nodes.items():
        prm = node.params
        if node.primitive.reads_compressed:
            names = {(a.what, a.level): a.name for a in design.inputs
                     if a.tensor == prm["tensor"]}
            args[nid] = [names[("seg", prm["level"])], names[("crd", prm["level"])]]
        elif node.primitive.reads_values:
            args[nid] = [next(a.name for a in design.inputs if a.tensor == prm["tensor"]
                              and a.what == "vals")]
    for w in design.writers:
        args[w.node] = [*w.arrays, "cap"]
    return args


# -- the top -----------------------------------------------------------------------------
def _writer_expr(design: HlsDesign, node: Node, port: str, eid: dict[str, int]) -> str:
    es = design.graph.out_edges[node.id].get(port, [])
    if not es:
        return "samfuse::Discard()"
    # a block stream's writer: samfuse::EdgeOf<block_tok<E>>, deduced by samfuse::edge
    exprs = [f"samfuse::{'Edge' if design.edge_elems(e) == 1 else 'edge'}"
             f"(s{eid[e.name]}, {eid[e.name]})" for e in es]
    out = exprs[-1]
    for x in reversed(exprs[:-1]):
        out = f"samfuse::fork({x}, {out})"
    return out


def _ints(values: tuple[int, ...]) -> str:
    return f"samfuse::ints<{', '.join(map(str, values))}>"


def _block_spec(bop: BlockOp) -> str:
    """``ir.BlockOp.loops()`` as the template type ``samfuse::BlockOp`` (block_op.h)."""
    extents, strides, n_out = bop.loops()
    return f"samfuse::BlockOp<{n_out}, {', '.join(_ints(x) for x in (extents, *strides))}>"


def _call(design: HlsDesign, node: Node, eid: dict[str, int], arrays: list[str],
          processes: list[str]) -> str:
    """The C++ statement that runs ``node`` as one dataflow process; ``arrays`` are its
    trailing array (and count) arguments. A node with buffered arrays runs in a function
    of its own that fills them first (:mod:`._onchip`), added to ``processes``."""
    graph = design.graph
    ins = {p: f"s{eid[e.name]}" for p, e in graph.in_edges[node.id].items()}
    outs = {p.name: _writer_expr(design, node, p.name, eid) for p in node.primitive.outputs}
    args = [ins[p.name] for p in node.primitive.inputs] + \
        [outs[p.name] for p in node.primitive.outputs] + arrays
    fname = f"samfuse_{node.op}"
    writer = design.writer(node.id)
    if writer is not None and writer.dense is not None:
        fname, tparams = "samfuse_dense_level_writer", [f"{writer.dense}u"]
    else:
        tparams = _TEMPLATE_PARAMS.get(node.op, _schema_tparams)(design, node)
    prm = node.params
    timing, note = _timing_shell(design, node)
    if timing:
        tparams = (tparams or _ELIDED_TPARAMS.get(node.op, [])) + timing
    if prm.get("block"):
        note += f": block {prm['block']}"
    targs = f"<{', '.join(tparams)}>" if tparams else ""
    mem = [m for m in design.mem if m.port.node == node.id]
    if any(buffered(m) for m in mem):
        text, fname = onchip_process(design, node.id, fname + targs, len(ins), len(outs), mem)
        processes.append(text)
        targs = ""
        note += ": on-chip buffers"
    return f"    {fname}{targs}({', '.join(args)});  // {note}"


#: template parameters a process template defaults before its timing ones, spelled out
#: when timing arguments follow them
_ELIDED_TPARAMS = {"array": ["1"]}
#: the timing shell's template parameters (samfuse_hls.h) with their defaults
_TIMING_TPARAMS = (("II", 1), ("latency", 1), ("startup", 0))


def _timing_shell(design: HlsDesign, node: Node) -> tuple[list[str], str]:
    """The one place a process gets its timing (docs/hls.md, "Timing knobs"): its
    elaborated ``ii`` (a block firing's cycles if longer: ``max(cycles, ii)``, as the
    contract combines them), ``latency`` and ``startup`` as the template arguments ``II``,
    ``LAT``, ``START`` every process template takes (trailing defaults left out, so a
    default node's call is unchanged), and the call's comment naming them."""
    t = _elab(design, node).timing
    values = [max(t.ii, design.cycles.get(node.id, 1)), t.latency, t.startup]
    args = [str(v) for v in values]
    while args and int(args[-1]) == _TIMING_TPARAMS[len(args) - 1][1]:
        args.pop()
    note = node.id + "".join(f", {name}={v}" for (name, default), v
                             in zip(_TIMING_TPARAMS, values, strict=True) if v != default)
    return args, note


def _flt(design: HlsDesign) -> str:
    return "true" if design.graph.dtype == "float32" else "false"


def _dense_tparams(design: HlsDesign, node: Node) -> list[str]:
    return [f"{level_size(design.graph, node.params['tensor'], node.params['level'])}u"]


def _compute_tparams(design: HlsDesign, node: Node) -> list[str]:
    """An ALU's or reducer's operator, dtype and block operator (if any)."""
    op = node.params["op"]
    code = _BINOP[op] if node.primitive.block_arity == 2 else \
        "OP_ADD" if op == "sum" else "OP_MAX"
    bop = _elab(design, node).block_op
    return [f"samfuse::{code}", _flt(design)] + ([_block_spec(bop)] if bop else [])


def _array_tparams(design: HlsDesign, node: Node) -> list[str]:
    elems = design.elems_of_tensor(node.params["tensor"])
    return [str(elems)] if elems > 1 else []


def _unary_tparams(design: HlsDesign, node: Node) -> list[str]:
    c = node.params["const"]
    ic = 0 if design.graph.dtype == "float32" else \
        int_constant(c, f"node {node.id!r}: constant")
    return [f"samfuse::{_UNOP[node.params['op']]}", _flt(design),
            f"0x{f32_bits(float(c)):08x}u", f"INT64_C({ic})"]


#: the template arguments of each derived parameter (ir.DERIVED_PARAMS)
_DERIVED_TPARAMS = {
    "acc_bounds": lambda design, ne: [f"{b}u" for b in ne.acc_bounds],
    "fp": lambda design, ne: [_flt(design)]}


def _schema_tparams(design: HlsDesign, node: Node) -> list[str]:
    """The catalogue's schema: the passed parameters as given (``ne.given``: a lane
    split's lanes and range, unsigned), then the derived ones (an accumulator's capacity,
    one bound per kept level, outermost first; the dtype)."""
    if not node.primitive.passed_params and not node.primitive.derived:
        return []
    ne = _elab(design, node)
    out = [f"{value}u" for _, value in ne.given]
    for word in node.primitive.derived:
        out += _DERIVED_TPARAMS[word](design, ne)
    return out


def _position_split_tparams(design: HlsDesign, node: Node) -> list[str]:
    """Its windows as one type (``samfuse::Windows<lo0, hi0, ...>``), not a pack, so the
    timing arguments trail as in every template."""
    bounds = ", ".join(f"{x}u" for w in position_windows(node.params) for x in w)
    return [f"samfuse::Windows<{bounds}>"]


def _elab(design: HlsDesign, node: Node) -> NodeElab:
    assert design.elab is not None
    return design.elab.nodes[node.id]


#: each template's parameters before its II that the catalogue's schema does not give
#: (level sizes, encoded operators, block operators); the rest render the schema
_TEMPLATE_PARAMS = {
    "scan_dense": _dense_tparams, "locate": _dense_tparams, "alu": _compute_tparams,
    "reduce": _compute_tparams, "array": _array_tparams, "unary": _unary_tparams,
    "position_split": _position_split_tparams}


def _signature(design: HlsDesign) -> str:
    if design.memory:
        params = mem_signature_params(design)
    else:
        params = [f"const samfuse::word_t {a.name}[]" for a in design.inputs]
        for w in design.writers:
            params += [f"samfuse::word_t {a}[]" for a in w.arrays]
        params.append("uint32_t cap")
    return f"void {design.top}(\n    " + ",\n    ".join(params) + ")"


def _header(design: HlsDesign) -> str:
    guard = f"{design.top.upper()}_H"
    return (f"// Generated by samfuse (rtl_hls.hls.codegen) from graph {design.graph.name!r}.\n"
            f"#ifndef {guard}\n#define {guard}\n#include \"samfuse_hls.h\"\n\n"
            f"//: number of graph edges (trace ids 0..N-1, edges sorted by name)\n"
            f"#define {design.top.upper()}_EDGES {len(design.edges)}\n\n"
            f"{_signature(design)};\n\n#endif\n")


def _top_source(design: HlsDesign, body: list[str], mem_depth: int,
                processes: list[str]) -> str:
    g = design.graph
    ops = sorted({n.op for n in g.nodes.values()})
    lines = [f"// Generated by samfuse (rtl_hls.hls.codegen) from graph {g.name!r} "
             f"({g.dtype}, {len(g.nodes)} nodes, {len(g.edges)} edges).",
             "// Untimed C-simulation runs the processes below in this (topological) order;",
             "// under synthesis the function body is one dataflow region.",
             f'#include "{design.top}.h"']
    lines += [f'#include "{op}.h"' for op in ops]
    if processes:
        lines += ['#include "onchip.h"', "", *processes]
    lines += ["", f"{_signature(design)} {{"]
    lines += mem_pragmas(design, mem_depth) if design.memory else _array_pragmas(design,
                                                                                mem_depth)
    lines += ["#pragma HLS interface s_axilite port=cap",
              "#pragma HLS interface s_axilite port=return",
              "#pragma HLS dataflow", ""]
    for i, e in enumerate(design.edges):
        depth = UNBOUNDED_DEPTH if e.depth is None else e.depth
        lines.append(f'    hls::stream<{design.stream_type(e)}> s{i}("{e.name}");')
        lines.append(f"#pragma HLS stream variable=s{i} depth={depth}"
                     + ("  // unbounded in the graph" if e.depth is None else ""))
        if g.nodes[e.dst_node].primitive.merges_lanes and depth >= LANE_BUFFER_BRAM_DEPTH:
            lines.append(f"#pragma HLS bind_storage variable=s{i} type=fifo impl=bram"
                         "  // lane buffer")
        else:
            lines += _fifo_storage(design, e, i)
    lines += ["", *body, "}", ""]
    return "\n".join(lines)


def _fifo_storage(design: HlsDesign, edge: Edge, i: int) -> list[str]:
    """The storage a Vitis user binds a stream to under ``fifo.latency`` (docs/timing.md):
    a shift register (read latency 1) or a RAM with a registered output (read latency 2,
    which Vitis builds with capacity depth + 1); nothing at the default read latency 1."""
    assert design.elab is not None
    f = design.elab.edges[edge.name].read_latency
    hw = design.elab.hw
    if f == 1 and (hw is None or hw.fifo.latency == 1):
        return []
    impl = "srl" if f == 1 else "bram"
    return [f"#pragma HLS bind_storage variable=s{i} type=fifo impl={impl}"
            f"  // fifo.latency: read latency {f}"]


def _array_pragmas(design: HlsDesign, mem_depth: int) -> list[str]:
    """Recording top: one m_axi bundle per array (no channel assignment to follow)."""
    arrays = [a.name for a in design.inputs] + [x for w in design.writers for x in w.arrays]
    return [f"#pragma HLS interface m_axi port={name} offset=slave bundle=gmem{k} "
            f"depth={mem_depth}" for k, name in enumerate(arrays)]


def _edge_print_kind(e: Edge, dtype: str) -> int:
    if e.kind == "val":
        return 2 if dtype == "float32" else 1
    return _PRINT[e.kind]


def _testbench(design: HlsDesign) -> str:
    g = design.graph
    numeric = "float" if g.dtype == "float32" else "int"
    # a block edge's row also gives its elements (the log holds 1 + E words per token)
    edge_rows = ",\n".join(
        f'    {{"{e.name}", "{e.kind}", "{numeric if e.kind == "val" else "int"}", '
        f"{_edge_print_kind(e, g.dtype)}"
        f"{'' if design.edge_elems(e) == 1 else f', {design.edge_elems(e)}'}}}"
        for e in design.edges)
    slots = mem_tb_slots(design) if design.memory else _recording_tb_slots(design)
    return _testbench_template().substitute(
        graph=g.name, top=design.top, edge_rows=edge_rows or '    {"", "", "", 0}',
        nedges=len(design.edges), **slots)


def _recording_tb_slots(design: HlsDesign) -> dict[str, str]:
    """The testbench slots of a recording top: word_t arrays, counts in ``counts[]``."""
    reads = "\n".join(f'    std::vector<samfuse::word_t> {a.name} = read_words(in_dir, "{a.name}");'
                      for a in design.inputs)
    allocs, call_args, dumps = [], [a.name + ".data()" for a in design.inputs], []
    for w in design.writers:
        for a in w.arrays:
            n = "2" if a.endswith("_counts") else "cap"
            allocs.append(f"        {a}.assign({n}, 0);")
            call_args.append(f"{a}.data()")
        if CATALOGUE[w.op].writes_level:
            crd, pos, lvl, cnt = w.arrays
            dumps.append(f"    need = std::max(need, std::max({cnt}[0].to_uint(), "
                         f"{cnt}[1].to_uint()));")
            dumps.append(f'    write_level(out_dir, {w.index}, {crd}, {pos}, {lvl}, {cnt});')
        else:
            vals, cnt = w.arrays
            dumps.append(f"    need = std::max(need, {cnt}[0].to_uint());")
            dumps.append(f"    write_values(out_dir, {w.index}, {vals}, {cnt});")
    decls = "\n".join(f"    std::vector<samfuse::word_t> {a};"
                      for w in design.writers for a in w.arrays)
    return {"reads": reads, "decls": decls, "allocs": "\n".join(allocs),
            "call": ", ".join([*call_args, "cap"]),
            "need": "\n".join(d for d in dumps if d.lstrip().startswith("need")),
            "writes": "\n".join(d for d in dumps if not d.lstrip().startswith("need")),
            "helpers": ""}


@cache
def _testbench_template() -> Template:
    """The C testbench (tb/testbench.cpp.in): plain C++ with ``${name}`` slots."""
    return Template((HERE / "tb" / "testbench.cpp.in").read_text())




def _clock_ns(hw: Hardware | None, clock_ns: float | None) -> float:
    if clock_ns is not None:
        return clock_ns
    return round(1000.0 / hw.clock_mhz, 3) if hw is not None and hw.memory else 4.0


def _tcl(design: HlsDesign, part: str, clock_ns: float) -> str:
    top = design.top
    # with memory the top is a Vitis kernel: v++ links its gmem<k> bundles to memory banks;
    # one with on-chip array arguments (bram ports, which a Vitis kernel cannot have) is an
    # IP wired to the RAM its region's kernels share in a block design
    kernel = design.memory and not design.chip
    export = "xo -output $top.xo" if kernel else "ip_catalog"
    flow = "vitis" if kernel or not design.memory else "vivado"
    return f"""# Generated by samfuse (rtl_hls.hls.codegen) for graph '{design.graph.name}'.
# usage: vitis_hls -f run_hls.tcl   (from this directory; inputs in ./inputs, see docs/hls.md)
# Runs C simulation, synthesis, RTL/C co-simulation with a full trace dump, and IP export.
set top {top}
set cflags "-I[pwd]/templates -I[pwd]"
open_project -reset ${{top}}_prj
set_top $top
add_files $top.cpp -cflags $cflags
add_files -tb ${{top}}_tb.cpp -cflags $cflags
open_solution -reset solution1 -flow_target {flow}
set_part {{{part}}}
create_clock -period {clock_ns} -name default
file mkdir [pwd]/csim_out [pwd]/cosim_out
csim_design -argv "[pwd]/inputs [pwd]/csim_out 1"
csynth_design
cosim_design -trace_level all -argv "[pwd]/inputs [pwd]/cosim_out 1"
export_design -format {export}
exit
"""
