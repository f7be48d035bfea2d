"""The driver: text → parse → normalize → choose an order → layouts → lowering → Graph."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import permutations

from ir import Format, Graph, GraphError

from ._ast import Assignment
from ._errors import LoweringError
from ._factor import Factorer
from ._layout import Layout, index_sizes, layouts, parse_formats, transposes_needed
from ._lower import Lowered, lower_order
from ._normalize import Normalized, normalize
from ._parse import parse

__all__ = ["compile_expression", "parse_order"]

#: the default order search enumerates permutations up to this many index variables
MAX_SEARCH = 6


def compile_expression(expr: str | Assignment,
                       formats: Mapping[str, str | Format] | None = None,
                       shapes: Mapping[str, Sequence[int]] | None = None, *,
                       sizes: Mapping[str, int] | None = None,
                       order: str | Sequence[str] | None = None, reduce: str = "sum",
                       dtype: str = "float32", depth: int | None = 2,
                       transpose: bool = True, name: str | None = None) -> Graph:
    """Compile one tensor index expression into a validated SAMML :class:`ir.Graph`.

    ``formats`` maps tensor names (inputs and the output) to format specs (``"csr"``,
    ``"dc"``, ``"dc:1,0"``…; default dense). ``shapes`` gives tensor shapes, ``sizes``
    index sizes; together they must fix every index. ``order`` is the dataflow (loop)
    order, e.g. ``"i,k,j"``; by default the compiler picks a concordant order that needs
    the fewest transposes and prefers a reducer over a sparse accumulator. Discordant
    operands are transposed in memory (their graph format is permuted) unless
    ``transpose=False``. ``reduce`` is the reduction for implicit (einsum) indices.
    """
    assign = parse(expr) if isinstance(expr, str) else expr
    if not isinstance(assign, Assignment):
        raise TypeError(f"expr must be a str or Assignment, got {type(expr).__name__}")
    if dtype not in ("float32", "int32"):
        raise LoweringError(f"dtype {dtype!r} is not supported; expected 'float32' or 'int32'")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int)
                              or depth < 1):
        raise LoweringError(f"depth {depth!r} must be an int >= 1 or None (unbounded)")
    norm = normalize(assign, reduce)
    fmts = parse_formats(norm, formats or {})
    idx_sizes = index_sizes(norm, shapes or {}, sizes or {})
    name = name or "einsum"
    if order is not None:
        internal = parse_order(norm, order)
        lays = _layouts(norm, fmts, idx_sizes, internal, transpose)
        lowered = lower_order(norm, internal, lays, dtype, depth, name)
    else:
        internal, lays, lowered = _search(norm, fmts, idx_sizes, transpose, dtype, depth, name)
    meta = {
        "kernel": name,
        "expression": norm.assignment.source or str(assign),
        "normalized": str(norm.assignment),
        "order": [norm.user[v] for v in internal],
        "formats": {t: str(lay.format) for t, lay in lays.items()},
        "transposed": {t: {"requested": str(lay.requested), "bound": str(lay.format)}
                       for t, lay in lays.items() if lay.requested is not None},
        "reductions": lowered.reductions,
        "fusion_table": lowered.table.to_json(),
    }
    try:
        return lowered.builder.build(**meta)
    except GraphError as exc:  # the lowering made an invalid graph: a compiler bug
        raise AssertionError(f"compiler produced an invalid graph: {exc}") from exc


def parse_order(norm: Normalized, order: str | Sequence[str]) -> list[str]:
    """User order (``"i,k,j"``, ``"ikj"`` or a sequence) → internal index order."""
    names = sorted(set(norm.user.values()), key=lambda n: min(
        k for k, v in enumerate(norm.indices) if norm.user[v] == n))
    if isinstance(order, str):
        text = order.replace(" ", "")
        parts = text.split(",") if "," in text or text in names else list(text)
    else:
        parts = [str(p) for p in order]
    shown = ",".join(parts)
    for p in parts:
        if p not in names:
            raise LoweringError(f"order {shown!r} names {p!r}, which is not an index of the "
                                f"expression; its indices are {','.join(names)}")
    dup = sorted({p for p in parts if parts.count(p) > 1})
    if dup:
        raise LoweringError(f"order {shown!r} lists {', '.join(dup)} more than once")
    missing = [n for n in names if n not in parts]
    if missing:
        raise LoweringError(f"order {shown!r} misses {', '.join(missing)}; it must list "
                            f"every index once: {','.join(names)}")
    return [v for p in parts for v in norm.indices if norm.user[v] == p]


def _layouts(norm: Normalized, fmts: Mapping[str, Format], idx_sizes: Mapping[str, int],
             internal: list[str], transpose: bool) -> dict[str, Layout]:
    position = {v: n for n, v in enumerate(internal)}
    text = ",".join(norm.user[v] for v in internal)
    return layouts(norm, fmts, idx_sizes, position, transpose, text)


def _search(norm: Normalized, fmts: Mapping[str, Format], idx_sizes: Mapping[str, int],
            transpose: bool, dtype: str, depth: int | None, name: str
            ) -> tuple[list[str], dict[str, Layout], Lowered]:
    """Pick an order: output as requested, fewest input transposes, the fewest points
    computed under factored iteration (``Factorer.cost``), the smallest
    accumulator (reduce, then spacc, then spacc2), then closest to the preferred order.

    The preferred order lists output indices (in the output's storage order when a
    format is given) and then reduced indices, innermost last — the order in which
    every reduction is a plain reducer.
    """
    target = norm.assignment.target
    out_fmt = fmts.get(target.tensor)
    out_names = [target.indices[m] for m in out_fmt.mode_order] if out_fmt else \
        list(target.indices)
    rest = []
    for v in norm.indices:
        if norm.user[v] not in out_names and norm.user[v] not in rest:
            rest.append(norm.user[v])
    preferred = out_names + rest
    candidates = [list(p) for p in permutations(preferred)] if len(preferred) <= MAX_SEARCH \
        else [preferred]
    ranked: list[tuple[tuple[bool, int], float, int, list[str]]] = []
    transposes = transposes_needed(norm, fmts)
    internal_of = {u: [v for v in norm.indices if norm.user[v] == u] for u in preferred}
    factorer = Factorer(norm.assignment.rhs, norm.assignment.target.indices)
    for n, cand in enumerate(candidates):
        internal = [v for u in cand for v in internal_of[u]]
        ranked.append((transposes({v: k for k, v in enumerate(internal)}),
                       factorer.cost(internal, idx_sizes), n, internal))
    # the output's requested layout is honoured first: it is what the user reads back;
    # then the order whose factored iteration computes the fewest points
    ranked.sort(key=lambda r: r[:3])
    errors: dict[int, LoweringError] = {}
    best: tuple[list[str], dict[str, Layout], Lowered] | None = None
    best_cost = (False, 0)
    for cost, _, n, internal in ranked:
        if best is not None and cost > best_cost:
            break
        try:
            lays = _layouts(norm, fmts, idx_sizes, internal, transpose)
            lowered = lower_order(norm, internal, lays, dtype, depth, name)
        except LoweringError as exc:
            errors[n] = exc
            continue
        if best is None or lowered.accumulator < best[2].accumulator:
            best, best_cost = (internal, lays, lowered), cost
            if not lowered.accumulator:
                break
    if best is None:
        raise errors[min(errors)]
    return best
