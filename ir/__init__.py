"""samfuse's intermediate representation: the bottom layer every other package uses.

Tokens and their nesting rules, the hardware token word (tag + 32-bit payload) that every
bit-level backend encodes and decodes with, tensor formats and fiber-tree storage with its
levels, converters between fiber trees and scipy/torch/Matrix Market/.npy files, the
primitive catalogue (each primitive described once: ports, parameters and the properties
backends derive from), SAMML graphs (JSON + Graphviz), their elaboration on a hardware
description (``ir.elaborate``: every node's derived parameters, once, for every
backend), einsum programs and their fusion schedules, stream traces, and the simulated
hardware (memory-system presets, a graph's memory ports). ``ir.examples`` (hand-built
kernel graphs) and ``ir.datasets`` (synthetic inputs) are submodules imported on demand.
Depends on nothing else in samfuse; scipy and torch are imported only by the converters
that need them.
"""

from ._blocks import (
    BlockError,
    BlockOp,
    block_cycles,
    block_elems,
    block_grid,
    block_view,
    firing_work,
    from_blocks,
    to_blocks,
    value_elems,
    written_blocks,
)
from ._catalogue import (
    BINARY_OPS,
    CATALOGUE,
    COMPUTE_PRIMITIVES,
    DERIVED_PARAMS,
    ENTRY_BYTES,
    LANE_MERGES,
    MEMORY_PRIMITIVES,
    REDUCE_OPS,
    STREAM_KINDS,
    UNARY_OPS,
    WRITER_PRIMITIVES,
    Param,
    Port,
    Primitive,
    position_windows,
    primitive,
)
from ._codec import (
    INT32_MAX,
    INT32_MIN,
    TAG_DATA,
    TAG_DONE,
    TAG_EMPTY,
    TAG_STOP,
    CodecError,
    block_rows,
    decode_token,
    decode_words,
    encode_token,
    f32_bits,
    int_constant,
    unary_constant_bits,
    value_bits,
    values_from_bits,
    written_values,
)
from ._elaborate import (
    AS_GIVEN,
    Elaboration,
    NodeElab,
    crd_bound,
    elaborate,
    level_sizes,
    max_dim,
    run_cycles,
)
from ._formats import Format, FormatError
from ._graph import (
    DEFAULT_DEPTH,
    MAX_DEPTH,
    NAME_PATTERN,
    SCHEMA,
    Edge,
    Graph,
    GraphBuilder,
    GraphError,
    Node,
    TensorSpec,
    check_name,
)
from ._graph_items import buffered_arrays, stored_arrays
from ._hw import (
    DEFAULT_HW,
    HW_KEYS,
    HW_MAX,
    HW_PRESETS,
    WORD_BYTES,
    ComputeSpec,
    DramSpec,
    FifoSpec,
    Hardware,
    HwError,
    OnchipSpec,
    at_run_depth,
    hw_key_doc,
    load_hw,
    run_depth,
)
from ._interop import from_path, mtx_vector_shape, tensor_file_header, torch_numpy_view
from ._memory import (
    BufferSpec,
    MemPortSpec,
    array_capacity,
    array_name,
    memory_ports,
    onchip_buffers,
    written_buffers,
)
from ._program import TENSOR_ROLES, Program, ProgramError, Statement, TensorDecl
from ._render import RENDER_FORMATS, render, to_dot
from ._schedule import (
    ASSOCIATIONS,
    BUFFER_MODES,
    PARTITIONS,
    Region,
    Schedule,
    ScheduleError,
    check_assoc,
    check_buffer,
)
from ._storage import (
    CompressedLevel,
    DenseLevel,
    FiberTree,
    StorageError,
    check_fits,
    storage_bytes,
)
from ._timing import (
    DEFAULT_NODE_TIMING,
    FIFO_LATENCIES,
    NODE_DEFAULTS,
    NODE_KNOBS,
    TIMING_KNOBS,
    EdgeTiming,
    NodeTiming,
    TimingSpec,
)
from ._tokens import (
    DONE,
    EMPTY,
    REPEAT,
    Block,
    Done,
    Empty,
    Repeat,
    Stop,
    Token,
    is_control,
    is_data,
    parse_token,
    stop,
    to_f32,
    to_i32,
    token_text,
)
from ._trace import EdgeTrace, Trace, TraceFormatError, TraceMismatch, compare_traces
from ._work import FLOP_PORTS, Work, counted_edges, work_from_tokens
from ._yaml import load_yaml

__all__ = [
    # block sparsity: block operators, blocked tensors, value widths
    "BlockOp", "BlockError", "block_elems", "block_grid", "block_view", "to_blocks",
    "from_blocks", "value_elems", "firing_work", "block_cycles", "written_blocks",
    # elaboration: every node's derived parameters on a hardware description, once
    "Elaboration", "NodeElab", "elaborate", "AS_GIVEN", "crd_bound", "level_sizes", "max_dim",
    "run_cycles",
    # the simulated hardware (memory system) and a graph's memory ports
    "Hardware", "DramSpec", "OnchipSpec", "ComputeSpec", "FifoSpec", "HwError", "HW_KEYS",
    "HW_MAX", "HW_PRESETS", "DEFAULT_HW", "WORD_BYTES", "load_hw", "run_depth", "at_run_depth",
    "load_yaml", "MemPortSpec", "BufferSpec", "onchip_buffers", "array_capacity", "array_name",
    "written_buffers",
    # the timing knobs (latency, II, start-up per node; FIFO read latency per edge)
    "TIMING_KNOBS", "NODE_KNOBS", "NODE_DEFAULTS", "DEFAULT_NODE_TIMING", "FIFO_LATENCIES",
    "NodeTiming", "EdgeTiming", "TimingSpec", "hw_key_doc",
    "memory_ports",
    # the work a run did (FLOPs, memory accesses), counted from its streams
    "Work", "FLOP_PORTS", "counted_edges", "work_from_tokens",
    # tokens
    "Stop", "Empty", "Done", "Repeat", "EMPTY", "DONE", "REPEAT", "Token", "stop",
    "Block", "is_control", "is_data", "token_text", "parse_token", "to_f32", "to_i32",
    # the hardware word (tag + 32-bit payload) every bit-level backend uses
    "TAG_DATA", "TAG_STOP", "TAG_EMPTY", "TAG_DONE", "encode_token", "decode_token",
    "decode_words", "f32_bits", "value_bits", "values_from_bits", "int_constant",
    "unary_constant_bits", "CodecError", "INT32_MIN", "INT32_MAX", "block_rows",
    "written_values",
    # tensors
    "Format", "FormatError", "FiberTree", "DenseLevel", "CompressedLevel", "StorageError",
    "tensor_file_header", "from_path", "mtx_vector_shape", "torch_numpy_view", "storage_bytes",
    "check_fits",
    # catalogue
    "CATALOGUE", "Primitive", "Port", "Param", "primitive", "position_windows", "STREAM_KINDS",
    "BINARY_OPS",
    "UNARY_OPS", "REDUCE_OPS", "WRITER_PRIMITIVES", "COMPUTE_PRIMITIVES", "ENTRY_BYTES",
    "LANE_MERGES", "MEMORY_PRIMITIVES", "DERIVED_PARAMS",
    # graphs
    "Graph", "GraphBuilder", "Node", "Edge", "TensorSpec", "GraphError", "SCHEMA",
    "stored_arrays", "buffered_arrays",
    "DEFAULT_DEPTH", "MAX_DEPTH", "render", "to_dot", "RENDER_FORMATS", "NAME_PATTERN",
    "check_name",
    # programs
    "Program", "Statement", "TensorDecl", "ProgramError", "TENSOR_ROLES",
    # schedules
    "Schedule", "Region", "ScheduleError", "PARTITIONS", "ASSOCIATIONS", "check_assoc",
    "BUFFER_MODES", "check_buffer",
    # traces
    "Trace", "EdgeTrace", "TraceMismatch", "TraceFormatError", "compare_traces",
]
