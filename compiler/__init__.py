"""The samfuse compiler: tensor index expressions and PyTorch models → SAMML ``ir.Graph``.

Takes one expression in index notation (``X(i,j) = B(i,k) * C(k,j)``) with storage
formats, shapes and optionally a dataflow order, and produces a validated graph of SAM
primitives that any backend can run. ``docs/compiler.md`` documents the syntax, the
lowering rules, transposes and limits.

Whole models go through more passes: the ``torch.export`` frontend (``from_torch``, loaded
on first use) turns a module into an einsum ``ir.Program``, and so does the MLIR frontend
(``from_mlir``: linalg on tensors with sparse_tensor encodings, from a ``.mlir`` file);
``compile_model`` fuses it region by region under an ``ir.Schedule`` into one graph per
kernel; a cost heuristic (``estimate``, ``order_cost``) picks dataflow orders;
``evaluate`` is the numpy oracle; ``compiler.models`` holds the bundled models
(``docs/frontend.md``, ``docs/fusion.md``, ``docs/cost.md``).

Modules, each taking → producing:

- ``_parse``: expression text → ``Assignment`` tree (``_ast``); ``_normalize``: tree →
  checked tree with explicit reductions; ``_operators``: what each of ``+ - * /`` means
  to the passes (intersect or union, ALU op, constant forms).
- ``_layout``: formats and shapes → per-tensor layouts for one order (transposes);
  ``_factor``: expression + order → the loops each subexpression runs in.
- ``_lower``: normalized expression + order + layouts → ``GraphBuilder`` and its fusion
  table (``_table``), assembled from ``_lower_state`` (operands, bookkeeping),
  ``_lower_iterate`` (a step per index), ``_lower_join`` (scans, joins, the locate/scan
  policy), ``_lower_values`` (value streams), ``_lower_accumulate`` (reducers,
  accumulators, epilogues) and ``_lower_write`` (writers, lanes; ``_parallel``,
  ``_partition``); ``_blocks``: block-sparse values.
- ``_compile``: text + formats + shapes → validated ``ir.Graph`` (order search,
  ``_order``; its objective ``_order_cost``, priced by the heuristic ``_cost`` on input
  statistics ``_cost_stats`` and the machine's memory ``_cost_memory``).
- ``_torch_frontend``: ``nn.Module`` → ``ir.Program`` (``_torch_translate``: the ATen
  walk and op table; ``_torch_values``: what a node evaluates to); ``_mlir_*``: MLIR
  file → ``ir.Program``.
- ``_fusion``, ``_assoc``, ``_region_orders``, ``_model``: program + schedule → fused
  expressions → ``CompiledModel`` (one graph per kernel); ``_evaluate``: program +
  arrays → numpy results.
"""

from ._ast import (
    FUNCTIONS,
    Access,
    Assignment,
    BinOp,
    Call,
    Const,
    Expr,
    Neg,
    Reduction,
    tensor_ranks,
)
from ._buffer import BufferChoice, buffer_graph, buffer_model, check_buffer_names, parse_buffer
from ._compile import compile_expression, parse_order
from ._cost import Estimate, TensorStats, estimate
from ._errors import CompileError, LoweringError, ParseError
from ._evaluate import evaluate
from ._factor import Factoring, factor
from ._fusion import FusedExpression, FusionError, format_assignment, fuse_region, region_exports
from ._model import CompiledModel, CompiledRegion, Kernel, compile_model, einsum_program
from ._normalize import Normalized, normalize
from ._order import Conflict, OrderError, OrderGraph, Orders, explain_orders, order_graph
from ._order_cost import DEFAULT_DENSITY, OrderCost, cycle_estimate, order_cost
from ._parse import MAX_EXPR_DEPTH, parse
from ._region_orders import RegionOrders, region_orders
from ._schedules import NAMED_SCHEDULES
from ._table import Entry, FusionTable, fusion_table

__all__ = [
    # entry point
    "compile_expression",
    # passes
    "parse", "MAX_EXPR_DEPTH", "normalize", "parse_order", "Normalized",
    # expression tree
    "Assignment", "Access", "Const", "Neg", "BinOp", "Reduction", "Call", "Expr", "FUNCTIONS",
    "tensor_ranks",
    # the lowering's plan
    "FusionTable", "Entry", "fusion_table",
    # whole programs: fusion regions, partial order graph
    "compile_model", "einsum_program", "CompiledModel", "CompiledRegion", "Kernel", "fuse_region",
    "region_exports", "FusedExpression", "format_assignment", "order_graph", "OrderGraph",
    "Orders", "Conflict", "NAMED_SCHEDULES",
    # the cost-chosen order: its objective and the candidates weighed
    "order_cost", "OrderCost", "DEFAULT_DENSITY", "explain_orders",
    # on-chip buffers: which input arrays a graph keeps on chip (docs/timing.md)
    "buffer_graph", "buffer_model", "parse_buffer", "check_buffer_names", "BufferChoice",
    # the orders a fusion region accepts, priced (the autoscheduler's known constraints)
    "region_orders", "RegionOrders",
    # torch frontend (loaded on first use: it imports torch) and the numpy oracle
    "from_torch", "torch_weights", "torch_inputs", "to_array", "FrontendError", "evaluate",
    # MLIR frontend (loaded on first use; the bindings come with the ``mlir`` extra)
    "from_mlir", "read_mlir", "mlir_tensors", "MlirModel", "MlirError",
    # torch -> MLIR through torch-mlir's FX importer (the MLIR frontend's second path)
    "torch_to_mlir", "MlirExport",
    # cost heuristic (FLOPs/bytes from shapes and densities)
    "estimate", "Estimate", "TensorStats", "cycle_estimate", "factor", "Factoring",
    # errors
    "CompileError", "ParseError", "LoweringError", "FusionError", "OrderError",
]

_TORCH_FRONTEND = ("from_torch", "torch_weights", "torch_inputs", "to_array", "FrontendError")
_MLIR_FRONTEND = ("from_mlir", "read_mlir", "mlir_tensors", "MlirModel", "MlirError")
_MLIR_TORCH = ("torch_to_mlir", "MlirExport")


def __getattr__(name: str) -> object:
    """Import the torch frontend lazily, so that ``import compiler`` stays torch-free."""
    if name in _TORCH_FRONTEND:
        from . import _torch_frontend
        return getattr(_torch_frontend, name)
    if name in _MLIR_FRONTEND:
        from . import _mlir_frontend
        return getattr(_mlir_frontend, name)
    if name in _MLIR_TORCH:
        from . import _mlir_torch
        return getattr(_mlir_torch, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
