"""The simulating side of the SystemC backend: plan in the parent, elaborate and run in a
forked child, hand back plain data.

``plan_net`` (parent) turns a graph and its bound input tensors into per-node constructor
arguments, so input errors surface in the caller with their own exception types.
``run_plans`` (child) instantiates one ``samfuse::Net`` per plan from those arguments,
binds every edge, runs them all in one SystemC elaboration and extracts the results as
numpy arrays and tuples. Only strings and plain data cross the process boundary.
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
    BlockOp,
    CompressedLevel,
    DenseLevel,
    FiberTree,
    Graph,
    GraphBuilder,
    Hardware,
    MemPortSpec,
    Node,
    block_cycles,
    block_elems,
    examples,
    f32_bits,
    int_constant,
    load_hw,
    memory_ports,
    value_elems,
)
from sim_models.python import InputError, bind_inputs

from ._systemc_load import load

__all__ = ["MODEL_CLASSES", "NetPlan", "RawNet", "RawNode", "RawEdge", "RawError", "RawMemory",
           "plan_net", "run_plans", "child_main", "prepare", "warm_seconds", "STATUS",
           "SystemCRunError"]

#: catalogue primitive -> C++ class in namespace samfuse (sim_models/systemc)
MODEL_CLASSES: dict[str, str] = {
    "root": "Root", "scan_compressed": "ScanCompressed", "scan_dense": "ScanDense",
    "repsig": "RepSig", "repeat": "Repeat", "broadcast": "Broadcast", "array": "Array",
    "intersect": "Intersect", "union": "Union", "intersect_val": "IntersectVal",
    "union_val": "UnionVal", "alu": "Alu", "unary": "Unary",
    "reduce": "Reduce", "spacc": "SpAcc", "spacc2": "SpAcc2", "spacc3": "SpAcc3",
    "crddrop": "CrdDrop",
    "crdhold": "CrdHold", "locate": "Locate", "level_writer": "LevelWriter",
    "value_writer": "ValueWriter", "lane_split": "LaneSplit", "lane_merge": "LaneMerge",
    "lane_merge2": "LaneMerge2",
}
STATUS = {1: "done", 2: "deadlock", 3: "error", 4: "limit"}
_BINARY = {"add": 0, "sub": 1, "mul": 2, "div": 3, "max": 4, "min": 5}
_UNARY = {"relu": 0, "exp": 1, "neg": 2, "rsqrt": 3, "add_const": 4, "mul_const": 5,
          "div_const": 6}
_DUMMY = np.zeros(1, np.uint32)  # cppyy cannot pass an empty buffer as a pointer


@dataclass
class NetPlan:
    """Everything the child needs to build one graph instance."""

    name: str
    trace: bool
    max_cycles: int
    nodes: list[tuple[str, str, tuple]]           # (id, op, constructor args after id)
    edges: list[tuple[str, int]]                  # (name, depth; 0 = unbounded)
    inputs: list[tuple[str, str, str]]            # (node, port, edge)
    outputs: list[tuple[str, str, str]]           # (node, port, edge), forks in edge order
    #: memory system (None = ideal): channels, bytes/cycle, latency, line bytes,
    #: outstanding, log every burst
    memory: tuple[int, int, int, int, int, bool] | None = None
    #: memory ports in ir.memory_ports order: (node, slot in the catalogue's mem_reads +
    #: mem_writes, write, words of a read array, channel)
    mem_ports: list[tuple[str, int, bool, int, int]] = field(default_factory=list)
    #: calls on a node's module after Net::add (node, method, args): block operators,
    #: block widths, multi-cycle firings (docs/blocks.md)
    setup: list[tuple[str, str, tuple]] = field(default_factory=list)


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


def _level(node: Node, tensors: dict[str, FiberTree]) -> tuple[FiberTree, int, Any]:
    name, lvl = node.params["tensor"], node.params["level"]
    tree = tensors[name]
    if lvl >= len(tree.levels):
        raise InputError(f"node {node.id!r} scans level {lvl} of tensor {name!r}, which has "
                         f"{len(tree.levels)} levels")
    want = CompressedLevel if node.op == "scan_compressed" else DenseLevel
    level = tree.levels[lvl]
    if not isinstance(level, want):
        raise InputError(f"node {node.id!r} ({node.op}) scans level {lvl} of tensor {name!r},"
                         f" which is stored as {type(level).__name__}")
    return tree, lvl, level


def _unary_args(node: Node, fp: bool) -> tuple:
    """(op, fp, binary32 constant bits, int32 constant mod 2^32, int32 constant)."""
    const = node.params["const"]
    ic = 0 if fp else int_constant(const, f"node {node.id!r}: constant")
    return (_UNARY[node.params["op"]], fp, f32_bits(float(const)), ic & 0xFFFFFFFF, ic)


def _node_args(node: Node, tensors: dict[str, FiberTree], fp: bool) -> tuple:
    op = node.op
    if op == "scan_compressed":
        _, _, level = _level(node, tensors)
        seg, nseg = _u32(level.seg)
        crd, ncrd = _u32(level.crd)
        return (seg, nseg, crd, ncrd)
    if op in ("scan_dense", "locate"):
        tree, lvl, level = _level(node, tensors)
        return (level.size, tree.num_fibers(lvl))
    if op == "array":  # a blocked tensor's blocks one after the other
        vals = tensors[node.params["tensor"]].vals
        bits = np.ascontiguousarray(vals.astype(np.float32 if fp else np.int32)).view(
            np.uint32).ravel()
        return ((bits if len(bits) else _DUMMY), len(bits))
    if op == "alu":
        return (_BINARY[node.params["op"]], fp)
    if op == "unary":
        return _unary_args(node, fp)
    if op == "reduce":
        return (node.params["op"] == "max", fp)
    if op in ("spacc", "spacc2", "spacc3"):
        return (fp,)
    if op == "lane_split":
        p = node.params
        return (p["lanes"], p["lane"], p["lo"], p["hi"])
    return ()


def _array_words(tree: FiberTree, spec: MemPortSpec) -> int:
    """Length in words of the array a read port streams (0 for a write port)."""
    if spec.write:
        return 0
    if spec.array == "vals":
        return tree.vals.size  # a blocked tree's blocks are consecutive words
    level = tree.levels[spec.level]
    return len(level.seg if spec.array == "seg" else level.crd)


def _memory_plan(graph: Graph, tensors: dict[str, FiberTree], hw: Hardware | None,
                 mem_trace: bool) -> tuple[tuple | None, list]:
    if hw is None or not hw.memory:
        return None, []
    d = hw.dram
    ports = []
    for spec in memory_ports(graph, hw):
        prim = graph.nodes[spec.node].primitive
        slot = (prim.mem_reads + prim.mem_writes).index(spec.array)
        words = _array_words(tensors[spec.tensor], spec) if not spec.write else 0
        ports.append((spec.node, slot, spec.write, words, spec.channel))
    return ((d.channels, d.bytes_per_cycle, d.latency_cycles, d.line_bytes, d.outstanding,
             mem_trace), ports)


def _block_spec(spec: str, n_ops: int) -> tuple[np.ndarray, int]:
    """ir.BlockOp.loops() flattened for samfuse::BlockOp: loops, output loops, operands,
    extents, then each operand's strides."""
    extents, strides, n_out = BlockOp.parse(spec, n_ops).loops()
    arr = np.array([len(extents), n_out, n_ops, *extents, *(s for st in strides for s in st)],
                   dtype=np.int64)
    return arr, len(arr)


def _setup(graph: Graph, hw: Hardware | None) -> list[tuple[str, str, tuple]]:
    """The block parameters of every node (none for a scalar graph)."""
    widths = value_elems(graph)
    calls: list[tuple[str, str, tuple]] = []
    for nid in graph.topological_order():
        node = graph.nodes[nid]
        spec = node.params.get("block", "")
        elems = max((widths.get(e.name, 1) for e in graph.in_edges[nid].values()
                     if e.kind == "val"), default=1)
        if node.op in ("alu", "reduce") and spec:
            calls.append((nid, "set_block", _block_spec(spec, 2 if node.op == "alu" else 1)))
        elif node.op in ("unary", "spacc", "spacc2", "spacc3") and elems > 1:
            calls.append((nid, "set_elems", (elems,)))
        elif node.op == "array":
            block = graph.tensors[node.params["tensor"]].block
            if block is not None:
                calls.append((nid, "set_block", (block_elems(block),)))
    calls += [(nid, "set_cycles", (c,)) for nid, c in block_cycles(graph, hw).items()]
    return calls


def plan_net(graph: Graph, tensors: dict[str, FiberTree], *, trace: bool,
             depth: int | None | str, max_cycles: int = 0, hw: Hardware | None = None,
             mem_trace: bool = False) -> NetPlan:
    """Constructor arguments and wiring of one graph; raises InputError on bad tensors."""
    fp = graph.dtype == "float32"
    nodes = [(nid, graph.nodes[nid].op, _node_args(graph.nodes[nid], tensors, fp))
             for nid in graph.topological_order()]
    edges = []
    for e in graph.edges:
        d = e.depth if depth == "graph" else depth
        edges.append((e.name, 0 if d is None else int(d)))
    inputs = [(nid, port, e.name) for nid in graph.nodes
              for port, e in graph.in_edges[nid].items()]
    outputs = [(nid, port, e.name) for nid in graph.nodes
               for port, es in graph.out_edges[nid].items() for e in es]
    memory, mem_ports = _memory_plan(graph, tensors, hw, mem_trace)
    return NetPlan(graph.name, trace, max_cycles, nodes, edges, inputs, outputs, memory,
                   mem_ports, _setup(graph, hw))


# -- elaboration and run (child) -------------------------------------------------------

def _ports(cls: Any, which: str) -> dict[str, int]:
    names = str(getattr(cls, which)())
    return {p: i for i, p in enumerate(names.split(",")) if p}


def _elaborate(sf: Any, plan: NetPlan, index: int, keep: list) -> Any:
    net = sf.Net(f"j{index}_{plan.name}", plan.trace)
    keep.append(net)
    if plan.max_cycles:
        net.set_max_cycles(plan.max_cycles)
    fifo = {name: net.add_fifo(name, depth) for name, depth in plan.edges}
    node_index: dict[str, int] = {}
    classes: dict[str, Any] = {}
    modules: dict[str, Any] = {}
    for nid, op, args in plan.nodes:
        cls = classes[nid] = getattr(sf, MODEL_CLASSES[op])
        module = modules[nid] = cls(nid, *args)
        keep.append(module)
        node_index[nid] = net.add(module)
    for nid, method, args in plan.setup:  # after add: the module sees its net's block pool
        getattr(modules[nid], method)(*args)
    for nid, port, edge in plan.inputs:
        net.bind_input(node_index[nid], _ports(classes[nid], "inputs")[port], fifo[edge])
    for nid, port, edge in plan.outputs:
        net.bind_output(node_index[nid], _ports(classes[nid], "outputs")[port], fifo[edge])
    if plan.memory is not None:
        net.set_memory(*plan.memory)
        for nid, slot, write, words, channel in plan.mem_ports:
            net.add_mem_port(node_index[nid], slot, write, words, channel)
    return net


def _vector(v: Any, dtype: Any) -> np.ndarray:
    n = int(v.size())
    if n == 0:
        return np.zeros(0, dtype)
    return np.frombuffer(v.data(), dtype=dtype, count=n).copy()


def _extract(net: Any, plan: NetPlan) -> RawNet:
    nodes, writers = [], {}
    for i in range(net.num_nodes()):
        m = net.node(i)
        blk = m.blocked
        nodes.append(RawNode(str(m.node_id()), str(m.op()), int(m.fires), int(m.stall_in),
                             int(m.stall_out), int(m.done_cycle), bool(m.finished()),
                             None if not blk else str(blk.name()), bool(m.blocked_on_input),
                             str(m.describe_state()), int(m.stall_mem),
                             int(m.peak_entries())))
        if nodes[-1].op == "level_writer":
            writers[nodes[-1].id] = (_vector(m.crd, np.uint32), _vector(m.stop_pos, np.int64),
                                     _vector(m.stop_level, np.int64))
        elif nodes[-1].op == "value_writer":
            writers[nodes[-1].id] = (_vector(m.vals, np.uint32),)
    edges = []
    for i in range(net.num_fifos()):
        f = net.fifo(i)
        w, r, d = int(f.writer), int(f.reader), int(f.depth())
        edge = RawEdge(str(f.name()), d if d > 0 else None, nodes[w].id, nodes[r].id,
                       int(f.max_occ), int(f.unread()), nodes[w].finished,
                       int(f.data_written))
        if plan.trace:
            edge.words = _vector(f.trace_toks, np.uint64)
            edge.block_words = _vector(f.trace_block_words, np.uint32)
            edge.cycles = _vector(f.trace_cycles, np.int64)
            edge.reads = _vector(f.trace_reads, np.int64)
        edges.append(edge)
    err = net.error()
    raw_err = None
    if err:
        kinds = str(err.kind_str())  # one character per token slot
        raw_err = RawError(str(err.node), int(err.cycle), str(err.what()),
                           tuple(int(err.tok(i)) for i in range(len(kinds))), kinds,
                           tuple(_vector(err.block(i), np.uint32) for i in range(len(kinds))))
    return RawNet(STATUS.get(int(net.status()), "running"), int(net.end_cycle()), nodes,
                  edges, writers, raw_err, _extract_memory(net, plan))


def _extract_memory(net: Any, plan: NetPlan) -> RawMemory | None:
    if plan.memory is None:
        return None
    mem = net.memory()
    ports = [(int(mem.port(i).bursts), int(mem.port(i).lines))
             for i in range(mem.num_ports())]
    raw = RawMemory(ports, [int(mem.channel_bytes(c)) for c in range(mem.num_channels())],
                    int(mem.max_ack()))
    if plan.memory[-1]:
        log = mem.log()
        raw.log = np.stack([_vector(v, np.int64) for v in
                            (log.cycle, log.port, log.line, log.lines, log.write)], axis=1)
    return raw


def run_plans(plans: list[NetPlan], *, per_module: bool = False, vcd: str | None = None,
              keep: list | None = None) -> tuple[list[RawNet], dict[str, float]]:
    """Elaborate every plan into one SystemC design, simulate, extract (child only).

    ``keep`` receives the C++ objects, which must outlive the run (cppyy owns them)."""
    t0 = time.perf_counter()
    sf = load()
    design = sf.Design("samfuse_top", per_module)
    keep = [] if keep is None else keep
    keep.append(design)
    nets = [_elaborate(sf, plan, i, keep) for i, plan in enumerate(plans)]
    for net in nets:
        design.add_net(net)
    if vcd:
        design.trace_vcd(vcd)
    t1 = time.perf_counter()
    problem = str(design.run())
    t2 = time.perf_counter()
    if problem:
        raise SystemCRunError(problem)
    raws = [_extract(net, plan) for net, plan in zip(nets, plans, strict=True)]
    t3 = time.perf_counter()
    return raws, {"elaborate": t1 - t0, "simulate": t2 - t1, "extract": t3 - t2,
                  "clock_cycles": float(design.cycles)}


# -- JIT warm-up (parent) ----------------------------------------------------------------

_WARM_LOCK = threading.Lock()
_WARM: dict[str, Any] = {}


def _warm_graphs() -> list[tuple[Graph, dict[str, Any]]]:
    """Small graphs that together use every primitive (values do not matter)."""
    eye = np.eye(3, dtype=np.float32)
    g = GraphBuilder("warm_hold_unary")
    g.tensor("A", (3, 3), "dc")
    g.tensor("X", (3, 3), "dc", role="output")
    for nid, op, kw in [("r", "root", {}), ("Ai", "scan_dense", {"tensor": "A", "level": 0}),
                        ("Aj", "scan_compressed", {"tensor": "A", "level": 1}),
                        ("hold", "crdhold", {}), ("Av", "array", {"tensor": "A"}),
                        ("u", "unary", {"op": "exp"}),
                        ("Xi", "level_writer", {"tensor": "X", "level": 0}),
                        ("Xj", "level_writer", {"tensor": "X", "level": 1}),
                        ("Xv", "value_writer", {"tensor": "X"})]:
        g.node(nid, op, **kw)
    for src, dst in [("r.ref", "Ai.ref_in"), ("Ai.ref", "Aj.ref_in"), ("Ai.crd", "hold.outer_in"),
                     ("Aj.crd", "hold.inner_in"), ("hold.outer", "Xi.crd"),
                     ("hold.inner", "Xj.crd"), ("Aj.ref", "Av.ref"), ("Av.val", "u.a"),
                     ("u.val", "Xv.val")]:
        g.edge(src, dst)
    from compiler import compile_expression  # lanes: split, one- and two-level merges

    vec = np.ones(3, np.float32)
    valjoins = [(_warm_valjoin(op), {"a": vec, "b": vec}) for op in ("intersect_val",
                                                                      "union_val")]

    lanes = [compile_expression(expr, {"A": "csr"}, {"A": (3, 3), other: shape},
                                par={"i": 2}, name=f"warm_lanes_{other}")
             for expr, other, shape in (("y(i) = A(i,j) * x(j)", "x", (3,)),
                                        ("X(i,j) = A(i,k) * B(k,j)", "B", (3, 3)))]
    cube = np.ones((3, 3, 3), np.float32)
    ttm = compile_expression("X(i,j,l) = B(i,j,k) * C(k,l)", {"B": "dcc", "C": "dc"},
                             {"B": (3, 3, 3), "C": (3, 3)}, order="k,i,j,l", name="warm_spacc3")
    return [(g.build(), {"A": eye}), (examples.spmv(3, 3), {"B": eye, "c": eye[0]}),
            (ttm, {"B": cube, "C": eye}), *_warm_block_graphs(),
            (lanes[0], {"A": eye, "x": eye[0]}), (lanes[1], {"A": eye, "B": eye}),
            (examples.spmm_ikj(3, 3, 3), {"B": eye, "C": eye}),
            (examples.spmm_kij(3, 3, 3), {"B": eye, "C": eye}),
            (examples.elementwise(3, 3, "add"), {"A": eye, "B": eye}),
            (examples.row_scale(3, 3), {"A": eye}), *valjoins]


def _warm_block_graphs() -> list[tuple[Graph, dict[str, Any]]]:
    """Graphs on 2 x 2 blocks: contraction, spacc, spacc2 and spacc3 of blocks, a folding
    reducer, a unary op and an elementwise ALU fed N (every block entry point of the
    models)."""
    from compiler import compile_expression

    eye = np.eye(4, dtype=np.float32)
    ttm = compile_expression("X(i,j,l) = B(i,j,k) * C(k,l)", {"B": "dcc", "C": "dc"},
                             {"B": (4, 4, 2), "C": (2, 4)}, order="k,i,j,l",
                             block={"i": 2, "j": 2, "l": 2}, name="warm_spacc3_blocks")
    return [(examples.spmm_ikj(4, 4, 4, block=2), {"B": eye, "C": eye}),
            (ttm, {"B": np.ones((4, 4, 2), np.float32), "C": np.ones((2, 4), np.float32)}),
            (examples.spmm_kij(4, 4, 4, block=2), {"B": eye, "C": eye}),
            (examples.row_reduce(4, 4, "sum", "exp", block=2), {"A": eye}),
            (examples.elementwise(4, 4, "add", block=2), {"A": eye, "B": eye})]


def _warm_valjoin(op: str) -> Graph:
    """x = a op b over compressed vectors, side a of the joiner carrying a's values."""
    g = GraphBuilder(f"warm_{op}")
    for t in ("a", "b"):
        g.tensor(t, (3,), "c")
        g.node(f"r{t}", "root")
        g.node(f"{t}i", "scan_compressed", tensor=t, level=0)
        g.node(f"{t}v", "array", tensor=t)
        g.edge(f"r{t}.ref", f"{t}i.ref_in")
    g.tensor("x", (3,), "c", role="output")
    g.node("j", op)
    g.node("alu", "alu", op="add")
    g.node("xi", "level_writer", tensor="x", level=0)
    g.node("xv", "value_writer", tensor="x")
    for src, dst in [("ai.ref", "av.ref"), ("ai.crd", "j.crd_a"), ("av.val", "j.val_a"),
                     ("bi.crd", "j.crd_b"), ("bi.ref", "j.ref_b"), ("j.ref_b", "bv.ref"),
                     ("j.val_a", "alu.a"), ("bv.val", "alu.b"), ("j.crd", "xi.crd"),
                     ("alu.val", "xv.val")]:
        g.edge(src, dst)
    return g.build()


def prepare() -> Any:
    """Load SystemC and JIT-compile every model *in this process*, once.

    cppyy compiles a constructor or method the first time Python calls it; left to the
    forked children, every child would pay seconds of JIT again. So the parent elaborates
    and runs a throwaway design using every primitive, keeps those objects alive forever
    (destroying them would touch SystemC state), and then abandons that simulation context
    so that children start from an empty one."""
    sf = load()
    with _WARM_LOCK:
        if "seconds" not in _WARM:
            start = time.perf_counter()
            hbm = load_hw("hbm2-u280")
            slow = load_hw("ideal", ["compute.macs_per_cycle=1"])  # multi-cycle firings
            plans = [plan_net(g, bind_inputs(g, ins), trace=True, depth="graph", hw=hw,
                              mem_trace=hw is not None and hw.memory)
                     for g, ins in _warm_graphs() for hw in (None, hbm, slow)]
            run_plans(plans, keep=_IMMORTAL)
            sf.fresh_simcontext()
            _WARM["seconds"] = time.perf_counter() - start
    return sf


def warm_seconds() -> float:
    """Wall time of the JIT warm-up in this process (0 if it has not happened)."""
    return float(_WARM.get("seconds", 0.0))


class SystemCRunError(RuntimeError):
    """SystemC itself reported an error (an sc_report), as text."""


#: C++ objects of this process's simulation. Never released: tearing SystemC modules down
#: is slow and pointless, since the child ends with os._exit.
_IMMORTAL: list = []


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
        raws, timings = run_plans(plans, per_module=per_module, vcd=vcd, keep=_IMMORTAL)
        timings["entered"] = entered
        msg: tuple = ("ok", raws, timings)
    except BaseException as exc:  # noqa: BLE001 - everything must become a string here
        msg = ("error", f"{type(exc).__name__}: {exc}")
    conn.send(msg)
    conn.close()
