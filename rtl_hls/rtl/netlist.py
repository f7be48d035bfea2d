"""Netlist generator: ``ir.Graph`` → a SystemVerilog top wiring the reference primitives.

Every edge becomes a ``samfuse_fifo`` of the edge's depth; an output port feeding several
edges (a fork) writes all of them and sees the AND of their ``full_n``; an output port with
no edge sees ``full_n = 1`` and its tokens are dropped. The top's ports are ``ap_clk``,
``ap_rst``, ``ap_done`` (every writer consumed ``D``) and ``cycles`` (the contract's cycle
count, valid once ``ap_done`` is high). Each FIFO is named after its edge signal
(:func:`edge_signal`), which names its simulation-only trace file (``+samfuse_trace``).

With ``open_edges=True`` no FIFOs are instantiated: each edge's producer side
(``<e>_din/_write/_full_n``) and consumer side (``<e>_dout/_empty_n/_read``) become top
ports, so a testbench can drive every primitive in isolation from a recorded trace.

Memory sizes depend only on the graph (tensor shapes), so one build serves any input;
the data come from ``$readmemh`` files written by :func:`write_memories` into the
simulator's working directory.

With ``hw`` whose memory system is on (docs/timing.md, "Memory"), every memory port of
``ir.memory_ports`` becomes a read or write port inside its primitive, which is then the
memory-capable ``*_core`` module; each channel is a ``samfuse_mem_channel`` serving its
ports in port-number order, and a free-running ``mem_now`` gives every port the cycle
number. Each on-chip buffer of ``ir.onchip_buffers`` (docs/timing.md, "On-chip buffers")
is a ``samfuse_onchip_buffer`` serving its readers' accesses (their cores read through
``samfuse_buf_rdport`` instead of a window) and issuing its fill on its fill port's
channel slot. Without memory (``hw`` None or ``ideal``) the netlist is exactly the one without
``hw``.

Every node's derived parameters come from ``ir.elaborate(graph, hw)``. Block values
(docs/blocks.md): a ``val`` edge of ``E`` > 1 elements is a ``2 + 32*E``-bit word; the
FIFOs and value primitives get its width, the block ALUs and reducers their block op's
loop nest (``ir.BlockOp.loops``) for ``samfuse_block_op``, and compute nodes whose firings
take more than one cycle their ``CYCLES``. Scalar graphs get exactly the netlist they had
before blocks.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ir import (
    BINARY_OPS,
    UNARY_OPS,
    WRITER_PRIMITIVES,
    BlockOp,
    BufferSpec,
    Edge,
    EdgeTiming,
    Elaboration,
    FiberTree,
    Graph,
    Hardware,
    MemPortSpec,
    Node,
    NodeElab,
    NodeTiming,
    crd_bound,
    elaborate,
    level_sizes,
    position_windows,
    unary_constant_bits,
    value_bits,
)

__all__ = ["generate", "crd_bound", "Netlist", "write_memories", "rtl_sources", "module_name",
           "edge_signal", "SV_DIR", "timing_knobs"]

SV_DIR = Path(__file__).parent / "sv"
_SEP = re.compile(r"[^A-Za-z0-9_]")


def module_name(op: str) -> str:
    """The SystemVerilog module implementing catalogue primitive ``op``."""
    return f"samfuse_{op}"


def rtl_sources() -> list[Path]:
    """All reference RTL files, package first (compile order)."""
    files = sorted(SV_DIR.glob("*.sv"))
    pkg = SV_DIR / "samfuse_pkg.sv"
    return [pkg] + [f for f in files if f != pkg]


def edge_signal(graph: Graph, edge: Edge) -> str:
    """A legal, unique SystemVerilog identifier prefix for ``edge``."""
    idx = graph.edges.index(edge)
    return f"e{idx}_" + _SEP.sub("_", edge.name.replace("->", "__"))


def _word_width(elems: int) -> int:
    """Bits of a token word carrying ``elems``-element values (34 for scalars)."""
    return 2 + 32 * elems


#: the loop tables of samfuse_block_op: at most this many letters, 32 bits each
_MAX_LOOPS = 16
#: samfuse_block_op MODE: elementwise, contraction, gather, fold
_ELEMENTWISE, _CONTRACT, _GATHER, _FOLD = range(4)


def _block_params(node: Node, bop: BlockOp) -> dict[str, str]:
    """``samfuse_block_op`` parameters of a block ALU or reducer (its loop nest)."""
    alu = len(bop.operands) == 2
    extents, strides, _ = bop.loops()  # the output index is o = flat // CI
    if len(extents) > _MAX_LOOPS:
        raise ValueError(f"node {node.id!r}: block {node.params['block']!r} has "
                         f"{len(extents)} letters; the RTL block op takes {_MAX_LOOPS}")
    inner = bop.elems(bop.contracted)
    # the Python model (sim_models/python/_blocks.py): an ALU with contracted letters sums
    # from +0.0 even over one step; a reducer with one step per output only gathers
    if alu:
        mode = _CONTRACT if bop.contracted else _ELEMENTWISE
    else:
        mode = _FOLD if inner > 1 else _GATHER

    def table(vals: tuple[int, ...]) -> str:
        return f"512'h{sum(v << (32 * i) for i, v in enumerate(vals)):x}"

    out = {"BLOCK": "1'b1"}
    if alu:
        out |= {"EA": str(bop.operand_elems(0)), "EB": str(bop.operand_elems(1))}
    else:
        out |= {"EI": str(bop.operand_elems(0))}
    out |= {"EO": str(bop.out_elems), "NL": str(len(extents)), "CI": str(inner),
            "MODE": str(mode), "EXT": table(extents), "SA": table(strides[0])}
    if alu:
        out["SB"] = table(strides[1])
    return out


def _mem_module(op: str) -> tuple[str, dict[str, str]]:
    """The memory-capable module of a primitive with memory ports (and its extra
    parameters): ``samfuse_<op>_core``; the compressed scanner shares the scanners' core."""
    if op == "scan_compressed":
        return "samfuse_scan_core", {"COMPRESSED": "1'b1"}
    return f"{module_name(op)}_core", {}


def _mem_params(hw: Hardware, ports: list[MemPortSpec]) -> dict[str, str]:
    """Memory parameters of a node instance whose memory ports are ``ports``."""
    d = hw.dram
    out = {"MEM": "1'b1", "MEM_K": str(d.outstanding), "MEM_WPL": str(hw.words_per_line()),
           "MEM_LB": str(d.line_bytes), "MEM_B": str(d.bytes_per_cycle),
           "MEM_LAT": str(d.latency_cycles)}
    for p in ports:
        stem = "VAL" if p.array == "vals" else p.array.upper()
        out[f"{stem}_PORT"] = str(p.no)
        if p.buffer is not None:  # read through its on-chip buffer
            out[f"{stem}_BUF"] = "1'b1"
        elif not p.write:
            out[f"{stem}_LEN_FILE"] = f'"{len_file(p.tensor, p.level, p.array)}"'
    return out


#: primitives whose value width is a parameter: ``E`` elements, or a ``W``-bit word
_ELEMS_PARAM = ("unary", "spacc", "spacc2", "spacc3", "array", "value_writer")
_WIDTH_PARAM = ("broadcast", "intersect_val", "union_val", "lane_merge", "lane_merge2")


def _params(graph: Graph, node: Node, ne: NodeElab) -> dict[str, str]:
    """SystemVerilog parameter overrides of ``node``'s instance: its own, then those of
    block values (element counts, block op, cycles), which scalar nodes never get."""
    make = _SCALAR_PARAMS.get(node.op, _schema_params)
    out = make(graph, node, ne)
    if ne.block_op is not None:
        out |= _block_params(node, ne.block_op)
    elif node.op in _ELEMS_PARAM and ne.elems > 1:
        out["E"] = str(ne.elems)
    elif node.op in _WIDTH_PARAM and ne.elems_out > 1:
        out["W"] = str(_word_width(ne.elems_out))
    if ne.cycles > 1:
        out["CYCLES"] = str(ne.cycles)
    return out


def _fp(graph: Graph) -> str:
    return "1'b1" if graph.dtype == "float32" else "1'b0"


def _scan_params(graph: Graph, node: Node, ne: NodeElab) -> dict[str, str]:
    p = node.params
    sizes, lvl = level_sizes(graph, p["tensor"]), p["level"]
    if not node.primitive.mem_reads:  # a dense level: its size only
        return {"SIZE": str(sizes[lvl])}
    parents = math.prod(sizes[:lvl])
    return {"SEG_N": str(parents + 1), "CRD_N": str(max(1, parents * sizes[lvl])),
            "SEG_FILE": f'"{mem_file(p["tensor"], lvl, "seg")}"',
            "CRD_FILE": f'"{mem_file(p["tensor"], lvl, "crd")}"'}


def _array_params(graph: Graph, node: Node, ne: NodeElab) -> dict[str, str]:
    t = node.params["tensor"]
    out = {"VAL_N": str(max(1, math.prod(level_sizes(graph, t)))),
           "VAL_FILE": f'"{mem_file(t, None, "vals")}"'}
    if ne.load_queue > 1:  # loads in flight (docs/timing.md)
        out["LQ"] = str(ne.load_queue)
    return out


def _unary_params(graph: Graph, node: Node, ne: NodeElab) -> dict[str, str]:
    p = node.params
    bits = unary_constant_bits(p["const"], graph.dtype, f"node {node.id!r}: constant")
    return {"FP": _fp(graph), "OP": str(UNARY_OPS.index(p["op"])), "CONST": f"32'h{bits:08x}"}


def _reduce_params(graph: Graph, node: Node, ne: NodeElab) -> dict[str, str]:
    op = "add" if node.params["op"] == "sum" else "max"
    return {"FP": _fp(graph), "OP": str(BINARY_OPS.index(op))}


def _acc_bounds(graph: Graph, ne: NodeElab) -> dict[str, str]:
    """A sparse accumulator's capacity (``ir.elaborate``): ``N`` for spacc, one bound per
    kept level, outermost first, for spacc2 (``N1, N0``) and spacc3 (``N2, N1, N0``)."""
    if len(ne.acc_bounds) == 1:
        return {"N": str(ne.acc_bounds[0])}
    levels = len(ne.acc_bounds)
    return {f"N{levels - 1 - k}": str(b) for k, b in enumerate(ne.acc_bounds)}


#: the module parameters of each derived parameter (ir.DERIVED_PARAMS)
_DERIVED_PARAMS = {"acc_bounds": _acc_bounds,
                   "fp": lambda graph, ne: {"FP": _fp(graph)}}


def _schema_params(graph: Graph, node: Node, ne: NodeElab) -> dict[str, str]:
    """The catalogue's schema: each passed parameter as given (``ne.given``) under its
    upper-cased name, then the derived ones (``FP`` first, as the modules declare it)."""
    out = {name.upper(): str(value) for name, value in ne.given}
    for word in sorted(node.primitive.derived, key=lambda word: word != "fp"):
        out |= _DERIVED_PARAMS[word](graph, ne)
    return out


def _lane_split_params(graph: Graph, node: Node, ne: NodeElab) -> dict[str, str]:
    p = node.params
    # the module would silently keep nothing; the Python model stops with this error
    if not 0 <= p["lane"] < p["lanes"]:
        raise ValueError(f"node {node.id!r}: lane {p['lane']} is not below lanes "
                         f"{p['lanes']}")
    return _schema_params(graph, node, ne)


def _window_params(node: Node) -> dict[str, str]:
    """A position split's windows, packed low window first: ``{hi, lo}`` per window."""
    wins = position_windows(node.params)
    packed = ", ".join(f"32'd{hi}, 32'd{lo}" for lo, hi in reversed(wins))
    return {"NW": str(len(wins)), "WIN": f"{{{packed}}}"}


def _writer_params(graph: Graph, node: Node, ne: NodeElab) -> dict[str, str]:
    p = node.params
    sizes = level_sizes(graph, p["tensor"])
    dump = f'"{node.id}.dump"'
    if not node.primitive.writes_level:
        return {"VAL_N": str(max(1, math.prod(sizes))), "DUMP_FILE": dump}
    lvl = p["level"]
    return {"CRD_N": str(max(1, math.prod(sizes[:lvl + 1]))),
            "STOP_N": str(2 * math.prod(sizes[:lvl]) + 2), "DUMP_FILE": dump}


#: each primitive's own parameters that the catalogue's schema does not give (tensor
#: sizes and files, encoded operators, checks); the rest render the schema
_SCALAR_PARAMS = {
    "scan_compressed": _scan_params, "scan_dense": _scan_params, "locate": _scan_params,
    "array": _array_params, "unary": _unary_params, "reduce": _reduce_params,
    "alu": lambda graph, node, ne: {"FP": _fp(graph),
                                    "OP": str(BINARY_OPS.index(node.params["op"]))},
    "lane_split": _lane_split_params,
    "position_split": lambda graph, node, ne: _window_params(node),
    **dict.fromkeys(WRITER_PRIMITIVES, _writer_params)}


def mem_file(tensor: str, level: int | None, what: str) -> str:
    """File name of one ``$readmemh`` image (relative to the simulator's directory)."""
    return f"{tensor}_{what}.hex" if level is None else f"{tensor}_l{level}_{what}.hex"


def len_file(tensor: str, level: int | None, what: str) -> str:
    """File holding the word count of one image: a memory read port's line count."""
    return mem_file(tensor, level, what)[:-4] + "_len.hex"


@dataclass
class Netlist:
    """A generated top module and what a testbench needs to know about it."""

    top: str
    text: str
    writers: list[str] = field(default_factory=list)
    edge_signals: dict[str, str] = field(default_factory=dict)
    #: the memory ports (``ir.memory_ports``; empty without memory) and, per node that has
    #: some, its instance name (where the bench reads its ``mem_stall`` counter)
    mem_ports: list[MemPortSpec] = field(default_factory=list)
    mem_instances: dict[str, str] = field(default_factory=dict)
    #: per on-chip buffer (``BufferSpec.name``), its ``samfuse_onchip_buffer`` instance
    buffer_instances: dict[str, str] = field(default_factory=dict)
    #: per sparse accumulator (spacc, spacc2, spacc3), the hierarchical path of the
    #: instance holding its ``peak`` entry count (for the on-chip buffer rule): spacc2 and
    #: spacc3 keep it in their ``samfuse_spacc_core``, ``u_core``
    acc_instances: dict[str, str] = field(default_factory=dict)


def generate(graph: Graph, top: str | None = None, open_edges: bool = False,
             hw: Hardware | None = None) -> Netlist:
    """Generate the SystemVerilog top of ``graph`` (see the module docstring); ``hw``
    adds its memory system and its timing knobs (:func:`timing_knobs`)."""
    top = top or "samfuse_top_" + _SEP.sub("_", graph.name)
    sig = {e.name: edge_signal(graph, e) for e in graph.edges}
    elab = elaborate(graph, hw)
    timing = timing_knobs(elab)
    bits = {e.name: _word_width(elab.edge_elems(e.name)) for e in graph.edges}
    mports = list(elab.mem_ports)
    writers = [n.id for n in graph.nodes.values() if n.primitive.writes_tensor]
    ports = ["input  logic ap_clk", "input  logic ap_rst"]
    body: list[str] = []
    if open_edges:
        for e in graph.edges:
            s = sig[e.name]
            w = bits[e.name] - 1
            ports += [f"output logic [{w}:0] {s}_din", f"output logic {s}_write",
                      f"input  logic {s}_full_n", f"input  logic [{w}:0] {s}_dout",
                      f"input  logic {s}_empty_n", f"output logic {s}_read"]
    else:
        for e in graph.edges:
            s = sig[e.name]
            wide = f", .W({bits[e.name]})" if bits[e.name] != 34 else ""
            wide += _fifo_timing_params(e, timing)
            body += [f"  // {e.name}", f"  logic [{bits[e.name] - 1}:0] {s}_din, {s}_dout;",
                     f"  logic {s}_write, {s}_full_n, {s}_empty_n, {s}_read;",
                     f'  samfuse_fifo #(.DEPTH({e.depth}){wide}, .NAME("{s}")) u_{s} (',
                     "      .ap_clk(ap_clk), .ap_rst(ap_rst),",
                     f"      .if_din({s}_din), .if_full_n({s}_full_n), .if_write({s}_write),",
                     f"      .if_dout({s}_dout), .if_empty_n({s}_empty_n), .if_read({s}_read)",
                     "  );"]
    ports += ["output logic ap_done", "output logic [31:0] cycles"]
    if mports:
        body += _memory(hw, mports, list(elab.buffers))
    for nid in graph.topological_order():
        body += _instance(graph, graph.nodes[nid], sig, elab, timing.nodes[nid])
    if graph.edges and not open_edges:
        body += _moves_counter([sig[e.name] for e in graph.edges])
    if writers:
        done = " & ".join(f"{_ident(w)}_done" for w in writers)
        body += [f"  assign ap_done = {done};",
                 "  always_ff @(posedge ap_clk) begin",
                 "    if (ap_rst) cycles <= '0;",
                 "    else if (!ap_done) cycles <= cycles + 32'd1;",
                 "  end"]
    else:
        body += ["  assign ap_done = 1'b1;", "  assign cycles = '0;"]
    header = [f"// Generated by rtl_hls.rtl.netlist from graph {graph.name!r}; do not edit.",
              f"module {top} (", ",\n".join(f"    {p}" for p in ports), ");"]
    text = "\n".join(header + body + ["endmodule", ""])
    # spacc2 and spacc3 (more than one kept level) wrap one samfuse_spacc_core, u_core
    return Netlist(top, text, writers, sig, mports,
                   {nid: f"u_{_ident(nid)}" for nid, ne in elab.nodes.items() if ne.mem_ports},
                   {b.name: f"u_buf{b.no}" for b in elab.buffers},
                   {n.id: f"u_{_ident(n.id)}" + (".u_core" if n.primitive.acc_levels > 1 else "")
                    for n in graph.nodes.values() if n.primitive.acc_levels})


def _moves_counter(signals: list[str]) -> list[str]:
    """Simulation only: ``samfuse_moves`` counts the cycles in which some FIFO was
    written, so the bench can stop a deadlocked run early instead of at its cycle bound."""
    writes = ", ".join(f"{s}_write" for s in signals)
    return ["`ifndef SYNTHESIS",
            "  logic [63:0] samfuse_moves;",
            "  always_ff @(posedge ap_clk) begin",
            "    if (ap_rst) samfuse_moves <= '0;",
            f"    else if (|{{{writes}}}) samfuse_moves <= samfuse_moves + 64'd1;",
            "  end",
            "`endif"]


def _ident(node_id: str) -> str:
    return "n_" + _SEP.sub("_", node_id)


def _memory(hw: Hardware | None, mports: list[MemPortSpec],
            buffers: list[BufferSpec]) -> list[str]:
    """The cycle counter, each port's request/grant wires, one channel per used channel
    (its ports concatenated lowest number first: index 0 has the highest priority; a
    buffer's fill takes its fill port's place, its other readers have none) and one
    ``samfuse_onchip_buffer`` per buffer."""
    assert hw is not None
    d = hw.dram
    lines = ["  // memory system (docs/timing.md, Memory): the cycle number for every port",
             "  logic [31:0] mem_now;",
             "  always_ff @(posedge ap_clk) mem_now <= ap_rst ? '0 : mem_now + 32'd1;"]
    for mp in mports:
        kind = "write" if mp.write else "read"
        via = "" if mp.buffer is None else f" through buffer {buffers[mp.buffer].name}"
        lines += [f"  // port {mp.no}: {mp.node} {kind}s {mp.tensor} {mp.array}{via}, channel "
                  f"{mp.channel}"]
        if mp.buffer is not None:  # its accesses are the low bits of the request
            lines += ["  /* verilator lint_off UNUSEDSIGNAL */",
                      f"  logic [15:0] mp{mp.no}_nlines;",
                      "  /* verilator lint_on UNUSEDSIGNAL */"]
        else:
            lines.append(f"  logic [15:0] mp{mp.no}_nlines;")
        lines.append(f"  logic [63:0] mp{mp.no}_base;")
    fills = {b.fill_port: b for b in buffers if b.fills}
    for ch in sorted({mp.channel for mp in mports}):
        on = [mp.no for mp in mports if mp.channel == ch
              and (mp.buffer is None or mp.no in fills)]
        if not on:
            continue
        nl = ", ".join(f"buf{fills[k].no}_fill_nlines" if k in fills else f"32'(mp{k}_nlines)"
                       for k in reversed(on))
        base = ", ".join(f"buf{fills[k].no}_fill_base" if k in fills else f"mp{k}_base"
                         for k in reversed(on))
        lines += [f"  samfuse_mem_channel #(.NP({len(on)}), .B({d.bytes_per_cycle}), "
                  f".LB({d.line_bytes})) u_mem_ch{ch} (",
                  "      .ap_clk(ap_clk), .ap_rst(ap_rst), .now(mem_now),",
                  f"      .nlines({{{nl}}}),", f"      .base({{{base}}})", "  );"]
    for b in buffers:
        lines += _buffer(hw, b, [mports[k] for k in b.readers])
    return lines


#: accesses a read port makes in one cycle: a scanner's seg[r] and seg[r+1]
_ACCESSES = {"seg": 2, "crd": 1, "vals": 1}


def _buffer(hw: Hardware, buf: BufferSpec, readers: list[MemPortSpec]) -> list[str]:
    """One on-chip buffer: its readers' access bits in (port, order within the port)
    order, lowest bit first, and each reader's slice of the ready cycles."""
    d = hw.dram
    b = f"buf{buf.no}"
    total = sum(_ACCESSES[p.array] for p in readers)
    acc = ", ".join(f"mp{p.no}_nlines[{_ACCESSES[p.array] - 1}:0]" for p in reversed(readers))
    lines = [f"  // on-chip buffer {buf.no}: {buf.name}, {buf.words} words, filled by port "
             f"{buf.fill_port} on channel {buf.channel}",
             f"  logic [31:0] {b}_fill_nlines;", f"  logic [63:0] {b}_fill_base;",
             f"  logic [{32 * total - 1}:0] {b}_ready;"]
    if not buf.fills:  # written on chip by an earlier kernel: no fill, no channel slot
        lines[1:2] = ["  /* verilator lint_off UNUSEDSIGNAL */", lines[1],
                      "  /* verilator lint_on UNUSEDSIGNAL */"]
        lines.append(f"  assign {b}_fill_base = '0;")
    at = 0
    for p in readers:
        n = _ACCESSES[p.array]
        pad = "" if n == 2 else "32'd0, "
        lines.append(f"  assign mp{p.no}_base = {{{pad}{b}_ready[{32 * at}+:{32 * n}]}};")
        at += n
    first = readers[0]
    lines += [f"  samfuse_onchip_buffer #(.NA({total}), .P({buf.ports}), .LAT({buf.latency}), "
              f".WPL({hw.words_per_line()}), .LB({d.line_bytes}), .B({d.bytes_per_cycle}), "
              f".MEM_LAT({d.latency_cycles}), .PORT({buf.fill_port}), "
              f".FILL(1'b{int(buf.fills)}),",
              f'      .LEN_FILE("{len_file(first.tensor, first.level, first.array)}")) '
              f"u_{b} (",
              "      .ap_clk(ap_clk), .ap_rst(ap_rst), .now(mem_now),",
              f"      .acc({{{acc}}}), .ready({b}_ready),",
              f"      .fill_nlines({b}_fill_nlines), .fill_base({b}_fill_base)", "  );"]
    return lines


def _instance(graph: Graph, node: Node, sig: dict[str, str], elab: Elaboration,
              knobs: NodeTiming) -> list[str]:
    prim = node.primitive
    ne = elab.nodes[node.id]
    e_out = ne.elems_out
    lines: list[str] = []
    conns = [".ap_clk(ap_clk)", ".ap_rst(ap_rst)"]
    shell = _shell_name(node, knobs)
    if shell and ne.mem_ports and (knobs.ii > 1 or knobs.startup > 0):
        raise ValueError(f"node {node.id!r}: the reference RTL renders ii and startup on "
                         "nodes without memory ports only (its memory ports issue on their "
                         f"own); got ii {knobs.ii}, startup {knobs.startup}")
    for port in prim.inputs:
        s = sig[graph.in_edges[node.id][port.name].name]
        conns += _port_conns(port.name, ("dout", "empty_n", "read"), s, shell, lines)
    for port in prim.outputs:
        edges = graph.out_edges[node.id].get(port.name, [])
        w = f"{_ident(node.id)}_{port.name}"
        width = _word_width(e_out) if port.kind == "val" else 34
        lines.append(f"  logic [{width - 1}:0] {w}_din;")
        lines.append(f"  logic {w}_write, {w}_full_n;")
        if edges:
            full = " & ".join(f"{sig[e.name]}_full_n" for e in edges)
            lines.append(f"  assign {w}_full_n = {full};")
            for e in edges:
                s = sig[e.name]
                lines.append(f"  assign {s}_din = {w}_din;")
                lines.append(f"  assign {s}_write = {w}_write;")
        else:
            lines.append(f"  assign {w}_full_n = 1'b1;  // unconnected: tokens dropped")
            lines.append("  /* verilator lint_off UNUSEDSIGNAL */  // (unconnected output)")
            lines.append(f"  logic {w}_unused;")
            lines.append(f"  assign {w}_unused = ^{{{w}_din, {w}_write}};")
            lines.append("  /* verilator lint_on UNUSEDSIGNAL */")
        conns += _port_conns(port.name, ("din", "full_n", "write"), w, shell, lines)
    if prim.writes_tensor:
        lines.append(f"  logic {_ident(node.id)}_done;")
        conns.append(f".done({_ident(node.id)}_done{'_raw' if shell else ''})")
    if shell:
        lines = [f"  logic {shell}_go, {shell}_fire;"] + lines
        lines += _timing_shell(graph, node, sig, knobs, shell)
    params = _params(graph, node, ne)
    module = module_name(node.op)
    if ne.mem_ports:
        assert elab.hw is not None
        module, extra = _mem_module(node.op)
        params = {**extra, **params, **_mem_params(elab.hw, list(ne.mem_ports))}
        conns.append(".mem_now(mem_now)")
        for mp in ne.mem_ports:
            conns += [f".{mp.array}_nlines(mp{mp.no}_nlines)", f".{mp.array}_base(mp{mp.no}_base)"]
    ptxt = (" #(" + ", ".join(f".{k}({v})" for k, v in params.items()) + ")") if params else ""
    lines.append(f"  // node {node.id} ({node.op})")
    lines.append(f"  {module}{ptxt} u_{_ident(node.id)} (")
    lines.append(",\n".join(f"      {c}" for c in conns))
    lines.append("  );")
    return lines


# -- timing knobs (docs/timing.md, "Latency, II and start-up") ---------------------------
# the knobs ir.elaborate gives: NodeElab.timing per node, Elaboration.edges per edge


@dataclass(frozen=True)
class TimingKnobs:
    nodes: Mapping[str, NodeTiming]
    edges: Mapping[str, EdgeTiming]


def timing_knobs(elab: Elaboration) -> TimingKnobs:
    """Every node's (latency, ii, startup) and every edge's FIFO timing from ``elab``."""
    return TimingKnobs({nid: ne.timing for nid, ne in elab.nodes.items()}, elab.edges)


def _fifo_timing_params(edge: Edge, timing: TimingKnobs) -> str:
    """``samfuse_fifo`` overrides of ``edge`` (none at the default knobs)."""
    et = timing.edges[edge.name]
    out = ""
    if et.capacity is not None and et.capacity != edge.depth:
        out += f", .CAP({et.capacity})"
    if et.visibility != 1:
        out += f", .VIS({et.visibility})"
    return out


def _shell_name(node: Node, knobs: NodeTiming) -> str:
    """The signal prefix of ``node``'s timing shell, or "" when it needs none (default
    ii and startup, and no writer latency to delay ``done`` by)."""
    late_done = knobs.latency > 1 and node.primitive.writes_tensor
    if knobs.ii == 1 and knobs.startup == 0 and not late_done:
        return ""
    return f"{_ident(node.id)}_ts"


def _timing_shell(graph: Graph, node: Node, sig: dict[str, str], knobs: NodeTiming,
                  shell: str) -> list[str]:
    """``node``'s ``samfuse_timing_shell``: ``fire`` is any pop or push it makes."""
    moves = [f"({sig[graph.in_edges[node.id][p.name].name]}_read & "
             f"{sig[graph.in_edges[node.id][p.name].name]}_empty_n)"
             for p in node.primitive.inputs]
    moves += [f"({_ident(node.id)}_{p.name}_write & {_ident(node.id)}_{p.name}_full_n)"
              for p in node.primitive.outputs]
    writer = node.primitive.writes_tensor
    done = _ident(node.id) + "_done"
    done_in, done_out = (f"{done}_raw", done) if writer else ("1'b0", "")
    lines = [f"  assign {shell}_fire = {' | '.join(moves) or chr(39) + '0'};"]
    if writer:
        lines.append(f"  logic {done}_raw;")
    if not writer:
        lines.append("  /* verilator lint_off PINCONNECTEMPTY */  // (no done to delay)")
    lines += [f"  samfuse_timing_shell #(.II({knobs.ii}), .STARTUP({knobs.startup}), "
              f".LATENCY({knobs.latency})) u_{shell} (",
              "      .ap_clk(ap_clk), .ap_rst(ap_rst), "
              f".fire({shell}_fire), .go({shell}_go),",
              f"      .done_in({done_in}), .done_out({done_out})",
              "  );"]
    if not writer:
        lines.append("  /* verilator lint_on PINCONNECTEMPTY */")
    return lines


def _port_conns(port: str, names: tuple[str, str, str], sig: str, shell: str,
                lines: list[str]) -> list[str]:
    """The connections of one ap_fifo port (``names``: data, ready, strobe suffixes) to
    signal ``sig``; behind a timing shell the ready and the strobe are ANDed with its
    ``go`` (the gated strobe's wire is added to ``lines``)."""
    data, ready, strobe = names
    if not shell:
        return [f".{port}_{data}({sig}_{data})", f".{port}_{ready}({sig}_{ready})",
                f".{port}_{strobe}({sig}_{strobe})"]
    lines += [f"  logic {sig}_{strobe}_raw;",
              f"  assign {sig}_{strobe} = {sig}_{strobe}_raw & {shell}_go;"]
    return [f".{port}_{data}({sig}_{data})", f".{port}_{ready}({sig}_{ready} & {shell}_go)",
            f".{port}_{strobe}({sig}_{strobe}_raw)"]


def write_memories(graph: Graph, tensors: Mapping[str, FiberTree], out_dir: str | Path
                   ) -> None:
    """Write the ``$readmemh`` images every scanner and array of ``graph`` reads."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for node in graph.nodes.values():
        name = node.params.get("tensor")
        if name is None or not node.primitive.reads_tensor:
            continue
        tree = tensors[name]
        if node.primitive.reads_compressed:  # a compressed level: seg and crd arrays
            lvl = tree.levels[node.params["level"]]
            _write_image(out, name, node.params["level"], "seg", [int(x) for x in lvl.seg])
            _write_image(out, name, node.params["level"], "crd", [int(x) for x in lvl.crd])
        elif node.primitive.reads_values:  # a blocked tree's rows are its blocks: E words each
            vals = tree.vals.reshape(-1)
            words = [value_bits(v, graph.dtype) for v in vals.tolist()]
            _write_image(out, name, None, "vals", words)


def _write_image(out: Path, tensor: str, level: int | None, what: str, words: list[int]
                 ) -> None:
    """An array's image and its word count (what a memory read port needs to know)."""
    _write_hex(out / mem_file(tensor, level, what), words)
    _write_hex(out / len_file(tensor, level, what), [len(words)])


def _write_hex(path: Path, words: list[int]) -> None:
    words = words or [0]  # an empty image is a simulator warning; one unused word is not
    path.write_text("\n".join(f"{w & 0xFFFFFFFF:08x}" for w in words) + "\n")
