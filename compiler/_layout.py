"""Tensor layouts for one dataflow order: formats, index sizes and transposes.

SAM scanners walk a tensor's storage levels from the top, so an operand can only be
co-iterated in a dataflow order that visits its indices in its storage (mode) order —
the order is *concordant* with the operand. For a discordant operand the compiler binds
the tensor in a permuted format instead (same level types, new mode order): the graph's
:class:`ir.TensorSpec` carries that format and ``bind_inputs`` converts the user's tensor
to it, so the transpose really happens in memory before the run. The output is handled
the same way (it is written in the permuted mode order; its logical value is unchanged).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

from ir import Format, FormatError

from ._ast import Access, accesses
from ._errors import LoweringError
from ._normalize import Normalized

__all__ = ["Layout", "index_sizes", "layouts", "parse_formats", "transposes_needed"]


@dataclass(frozen=True)
class Layout:
    """How one tensor is stored in the graph."""

    name: str
    shape: tuple[int, ...]
    format: Format
    #: the format the user asked for, when the compiler had to permute it
    requested: Format | None = None


def parse_formats(norm: Normalized, formats: Mapping[str, object]) -> dict[str, Format]:
    """Parse the user's formats (names, letters, ``Format``) for every tensor present."""
    ranks = {a.tensor: len(a.indices) for a in accesses(norm.assignment.rhs)}
    target = norm.assignment.target
    ranks[target.tensor] = len(target.indices)
    unknown = sorted(set(formats) - set(ranks))
    if unknown:
        raise LoweringError(f"formats given for {unknown}, which the expression does not "
                            f"use; its tensors are {sorted(ranks)}")
    out: dict[str, Format] = {}
    for name, spec in formats.items():
        try:
            out[name] = Format.parse(spec, ranks[name])  # type: ignore[arg-type]
        except FormatError as exc:
            raise LoweringError(f"tensor {name!r}: {exc}") from None
    return out


def index_sizes(norm: Normalized, shapes: Mapping[str, Sequence[int]],
                sizes: Mapping[str, int]) -> dict[str, int]:
    """Size of every internal index from tensor shapes and explicit sizes; conflicts fail."""
    found: dict[str, tuple[int, str]] = {}

    def note(index: str, n: int, where: str) -> None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise LoweringError(f"{where}: size {n!r} must be an int >= 1 (an index of "
                                "size 0 has nothing to iterate)")
        prev = found.get(index)
        if prev is not None and prev[0] != n:
            raise LoweringError(f"index {norm.user[index]!r} has size {prev[0]} in {prev[1]} "
                                f"but {n} in {where}")
        found.setdefault(index, (n, where))

    target = norm.assignment.target
    by_tensor: dict[str, list[Access]] = {}
    for a in [target, *accesses(norm.assignment.rhs)]:
        by_tensor.setdefault(a.tensor, []).append(a)
    extra = sorted(set(shapes) - set(by_tensor))
    if extra:
        raise LoweringError(f"shapes given for {extra}, which the expression does not use; "
                            f"its tensors are {sorted(by_tensor)}")
    for name, shape in shapes.items():
        shape = tuple(shape)
        for a in by_tensor[name]:
            if len(shape) != len(a.indices):
                raise LoweringError(f"tensor {name!r} has shape {shape} ({len(shape)}-d) but "
                                    f"is used as {_user(norm, a)} ({len(a.indices)}-d)")
            for m, (i, n) in enumerate(zip(a.indices, shape, strict=True)):
                note(i, int(n) if hasattr(n, "__index__") else n,
                     f"{_user(norm, a)} (shape {shape}, mode {m})")
    user_sizes = dict(sizes)
    unknown = sorted(set(user_sizes) - set(norm.user.values()))
    if unknown:
        raise LoweringError(f"sizes given for {unknown}, which the expression does not use; "
                            f"its indices are {sorted(set(norm.user.values()))}")
    for internal, name in norm.user.items():
        if name in user_sizes:
            note(internal, user_sizes[name], f"sizes[{name!r}]")
    missing = [i for i in norm.indices if i not in found]
    if missing:
        names = sorted({norm.user[i] for i in missing})
        users = sorted({a.tensor for a in accesses(norm.assignment.rhs)
                        if set(a.indices) & set(missing)})
        raise LoweringError(f"size of index {', '.join(map(repr, names))} unknown: give the "
                            f"shape of {' or '.join(map(repr, users))} or sizes for it")
    return {i: n for i, (n, _) in found.items()}


def _user(norm: Normalized, a: Access) -> str:
    return f"{a.tensor}({','.join(norm.user[i] for i in a.indices)})"


def layouts(norm: Normalized, formats: Mapping[str, Format], sizes: Mapping[str, int],
            position: Mapping[str, int], transpose: bool, order_text: str
            ) -> dict[str, Layout]:
    """A :class:`Layout` per tensor, concordant with the order given by ``position``.

    Inputs default to all-dense in their written mode order; the output defaults to
    all-dense in dataflow order. ``transpose=False`` turns a needed permutation into an
    error naming the operand and the order.
    """
    target = norm.assignment.target
    by_tensor: dict[str, list[Access]] = {}
    for a in accesses(norm.assignment.rhs):
        by_tensor.setdefault(a.tensor, []).append(a)
    out: dict[str, Layout] = {}
    for name, accs in [*by_tensor.items(), (target.tensor, [target])]:
        shape = tuple(sizes[i] for i in accs[0].indices)
        rank = len(shape)
        given = formats.get(name)
        fmt = given if given is not None else Format.dense(rank)
        needed = {tuple(sorted(range(rank), key=lambda m, a=a: position[a.indices[m]]))
                  for a in accs}
        if name == target.tensor and given is None:
            out[name] = Layout(name, shape, Format(fmt.levels, next(iter(needed))))
            continue
        concordant = all(_concordant(a, fmt, position) for a in accs)
        if concordant:
            out[name] = Layout(name, shape, fmt)
            continue
        if len(needed) > 1:
            shown = " and ".join(_user(norm, a) for a in accs)
            raise LoweringError(f"tensor {name!r} is read as {shown}, which need different "
                                f"storage orders for dataflow order {order_text}; give the "
                                "second use its own tensor name")
        bad = next(a for a in accs if not _concordant(a, fmt, position))
        if not transpose:
            levels = ",".join(norm.user[bad.indices[m]] for m in fmt.mode_order)
            who = "output" if name == target.tensor else "operand"
            raise LoweringError(f"{who} {_user(norm, bad)} is stored in format "
                                f"{str(fmt)!r} (levels {levels}), which is discordant with "
                                f"dataflow order {order_text}; allow a transpose or choose "
                                "a concordant order")
        out[name] = Layout(name, shape, Format(fmt.levels, next(iter(needed))), fmt)
    return out


def transposes_needed(norm: Normalized, formats: Mapping[str, Format]
                      ) -> Callable[[Mapping[str, int]], tuple[bool, int]]:
    """A cheap pre-ranking of orders: position → (output permuted, inputs permuted).

    Tensors without a format count as concordant (inputs default to dense in written
    order, which the lowering may still permute; the exact answer comes from
    :func:`layouts`). The accesses and formats are gathered once, since the order search
    calls the result for every permutation.
    """
    target = norm.assignment.target
    out_fmt = formats.get(target.tensor)
    # (tensor, its indices in storage order) of every distinct read
    reads = {(a.tensor, _stored(a, formats.get(a.tensor) or Format.dense(len(a.indices))))
             for a in accesses(norm.assignment.rhs)}
    out_levels = _stored(target, out_fmt) if out_fmt is not None else ()

    def increasing(levels: tuple[str, ...], position: Mapping[str, int]) -> bool:
        return all(position[x] < position[y] for x, y in pairwise(levels))

    def cost(position: Mapping[str, int]) -> tuple[bool, int]:
        moved = {t for t, levels in reads if not increasing(levels, position)}
        return not increasing(out_levels, position), len(moved)

    return cost


def _stored(a: Access, fmt: Format) -> tuple[str, ...]:
    """The index variables of ``a`` in storage-level order."""
    return tuple(a.indices[m] for m in fmt.mode_order)


def _concordant(a: Access, fmt: Format, position: Mapping[str, int]) -> bool:
    pos = [position[a.indices[m]] for m in fmt.mode_order]
    return all(x < y for x, y in pairwise(pos))
