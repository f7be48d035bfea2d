"""MLIR (linalg on tensors + sparse_tensor) → :class:`ir.Program`: the MLIR frontend.

FuseFlow's models, and those of any MLIR sparse flow, are exchanged as ``.mlir`` files:
functions on tensors whose ``#sparse_tensor.encoding`` gives the storage format, computed
by ``linalg.generic`` and named linalg ops. ``from_mlir`` parses a file with the MLIR
Python bindings of the ``torch-mlir`` wheel (the ``mlir`` extra) and writes every linalg
op as one statement in samfuse's index notation: the indexing maps give the index
expressions, the region's arith/math ops the operators, the loops missing from the
outputs the reductions. Transposes and size-1 reshapes are index renamings, as in the
torch frontend; ``docs/frontend.md`` ("MLIR") has the op table.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ir import Format, Program, Statement, TensorDecl

from ._ast import accesses
from ._errors import CompileError
from ._mlir_parse import parse_module
from ._mlir_types import (
    MAX_TOTAL_ELEMENTS,
    MlirError,
    MlirSource,
    TensorType,
    constant_value,
    generate,
    level_format,
    tensor_type,
)
from ._normalize import normalize
from ._parse import RESERVED, parse

__all__ = ["MlirError", "MlirModel", "from_mlir", "read_mlir", "mlir_tensors",
           "level_format"]

_LETTERS = "ijklmnopqrstuvwxyzabcdefgh"
#: ops of a function body that only carry values (scalars, shapes) to the linalg ops
_PASSIVE = ("arith.constant", "tensor.empty", "func.return")
#: module-level ops that compute nothing the program needs
_SKIPPED = ("ml_program.global", "memref.global", "func.func")
_FLOATS = ("f32", "f64", "f16", "bf16")
#: integer tensors a program takes: 0/1 masks (torch bool tensors are i1, or i8 as data)
_INTEGERS = ("i1", "i8")
#: precedence of an expression text: sums and reductions, products, atoms
_SUM, _PROD, _ATOM = 0, 1, 2


@dataclass(frozen=True)
class _View:
    """A program tensor seen through an index renaming: logical dim d is tensor mode
    ``modes[d]``, or a size-1 dim the tensor does not store when ``modes[d]`` is None."""

    tensor: str
    modes: tuple[int | None, ...]


@dataclass(frozen=True)
class _Fill:
    """A tensor filled with one scalar (``linalg.fill``): an init, or a constant operand."""

    value: float


@dataclass(frozen=True)
class _Empty:
    """``tensor.empty``: only an init whose values are never read."""


@dataclass(frozen=True)
class _Complement:
    """``xori(mask, true)`` of a 0/1 pattern: only a select (masked_fill) may use it."""

    pattern: _View


@dataclass(frozen=True)
class _Text:
    text: str
    prec: int

    def at(self, prec: int) -> str:
        return self.text if self.prec >= prec else f"({self.text})"


@dataclass
class MlirModel:
    """A translated MLIR function: its program and the values the file gives."""

    program: Program
    #: constant weights with their values in the file (elided ones are absent)
    constants: dict[str, np.ndarray] = field(default_factory=dict)
    #: elided constants (``dense_resource<__elided__>``): generated unless given
    elided: list[str] = field(default_factory=list)
    #: tensors of integer type in the file (0/1 masks): generated as 0/1 patterns
    masks: list[str] = field(default_factory=list)


def _const(value: float) -> _Text:
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"constant {value!r} is not finite")
    text = repr(value) if value != int(value) or abs(value) >= 1e15 else str(int(value))
    return _Text(f"({text})" if value < 0 else text, _ATOM)


def _bindings() -> tuple[Any, Any]:
    try:
        from torch_mlir import ir
        from torch_mlir.dialects import sparse_tensor
    except ImportError:
        raise MlirError("the MLIR frontend needs the torch-mlir wheel's MLIR bindings: "
                        "pip install 'samfuse[mlir]'") from None
    return ir, sparse_tensor


class _Translator:
    """One walk over a function's body; ``self.op`` is the op being translated."""

    def __init__(self, src: MlirSource, ir: Any, st: Any, formats: Mapping[str, str]):
        self.src, self.ir, self.st, self.formats = src, ir, st, dict(formats)
        #: tensors whose entries off a pattern are -inf (stored as 0): masked_fill(~P, -inf)
        self.masked: dict[str, _View] = {}
        self.tensors: dict[str, TensorDecl] = {}
        self.elements = 0  # in all tensors declared
        self.statements: list[Statement] = []
        self.inputs: list[str] = []
        self.values: dict[Any, Any] = {}  # ir.Value -> _View | _Fill | _Empty | float
        self.model = MlirModel(Program({}, [], [], []))
        self.op: Any = None
        self.arg_loc: Any = None

    # -- errors, names, declarations -----------------------------------------------------
    def fail(self, message: str, op: Any = None) -> MlirError:
        op = op if op is not None else self.op
        if op is None:  # declaring the function's arguments
            return MlirError(message, "func.func", self.src.where(self.arg_loc))
        return MlirError(message, op.name, self.src.where(op.location))

    def type_of(self, t: Any, integers: bool = False) -> TensorType:
        """A tensor type whose elements are floats (any width: the program computes in
        float32), or integers where ``integers`` (0/1 masks)."""
        tt = tensor_type(self.ir, self.st, t, self.fail)
        ok = _FLOATS + (_INTEGERS if integers else ())
        if tt.element not in ok:
            raise self.fail(f"element type {tt.element} of {t}: expected one of "
                            f"{', '.join(ok)} (programs compute in float32)")
        return tt

    def fresh(self, hint: str) -> str:
        base = re.sub(r"\W", "_", hint or "t")
        base = f"_{base}" if base[0].isdigit() else base
        base = f"{base}_" if base in RESERVED else base
        name, n = base, 1
        while name in self.tensors:
            name, n = f"{base}_{n}", n + 1
        return name

    def add(self, decl: TensorDecl) -> None:
        """Declare a tensor, within the elements a program may hold in all (the oracle
        and the generator hold every tensor dense: refused before allocation)."""
        self.elements += math.prod(decl.shape)
        if self.elements > MAX_TOTAL_ELEMENTS:
            raise self.fail(f"the program's tensors hold more than {MAX_TOTAL_ELEMENTS} "
                            f"elements in all (at {decl.name!r}); refused before allocation")
        self.tensors[decl.name] = decl

    def declare(self, hint: str, tt: TensorType, role: str) -> _View:
        name = self.fresh(hint)
        fmt = self.formats.get(name, tt.format)
        self.add(TensorDecl(name, tt.shape, fmt, role))
        return _View(name, tuple(range(len(tt.shape))))

    def emit(self, hint: str, lhs: Sequence[str], shape: Sequence[int], rhs: str,
             fmt: str = "dense") -> str:
        name = self.fresh(hint)
        fmt = self.formats.get(name, fmt)
        self.add(TensorDecl(name, tuple(shape), fmt, "intermediate"))
        text = f"{name}({','.join(lhs)}) = {rhs}" if lhs else f"{name} = {rhs}"
        try:
            assign = normalize(parse(text)).assignment
        except CompileError as exc:  # our own text: name the op that made it
            raise self.fail(f"cannot be written as {text!r}: {exc.message}") from None
        reads = list(dict.fromkeys(a.tensor for a in accesses(assign.rhs)))
        self.statements.append(Statement(name, text, tuple(reads), self.op.name,
                                         self.src.where(self.op.location)))
        return name

    # -- the walk --------------------------------------------------------------------------
    def run(self, func: Any) -> list[str]:
        block = func.regions[0].blocks[0]
        for arg in block.arguments:
            self.arg_loc = arg.location
            tt = self.type_of(arg.type, integers=True)  # a bool mask: 0/1 floats
            name = self.src.arg_name(arg.location) or f"arg{arg.arg_number}"
            self.values[arg] = self.declare(name, tt, "input")
            self.inputs.append(self.values[arg].tensor)
            if tt.element in _INTEGERS:
                self.model.masks.append(self.values[arg].tensor)
        for op in block.operations:
            self.op = op.operation
            self.visit(self.op)
        raise self.fail("function without func.return", func.operation)

    def visit(self, op: Any) -> None:
        name = op.name
        if name == "func.return":
            raise _Returned([self.value(v) for v in op.operands])
        if name == "arith.constant":
            self.constant(op)
        elif name == "tensor.empty":  # a sparse empty tensor holds no entries: zeros
            tt = tensor_type(self.ir, self.st, op.results[0].type, self.fail)
            dense = Format.parse(tt.format, len(tt.shape)).all_dense
            self.values[op.results[0]] = _Empty() if dense else _Fill(0.0)
        elif name in ("tensor.expand_shape", "tensor.collapse_shape", "tensor.cast"):
            self.values[op.results[0]] = self.reshape(op)
        elif name == "sparse_tensor.convert":
            self.values[op.results[0]] = self.convert(op)
        elif name.startswith("linalg.") and self.linalg_maps(op) is not None:
            self.linalg(op)
        else:
            raise self.fail(f"{name} is not supported by the MLIR frontend (docs/"
                            "frontend.md lists linalg on tensors, tensor.empty/expand_shape/"
                            "collapse_shape/cast, sparse_tensor.convert and arith.constant)")

    def value(self, v: Any) -> Any:
        if v not in self.values:
            raise self.fail(f"value {v.get_name()} is defined by an op the frontend skipped")
        return self.values[v]

    # -- constants, reshapes, conversions ----------------------------------------------------
    def constant(self, op: Any) -> None:
        result = op.results[0]
        attr = op.attributes["value"]
        if not isinstance(result.type, self.ir.ShapedType):
            if isinstance(attr, self.ir.FloatAttr | self.ir.IntegerAttr | self.ir.BoolAttr):
                self.values[result] = float(attr.value)
            return  # other scalars: only shapes use them
        if isinstance(attr, self.ir.DenseElementsAttr) and attr.is_splat:
            self.values[result] = _Fill(float(attr.get_splat_value().value))
            return  # a scalar broadcast, not a weight
        tt = self.type_of(result.type, integers=True)
        text = str(attr)
        fmt = tt.format
        if text.startswith("sparse<") and fmt == "dense":
            fmt = "c" * len(tt.shape)  # a sparse literal: every level compressed (COO)
        view = self.declare(self.src.result_name(op.location) or "cst",
                            TensorType(tt.shape, "f32", fmt), "weight")
        self.inputs.append(view.tensor)
        if tt.element in _INTEGERS:
            self.model.masks.append(view.tensor)
        data = constant_value(self.ir, attr, tt, self.src.blobs, self.fail)
        if data is None:
            self.model.elided.append(view.tensor)
        else:
            self.model.constants[view.tensor] = data
        self.values[result] = view

    def reshape(self, op: Any) -> _View:
        """expand_shape / collapse_shape / cast that only add or remove size-1 dims."""
        src = self.tensor_operand(op.operands[0])
        old = self.shape_of(op.operands[0])
        new = self.shape_of(op.results[0])
        if [d for d in old if d != 1] != [d for d in new if d != 1]:
            raise self.fail(f"reshape from {list(old)} to {list(new)} merges or splits "
                            "dimensions; only adding or removing size-1 dims is supported")
        kept = iter(m for m, d in zip(src.modes, old, strict=True) if d != 1)
        for m, d in zip(src.modes, old, strict=True):
            if d == 1 and m is not None:  # a stored size-1 mode: drop it by a statement
                return self.reshape_stored(src, old, new)
        return _View(src.tensor, tuple(next(kept) if d != 1 else None for d in new))

    def reshape_stored(self, src: _View, old: Sequence[int], new: Sequence[int]) -> _View:
        idx = list(_LETTERS[:len(old)])
        keep = [i for i, d in zip(idx, old, strict=True) if d != 1]
        name = self.emit(self.src.result_name(self.op.location) or "reshape", keep,
                         [d for d in old if d != 1], self.access(src, idx).text)
        kept = iter(range(len(keep)))
        return _View(name, tuple(next(kept) if d != 1 else None for d in new))

    def convert(self, op: Any) -> _View:
        """A format change: a copy statement stored in the new format."""
        src = self.tensor_operand(op.operands[0])
        tt = self.type_of(op.results[0].type)
        idx = list(_LETTERS[:len(tt.shape)])
        name = self.emit(self.src.result_name(op.location) or "convert", idx,
                         tt.shape, self.access(src, idx).text, tt.format)
        return _View(name, tuple(range(len(tt.shape))))

    def tensor_operand(self, v: Any) -> _View:
        val = self.value(v)
        if not isinstance(val, _View):
            what = "a tensor.empty" if isinstance(val, _Empty) else "a filled tensor"
            raise self.fail(f"operand {v.get_name()} is {what}; only computed tensors, "
                            "inputs and constants can be read here")
        return val

    def shape_of(self, v: Any) -> tuple[int, ...]:
        """A value's static shape, whatever its element type (an unused argmax is i64)."""
        return tensor_type(self.ir, self.st, v.type, self.fail).shape

    def access(self, v: _View, idx: Sequence[str]) -> _Text:
        """``T(i,k)`` for logical dims indexed by ``idx`` (unstored dims drop)."""
        names = [i for _, i in sorted((m, i) for m, i in zip(v.modes, idx, strict=True)
                                      if m is not None)]
        return _Text(f"{v.tensor}({','.join(names)})" if names else v.tensor, _ATOM)

    def finish(self, returned: list[Any]) -> list[str]:
        """Mark returned tensors as outputs; an input, a view or a second return of one
        tensor is copied by a statement named after the function's result."""
        if not returned:
            raise self.fail("the function returns no tensor (results written into an "
                            "argument are not supported: return them)")
        outs: list[str] = []
        for n, v in enumerate(returned):
            if not isinstance(v, _View):
                raise self.fail(f"return value {n} is not a computed tensor "
                                f"({type(v).__name__.strip('_')})")
            decl = self.tensors[v.tensor]
            stored = [m for m in v.modes if m is not None]
            if decl.role != "intermediate" or stored != list(range(len(decl.shape))):
                idx = list(_LETTERS[:len(v.modes)])
                lhs = [i for i, m in zip(idx, v.modes, strict=True) if m is not None]
                name = self.emit(f"result{n}", lhs, [decl.shape[m] for m in stored],
                                 self.access(v, idx).text)
                v, decl = _View(name, tuple(range(len(lhs)))), self.tensors[name]
            self.tensors[v.tensor] = TensorDecl(decl.name, decl.shape, decl.format, "output")
            outs.append(v.tensor)
        return outs

    def prune(self, outputs: list[str]) -> None:
        """Drop what the outputs do not need: dead statements (ops whose results only
        feed each other) and constants nothing reads; the function's arguments stay."""
        live = set(outputs)
        for st in reversed(self.statements):
            if st.target in live:
                live.update(st.reads)
        self.statements = [st for st in self.statements if st.target in live]
        dead = {n for n, t in self.tensors.items()
                if n not in live and t.role in ("intermediate", "weight")}
        self.tensors = {n: t for n, t in self.tensors.items() if n not in dead}
        self.inputs = [n for n in self.inputs if n not in dead]
        self.model.constants = {n: v for n, v in self.model.constants.items()
                                if n not in dead}
        self.model.elided = [n for n in self.model.elided if n not in dead]
        self.model.masks = [n for n in self.model.masks if n not in dead]

    # -- linalg ------------------------------------------------------------------------------
    def linalg_maps(self, op: Any) -> list[Any] | None:
        from torch_mlir.dialects import linalg

        try:
            maps = linalg.get_indexing_maps(op)
        except Exception:  # noqa: BLE001 - not a structured op (linalg.softmax, ...)
            return None
        return None if maps is None else [m.value for m in maps]

    def linalg(self, op: Any) -> None:
        from ._mlir_linalg import translate_linalg

        translate_linalg(self, op, self.linalg_maps(op))


class _Returned(Exception):  # noqa: N818 - control flow, never escapes the module
    def __init__(self, values: list[Any]):
        self.values = values


def _function(ir: Any, module: Any, src: MlirSource, name: str | None) -> Any:
    """The function to translate: ``name``, else the only defined one, else ``main``."""
    funcs = []
    for op in module.body.operations:
        op = op.operation
        if op.name == "func.func":
            if len(op.regions[0].blocks) > 0:
                funcs.append(op)
        elif op.name not in _SKIPPED:
            raise MlirError(f"module-level {op.name} is not supported (skipped: "
                            f"{', '.join(_SKIPPED)})", op.name, src.where(op.location))
    names = [ir.StringAttr(f.attributes["sym_name"]).value for f in funcs]
    if name is None and len(funcs) == 1:
        return funcs[0]
    want = name or "main"
    if want not in names:
        raise MlirError(f"no function @{want} with a body; the module defines "
                        f"{', '.join('@' + n for n in names) or 'none'}", where=src.name)
    return funcs[names.index(want)]


def read_mlir(source: str | Path, *, func: str | None = None, name: str | None = None,
              formats: Mapping[str, str] | None = None) -> MlirModel:
    """Parse an MLIR file (a path, or the text itself) and translate one function.

    ``func`` names the function (default: the only one with a body, else ``@main``);
    ``formats`` overrides the format of any program tensor by name, as in
    ``from_torch``. Raises :class:`MlirError` (one line: ``file:line:col: op: what``).
    """
    ir, st = _bindings()
    src = MlirSource.read(source)
    ctx, module = parse_module(ir, src)
    with ctx:
        f = _function(ir, module, src, func)
        tr = _Translator(src, ir, st, formats or {})
        try:
            tr.run(f)
        except _Returned as ret:
            outputs = tr.finish(ret.values)
            tr.prune(outputs)
        except MlirError:
            raise
        except ValueError as exc:  # bad constants
            raise tr.fail(str(exc)) from None
    unknown = sorted(set(tr.formats) - set(tr.tensors))
    if unknown:
        raise MlirError(f"formats names unknown tensor(s) {unknown}; the program's tensors "
                        f"are {sorted(tr.tensors)}", where=src.name)
    fname = ir.StringAttr(f.attributes["sym_name"]).value
    default = Path(src.name).stem if src.name != "<mlir>" else fname
    program = Program(tr.tensors, tr.statements, tr.inputs, outputs, name or default,
                      {"frontend": "mlir", "source": src.name, "function": fname,
                       "elided": list(tr.model.elided)})
    tr.model.program = program
    return tr.model


def from_mlir(source: str | Path, *, func: str | None = None, name: str | None = None,
              formats: Mapping[str, str] | None = None) -> Program:
    """An MLIR function (``.mlir`` path or text) as an einsum program; see
    :func:`read_mlir` for the constants and :func:`mlir_tensors` to bind a run."""
    return read_mlir(source, func=func, name=name, formats=formats).program


def mlir_tensors(model: MlirModel, seed: int = 0, given: Mapping[str, Any] | None = None,
                 density: float = 0.1) -> dict[str, Any]:
    """Every input and weight of ``model.program``: ``given`` first, then the file's
    constants, then values generated from ``seed`` at the declared shape and format
    (compressed levels at ``density``; integer masks as 0/1 patterns with an entry in
    every row)."""
    given = dict(given or {})
    prog = model.program
    unknown = sorted(set(given) - set(prog.inputs))
    if unknown:
        raise MlirError(f"no input or weight named {unknown[0]!r}; the program's are "
                        f"{', '.join(prog.inputs)}", where=prog.meta.get("source", ""))
    out: dict[str, Any] = {}
    for n, tensor in enumerate(prog.inputs):
        decl = prog.tensors[tensor]
        if tensor in given:
            shape = tuple(getattr(given[tensor], "shape", ()))
            if shape != decl.shape:
                raise MlirError(f"tensor {tensor!r} is declared {list(decl.shape)}; the "
                                f"value given has shape {list(shape)}",
                                where=prog.meta.get("source", ""))
            out[tensor] = given[tensor]
        elif tensor in model.constants:
            out[tensor] = model.constants[tensor]
        else:
            out[tensor] = generate(decl.shape, decl.format, seed * 1009 + n, density,
                                   mask=tensor in model.masks)
    return out
