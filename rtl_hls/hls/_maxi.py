"""Tops with off-chip memory: every tensor array is an ``m_axi`` pointer, as a Vitis user
writes a kernel (docs/hls.md, "Off-chip tensors: m_axi ports").

One pointer per ``ir.memory_ports`` port (the single source of which node reads or writes
which array on which channel); its bundle is ``gmem<channel>``, so ports sharing a channel
share one AXI master. Burst length, outstanding requests and latency come from the
hardware (``dram.line_bytes``, ``dram.outstanding`` and ``dram.load_queue``,
``dram.latency_cycles``). Writers
report their counts through ``s_axilite`` scalar outputs; a writer of a dense level stores
nothing off-chip and only counts (and checks that its fibers are full). A materialised
intermediate's ports are on-chip array arguments instead (:func:`._onchip.chip_args`).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from ir import Graph, Hardware, memory_ports

from ._design import (
    ArrayArg,
    ChipArg,
    HlsDesign,
    MemArg,
    WriterArgs,
    ident,
    level_size,
    writer_nodes,
)
from ._onchip import buffered, chip_pragma, len_arg

__all__ = ["mem_args", "mem_inputs", "mem_writers", "mem_pragmas", "mem_node_arrays",
           "mem_signature_params", "mem_tb_slots", "MAX_AXI_BURST"]

#: AXI4 allows at most 256 beats per burst
MAX_AXI_BURST = 256


def mem_args(graph: Graph, hw: Hardware) -> list[MemArg]:
    """One pointer per memory port, named ``m<port>_<tensor>_<array><level>``, but those of
    a materialised intermediate (on chip: :func:`._onchip.chip_args`)."""
    return [MemArg(f"m{p.no}_{ident(p.tensor)}_{p.array}{'' if p.level is None else p.level}",
                   p) for p in memory_ports(graph, hw) if not graph.tensors[p.tensor].onchip]


def mem_inputs(mem: list[MemArg], chip: list[ChipArg]) -> list[ArrayArg]:
    """The read ports and on-chip arrays read as testbench input files (one file per
    argument, even of one array)."""
    return [ArrayArg(m.name, m.port.tensor, m.port.array, m.port.level)
            for m in mem if not m.port.write] + \
        [ArrayArg(c.name, c.tensor, c.array, c.level) for c in chip if not c.write]


def mem_writers(graph: Graph, mem: list[MemArg], chip: list[ChipArg]) -> list[WriterArgs]:
    out = []
    for k, nid in enumerate(writer_nodes(graph)):
        node = graph.nodes[nid]
        arrays = tuple(m.name for m in mem if m.port.node == nid) + \
            tuple(c.name for c in chip if c.node == nid)
        p = f"out{k}_{ident(nid)}"
        counts = (f"{p}_ncrd", f"{p}_nseg") if node.op == "level_writer" else (f"{p}_nvals",)
        dense = None if arrays else level_size(graph, node.params["tensor"],
                                               node.params["level"])
        out.append(WriterArgs(nid, node.op, k, arrays, counts, dense))
    return out


def mem_signature_params(design: HlsDesign) -> list[str]:
    params = [f"{m.ctype} {m.name}" for m in design.mem] + [c.param for c in design.chip]
    params += [f"uint32_t* {c}" for w in design.writers for c in w.counts]
    params += [f"uint32_t {len_arg(m)}" for m in design.mem if buffered(m)]
    return [*params, "uint32_t cap"]


def _axi_options(hw: Hardware, depth: int) -> str:
    """The options every port shares (Vitis needs ports of one bundle to agree on them)."""
    d = hw.dram
    burst = min(hw.words_per_line(), MAX_AXI_BURST)
    bits = d.line_bytes * 8
    widen = f" max_widen_bitwidth={bits}" if bits <= 1024 and bits & (bits - 1) == 0 else ""
    # reads in flight: a port's prefetch window, or the gathers of an array's load queue
    reads = max(d.outstanding, d.load_queue)
    return (f"depth={depth} latency={d.latency_cycles}{widen} "
            f"max_read_burst_length={burst} num_read_outstanding={reads} "
            f"max_write_burst_length={burst} num_write_outstanding={d.outstanding}")


def mem_pragmas(design: HlsDesign, depth: int) -> list[str]:
    assert design.hw is not None
    opts = _axi_options(design.hw, depth)
    lines = [f"#pragma HLS interface m_axi port={m.name} offset=slave bundle={m.bundle} {opts}"
             for m in design.mem]
    lines += [chip_pragma(c, design.hw) for c in design.chip]
    lines += [f"#pragma HLS interface s_axilite port={c}"
              for w in design.writers for c in w.counts]
    lines += [f"#pragma HLS interface s_axilite port={len_arg(m)}"
              for m in design.mem if buffered(m)]
    return lines


def mem_node_arrays(design: HlsDesign) -> dict[str, list[str]]:
    """The trailing C arguments of each node that touches memory: its ports in
    ``ir.memory_ports`` order (a buffered one with its fill's length) or its on-chip
    arrays (a node's arrays are of one tensor: all on chip or none), then (writers) its
    count outputs and ``cap``."""
    args: dict[str, list[str]] = {}
    for m in design.mem:  # a buffered port: its pointer and its fill's length
        args.setdefault(m.port.node, []).extend([m.name, len_arg(m)] if buffered(m)
                                                else [m.name])
    for c in design.chip:
        args.setdefault(c.node, []).append(c.name)
    for w in design.writers:
        tail = list(w.counts) if w.dense is not None else [*w.counts, "cap"]
        args[w.node] = args.get(w.node, []) + tail
    return args


def mem_tb_slots(design: HlsDesign) -> dict[str, str]:
    """The testbench slots of a top with memory (see tb/testbench.cpp.in)."""
    reads = [f'    std::vector<uint32_t> {a.name} = read_u32(in_dir, "{a.name}");'
             for a in design.inputs]
    written = [m.name for m in design.mem if m.port.write] + \
        [c.name for c in design.chip if c.write]
    decls = [f"    std::vector<uint32_t> {a};" for a in written]
    decls += [f"    uint32_t {c} = 0;" for w in design.writers for c in w.counts]
    call = [f"{m.name}.data()" for m in design.mem] + [f"{c.name}.data()" for c in design.chip]
    call += [f"&{c}" for w in design.writers for c in w.counts]
    call += [f"static_cast<uint32_t>({m.name}.size())" for m in design.mem if buffered(m)]
    need, writes = [], []
    for w in design.writers:
        if w.dense is None:
            need.append(f"    need = std::max({{need, {', '.join(w.counts)}}});")
        writes.append(_tb_write(w))
    return {"reads": "\n".join(reads), "decls": "\n".join(decls),
            "allocs": "\n".join(f"        {a}.assign(cap, 0);" for a in written),
            "call": ", ".join([*call, "cap"]), "need": "\n".join(need),
            "writes": "\n".join(writes), "helpers": _tb_helpers()}


def _tb_write(w: WriterArgs) -> str:
    counts = ", ".join(w.counts)
    if w.op == "value_writer":
        return f"    write_u32(out_dir, {w.index}, {w.arrays[0]}, {counts});"
    if w.dense is not None:
        return f"    write_counts(out_dir, {w.index}, {counts});"
    return f"    write_crd_seg(out_dir, {w.index}, {w.arrays[0]}, {w.arrays[1]}, {counts});"


@cache
def _tb_helpers() -> str:
    """Testbench functions only tops with memory use (tb/memory_io.cpp)."""
    return (Path(__file__).resolve().parent / "tb" / "memory_io.cpp").read_text()
