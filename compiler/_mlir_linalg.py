"""One linalg op (``linalg.generic`` or a named op) → one statement, a view or a fill.

Every structured op is read the same way, through ``linalg.get_indexing_maps`` and the
op's region (named ops carry theirs too): loops that no output map uses are reductions;
the yielded value of each used result is written as an expression over the inputs'
accesses; a reduction's combining op (``addf``, ``maximumf``/``maxnumf`` or the
``cmpf``+``select`` form of max) with the output's block argument gives ``sum`` or
``max``, and the init tensor (a fill or a tensor) what it starts from.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ._mlir_frontend import (
    _ATOM,
    _LETTERS,
    _PROD,
    _SUM,
    _Complement,
    _Empty,
    _Fill,
    _Text,
    _View,
)

if TYPE_CHECKING:
    from ._mlir_frontend import _Translator

__all__ = ["translate_linalg"]

#: the most ops a linalg body may have (one statement's expression)
MAX_BODY_OPS = 256
#: arith.cmpf predicates (arith::CmpFPredicate): true when lhs > rhs, or lhs < rhs
_GREATER = {2, 3, 9, 10}  # ogt oge ugt uge
_LESS = {4, 5, 11, 12}  # olt ole ult ule
_FUNCTIONS = {"math.exp": "exp", "math.rsqrt": "rsqrt"}
_BINARY = {"arith.addf": "+", "arith.subf": "-", "arith.mulf": "*", "arith.divf": "/"}
#: value conversions: the program computes every float in float32, masks as 0/1
_CASTS = ("arith.extf", "arith.truncf", "arith.sitofp", "arith.uitofp")


def translate_linalg(tr: _Translator, op: Any, maps: list[Any]) -> None:
    """Translate ``op``; each used result gets a value in ``tr.values``."""
    _Op(tr, op, maps).run()


class _Op:
    def __init__(self, tr: _Translator, op: Any, maps: list[Any]):
        self.tr, self.op, self.maps = tr, op, maps
        self.n_out = len(op.results)
        self.n_in = len(op.operands) - self.n_out
        if len(maps) != len(op.operands) or not op.regions or not op.regions[0].blocks:
            raise tr.fail("expected one indexing map per operand and a body region")
        self.block = op.regions[0].blocks[0]
        ops = list(self.block.operations)
        if len(ops) > MAX_BODY_OPS:  # the expression is built recursively
            raise tr.fail(f"the body has {len(ops)} ops; up to {MAX_BODY_OPS} are translated")
        self.body = {r for o in ops for r in o.results}
        self.n_loops = maps[0].n_dims
        if self.n_loops > len(_LETTERS) // 2:  # each loop, and each stored size-1 mode
            raise tr.fail(f"{self.n_loops} loops; up to {len(_LETTERS) // 2} are supported")
        out_dims = {e.position for m in maps[self.n_in:] for e in m.results
                    if _is_dim(tr.ir, e)}
        self.reduced = [d for d in range(self.n_loops) if d not in out_dims]

    def run(self) -> None:
        yields = list(self.block.operations)[-1]
        for r, result in enumerate(self.op.results):
            if not list(result.uses):
                continue  # e.g. argmax indices next to a max: never read
            self.tr.values[result] = self.result(r, yields.operands[r])

    # -- one result ------------------------------------------------------------------------
    def result(self, r: int, y: Any) -> Any:
        tr = self.tr
        for special in (self.fill, self.mask):
            value = special(y)
            if value is not None:
                return value
        view = self.view(r, y)
        if view is not None:
            return view
        tt = tr.type_of(self.op.results[r].type)
        out_map = self.maps[self.n_in + r]
        order = [e.position for e in out_map.results if _is_dim(tr.ir, e)]
        order += [d for d in range(self.n_loops) if d not in order]
        self.letters = {d: _LETTERS[n] for n, d in enumerate(order)}
        self.spare = iter(_LETTERS[len(order):])
        lhs, shape, modes = [], [], []
        for d, e in zip(tt.shape, out_map.results, strict=True):
            if d == 1:
                modes.append(None)
                continue
            if not _is_dim(tr.ir, e):
                raise tr.fail(f"output indexing map {out_map}: {e} is not a loop index")
            modes.append(len(lhs))
            lhs.append(self.letters[e.position])
            shape.append(d)
        self.memo: dict[Any, _Text] = {}
        self.patterns: dict[str, _View] = {}  # masked operands read: tensor -> pattern
        self.masked_fill = self.select_masked(y)
        rhs = _Text(self.reduction(r, y), _SUM) if self.reduced else \
            self.masked_fill or self.expr(y)
        fmt = tt.format if len(shape) == len(tt.shape) else "dense"
        masked_by = self.masked_result(y, out_map)
        if masked_by is not None:  # P · (…): exactly 0 where the -inf entries were
            pattern, ptext = masked_by
            rhs = _Text(f"{ptext} * {rhs.at(_PROD)}", _PROD)
            fmt = tr.tensors[pattern.tensor].format if len(shape) == len(tt.shape) else fmt
        hint = tr.src.result_name(self.op.location) or (
            "masked_fill" if self.masked_fill else self.hint(y))
        name = tr.emit(hint, lhs, shape, rhs.text, fmt)
        if self.masked_fill_pattern is not None:
            tr.masked[name] = self.masked_fill_pattern
        elif masked_by is not None and not (_is_result(y) and y.owner.name == "math.exp"):
            tr.masked[name] = masked_by[0]
        return _View(name, tuple(modes))

    # -- masks: masked_fill(~P, -inf) before a softmax, as the torch frontend reads it --------
    def mask(self, y: Any) -> Any:
        """``cmpi ne x, 0`` of a 0/1 tensor is that tensor; ``xori m, true`` complements."""
        if not _is_result(y) or y.owner.name not in ("arith.cmpi", "arith.xori"):
            return None
        a, b = y.owner.operands
        src = self.input_value(a)
        const = self.scalar(b)
        if y.owner.name == "arith.cmpi":
            pred = int(self.tr.ir.IntegerAttr(y.owner.attributes["predicate"]).value)
            if pred == 1 and const == 0 and isinstance(src, _View):  # ne
                return src
        elif const == 1 and isinstance(src, (_View, _Complement)):
            return src.pattern if isinstance(src, _Complement) else _Complement(src)
        raise self.body_fail(y.owner, "only 'cmpi ne, mask, 0' and 'xori mask, true' of a "
                             "0/1 mask are supported on integer tensors")

    def input_value(self, v: Any) -> Any:
        """What an input block argument reads (its operand's value), else None."""
        if _is_arg(v) and v.owner == self.block and v.arg_number < self.n_in:
            return self.tr.values.get(self.op.operands[v.arg_number])
        return None

    def select_masked(self, y: Any) -> _Text | None:
        """``select(~P, -inf, X)`` → ``X·P`` (-inf off P: recorded as masked by P);
        ``select(~P, 0, X)`` → ``X·P``."""
        self.masked_fill_pattern = None
        if not _is_result(y) or y.owner.name != "arith.select":
            return None
        cond, a, b = y.owner.operands
        comp = self.input_value(cond)
        if not isinstance(comp, _Complement):
            if isinstance(comp, _View):
                raise self.body_fail(y.owner, "select on a mask: only masked_fill of its "
                                     "complement (xori mask, true) is supported")
            return None
        fill = self.scalar(a)
        if fill not in (0.0, -math.inf):
            raise self.body_fail(y.owner, f"masked_fill value {fill!r}: only -inf (before "
                                 "a softmax) and 0 are supported")
        pattern = comp.pattern
        amap = self.maps[cond.arg_number]
        ptext = self.operand(pattern, amap)
        if fill == -math.inf:
            self.masked_fill_pattern = _View(pattern.tensor, pattern.modes)
        return _Text(f"{self.expr(b).at(_PROD)} * {ptext.text}", _PROD)

    def masked_result(self, y: Any, out_map: Any) -> tuple[_View, str] | None:
        """The pattern of the masked tensors this elementwise result reads, if any: the
        result is multiplied by it (and stays masked unless the op is exp)."""
        if not self.patterns:
            return None
        if self.reduced:  # max over the stored x·P is the torch frontend's row maximum
            if self.max_operands(y) is None:
                raise self.tr.fail("a masked_fill(~mask, -inf) result can only feed max, "
                                   "+, - and exp (a softmax)")
            return None
        pattern = next(iter(self.patterns.values()))
        return pattern, self.operand(pattern, out_map).text

    def hint(self, y: Any) -> str:
        """A result's name when the file has none: the op's (``matmul``), a generic's
        combining or outermost body op (``sum``, ``exp``, ``add``)."""
        name = self.op.name.split(".", 1)[1]
        if name != "generic":
            return name
        if self.reduced:
            return "max" if self.max_operands(y) else "sum"
        if self.relu_of(y) is not None:
            return "relu"
        owner = y.owner.name if _is_result(y) else "copy"
        return owner.split(".", 1)[-1].removesuffix("f")

    def fill(self, y: Any) -> _Fill | None:
        """``linalg.fill`` (or a generic yielding a scalar input): an init or a constant."""
        if not _is_arg(y) or y.owner != self.block or y.arg_number >= self.n_in:
            return None
        v = self.op.operands[y.arg_number]
        if isinstance(v.type, self.tr.ir.ShapedType):
            return None
        value = self.tr.value(v)
        if not isinstance(value, float):
            raise self.tr.fail(f"fill value {v.get_name()} is not a constant")
        return _Fill(value)

    def view(self, r: int, y: Any) -> _View | None:
        """A pure permutation of one input (``linalg.transpose``, a copy, a float cast): a
        renaming, whatever the result's encoding (the compiler picks how to traverse the
        source)."""
        while _is_result(y) and y in self.body and y.owner.name in _CASTS:
            y = y.owner.operands[0]
        if self.reduced or not _is_arg(y) or y.owner != self.block or \
                y.arg_number >= self.n_in:
            return None
        src = self.tr.value(self.op.operands[y.arg_number])
        in_map, out_map = self.maps[y.arg_number], self.maps[self.n_in + r]
        if not isinstance(src, _View) or not (in_map.is_permutation and
                                              out_map.is_permutation):
            return None
        pos = [e.position for e in in_map.results]
        modes = tuple(src.modes[pos.index(e.position)] for e in out_map.results)
        return _View(src.tensor, modes)

    # -- reductions ------------------------------------------------------------------------
    def reduction(self, r: int, y: Any) -> str:
        tr = self.tr
        out_arg = self.block.arguments[self.n_in + r]
        pair = self.max_operands(y)
        if _is_result(y) and y.owner.name == "arith.addf":
            kind, pair = "sum", list(y.owner.operands)
        elif pair is not None:
            kind = "max"
        else:
            what = y.owner.name if _is_result(y) else "a block argument"
            raise tr.fail(f"reduction combines with {what}; supported: arith.addf (sum), "
                          "arith.maximumf/maxnumf or cmpf+select (max)")
        if out_arg not in pair or pair[0] == pair[1]:
            raise tr.fail(f"the {kind} reduction does not combine the output with one value")
        g = pair[1] if pair[0] == out_arg else pair[0]
        if self.uses(g, out_arg):
            raise tr.fail("the reduced value reads the output accumulator")
        red = ",".join(self.letters[d] for d in self.reduced)
        text = f"{kind}({red}) {self.expr(g).at(_PROD)}"
        init = tr.value(self.op.operands[self.n_in + r])
        if isinstance(init, _Empty):
            raise tr.fail("the reduction's init is an uninitialised tensor.empty; fill it "
                          "(linalg.fill) first")
        if kind == "max":
            if isinstance(init, _Fill) and init.value == -math.inf:
                return text
            if isinstance(init, _Fill) and init.value == 0:
                return f"relu({text})"
            raise tr.fail("a max reduction must start from a fill of -inf (or 0: relu)")
        if isinstance(init, _Fill):
            return text if init.value == 0 else f"{_const(init.value).text} + {text}"
        return f"{self.operand(init, self.maps[self.n_in + r]).text} + {text}"

    def uses(self, v: Any, target: Any) -> bool:
        if v == target:
            return True
        return _is_result(v) and v in self.body and any(
            self.uses(x, target) for x in v.owner.operands)

    def max_operands(self, y: Any) -> list[Any] | None:
        """The two values ``y`` is the maximum of, if it is one."""
        if not _is_result(y):
            return None
        o = y.owner
        if o.name in ("arith.maximumf", "arith.maxnumf"):
            return list(o.operands)
        if o.name != "arith.select":
            return None
        cond, a, b = o.operands
        if not _is_result(cond) or cond.owner.name != "arith.cmpf":
            return None
        pred = int(self.tr.ir.IntegerAttr(cond.owner.attributes["predicate"]).value)
        p, q = cond.owner.operands
        if {a, b} != {p, q} or a == b:
            return None
        greater = pred in _GREATER
        if not greater and pred not in _LESS:
            return None
        return [a, b] if (a == p) == greater else None

    def relu_of(self, y: Any) -> Any | None:
        pair = self.max_operands(y)
        if pair is None:
            return None
        for x, z in (pair, pair[::-1]):
            if self.scalar(z) == 0:
                return x
        return None

    # -- expressions ------------------------------------------------------------------------
    def scalar(self, v: Any) -> float | None:
        ir = self.tr.ir
        if _is_result(v) and v in self.body:
            o = v.owner
            if o.name in _CASTS:
                return self.scalar(o.operands[0])
            if o.name == "arith.constant":
                attr = o.attributes["value"]
                if isinstance(attr, ir.FloatAttr | ir.IntegerAttr | ir.BoolAttr):
                    return float(attr.value)
            return None
        if _is_arg(v) and v.owner == self.block:
            if v.arg_number < self.n_in:
                value = self.tr.values.get(self.op.operands[v.arg_number])
                return value.value if isinstance(value, _Fill) else \
                    value if isinstance(value, float) else None
            return None
        value = self.tr.values.get(v)
        return value if isinstance(value, float) else None

    def expr(self, v: Any) -> _Text:
        if v not in self.memo:
            self.memo[v] = self.build(v)
        return self.memo[v]

    def build(self, v: Any) -> _Text:
        tr = self.tr
        c = self.scalar(v)
        if c is not None:
            return _const(c)
        if _is_arg(v) and v.owner == self.block:
            n = v.arg_number
            # ins, then outs (an output read by a parallel op is its init's values)
            return self.operand(tr.value(self.op.operands[n]), self.maps[n])
        if not (_is_result(v) and v in self.body):
            raise tr.fail(f"the body reads {v.get_name()}, which is neither a block "
                          "argument nor a float constant")
        o = v.owner
        name = o.name
        if name in _BINARY:
            a, b = (self.expr(x) for x in o.operands)
            sym = _BINARY[name]
            if sym == "+":
                return _Text(f"{a.at(_SUM)} + {b.at(_SUM)}", _SUM)
            if sym == "-":
                return _Text(f"{a.at(_SUM)} - {b.at(_PROD)}", _SUM)
            if sym == "*":
                return _Text(f"{a.at(_PROD)} * {b.at(_PROD)}", _PROD)
            return _Text(f"{a.at(_PROD)} / {b.at(_ATOM)}", _PROD)
        if name in _CASTS:
            return self.expr(o.operands[0])
        if name == "arith.negf":
            return _Text(f"-{self.expr(o.operands[0]).at(_ATOM)}", _PROD)
        if name in _FUNCTIONS:
            return _Text(f"{_FUNCTIONS[name]}({self.expr(o.operands[0]).text})", _ATOM)
        if name == "math.sqrt":
            return _Text(f"1 / rsqrt({self.expr(o.operands[0]).text})", _PROD)
        x = self.relu_of(v)
        if x is not None:
            return _Text(f"relu({self.expr(x).text})", _ATOM)
        if self.max_operands(v) is not None:
            raise self.body_fail(o, "the maximum of two values other than 0 (relu) is not "
                                 "supported")
        raise self.body_fail(o, "not supported in a linalg body; supported: arith.addf/"
                             "subf/mulf/divf/negf, math.exp/rsqrt/sqrt, max with 0 "
                             "(arith.maximumf/maxnumf or cmpf+select: relu)")

    def body_fail(self, o: Any, message: str) -> Exception:
        return self.tr.fail(message, o.operation)

    def operand(self, value: Any, amap: Any) -> _Text:
        """An operand of the op read through its indexing map."""
        tr = self.tr
        if isinstance(value, (float, _Fill)):
            return _const(value if isinstance(value, float) else value.value)
        if isinstance(value, _Empty):
            raise tr.fail("the body reads an uninitialised tensor.empty")
        if isinstance(value, _Complement):
            raise tr.fail("a complemented mask (xori mask, true) can only be the condition "
                          "of a select (masked_fill)")
        if value.tensor in tr.masked:
            self.patterns[value.tensor] = tr.masked[value.tensor]
        idx = []
        for d, (m, e) in enumerate(zip(value.modes, amap.results, strict=True)):
            if m is None:
                idx.append("")
            elif _is_dim(tr.ir, e):
                idx.append(self.letters[e.position])
            elif _is_zero(tr.ir, e) and tr.tensors[value.tensor].shape[m] == 1:
                idx.append(next(self.spare))  # a stored size-1 mode: summed over 1 entry
            else:
                raise tr.fail(f"indexing map {amap}: result {d} ({e}) is not supported; "
                              "loop indices, and 0 on size-1 dims, are")
        return tr.access(value, idx)


def _const(value: float) -> _Text:
    from ._mlir_frontend import _const as const

    return const(value)


def _is_dim(ir: Any, e: Any) -> bool:
    return isinstance(e, ir.AffineDimExpr)


def _is_zero(ir: Any, e: Any) -> bool:
    return isinstance(e, ir.AffineConstantExpr) and e.value == 0


def _is_arg(v: Any) -> bool:
    return type(v).__name__ == "BlockArgument"


def _is_result(v: Any) -> bool:
    return type(v).__name__ == "OpResult"
