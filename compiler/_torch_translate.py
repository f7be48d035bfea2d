"""The torch frontend's translator: one walk over an exported ATen graph.

Takes a ``torch.export.ExportedProgram`` and the requested formats; writes each op as
one or more statements in samfuse's index notation through the op table
(:data:`_HANDLERS`; ``docs/frontend.md`` lists it) and produces the program's tensor
declarations, statements, inputs, weights and outputs.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import torch

from ir import Format, FormatError, Statement, TensorDecl

from ._ast import accesses
from ._normalize import normalize
from ._parse import RESERVED, parse
from ._torch_values import (
    LAYOUT_FORMATS,
    LETTERS,
    Complement,
    FrontendError,
    Masked,
    Unsupported,
    View,
    const_text,
    node_scope,
    node_source,
    norm_dim,
)

__all__ = ["Translator"]


# -- the translator ----------------------------------------------------------------------
class Translator:
    """One walk over an exported graph; ``self.node`` is the node being translated."""

    def __init__(self, ep: torch.export.ExportedProgram, formats: Mapping[str, str]):
        self.ep, self.formats = ep, dict(formats)
        self.tensors: dict[str, TensorDecl] = {}
        self.statements: list[Statement] = []
        self.inputs: list[str] = []
        self.weights: dict[str, str] = {}
        self.values: dict[str, Any] = {}
        self.node: torch.fx.Node | None = None

    # -- names, declarations, statements ---------------------------------------------
    def fresh(self, hint: str) -> str:
        base = re.sub(r"\W", "_", hint) or "t"
        base = f"_{base}" if base[0].isdigit() else base  # "0.weight" → "_0_weight"
        base = f"{base}_" if base in RESERVED else base  # "relu" → "relu_"
        name, n = base, 1
        while name in self.tensors:
            name, n = f"{base}_{n}", n + 1
        return name

    def declare(self, name: str, shape: Sequence[int], fmt: str, role: str) -> None:
        fmt = self.formats.get(name, fmt)
        try:
            Format.parse(fmt, len(shape))
        except FormatError as e:
            raise FrontendError(f"tensor {name!r}: format {fmt!r} is not valid for a "
                                f"{len(shape)}-mode tensor: {e}") from None
        self.tensors[name] = TensorDecl(name, tuple(shape), fmt, role)

    def emit(self, hint: str, lhs: Sequence[str], shape: Sequence[int], rhs: str,
             fmt: str = "dense") -> View:
        """Declare an intermediate ``hint(lhs) = rhs`` and return it as a view."""
        name = self.fresh(hint)
        self.declare(name, shape, fmt, "intermediate")
        target = f"{name}({','.join(lhs)})" if lhs else name
        text = f"{target} = {rhs}"
        assign = normalize(parse(text)).assignment  # our own text: checked as it is built
        reads = list(dict.fromkeys(a.tensor for a in accesses(assign.rhs)))
        node = self.node
        assert node is not None
        self.statements.append(Statement(name, text, tuple(reads), str(node.target),
                                         node_source(node), node_scope(node)))
        return View.of(name, shape)

    def fail(self, message: str) -> FrontendError:
        node = self.node
        op = str(node.target) if node is not None else ""
        return FrontendError(message, op, node_source(node) if node is not None else "")

    def node_format(self) -> str:
        val = self.node.meta.get("val") if self.node is not None else None
        layout = getattr(val, "layout", torch.strided)
        if layout not in LAYOUT_FORMATS:
            raise self.fail(f"tensor layout {layout} is not supported; use dense, COO, "
                            "CSR or CSC")
        return LAYOUT_FORMATS[layout]

    def out_shape(self) -> tuple[int, ...]:
        val = self.node.meta["val"] if self.node is not None else None
        return tuple(int(d) for d in val.shape)

    # -- walking the graph -------------------------------------------------------------
    def run(self) -> tuple[list[str], list[str]]:
        kinds = {s.arg.name: s for s in self.ep.graph_signature.input_specs}
        for node in self.ep.graph.nodes:
            self.node = node
            if node.op == "placeholder":
                self.placeholder(node, kinds[node.name])
            elif node.op == "call_function":
                args = [self.resolve(a) for a in node.args]
                kwargs = {k: self.resolve(v) for k, v in node.kwargs.items()}
                self.values[node.name] = self.call(node, args, kwargs)
            elif node.op == "output":
                return self.inputs, self.finish_outputs(node)
        raise AssertionError("exported graph without an output node")

    def resolve(self, a: Any) -> Any:
        if isinstance(a, torch.fx.Node):
            v = self.values[a.name]
            if isinstance(v, Unsupported):
                raise FrontendError(v.reason, v.op, v.source)
            return v
        if isinstance(a, (list, tuple)):
            return type(a)(self.resolve(x) for x in a)
        return a

    def placeholder(self, node: torch.fx.Node, spec: Any) -> None:
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            raise FrontendError(f"input {node.name!r} is {type(val).__name__}, not a tensor; "
                                "only tensor inputs are supported")
        kind = spec.kind.name
        fqn = spec.target
        name = self.fresh(node.name if kind == "USER_INPUT" else fqn.replace(".", "_"))
        role = "input" if kind == "USER_INPUT" else "weight"
        self.declare(name, val.shape, self.node_format(), role)
        self.inputs.append(name)
        if role == "weight":
            self.weights[name] = fqn
        self.values[node.name] = View.of(name, val.shape)

    def call(self, node: torch.fx.Node, args: list, kwargs: dict) -> Any:
        if node.target is operator.getitem:
            return args[0][args[1]]
        key = str(node.target).rsplit(".", 1)[0]
        handler = _HANDLERS.get(key)
        if handler is None:
            raise self.fail(f"{node.target} is not supported by the torch frontend; "
                            f"supported: {', '.join(sorted(_HANDLERS))} (docs/frontend.md)")
        for a in [*args, *kwargs.values()]:
            if isinstance(a, (Complement, Masked)) and key not in _MASK_OPS:
                what = ("a complemented mask" if isinstance(a, Complement)
                        else "a masked_fill(~mask, -inf) result")
                raise self.fail(f"{what} can only feed {', '.join(_MASK_OPS)}")
        try:
            return handler(self, *args, **kwargs)
        except FrontendError:
            raise
        except (ValueError, TypeError) as e:  # bad constants, unexpected arguments
            raise self.fail(f"{type(e).__name__}: {e}") from None

    def finish_outputs(self, node: torch.fx.Node) -> list[str]:
        outs = []
        specs = self.ep.graph_signature.output_specs
        for spec, arg in zip(specs, node.args[0], strict=True):
            v = self.resolve(arg)
            if not isinstance(v, View):
                raise self.fail(f"output {spec.arg.name!r} is not a tensor the program can "
                                f"return ({type(v).__name__.strip('_')})")
            direct = self.tensors[v.tensor].role == "intermediate" and self.is_whole(v)
            if not direct:  # an input, a view or a second return: copy it
                idx = list(LETTERS[:v.rank])
                v = self.emit(spec.arg.name, idx, v.shape, v.access(idx),
                              self.layout_of(v, v.rank))
            self.tensors[v.tensor] = replace(self.tensors[v.tensor], role="output")
            outs.append(v.tensor)
        return outs

    # -- helpers shared by ops ---------------------------------------------------------
    def is_whole(self, v: View) -> bool:
        """The view is its tensor itself (no renaming, no inserted dims)."""
        return v.modes == tuple(range(len(self.tensors[v.tensor].shape)))

    def layout_of(self, v: View, rank: int) -> str:
        """Format for a rank-``rank`` result stored like ``v``: its tensor's format if ``v``
        is the whole tensor of that rank, else dense (the lowering may choose better)."""
        same = self.is_whole(v) and v.rank == rank
        return self.tensors[v.tensor].format if same else "dense"

    def squeeze_mode(self, v: View, d: int) -> View:
        """Drop a stored size-1 mode by a statement; dim d becomes an inserted dim."""
        assert v.shape[d] == 1 and v.modes[d] is not None
        keep = [e for e in range(v.rank) if e != d]
        idx = list(LETTERS[:v.rank])
        lhs = [idx[e] for e in keep]
        new = self.emit(f"{v.tensor}_squeezed", lhs, [v.shape[e] for e in keep],
                        f"sum({idx[d]}) {v.access(idx)}")
        return new.insert(d)

    def fit(self, v: Any, out_shape: Sequence[int]) -> Any:
        """Make a (right-aligned) operand broadcastable: stored size-1 modes that meet a
        larger output dim become inserted dims."""
        if not isinstance(v, View):
            return v
        off = len(out_shape) - v.rank
        for d in range(v.rank):
            if v.shape[d] == 1 and out_shape[d + off] != 1 and v.modes[d] is not None:
                v = self.squeeze_mode(v, d)
        return v

    def operand(self, v: Any, idx: Sequence[str]) -> str:
        """Text of an elementwise operand against output indices ``idx`` (right-aligned)."""
        if isinstance(v, View):
            return v.access(list(idx[len(idx) - v.rank:]))
        if isinstance(v, (bool, int, float)):
            return const_text(v)
        raise self.fail(f"operand {v!r} is not a tensor or a number")

    def elementwise(self, hint: str, build: Callable[..., str], *operands: Any,
                    fmt: str | None = None) -> View:
        shape = self.out_shape()
        idx = list(LETTERS[:len(shape)])
        texts = [self.operand(self.fit(v, shape), idx) for v in operands]
        return self.emit(hint, idx, shape, build(*texts), fmt or self.node_format())

    def reduce(self, op: str, x: View, dims: Sequence[int] | None, keepdim: bool,
               scale_by_count: bool = False) -> View:
        dims = sorted({norm_dim(d, x.rank) for d in (range(x.rank) if not dims else dims)})
        stored = [d for d in dims if x.modes[d] is not None]
        keep = [d for d in range(x.rank) if d not in dims]
        idx = list(LETTERS[:x.rank])
        out = x
        if stored:
            body = x.access(idx)
            if scale_by_count:
                body += f" / {const_text(math.prod(x.shape[d] for d in dims))}"
            out = self.emit(self.node.name, [idx[d] for d in keep],
                            [x.shape[d] for d in keep],
                            f"{op}({','.join(idx[d] for d in stored)}) {body}")
            out = View(out.tensor, tuple(
                out.modes[keep.index(d)] if d in keep else None for d in range(x.rank)),
                tuple(1 if d in dims else x.shape[d] for d in range(x.rank)))
        for d in (reversed(dims) if not keepdim else ()):
            out = out.drop(d)
        return out

    def is_compressed(self, v: View, d: int) -> bool:
        mode = v.modes[d]
        if mode is None:
            return False
        decl = self.tensors[v.tensor]
        fmt = Format.parse(decl.format, len(decl.shape))
        return fmt.is_compressed(fmt.level_of_mode(mode))

    def contract(self, a: View, b: View, a_idx: list[str], b_idx: list[str],
                 out_idx: list[str], k: str, scale: float = 1.0, bias: Any = None,
                 beta: float = 1.0) -> View:
        shape = self.out_shape()
        prefix = "" if scale == 1 else f"{const_text(scale)} * "
        text = f"{prefix}sum({k}) {a.access(a_idx)} * {b.access(b_idx)}"
        if bias is not None:
            bias = self.fit(bias, shape)
            btext = self.operand(bias, out_idx)
            text += f" + {btext}" if beta == 1 else f" + {const_text(beta)} * {btext}"
        return self.emit(self.node.name, out_idx, shape, text, self.node_format())

    def linear(self, x: View, w: View, b: Any = None) -> View:
        """``x W^T + b`` over the last dim of x."""
        out = list(LETTERS[:x.rank])
        k = LETTERS[x.rank]
        return self.contract(x, w, [*out[:-1], k], [out[-1], k], out, k, bias=b)

    def matmul(self, a: View, b: View) -> View:
        """torch.matmul: vectors, matrices and broadcast batches of matrices."""
        shape = self.out_shape()
        out = list(LETTERS[:len(shape)])
        k = LETTERS[len(shape)]
        nb = len(shape) - (1 if a.rank == 1 or b.rank == 1 else 2)
        if a.rank == 1 and b.rank == 1:
            return self.contract(a, b, [k], [k], out, k)

        def batch(v: View) -> list[str]:
            return out[nb - (v.rank - 2):nb]

        # broadcast batch dims: fit each matrix against the output's batch shape
        a, b = (v if v.rank == 1 else self.fit(v, [*shape[:nb], *v.shape[-2:]])
                for v in (a, b))
        a_idx = [k] if a.rank == 1 else [*batch(a), out[nb], k]
        b_idx = [k] if b.rank == 1 else [*batch(b), k, out[-1]]
        return self.contract(a, b, a_idx, b_idx, out, k)

    def softmax(self, x: Any, dim: int) -> View:
        """Dense: max-shifted. Masked: over the mask's entries. Compressed dim: over the
        stored entries without the shift (torch.sparse.softmax)."""
        view = x.values if isinstance(x, Masked) else x
        d = norm_dim(dim, view.rank)
        idx = list(LETTERS[:view.rank])
        keep = [i for e, i in enumerate(idx) if e != d]
        rshape = [s for e, s in enumerate(view.shape) if e != d]
        name, k, xs = self.node.name, idx[d], view.access(idx)
        masked = isinstance(x, Masked)
        if masked or not self.is_compressed(view, d):
            m = self.emit(f"{name}_max", keep, rshape, f"max({k}) {xs}")
            body, fmt = f"exp({xs} - {m.access(keep)})", "dense"
            if masked:  # exactly zero off the pattern, stored like it
                # the SDDMM form P·exp(x·P − max): only the masked scores are read, so
                # an SDDMM producing them fuses with its mask (the shift meets P's
                # coordinates, where x·P may store nothing: the lowering's Joins.restricted)
                pat = self.fit(x.pattern, view.shape)
                body = f"{self.operand(pat, idx)} * {body}"
                fmt = self.layout_of(pat, view.rank)
        else:
            body, fmt = f"exp({xs})", self.layout_of(view, view.rank)
        e = self.emit(f"{name}_exp", idx, view.shape, body, fmt)
        s = self.emit(f"{name}_sum", keep, rshape, f"sum({k}) {e.access(idx)}")
        return self.emit(name, idx, view.shape, f"{e.access(idx)} / {s.access(keep)}",
                         self.node_format())

    def layer_norm(self, x: View, normalized_shape: Sequence[int], weight: Any = None,
                   bias: Any = None, eps: float = 1e-5, *_: Any) -> View:
        """mean, centred, variance, rsqrt(var + eps), then the affine map."""
        n = len(normalized_shape)
        idx = list(LETTERS[:x.rank])
        lead, red = idx[:x.rank - n], idx[x.rank - n:]
        lshape = list(x.shape[:x.rank - n])
        count = const_text(math.prod(normalized_shape))
        name, xs = self.node.name, x.access(idx)
        mu = self.emit(f"{name}_mean", lead, lshape, f"sum({','.join(red)}) {xs} / {count}")
        c = self.emit(f"{name}_centred", idx, x.shape, f"{xs} - {mu.access(lead)}")
        cs = c.access(idx)
        var = self.emit(f"{name}_var", lead, lshape,
                        f"sum({','.join(red)}) {cs} * {cs} / {count}")
        r = self.emit(f"{name}_rstd", lead, lshape,
                      f"rsqrt({var.access(lead)} + {const_text(eps)})")
        text = f"{cs} * {r.access(lead)}"
        if weight is not None:
            text += f" * {weight.access(red)}"
        if bias is not None:
            text += f" + {bias.access(red)}"
        return self.emit(name, idx, x.shape, text, self.node_format())

    def reshape(self, x: View, *_: Any) -> View:
        """Only adds or removes size-1 dims: anything else would merge or split indices."""
        new = self.out_shape()
        if [s for s in x.shape if s != 1] != [s for s in new if s != 1]:
            raise self.fail(f"reshape from {list(x.shape)} to {list(new)} merges or splits "
                            "dimensions; only adding or removing size-1 dims is supported")
        for d in reversed(range(x.rank)):
            if x.shape[d] == 1:
                x = (self.squeeze_mode(x, d) if x.modes[d] is not None else x).drop(d)
        for d, s in enumerate(new):
            if s == 1:
                x = x.insert(d)
        return x

    def squeeze(self, x: View, dims: Any = None) -> View:
        if dims is None:
            dims = range(x.rank)
        dims = [dims] if isinstance(dims, int) else dims
        for d in sorted((norm_dim(d, x.rank) for d in dims), reverse=True):
            if x.shape[d] == 1:
                x = (self.squeeze_mode(x, d) if x.modes[d] is not None else x).drop(d)
        return x

    def masked_fill(self, x: View, mask: Any, value: Any) -> Any:
        if not isinstance(mask, Complement):
            raise self.fail("masked_fill needs the complement of a pattern as its mask "
                            "(masked_fill(~mask, v) or masked_fill(mask == 0, v))")
        if not isinstance(value, (int, float)):
            raise self.fail("masked_fill with a tensor value is not supported")
        value = float(value)
        if value not in (0, -math.inf):
            raise self.fail(f"masked_fill value {value!r}: only -inf (before softmax) and 0 "
                            "are supported")
        # x·P; after -inf only P's entries matter, so it is stored like P
        fmt = self.layout_of(mask.pattern, x.rank) if value == -math.inf else None
        z = self.elementwise(self.node.name, lambda a, b: f"{a} * {b}", x, mask.pattern,
                             fmt=fmt)
        return z if value == 0 else Masked(z, mask.pattern, x)

    def complement(self, x: Any, other: Any = None) -> Complement | View:
        if isinstance(x, Complement):
            return x.pattern
        if other not in (None, 0, False):
            raise self.fail(f"comparison with {other!r}: only mask == 0 is supported")
        return Complement(x)

    def lifted_constant(self, *_: Any) -> Any:
        raise self.fail("a tensor created inside forward (torch.tensor(...)) is not "
                        "supported; register it as a buffer of the module")

    def dropout(self, x: View, p: float, train: bool | None) -> View:
        if train and p:
            raise self.fail("dropout in training mode; call module.eval() before export")
        return x


def _binary(op: str, swap: bool = False) -> Callable[..., View]:
    """``a op b`` (``b op a`` for rsub); ``alpha`` scales the second operand as in torch."""

    def handler(t: Translator, a: Any, b: Any, alpha: Any = 1, rounding_mode: Any = None
                ) -> View:
        if rounding_mode is not None:
            raise t.fail(f"division with rounding_mode={rounding_mode!r} is not supported")
        scale = "" if alpha == 1 else f"{const_text(alpha)} * "
        operands = (b, a) if swap else (a, b)
        return t.elementwise(t.node.name, lambda x, y: f"{x} {op} {scale}{y}", *operands)
    return handler


def _unary(template: str) -> Callable[..., View]:
    return lambda t, x: t.elementwise(t.node.name, lambda a: template.format(a), x)


def _max(t: Translator, x: View, dim: Any = None, keepdim: bool = False) -> Any:
    """``max(x)`` (a value) or ``max(x, dim)`` (values, indices); not ``max(x, y)``."""
    if dim is None:
        return t.reduce("max", x, None, False)
    if not isinstance(dim, int):
        raise t.fail("elementwise max of two tensors is not supported")
    values = t.reduce("max", x, [dim], keepdim)
    return values, Unsupported("the indices of max(dim) (argmax) are not supported",
                               str(t.node.target), node_source(t.node))


_HANDLERS: dict[str, Callable[..., Any]] = {
    "aten.mm": lambda t, a, b: t.matmul(a, b),
    "aten._sparse_mm": lambda t, a, b, *_: t.matmul(a, b),
    "aten.bmm": lambda t, a, b: t.matmul(a, b),
    "aten.matmul": lambda t, a, b: t.matmul(a, b),
    "aten.linear": Translator.linear,
    "aten.addmm": lambda t, c, a, b, beta=1, alpha=1: t.contract(
        a, b, ["i", "k"], ["k", "j"], ["i", "j"], "k", alpha, c, beta),
    "aten.add": _binary("+"),
    "aten.sub": _binary("-"),
    "aten.rsub": _binary("-", swap=True),
    "aten.mul": _binary("*"),
    "aten.div": _binary("/"),
    "aten.neg": _unary("-{}"),
    "aten.relu": _unary("relu({})"),
    "aten.exp": _unary("exp({})"),
    "aten.rsqrt": _unary("rsqrt({})"),
    "aten.amax": lambda t, x, dim=(), keepdim=False: t.reduce("max", x, dim, keepdim),
    "aten.max": _max,
    "aten.sum": lambda t, x, dim=None, keepdim=False, dtype=None: t.reduce(
        "sum", x, dim, keepdim),
    "aten.mean": lambda t, x, dim=None, keepdim=False, dtype=None: t.reduce(
        "sum", x, dim, keepdim, scale_by_count=True),
    "aten.softmax": lambda t, x, dim, *_: t.softmax(x, dim),
    "aten._softmax": lambda t, x, dim, *_: t.softmax(x, dim),
    "aten._sparse_softmax": lambda t, x, dim, *_: t.softmax(x, dim),
    "aten.layer_norm": Translator.layer_norm,
    "aten.masked_fill": Translator.masked_fill,
    "aten.bitwise_not": Translator.complement,
    "aten.logical_not": Translator.complement,
    "aten.eq": Translator.complement,
    "aten.t": lambda t, x: x.permute(list(reversed(range(x.rank)))),
    "aten.numpy_T": lambda t, x: x.permute(list(reversed(range(x.rank)))),
    "aten.transpose": lambda t, x, d0, d1: x.permute(
        _swap(list(range(x.rank)), norm_dim(d0, x.rank), norm_dim(d1, x.rank))),
    "aten.permute": lambda t, x, dims: x.permute([norm_dim(d, x.rank) for d in dims]),
    "aten.unsqueeze": lambda t, x, d: x.insert(norm_dim(d, x.rank + 1)),
    "aten.squeeze": Translator.squeeze,
    "aten.view": Translator.reshape,
    "aten.reshape": Translator.reshape,
    "aten._unsafe_view": Translator.reshape,
    "aten.flatten": Translator.reshape,
    "aten.clone": lambda t, x, **_: x,
    "aten.contiguous": lambda t, x, **_: x,
    "aten.alias": lambda t, x: x,
    "aten.detach": lambda t, x: x,
    "aten.dropout": Translator.dropout,
    "aten.lift_fresh_copy": Translator.lifted_constant,
}
#: ops that accept a complemented mask or a masked_fill result
_MASK_OPS = ("aten.masked_fill", "aten.softmax", "aten._softmax", "aten.bitwise_not",
             "aten.logical_not", "aten.eq")


def _swap(perm: list[int], a: int, b: int) -> list[int]:
    perm[a], perm[b] = perm[b], perm[a]
    return perm
