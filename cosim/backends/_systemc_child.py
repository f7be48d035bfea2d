"""The simulating side of the SystemC backend: plan in the parent, elaborate and run in a
forked child, hand back plain data.

``plan_net`` (parent) turns a graph and its bound input tensors into per-node constructor
arguments, so input errors surface in the caller with their own exception types.
``run_plans`` (child) builds one net per plan through the compiled driver
(``sim_models/systemc/samfuse_driver.h``), binds every edge, runs them all in one SystemC
elaboration and extracts the results as numpy arrays and tuples. Only strings and plain
data cross the process boundary.
"""

from __future__ import annotations

import faulthandler
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ir import (
    BINARY_OPS,
    CATALOGUE,
    UNARY_OPS,
    BlockOp,
    CompressedLevel,
    DenseLevel,
    Elaboration,
    FiberTree,
    Graph,
    Hardware,
    MemPortSpec,
    Node,
    NodeElab,
    elaborate,
    examples,
    f32_bits,
    int_constant,
    load_hw,
    position_windows,
)
from sim_models.python import InputError, bind_inputs

from ._systemc_load import DERIVED_INTS, driver

__all__ = ["NetPlan", "NodeArgs", "RawNet", "RawNode", "RawEdge", "RawError", "RawMemory",
           "plan_net", "run_plans", "child_main", "prepare", "warm_seconds", "STATUS",
           "SystemCRunError"]

STATUS = {1: "done", 2: "deadlock", 3: "error", 4: "limit"}
#: operator codes of samfuse_alu / samfuse_unary: positions in the catalogue's lists
_BINARY = {op: k for k, op in enumerate(BINARY_OPS)}
_UNARY = {op: k for k, op in enumerate(UNARY_OPS)}
_DUMMY = np.zeros(1, np.uint32)  # cppyy cannot pass an empty buffer as a pointer
_NO_INTS = np.zeros(1, np.int64)

#: a model's constructor arguments after the node id, as the driver takes them: integers,
#: then up to two word arrays (samfuse_driver.h, add_node)
NodeArgs = tuple[np.ndarray, np.ndarray, int, np.ndarray, int]


@dataclass
class NetPlan:
    """Everything the child needs to build one graph instance."""

    name: str
    trace: bool
    max_cycles: int
    nodes: list[tuple[str, str, NodeArgs]]        # (id, op, constructor args after id)
    edges: list[tuple[str, int]]                  # (name, depth; 0 = unbounded)
    inputs: list[tuple[str, str, str]]            # (node, port, edge)
    outputs: list[tuple[str, str, str]]           # (node, port, edge), forks in edge order
    #: memory system (None = ideal): channels, bytes/cycle, latency, line bytes,
    #: outstanding, log every burst
    memory: tuple[int, int, int, int, int, bool] | None = None
    #: memory ports in ir.memory_ports order: (node, slot in the catalogue's mem_reads +
    #: mem_writes, write, words of a read array, channel, on-chip buffer or -1; a
    #: buffered port's words are its fill's, on the buffer's first port, else 0)
    mem_ports: list[tuple[str, int, bool, int, int, int]] = field(default_factory=list)
    #: on-chip buffers in ir.onchip_buffers order: (reads per cycle, latency)
    buffers: list[tuple[int, int]] = field(default_factory=list)
    #: calls on a node's module after Net::add (node, method, args): block operators,
    #: block widths, multi-cycle firings (docs/blocks.md)
    setup: list[tuple[str, str, np.ndarray]] = field(default_factory=list)
    #: edges whose tokens become visible more than one cycle after their push (writer
    #: latency - 1 + FIFO read latency; docs/timing.md)
    visibility: list[tuple[str, int]] = field(default_factory=list)


@dataclass
class RawNode:
    id: str
    op: str
    fires: int
    stall_in: int
    stall_out: int
    done_cycle: int
    finished: bool
    blocked: str | None
    blocked_on_input: bool
    state: str
    stall_mem: int = 0
    peak: int = 0     # spacc / spacc2 / spacc3: most entries held at once


@dataclass
class RawEdge:
    name: str
    depth: int | None
    writer: str
    reader: str
    max_occ: int
    unread: int
    writer_finished: bool
    data: int = 0                     # data tokens written (the work counters')
    #: the FIFO report so far: cycles starting full / empty before ``counted_to``, and the
    #: occupancy from ``counted_to`` on (docs/timing.md, "FIFO report")
    full_cycles: int = 0
    empty_cycles: int = 0
    counted_to: int = 0
    occ_start: int = 0
    words: np.ndarray | None = None   # trace: token words (2-bit tag << 32 | payload)
    block_words: np.ndarray | None = None  # trace: the words of the block tokens, in order
    cycles: np.ndarray | None = None  # trace: write cycles
    reads: np.ndarray | None = None   # trace: read cycles


@dataclass
class RawError:
    node: str
    cycle: int
    format: str
    toks: tuple[int, ...]
    kinds: str
    blocks: tuple[np.ndarray, ...] = ()  # the words of a block token (else empty)


@dataclass
class RawMemory:
    """What the memory system did: per port (bursts, lines), per channel bytes, the
    largest write acknowledgement (-1: no write) and, when logged, every burst."""

    ports: list[tuple[int, int]]
    channel_bytes: list[int]
    max_ack: int
    log: np.ndarray | None = None   # rows (cycle, port, first line, lines, write)
    #: per on-chip buffer: (fill lines, filled, reads, conflict cycles)
    buffers: list[tuple[int, int, int, int]] = field(default_factory=list)


@dataclass
class RawNet:
    status: str
    end_cycle: int
    nodes: list[RawNode]
    edges: list[RawEdge]
    writers: dict[str, tuple] = field(default_factory=dict)
    error: RawError | None = None
    memory: RawMemory | None = None


# -- planning (parent) -----------------------------------------------------------------

def _u32(a: Any) -> tuple[np.ndarray, int]:
    arr = np.ascontiguousarray(np.asarray(a, dtype=np.int64).astype(np.uint32))
    return (arr if len(arr) else _DUMMY), len(arr)


def _args(ints: tuple = (), a: tuple[np.ndarray, int] = (_DUMMY, 0),
          b: tuple[np.ndarray, int] = (_DUMMY, 0)) -> NodeArgs:
    return (np.array(ints, np.int64) if ints else _NO_INTS, *a, *b)


def _level(node: Node, tensors: dict[str, FiberTree]) -> tuple[FiberTree, int, Any]:
    name, lvl = node.params["tensor"], node.params["level"]
    tree = tensors[name]
    if lvl >= len(tree.levels):
        raise InputError(f"node {node.id!r} scans level {lvl} of tensor {name!r}, which has "
                         f"{len(tree.levels)} levels")
    # a scanner with memory arrays scans a compressed level (a dense level stores none)
    want = CompressedLevel if node.primitive.mem_reads else DenseLevel
    level = tree.levels[lvl]
    if not isinstance(level, want):
        raise InputError(f"node {node.id!r} ({node.op}) scans level {lvl} of tensor {name!r},"
                         f" which is stored as {type(level).__name__}")
    return tree, lvl, level


def _unary_args(node: Node, tensors: dict[str, FiberTree], fp: bool) -> NodeArgs:
    """(op, fp, binary32 constant bits, int32 constant mod 2^32, int32 constant)."""
    const = node.params["const"]
    ic = 0 if fp else int_constant(const, f"node {node.id!r}: constant")
    return _args((_UNARY[node.params["op"]], fp, f32_bits(float(const)), ic & 0xFFFFFFFF, ic))


def _compressed_args(node: Node, tensors: dict[str, FiberTree], fp: bool) -> NodeArgs:
    _, _, level = _level(node, tensors)
    return _args(a=_u32(level.seg), b=_u32(level.crd))


def _dense_args(node: Node, tensors: dict[str, FiberTree], fp: bool) -> NodeArgs:
    tree, lvl, level = _level(node, tensors)
    return _args((level.size, tree.num_fibers(lvl)))


def _array_args(node: Node, tensors: dict[str, FiberTree], fp: bool) -> NodeArgs:
    """A value array's words: a blocked tensor's blocks one after the other."""
    vals = tensors[node.params["tensor"]].vals
    bits = np.ascontiguousarray(vals.astype(np.float32 if fp else np.int32)).view(
        np.uint32).ravel()
    return _args(a=((bits if len(bits) else _DUMMY), len(bits)))


#: the constructor arguments of each primitive's SystemC model that the catalogue's
#: schema does not give (tensor data, encoded operators): samfuse_driver.cpp lists these
#: models, the rest of its table is generated (_systemc_load.generated_models)
_NODE_ARGS = {
    "scan_compressed": _compressed_args, "scan_dense": _dense_args, "locate": _dense_args,
    "array": _array_args, "unary": _unary_args,
    "alu": lambda node, tensors, fp: _args((_BINARY[node.params["op"]], fp)),
    "reduce": lambda node, tensors, fp: _args((node.params["op"] == "max", fp)),
    "position_split": lambda node, tensors, fp: _args(
        tuple(x for w in position_windows(node.params) for x in w))}
#: the models' arguments for each derived parameter (ir.DERIVED_PARAMS): an accumulator
#: grows as it fills, so it takes no bounds
_DERIVED_ARGS = {"acc_bounds": lambda ne, fp: (), "fp": lambda ne, fp: (fp,)}


def _node_args(node: Node, ne: NodeElab, tensors: dict[str, FiberTree], fp: bool
               ) -> NodeArgs:
    """Its registry entry, or the catalogue's schema: the passed parameters as given
    (``ne.given``: lane ranges, windows), then the derived ones."""
    make = _NODE_ARGS.get(node.op)
    if make is not None:
        return make(node, tensors, fp)
    ints = [v for _, v in ne.given]
    for word in node.primitive.derived:  # the dtype as a flag; no bounds (DERIVED_INTS)
        ints += [fp] * DERIVED_INTS[word]
    return _args(tuple(ints))


def _array_words(tree: FiberTree, spec: MemPortSpec) -> int:
    """Length in words of the array a read port streams (0 for a write port)."""
    if spec.write:
        return 0
    if spec.array == "vals":
        return tree.vals.size  # a blocked tree's blocks are consecutive words
    level = tree.levels[spec.level]
    return len(level.seg if spec.array == "seg" else level.crd)


def _memory_plan(elab: Elaboration, tensors: dict[str, FiberTree], mem_trace: bool
                 ) -> tuple[tuple | None, list]:
    hw = elab.hw
    if hw is None or not hw.memory:
        return None, []
    d = hw.dram
    ports = []
    fills = {b.fill_port for b in elab.buffers if b.fills}
    for spec in elab.mem_ports:
        slot = elab.graph.nodes[spec.node].primitive.mem_arrays.index(spec.array)
        reads = not spec.write and (spec.buffer is None or spec.no in fills)
        words = _array_words(tensors[spec.tensor], spec) if reads else 0
        ports.append((spec.node, slot, spec.write, words, spec.channel,
                      -1 if spec.buffer is None else spec.buffer))
    return ((d.channels, d.bytes_per_cycle, d.latency_cycles, d.line_bytes, d.outstanding,
             mem_trace), ports)


def _block_spec(bop: BlockOp) -> np.ndarray:
    """ir.BlockOp.loops() flattened for samfuse::BlockOp: loops, output loops, operands,
    extents, then each operand's strides."""
    extents, strides, n_out = bop.loops()
    return np.array([len(extents), n_out, len(bop.operands), *extents,
                     *(s for st in strides for s in st)], dtype=np.int64)


def _setup(elab: Elaboration) -> list[tuple[str, str, np.ndarray]]:
    """The block parameters of every node (none for a scalar graph), from ``ir.elaborate``."""
    calls: list[tuple[str, str, np.ndarray]] = []
    for nid, ne in elab.nodes.items():
        prim = elab.graph.nodes[nid].primitive
        if ne.block_op is not None:
            calls.append((nid, "set_block", _block_spec(ne.block_op)))
        elif prim.compute and ne.elems_in > 1:
            calls.append((nid, "set_elems", np.array([ne.elems_in], np.int64)))
        elif prim.reads_values and ne.elems_out > 1:
            calls.append((nid, "set_block", np.array([ne.elems_out], np.int64)))
    calls += [(nid, "set_cycles", np.array([c], np.int64)) for nid, c in elab.cycles.items()]
    calls += [(nid, "set_load_queue", np.array([ne.load_queue], np.int64))
              for nid, ne in elab.nodes.items() if ne.load_queue > 1]
    calls += [(nid, "set_timing", np.array([ne.timing.ii, ne.timing.startup], np.int64))
              for nid, ne in elab.nodes.items() if (ne.timing.ii, ne.timing.startup) != (1, 0)]
    return calls


def plan_net(graph: Graph, tensors: dict[str, FiberTree], *, trace: bool,
             depth: int | None | str, max_cycles: int = 0, hw: Hardware | None = None,
             mem_trace: bool = False, elab: Elaboration | None = None) -> NetPlan:
    """Constructor arguments and wiring of one graph; raises InputError on bad tensors.
    ``elab`` is ``ir.elaborate(graph, hw)`` when the caller has it already."""
    elab = elaborate(graph, hw) if elab is None else elab  # depths: plan's own ``depth``
    fp = graph.dtype == "float32"
    nodes = [(nid, graph.nodes[nid].op,
              _node_args(graph.nodes[nid], elab.nodes[nid], tensors, fp))
             for nid in graph.topological_order()]
    edges, visibility = [], []
    for e in graph.edges:
        # the capacity the elaboration gives the edge (docs/timing.md, fifo.latency)
        d = elab.edges[e.name].capacity if depth == "graph" else depth
        edges.append((e.name, 0 if d is None else int(d)))
        if depth == "graph" and elab.edges[e.name].visibility != 1:
            visibility.append((e.name, elab.edges[e.name].visibility))
    inputs = [(nid, port, e.name) for nid in graph.nodes
              for port, e in graph.in_edges[nid].items()]
    outputs = [(nid, port, e.name) for nid in graph.nodes
               for port, es in graph.out_edges[nid].items() for e in es]
    memory, mem_ports = _memory_plan(elab, tensors, mem_trace)
    return NetPlan(graph.name, trace, max_cycles, nodes, edges, inputs, outputs, memory,
                   mem_ports, [(b.ports, b.latency) for b in elab.buffers], _setup(elab),
                   visibility)


# -- elaboration and run (child) -------------------------------------------------------

def _elaborate(drv: Any, plan: NetPlan, index: int) -> int:
    """Build ``plan`` as net number ``index`` of the design begun in ``drv``."""
    net = drv.add_net(f"j{index}_{plan.name}", plan.trace, plan.max_cycles)
    assert net == index
    fifo = {name: drv.add_fifo(net, name, depth) for name, depth in plan.edges}
    for name, vis in plan.visibility:
        drv.set_fifo_visibility(net, fifo[name], vis)
    node_index = {nid: drv.add_node(net, op, nid, args[0], len(args[0]), *args[1:])
                  for nid, op, args in plan.nodes}
    for nid, method, args in plan.setup:  # after add: the module sees its net's block pool
        drv.setup(net, node_index[nid], method, args, len(args))
    for ports, is_input in ((plan.inputs, True), (plan.outputs, False)):
        for nid, port, edge in ports:
            bound = drv.bind(net, node_index[nid], is_input, port, fifo[edge])
            assert bound, f"the SystemC model of {nid!r} has no port {port!r}"
    if plan.memory is not None:
        drv.set_memory(net, *plan.memory)
        for ports, latency in plan.buffers:
            drv.add_buffer(net, ports, latency)
        for nid, slot, write, words, channel, buffer in plan.mem_ports:
            if buffer >= 0:
                drv.add_buffer_port(net, node_index[nid], slot, buffer, words, channel)
            else:
                drv.add_mem_port(net, node_index[nid], slot, write, words, channel)
    return net


def _vector(v: Any, dtype: Any) -> np.ndarray:
    n = int(v.size())
    if n == 0:
        return np.zeros(0, dtype)
    return np.frombuffer(v.data(), dtype=dtype, count=n).copy()


#: node_info fields per node (samfuse_driver.h)
_NODE_FIELDS = 9


def _extract(drv: Any, net: int, plan: NetPlan) -> RawNet:
    status, end_cycle, n_nodes, n_fifos = _vector(drv.net_info(net), np.int64).tolist()
    info = _vector(drv.node_info(net), np.int64).reshape(n_nodes, _NODE_FIELDS).tolist()
    names = [name for name, _ in plan.edges]
    nodes, writers = [], {}
    for i, ((nid, op, _), row) in enumerate(zip(plan.nodes, info, strict=True)):
        fires, stall_in, stall_out, done, finished, blocked, on_input, stall_mem, peak = row
        nodes.append(RawNode(nid, op, fires, stall_in, stall_out, done, bool(finished),
                             None if blocked < 0 else names[blocked], bool(on_input),
                             str(drv.node_state(net, i)), stall_mem, peak))
        prim = CATALOGUE[op]
        if prim.writes_tensor:  # words; a level writer's stops too (positions, levels)
            writers[nid] = (_vector(drv.written_words(net, i), np.uint32),) + (
                (_vector(drv.written_stops(net, i, 0), np.int64),
                 _vector(drv.written_stops(net, i, 1), np.int64)) if prim.writes_level else ())
    fifos = _vector(drv.fifo_info(net), np.int64).reshape(n_fifos, 10).tolist()
    edges = []
    for i, (name, (depth, w, r, max_occ, unread, data, *report)) in enumerate(
            zip(names, fifos, strict=True)):
        edge = RawEdge(name, depth if depth > 0 else None, nodes[w].id, nodes[r].id, max_occ,
                       unread, nodes[w].finished, data, *report)
        if plan.trace:
            edge.words = _vector(drv.trace_words(net, i), np.uint64)
            edge.block_words = _vector(drv.trace_block_words(net, i), np.uint32)
            edge.cycles = _vector(drv.trace_cycles(net, i, 0), np.int64)
            edge.reads = _vector(drv.trace_cycles(net, i, 1), np.int64)
        edges.append(edge)
    return RawNet(STATUS.get(status, "running"), end_cycle, nodes, edges, writers,
                  _extract_error(drv, net), _extract_memory(drv, net, plan))


def _extract_error(drv: Any, net: int) -> RawError | None:
    node = str(drv.error_text(net, 0))
    if not node:
        return None
    kinds = str(drv.error_text(net, 2))  # one character per token slot
    cycle, *toks = _vector(drv.error_words(net), np.uint64).tolist()
    return RawError(node, cycle, str(drv.error_text(net, 1)), tuple(toks[:len(kinds)]), kinds,
                    tuple(_vector(drv.error_block(net, i), np.uint32)
                          for i in range(len(kinds))))


def _extract_memory(drv: Any, net: int, plan: NetPlan) -> RawMemory | None:
    if plan.memory is None:
        return None
    n_ports, n_channels, max_ack, *rest = _vector(drv.memory_info(net), np.int64).tolist()
    ports = [(rest[2 * i], rest[2 * i + 1]) for i in range(n_ports)]
    rest, tail = rest[:2 * n_ports + n_channels], rest[2 * n_ports + n_channels:]
    buffers = [tuple(tail[1 + 4 * b:5 + 4 * b]) for b in range(tail[0])]
    raw = RawMemory(ports, rest[2 * n_ports:], max_ack, buffers=buffers)
    if plan.memory[-1]:
        raw.log = np.stack([_vector(drv.memory_log(net, c), np.int64) for c in range(5)],
                           axis=1)
    return raw


def run_plans(plans: list[NetPlan], *, per_module: bool = False, vcd: str | None = None
              ) -> tuple[list[RawNet], dict[str, float]]:
    """Elaborate every plan into one SystemC design, simulate, extract (once per process:
    the forked child, or the parent's warm-up)."""
    t0 = time.perf_counter()
    drv = driver()
    drv.begin(per_module)
    nets = [_elaborate(drv, plan, i) for i, plan in enumerate(plans)]
    if vcd:
        drv.trace_vcd(vcd)
    t1 = time.perf_counter()
    problem = str(drv.run())
    t2 = time.perf_counter()
    if problem:
        raise SystemCRunError(problem)
    raws = [_extract(drv, net, plan) for net, plan in zip(nets, plans, strict=True)]
    t3 = time.perf_counter()
    return raws, {"elaborate": t1 - t0, "simulate": t2 - t1, "extract": t3 - t2,
                  "clock_cycles": float(drv.clock_cycles())}


# -- warm-up (parent) ------------------------------------------------------------------

_WARM_LOCK = threading.Lock()
_WARM: dict[str, Any] = {}


def prepare() -> Any:
    """Load the compiled models and let cppyy compile its call wrappers *in this process*,
    once: the driver's functions are wrapped the first time Python calls them, and a
    forked child would pay that again on every run. So the parent runs a throwaway
    design that calls every driver function a run needs (trace, memory and its log,
    blocks, multi-cycle firings) and then abandons that simulation context so that
    children start from an empty one. Returns the driver."""
    drv = driver()
    with _WARM_LOCK:
        if "seconds" not in _WARM:
            start = time.perf_counter()
            eye = np.eye(4, dtype=np.float32)
            slow = load_hw("ideal", ["compute.macs_per_cycle=1"])  # multi-cycle firings
            plans = [plan_net(g, bind_inputs(g, {"B": eye, "C": eye}), trace=True,
                              depth="graph", hw=hw, mem_trace=hw is not None and hw.memory)
                     for g, hw in ((examples.spmm_ikj(4, 4, 4), load_hw("hbm2-u280")),
                                   (examples.spmm_ikj(4, 4, 4, block=2), slow))]
            run_plans(plans)
            drv.fresh_simcontext()
            _WARM["seconds"] = time.perf_counter() - start
    return drv


def warm_seconds() -> float:
    """Wall time of the warm-up in this process (0 if it has not happened)."""
    return float(_WARM.get("seconds", 0.0))


class SystemCRunError(RuntimeError):
    """SystemC itself reported an error (an sc_report), as text."""


def _die_on_crash(crash_log: str | None) -> None:
    """Let a C++ crash kill the child at once with its signal (the parent reports it):
    cppyy's own handlers would run gdb for a stack trace and exit with a made-up code.
    faulthandler's "Fatal Python error" dump goes to ``crash_log`` (which the parent's
    one-line error names), not over the user's terminal."""
    for sig in (signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGABRT):
        signal.signal(sig, signal.SIG_DFL)
    # prints the Python stack, then dies by the same signal; the file stays open until then
    out = open(crash_log, "w") if crash_log else sys.stderr  # noqa: SIM115
    _CRASH_FILE.append(out)
    # disable first: enable() on an already enabled faulthandler (pytest enables it) only
    # swaps the file and would not reinstall the handlers that SIG_DFL just replaced
    faulthandler.disable()
    faulthandler.enable(file=out)


#: the child's open crash-report file (kept referenced: faulthandler holds only its fd)
_CRASH_FILE: list = []


def child_main(conn: Any, plans: list[NetPlan], per_module: bool, vcd: str | None,
               crash_log: str | None = None) -> None:
    """Entry point of the forked child: run, then send back data or an error string."""
    entered = time.perf_counter()
    _die_on_crash(crash_log)
    try:
        raws, timings = run_plans(plans, per_module=per_module, vcd=vcd)
        timings["entered"] = entered
        msg: tuple = ("ok", raws, timings)
    except BaseException as exc:  # noqa: BLE001 - everything must become a string here
        msg = ("error", f"{type(exc).__name__}: {exc}")
    conn.send(msg)
    conn.close()
