"""What the MLIR frontend reads besides ops: the file, locations, tensor types, sparse
encodings and constants.

Everything here goes through the MLIR Python bindings of the pinned ``torch-mlir``
wheel; the only text the frontend scans itself is the file's bracket nesting (refused
before the C++ parser can recurse on it), the SSA names it prints in error messages and
tensor names, and the trailing resource section with the hex blobs of
``dense_resource`` constants (the bindings cannot read a blob back, so MLIR parses the
module without it).
"""

from __future__ import annotations

import binascii
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ir import Format

from ._errors import CompileError

__all__ = ["MlirError", "MlirSource", "MAX_ELEMENTS", "MAX_TOTAL_ELEMENTS", "MAX_NESTING",
           "MAX_BYTES", "MAX_RANK", "tensor_type", "level_format", "constant_value", "generate"]

#: the largest tensor a program may declare (elements): the numpy oracle and the input
#: generator hold tensors dense, so anything larger is refused before allocation
MAX_ELEMENTS = 1 << 26
#: the most elements a program's tensors may hold in all (GPT-3 Small's layer: 2^25.4)
MAX_TOTAL_ELEMENTS = 1 << 28
#: deepest bracket nesting accepted: MLIR's parser recurses once per nested region,
#: attribute or type (and a few hundred thousand levels overflow its stack)
MAX_NESTING = 256
#: the most dims a tensor may have (a statement names each loop with one letter)
MAX_RANK = 12
#: largest file read (weights printed inline or as blobs make files large)
MAX_BYTES = 1 << 30

#: strings, comments and arrows are skipped; the rest are brackets (types nest in <>)
_BRACKETS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|//[^\n]*|->|[{}()\[\]<>]')
_OPEN = {"{": "}", "(": ")", "[": "]", "<": ">"}
_SSA = re.compile(r"%([A-Za-z_$.][\w$.-]*|\d+)")
_RESULTS = re.compile(r"(%[\w$.-]+)(?::\d+)?\s*(?:,\s*%[\w$.-]+\s*)*=\s*$")
#: the file metadata section, which MLIR's printer puts at the start of a line at the end
_METADATA = re.compile(r"^[ \t]*\{-#", re.M)
_RESOURCE_HEAD = re.compile(r"\{-#\s*dialect_resources\s*:\s*\{\s*builtin\s*:\s*\{\s*")
_RESOURCE_KEY = re.compile(r'([\w$.-]+)\s*:\s*"0x')
_RESOURCE_SEP = re.compile(r'"\s*(?:,\s*|(?=\}))')
_RESOURCE_NONE = re.compile(r"\{-#\s*#-\}\s*\Z")
_RESOURCE_TAIL = re.compile(r"\}\s*\}\s*#-\}\s*\Z")


class MlirError(CompileError):
    """An MLIR file the frontend cannot translate: one line naming the op and where it is
    (``file:line:col``)."""

    def __init__(self, message: str, op: str = "", where: str = ""):
        self.op, self.where = op, where
        head = ": ".join(p for p in (where, op) if p)
        super().__init__(f"{head}: {message}" if head else message)


@dataclass
class MlirSource:
    """A file split into the module MLIR parses (``text``) and the blobs of its trailing
    resource section (``{-# dialect_resources: {builtin: {KEY: "0x…"}} #-}``, decoded
    here: the bindings cannot read a ``dense_resource`` back, and leaving the blobs out of
    the parse saves MLIR copying them — most of a large model's reading time)."""

    text: str
    name: str = "<mlir>"
    blobs: dict[str, bytes] = field(default_factory=dict, repr=False)
    _lines: list[str] | None = field(default=None, repr=False)

    @classmethod
    def read(cls, source: str | Path) -> MlirSource:
        """A path (``.mlir`` file) or the module's text itself, checked before parsing."""
        path = Path(source) if isinstance(source, Path) or "\n" not in source and \
            str(source).endswith(".mlir") else None
        if path is not None:
            if not path.is_file():
                raise MlirError(f"no such file: {str(path)!r}")
            size = path.stat().st_size
            if size > MAX_BYTES:
                raise MlirError(f"{path}: {size} bytes; files up to {MAX_BYTES} bytes are "
                                "read")
            text, name = path.read_text(errors="replace"), path.name
        else:
            text, name = str(source), "<mlir>"
        m = _METADATA.search(text)  # strings cannot span lines: this is the section
        src = cls(text[:m.start()] if m else text, name)
        src.check_nesting()
        if m:
            src.blobs = src.read_resources(text, m.start())
        return src

    def check_nesting(self) -> None:
        """Refuse deeply nested regions and attributes before the recursive parser."""
        stack: list[tuple[str, int]] = []
        for m in _BRACKETS.finditer(self.text):
            tok = m.group()
            if tok in _OPEN:
                stack.append((_OPEN[tok], m.start()))
                if len(stack) > MAX_NESTING:
                    raise MlirError(f"brackets nested deeper than {MAX_NESTING} levels "
                                    "(recursive regions?); refused before parsing",
                                    where=self.position(m.start()))
            elif tok in ("}", ")", "]", ">"):
                if stack and stack[-1][0] == tok:
                    stack.pop()

    def read_resources(self, text: str, start: int) -> dict[str, bytes]:
        """The builtin blobs of the resource section at ``start`` (the end of the file),
        by key; anything else there is an error naming where."""
        blobs: dict[str, bytes] = {}
        if _RESOURCE_NONE.match(text, start):  # printed without any resource
            return blobs
        head = _RESOURCE_HEAD.match(text, start)
        pos = head.end() if head else start
        while head and not text.startswith("}", pos):
            key = _RESOURCE_KEY.match(text, pos)
            end = text.find('"', key.end()) if key else -1
            sep = _RESOURCE_SEP.match(text, end) if end >= 0 else None
            if sep is None:
                break
            try:
                blobs[key.group(1)] = binascii.a2b_hex(text[key.end():end])
            except (binascii.Error, ValueError):
                raise MlirError(f"resource {key.group(1)!r} is not hexadecimal",
                                where=self._position(text, key.start())) from None
            pos = sep.end()
        if head is None or not _RESOURCE_TAIL.match(text, pos):
            raise MlirError("the file's metadata {-# … #-} is read only as "
                            "'dialect_resources: { builtin: { KEY: \"0x…\", … } }' at the "
                            "end of the file", where=self._position(text, pos))
        return blobs

    def _position(self, text: str, offset: int) -> str:
        line = text.count("\n", 0, offset) + 1
        col = offset - (text.rfind("\n", 0, offset) + 1) + 1
        return f"{self.name}:{line}:{col}"

    def position(self, offset: int) -> str:
        return self._position(self.text, offset)

    def where(self, loc: Any) -> str:
        """``file:line:col`` of an MLIR location (its first file location)."""
        line, col = _line_col(loc)
        return f"{self.name}:{line}:{col}" if line else self.name

    def _line(self, line: int) -> str:
        if self._lines is None:
            self._lines = self.text.split("\n")
        return self._lines[line - 1] if 0 < line <= len(self._lines) else ""

    def arg_name(self, loc: Any) -> str | None:
        """The name a function argument has in the file (``%adj``), from its location."""
        line, col = _line_col(loc)
        m = _SSA.match(self._line(line), max(col - 1, 0)) if line else None
        return m.group(1) if m else None

    def result_name(self, loc: Any) -> str | None:
        """The name an op's (first) result has in the file (``%w = arith.constant …``)."""
        line, col = _line_col(loc)
        m = _RESULTS.search(self._line(line)[:max(col - 1, 0)]) if line else None
        name = m.group(1)[1:] if m else ""
        return None if name.isdigit() or not name else name  # %3: the op names it


def _line_col(loc: Any) -> tuple[int, int]:
    """Line and column of a location; fused and call-site locations give their first."""
    line = getattr(loc, "start_line", None)
    if line is not None:
        return int(line), int(loc.start_col)
    m = re.search(r'":(\d+):(\d+)', str(loc))
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


# -- tensor types --------------------------------------------------------------------------
@dataclass(frozen=True)
class TensorType:
    shape: tuple[int, ...]
    element: str
    format: str  # samfuse format spec


def tensor_type(ir: Any, st: Any, t: Any, fail: Any) -> TensorType:
    """Shape, element type and samfuse format of a ranked tensor type; dynamic or huge
    shapes and unsupported encodings are errors (``fail(message)`` builds them)."""
    if not isinstance(t, ir.RankedTensorType):
        raise fail(f"type {t} is not a ranked tensor")
    rt = ir.RankedTensorType(t)
    if not rt.has_static_shape:
        raise fail(f"type {t} has a dynamic dimension; only static shapes are supported")
    shape = tuple(int(d) for d in rt.shape)
    if len(shape) > MAX_RANK:
        raise fail(f"type {str(t)[:80]} has {len(shape)} dims; up to {MAX_RANK} are supported")
    if any(d >= 1 << 31 for d in shape) or math.prod(shape) > MAX_ELEMENTS:
        raise fail(f"type {t}: {math.prod(shape)} elements; tensors up to {MAX_ELEMENTS} "
                   "elements are accepted (refused before allocation)")
    fmt = level_format(st, rt.encoding, len(shape), fail) if rt.encoding is not None \
        else "dense"
    return TensorType(shape, str(rt.element_type), fmt)


def level_format(st: Any, encoding: Any, rank: int, fail: Any) -> str:
    """``#sparse_tensor.encoding`` → samfuse format spec.

    dense → ``d``; compressed and loose_compressed → ``c`` (same coordinates, padding
    apart); a COO tail — compressed(nonunique) followed by singletons — → all ``c``
    (samfuse's ``coo``); the dimension-to-level map must be a permutation (it becomes
    the mode order). Everything else is an error naming the level type.
    """
    enc = st.EncodingAttr(encoding)
    fmt_of = {int(f): f.name for f in st.LevelFormat}
    letters = []
    for n, (lt, base) in enumerate(zip(enc.lvl_types, enc.lvl_formats_enum, strict=True)):
        name = fmt_of.get(int(base), str(base))
        props = [p.name for p in st.LevelProperty if int(lt) & p.value]
        shown = f"{name}({','.join(props)})" if props else name
        if "non_ordered" in props or "soa" in props:
            raise fail(f"level {n} is {shown}: unordered or SoA levels are not supported "
                       "(samfuse streams ordered coordinates)")
        if name == "dense":
            letters.append("d")
        elif name in ("compressed", "loose_compressed"):
            letters.append("c")
        elif name == "singleton" and n > 0 and letters[-1] == "c":
            letters.append("c")  # the tail of a COO: every level compressed
        else:
            raise fail(f"level {n} is {shown}: not supported; samfuse maps dense, "
                       "compressed, loose_compressed and COO (compressed(nonunique) + "
                       "singleton) levels")
    dim_to_lvl = enc.dim_to_lvl
    if len(letters) != rank or (dim_to_lvl is not None and not dim_to_lvl.is_permutation):
        raise fail(f"encoding map {dim_to_lvl} is not a permutation of the {rank} "
                   "dimensions (block encodings are not supported)")
    order = [r.position for r in dim_to_lvl.results] if dim_to_lvl is not None else \
        list(range(rank))
    spec = "".join(letters)
    return spec if order == list(range(rank)) else f"{spec}:{','.join(map(str, order))}"


# -- constants -----------------------------------------------------------------------------
#: numpy types of the element types a blob may hold
_DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16,
           "i1": np.int8, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64}


def constant_value(ir: Any, attr: Any, tt: TensorType, blobs: dict[str, bytes],
                   fail: Any) -> np.ndarray | None:
    """A constant's values (float32, dense), or None when they are elided."""
    shape = tt.shape
    if isinstance(attr, ir.DenseElementsAttr):
        dense = ir.DenseElementsAttr(attr)
        if dense.is_splat:
            return np.full(shape, float(dense.get_splat_value().value), np.float32)
        return _dense_values(ir, attr, shape, tt.element)
    text = str(attr)
    if text.startswith("dense_resource<"):
        key = text[len("dense_resource<"):text.index(">")]
        if key == "__elided__" or key not in blobs:
            return None
        if tt.element not in _DTYPES:
            raise fail(f"resource {key!r}: element type {tt.element} cannot be read")
        dtype = np.dtype(_DTYPES[tt.element])
        blob = memoryview(blobs[key])[4:]  # a little-endian alignment word, then the data
        if len(blob) != math.prod(shape) * dtype.itemsize:
            raise fail(f"resource {key!r} holds {len(blob)} bytes; {tt.element} "
                       f"tensor{list(shape)} needs {math.prod(shape) * dtype.itemsize}")
        if tt.element == "bf16":
            return _bf16(blob).reshape(shape)
        return np.frombuffer(blob, dtype=dtype).astype(np.float32).reshape(shape)
    if text.startswith("sparse<"):
        return _sparse_constant(ir, text, tt, fail)
    raise fail(f"constant {text[:60]!r} is not dense, sparse or dense_resource")


def _dense_values(ir: Any, attr: Any, shape: tuple[int, ...], element: str) -> np.ndarray:
    """A non-splat dense attribute's values as float32. The bindings hand out every
    element type but bf16 as a buffer; bf16 is read from its printed form: hex (16-bit
    patterns, the upper halves of float32s) or a literal that MLIR re-reads as f32."""
    if element != "bf16":
        return np.asarray(ir.DenseElementsAttr(attr)).astype(np.float32).reshape(shape)
    text = str(attr)
    body = text[len("dense<"):text.rindex(">", 0, text.rindex(":"))]
    if body.startswith('"0x'):
        return _bf16(bytes.fromhex(body[3:-1])).reshape(shape)
    dims = "".join(f"{d}x" for d in shape)
    f32 = ir.DenseElementsAttr(ir.Attribute.parse(f"dense<{body}> : tensor<{dims}f32>"))
    return np.asarray(f32, np.float32).reshape(shape)


def _bf16(data: bytes | memoryview) -> np.ndarray:
    """Little-endian bf16 values as float32 (bf16 is the upper half of a float32)."""
    return (np.frombuffer(data, "<u2").astype(np.uint32) << 16).view(np.float32)


def _sparse_constant(ir: Any, text: str, tt: TensorType, fail: Any) -> np.ndarray:
    """``sparse<indices, values> : type``, as dense float32. The bindings have no
    SparseElementsAttr accessor, so the two halves of the printed attribute are re-read by
    MLIR's own parser as dense attributes of a known shape: ``nnz x rank`` indices (i64)
    and ``nnz`` values of the constant's element type (a splat, or hex above 100 values,
    as MLIR prints them)."""
    shape = tt.shape
    halves = _top_level_split(text[len("sparse<"):])
    out = np.zeros(shape, np.float32)
    if halves is None:  # ``sparse<>``: no entries
        return out
    idx_text, val_text = halves
    if idx_text.startswith("["):  # [[i, j], ...]: one bracket per entry, one outside
        nnz = idx_text.count("[") - 1
    elif val_text.startswith("["):
        nnz = val_text.count(",") + 1
    elif val_text.startswith('"0x'):
        nnz = (len(val_text) - 4) // (2 * np.dtype(_DTYPES.get(tt.element, np.float32))
                                      .itemsize)
    else:  # one index and one value, both splats: every entry is the same one
        nnz = 1
    try:
        idx = np.asarray(ir.DenseElementsAttr(ir.Attribute.parse(
            f"dense<{idx_text}> : tensor<{nnz}x{len(shape)}xi64>")), np.int64)
        vals = _dense_values(ir, ir.Attribute.parse(
            f"dense<{val_text}> : tensor<{nnz}x{tt.element}>"), (nnz,), tt.element)
    except Exception as exc:  # noqa: BLE001 - MLIRError: the halves do not fit nnz
        raise fail(f"sparse constant cannot be read: {str(exc).splitlines()[-1].strip()}") \
            from None
    idx = idx.reshape(nnz, len(shape))
    if nnz and ((idx < 0).any() or (idx >= np.array(shape)).any()):
        raise fail("sparse constant has an index outside its shape")
    out[tuple(idx.T)] = vals.ravel()
    return out


def _top_level_split(body: str) -> tuple[str, str] | None:
    """``indices, values>…`` → the two halves (None for an empty ``>``): the comma and the
    closing bracket at nesting depth 0 (hex values are quoted, without brackets)."""
    depth, cut = 0, -1
    for n, ch in enumerate(body):
        if ch in "[(<":
            depth += 1
        elif ch in "])>":
            if depth == 0:
                return None if cut < 0 else (body[:cut].strip(), body[cut + 1:n].strip())
            depth -= 1
        elif ch == "," and depth == 0 and cut < 0:
            cut = n
    return None


def generate(shape: tuple[int, ...], fmt: str, seed: int, density: float,
             mask: bool = False) -> Any:
    """Values for an elided constant or an input that was not given: uniform in [-1, 1),
    and for a format with a compressed level a random pattern at ``density``. A ``mask``
    (an integer tensor: 0/1) is that pattern alone, with one entry in every row at least,
    so that a masked softmax has no empty row (0/0)."""
    rng = np.random.default_rng(seed)
    if mask:
        pattern = rng.random(shape) < density
        if len(shape) >= 2 and shape[-1] > 0:
            rows = np.arange(shape[-2])
            pattern[..., rows, rows % shape[-1]] = True
        return pattern.astype(np.float32)
    values = rng.uniform(-1.0, 1.0, shape).astype(np.float32)
    if not Format.parse(fmt, len(shape)).all_dense and density < 1:
        values *= rng.random(shape) < density
    return values
