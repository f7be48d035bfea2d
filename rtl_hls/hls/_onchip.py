"""On-chip buffers in a top with memory (docs/hls.md, "On-chip buffers"), as a Vitis user
writes them: the process of a node whose array is buffered copies it from its ``m_axi``
port into a local array (``samfuse::fill_onchip``, one pipelined loop: a burst) before
its main loop, then reads the local copy, bound to the RAM type ``onchip.ports`` asks for.

``ir.memory_ports`` names each buffered port's buffer (``ir.onchip_buffers``). A buffer
read by several processes (every lane's array of ``x``) is one local copy per process:
an array of a dataflow region has one consumer. The fill's length is an ``s_axilite``
scalar ``<port>_len`` beside the port (the array's words; its capacity bounds it).

A materialised intermediate (``tensors[T].onchip``, docs/fusion.md) is on chip already:
its arrays are not ``m_axi`` ports but on-chip array arguments of the top
(:class:`ChipArg`, ``#pragma HLS interface bram``), wired to the block RAM the region's
kernels share. The producer's writer stores into its array; a consumer's process reads
its array in place, with no fill (the producer finished before it started).
"""

from __future__ import annotations

from ir import Graph, Hardware, MemPortSpec, array_capacity, array_name, stored_arrays

from ._design import ChipArg, HlsDesign, MemArg, ident

__all__ = ["buffered", "len_arg", "storage_pragma", "onchip_process", "chip_args",
           "chip_pragma"]


def buffered(m: MemArg) -> bool:
    return m.port.buffer is not None


def len_arg(m: MemArg) -> str:
    """The scalar argument giving the words a buffered port's fill copies."""
    return f"{m.name}_len"


def storage_pragma(var: str, hw: Hardware) -> str:
    """The RAM a buffer is bound to: one read a cycle a single-port RAM, two a true
    dual-port RAM, more one write and N read ports (banked); ``onchip.latency`` ≥ 1 its
    read latency (a block RAM's is at least 1; at 0 Vitis chooses)."""
    ports = hw.onchip.ports
    kind = "ram_1p" if ports == 1 else "ram_t2p" if ports == 2 else "ram_1wnr"
    return f"#pragma HLS bind_storage variable={var} type={kind} impl=bram{_latency(hw)}"


def _latency(hw: Hardware) -> str:
    return f" latency={hw.onchip.latency}" if hw.onchip.latency else ""


def chip_args(graph: Graph, ports: list[MemPortSpec]) -> list[ChipArg]:
    """The on-chip array arguments of a top with memory: one per port reading a
    materialised intermediate (``c<port>_<tensor>_<array>``; an array of a dataflow region
    has one consumer, so readers do not share an argument), then one per array a writer of
    one stores (``c_<tensor>_<array>``; a dense level stores none)."""
    args = [ChipArg(f"c{p.no}_{ident(p.tensor)}_{p.array_name}", p.node, p.tensor, p.array,
                    p.level, array_capacity(graph, p.tensor, p.array, p.level), False)
            for p in ports if graph.tensors[p.tensor].onchip]
    for nid in graph.topological_order():
        node = graph.nodes[nid]
        spec = graph.tensors.get(node.params.get("tensor", ""))
        if not node.primitive.mem_writes or spec is None or not spec.onchip:
            continue
        for array in node.primitive.mem_writes:
            level = None if array == "vals" else node.params["level"]
            name = array_name(array, level)
            if name in stored_arrays(spec):
                args.append(ChipArg(f"c_{ident(spec.name)}_{name}", nid, spec.name, array,
                                    level, array_capacity(graph, spec.name, array, level),
                                    True))
    return args


def chip_pragma(arg: ChipArg, hw: Hardware) -> str:
    """An on-chip array argument's RAM interface: one port of the shared buffer, a
    single-port RAM for the writer, a single-port ROM for a reader, at ``onchip.latency``
    (at 0 Vitis's own)."""
    kind = "ram_1p" if arg.write else "rom_1p"
    return (f"#pragma HLS interface bram port={arg.name} storage_type={kind}"
            f"{_latency(hw)}")


def onchip_process(design: HlsDesign, node: str, template: str, n_in: int, n_out: int,
                   mem: list[MemArg]) -> tuple[str, str]:
    """(the definition, the name) of ``node``'s process: ``template`` (the primitive's
    function with its template arguments) on its ``n_in`` input streams, ``n_out``
    outputs and its arrays ``mem``, the buffered ones filled into local copies first."""
    assert design.hw is not None and design.elab is not None
    buffers = design.elab.buffers
    name = f"{ident(node)}_onchip"
    params = [f"I{i}& i{i}" for i in range(n_in)] + [f"O{i} o{i}" for i in range(n_out)]
    args = [f"i{i}" for i in range(n_in)] + [f"o{i}" for i in range(n_out)]
    body = []
    for m in mem:
        params.append(f"{m.ctype} {m.name}")
        if not buffered(m):
            args.append(m.name)
            continue
        buf = buffers[m.port.buffer]
        local = f"{m.name}_buf"
        params.append(f"uint32_t {len_arg(m)}")
        args.append(local)
        body += [f"    static uint32_t {local}[{max(1, buf.words)}];  // {buf.name}",
                 storage_pragma(local, design.hw),
                 f"    samfuse::fill_onchip({local}, {m.name}, {len_arg(m)});"]
    tparams = ", ".join([f"class I{i}" for i in range(n_in)]
                        + [f"class O{i}" for i in range(n_out)])
    text = [f"// node {node}: each buffered array filled from its m_axi port by one burst loop,",
            "// then read on chip (docs/hls.md, \"On-chip buffers\")",
            f"template <{tparams}>",
            f"static void {name}({', '.join(params)}) {{", *body,
            f"    {template}({', '.join(args)});", "}", ""]
    return "\n".join(text), name
