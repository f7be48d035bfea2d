"""samfuse's intermediate representation: the bottom layer every other package uses.

Tokens and their nesting rules, tensor formats and fiber-tree storage, the primitive
catalogue, SAMML graphs (JSON + Graphviz), einsum programs and stream traces. Depends on
nothing else in samfuse.
"""

from ._catalogue import (
                     BINARY_OPS,
                     CATALOGUE,
                     REDUCE_OPS,
                     STREAM_KINDS,
                     UNARY_OPS,
                     WRITER_PRIMITIVES,
                     Param,
                     Port,
                     Primitive,
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
                     decode_token,
                     decode_words,
                     encode_token,
                     f32_bits,
                     int_constant,
                     unary_constant_bits,
                     value_bits,
                     values_from_bits,
)
from ._formats import Format, FormatError
from ._graph import (
    DEFAULT_DEPTH,
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
from ._program import TENSOR_ROLES, Program, ProgramError, Statement, TensorDecl
from ._render import RENDER_FORMATS, render, to_dot
from ._schedule import Region, Schedule, ScheduleError
from ._storage import (
    CompressedLevel,
    DenseLevel,
    FiberTree,
    StorageError,
    check_fits,
    storage_bytes,
)
from ._tokens import (
                     DONE,
                     EMPTY,
                     REPEAT,
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

__all__ = [
    # tokens
    "Stop", "Empty", "Done", "Repeat", "EMPTY", "DONE", "REPEAT", "Token", "stop",
    "is_control", "is_data", "token_text", "parse_token", "to_f32", "to_i32",
    # the hardware word (tag + 32-bit payload) every bit-level backend uses
    "TAG_DATA", "TAG_STOP", "TAG_EMPTY", "TAG_DONE", "encode_token", "decode_token",
    "decode_words", "f32_bits", "value_bits", "values_from_bits", "int_constant",
    "unary_constant_bits", "CodecError", "INT32_MIN", "INT32_MAX",
    # tensors
    "Format", "FormatError", "FiberTree", "DenseLevel", "CompressedLevel", "StorageError",
    "storage_bytes", "check_fits",
    # catalogue
    "CATALOGUE", "Primitive", "Port", "Param", "primitive", "STREAM_KINDS", "BINARY_OPS",
    "UNARY_OPS", "REDUCE_OPS", "WRITER_PRIMITIVES",
    # graphs
    "Graph", "GraphBuilder", "Node", "Edge", "TensorSpec", "GraphError", "SCHEMA",
    "DEFAULT_DEPTH", "render", "to_dot", "RENDER_FORMATS", "NAME_PATTERN", "check_name",
    # programs
    "Program", "Statement", "TensorDecl", "ProgramError", "TENSOR_ROLES",
    # schedules
    "Schedule", "Region", "ScheduleError",
    # traces
    "Trace", "EdgeTrace", "TraceMismatch", "TraceFormatError", "compare_traces",
]
