"""The FLOPs/bytes heuristic: expected work of a compiled graph from shapes and densities.

FuseFlow prunes schedules with a cost model instead of simulating each one. This module
predicts, without running anything, the quantities :func:`cosim.measured_counts` counts
on a simulated run (same rules: ``docs/cost.md``). It walks the graph once in
topological order and gives every stream an expected *shape*: one ``(size, density)``
pair per nesting level, so the stream carries ``Π size·density`` data tokens. A scanner
appends its storage level; an intersection multiplies densities (independence), a union
adds them (``p + q − pq``); a repeater takes the shape of its repeat signal; reducers and
accumulators remove levels (an accumulator's output level is the union of the fibers it
sums: ``1 − (1 − p_k·p_j)^{n_k}``). Only the tensors' shapes and per-level densities are
used, never their coordinates.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ir import FiberTree, Format, Graph, Node

__all__ = ["TensorStats", "Estimate", "estimate", "WORD_BYTES"]

WORD_BYTES = 4


@dataclass(frozen=True)
class TensorStats:
    """What the heuristic knows about an input: its shape and how full it is.

    ``density`` is the fraction of non-zeros, assumed uniformly spread.
    ``level_positions`` (optional) are the stored positions per storage level of
    ``format``, as measured by :meth:`from_tensor`; they are used when the graph binds
    the tensor in that same format, and give exact scanner counts.
    """

    shape: tuple[int, ...]
    density: float = 1.0
    level_positions: tuple[int, ...] | None = None
    format: str | None = None

    def __post_init__(self) -> None:
        if not 0.0 <= self.density <= 1.0:
            raise ValueError(f"TensorStats density {self.density!r} must be in [0, 1]")
        if (self.level_positions is None) != (self.format is None):
            raise ValueError("TensorStats: level_positions and format go together")
        object.__setattr__(self, "shape", tuple(int(s) for s in self.shape))

    @classmethod
    def from_tensor(cls, x: Any, format: str | Format | None = None) -> TensorStats:
        """Measure shape, density and per-level positions of ``x`` stored in ``format``."""
        tree = x if isinstance(x, FiberTree) and format is None else FiberTree.from_any(
            x, format)
        size = math.prod(tree.shape)
        nnz = len(tree.to_coo()[1])
        return cls(tuple(tree.shape), nnz / size if size else 0.0,
                   tuple(tree.num_positions(lv) for lv in range(tree.ndim)),
                   str(tree.format))

    def levels(self, fmt: str | Format) -> list[tuple[int, float]]:
        """``(size, density)`` per storage level of ``fmt``: the density of a level is
        the expected fraction of its ``size`` coordinates stored in one fiber."""
        f = Format.parse(fmt, len(self.shape))
        sizes = [self.shape[m] for m in f.mode_order]
        if self.level_positions is not None and Format.parse(self.format, f.ndim) == f:
            positions = list(self.level_positions)
        else:
            positions = _uniform_positions(sizes, f, self.density)
        out, parent = [], 1.0
        for size, pos in zip(sizes, positions, strict=True):
            out.append((size, pos / (parent * size) if parent * size else 0.0))
            parent = pos
        return out


def _uniform_positions(sizes: list[int], fmt: Format, p: float) -> list[float]:
    """Expected stored positions per level for i.i.d. non-zeros of probability ``p``.

    A prefix at level *l* is stored iff the prefix at the deepest compressed level ≤ *l*
    has a non-zero below it, which happens with probability ``1 − (1 − p)^(cells below)``.
    """
    out = []
    for lv in range(len(sizes)):
        comp = [c for c in range(lv + 1) if fmt.is_compressed(c)]
        nonempty = 1.0
        if comp:
            below = math.prod(sizes[comp[-1] + 1:])
            nonempty = 1.0 - (1.0 - p) ** below
        out.append(math.prod(sizes[:lv + 1]) * nonempty)
    return out


@dataclass(frozen=True)
class _Stream:
    """Expected shape of a stream: ``(size, density)`` per level, outermost first.

    ``real`` (reference streams): the fraction of positions holding a reference rather
    than ``N``; a scanner turns an ``N`` into an empty fiber, so it folds ``real`` into
    the density of the level it appends.
    """

    levels: tuple[tuple[float, float], ...] = ()
    real: float = 1.0

    @property
    def count(self) -> float:
        return math.prod(s * d for s, d in self.levels)

    def outer_count(self, drop: int = 1) -> float:
        return math.prod(s * d for s, d in self.levels[:-drop])

    def inner(self, k: int = 1) -> tuple[tuple[float, float], ...]:
        if len(self.levels) < k:
            raise AssertionError(f"stream of {len(self.levels)} levels, need {k}")
        return self.levels[-k:]


@dataclass
class Estimate:
    """Expected FLOPs and bytes of a graph (fields as in :class:`cosim.Counts`)."""

    flops: float = 0.0
    bytes_read: float = 0.0
    bytes_written: float = 0.0
    flops_by_node: dict[str, float] = field(default_factory=dict)
    words_read: dict[str, float] = field(default_factory=dict)
    words_written: dict[str, float] = field(default_factory=dict)
    #: expected data tokens on each edge
    tokens: dict[str, float] = field(default_factory=dict)

    @property
    def bytes(self) -> float:
        return self.bytes_read + self.bytes_written


def _union_of(n: float, p: float) -> float:
    """P(at least one of ``n`` independent events of probability ``p``)."""
    return 1.0 - (1.0 - p) ** n


class _Walker:
    """One pass over the graph: node rules (``_op_<primitive>``) → stream shapes."""

    def __init__(self, graph: Graph, stats: Mapping[str, TensorStats]) -> None:
        self.graph, self.stats = graph, stats
        self.out: dict[tuple[str, str], _Stream] = {}
        self.est = Estimate()
        self.writers: dict[tuple[str, int], _Stream] = {}

    def run(self) -> Estimate:
        for nid in self.graph.topological_order():
            node = self.graph.nodes[nid]
            rule: Callable[[Node], dict[str, _Stream]] | None = getattr(
                self, f"_op_{node.op}", None)
            if rule is None:
                raise NotImplementedError(f"cost model: no rule for primitive {node.op!r}")
            for port, stream in rule(node).items():
                self.out[(nid, port)] = stream
        self._write_levels()
        est = self.est
        for e in self.graph.edges:
            s = self.out.get((e.src_node, e.src.rsplit(".", 1)[1]))
            if s is not None:
                est.tokens[e.name] = s.count * (s.real if e.kind == "ref" else 1.0)
        est.flops = sum(est.flops_by_node.values())
        est.bytes_read = WORD_BYTES * sum(est.words_read.values())
        est.bytes_written = WORD_BYTES * sum(est.words_written.values())
        return est

    # -- helpers --------------------------------------------------------------------
    def _in(self, node: Node, port: str) -> _Stream:
        src = self.graph.in_edges[node.id][port].src
        nid, _, p = src.rpartition(".")
        return self.out[(nid, p)]

    def _read(self, tensor: str, words: float) -> None:
        self.est.words_read[tensor] = self.est.words_read.get(tensor, 0.0) + words

    def _flops(self, node: Node, port: str) -> dict[str, _Stream]:
        s = self._in(node, port)
        self.est.flops_by_node[node.id] = s.count
        return {"val": _Stream(s.levels)}

    # -- node rules -----------------------------------------------------------------
    def _op_root(self, node: Node) -> dict[str, _Stream]:
        return {"ref": _Stream()}

    def _scan(self, node: Node, compressed: bool) -> dict[str, _Stream]:
        ref = self._in(node, "ref_in")
        name, level = node.params["tensor"], node.params["level"]
        size, dens = self.stats[name].levels(self.graph.tensors[name].format)[level]
        s = _Stream(ref.levels + ((size, (dens if compressed else 1.0) * ref.real),))
        if compressed:
            self._read(name, 2 * ref.count * ref.real + s.count)
        return {"crd": s, "ref": s}

    def _op_scan_compressed(self, node: Node) -> dict[str, _Stream]:
        return self._scan(node, True)

    def _op_scan_dense(self, node: Node) -> dict[str, _Stream]:
        return self._scan(node, False)

    def _op_locate(self, node: Node) -> dict[str, _Stream]:
        """One reference per located coordinate: ``crd_in``'s shape, ``ref_in``'s
        ``real``; nothing is loaded (the position is computed), unlike a scan + intersect
        whose dense side carries every coordinate of the level."""
        return {"ref": _Stream(self._in(node, "crd_in").levels,
                               self._in(node, "ref_in").real)}

    def _op_repsig(self, node: Node) -> dict[str, _Stream]:
        return {"repsig": _Stream(self._in(node, "crd").levels)}

    def _op_repeat(self, node: Node) -> dict[str, _Stream]:
        """``repeat`` and ``broadcast``: the repeat signal's shape; the repeated input's
        ``real`` (1 for values). Ports come from the catalogue: (ref_in | val_in, repsig)
        → (ref | val)."""
        (data, _), (out,) = node.primitive.inputs, node.primitive.outputs
        return {out.name: _Stream(self._in(node, "repsig").levels,
                                  self._in(node, data.name).real)}

    _op_broadcast = _op_repeat

    def _join(self, node: Node, union: bool) -> dict[str, _Stream]:
        a, b = self._in(node, "crd_a"), self._in(node, "crd_b")
        (size, pa), (_, pb) = a.inner()[0], b.inner()[0]
        p = pa + pb - pa * pb if union else pa * pb
        lv = a.levels[:-1] + ((size, p),)
        ra, rb = (pa / p, pb / p) if union and p > 0 else (1.0, 1.0)
        return {"crd": _Stream(lv), "ref_a": _Stream(lv, ra), "ref_b": _Stream(lv, rb)}

    def _op_intersect(self, node: Node) -> dict[str, _Stream]:
        return self._join(node, False)

    def _op_union(self, node: Node) -> dict[str, _Stream]:
        return self._join(node, True)

    def _op_array(self, node: Node) -> dict[str, _Stream]:
        ref = self._in(node, "ref")
        self._read(node.params["tensor"], ref.count * ref.real)
        return {"val": _Stream(ref.levels)}

    def _op_alu(self, node: Node) -> dict[str, _Stream]:
        return self._flops(node, "a")

    def _op_unary(self, node: Node) -> dict[str, _Stream]:
        return self._flops(node, "a")

    def _op_reduce(self, node: Node) -> dict[str, _Stream]:
        self._flops(node, "val_in")
        return {"val": _Stream(self._in(node, "val_in").levels[:-1])}

    def _op_spacc(self, node: Node) -> dict[str, _Stream]:
        self._flops(node, "val_in")
        crd = self._in(node, "crd_in")
        (nk, pk), (nj, pj) = crd.inner(2)
        s = _Stream(crd.levels[:-2] + ((nj, _union_of(nk, pk * pj)),))
        return {"crd": s, "val": s}

    def _op_spacc2(self, node: Node) -> dict[str, _Stream]:
        self._flops(node, "val_in")
        crd = self._in(node, "crd0_in")
        (nk, pk), (ni, pi), (nj, pj) = crd.inner(3)
        rows = _union_of(nk, pk * pi * _union_of(nj, pj))   # row i has an entry
        cells = _union_of(nk, pk * pi * pj)                  # entry (i, j) exists
        outer = crd.levels[:-3] + ((ni, rows),)
        inner = _Stream(outer + ((nj, cells / rows if rows else 0.0),))
        return {"crd1": _Stream(outer), "crd0": inner, "val": inner}

    def _op_crddrop(self, node: Node) -> dict[str, _Stream]:
        inner = self._in(node, "inner_in")
        (no, po), (ni, pi) = inner.inner(2)
        kept = _union_of(ni, pi)
        outer = inner.levels[:-2] + ((no, po * kept),)
        return {"outer": _Stream(outer),
                "inner": _Stream(outer + ((ni, pi / kept if kept else 0.0),))}

    def _op_crdhold(self, node: Node) -> dict[str, _Stream]:
        inner = self._in(node, "inner_in")
        return {"outer": inner, "inner": inner}

    def _op_level_writer(self, node: Node) -> dict[str, _Stream]:
        self.writers[(node.params["tensor"], node.params["level"])] = self._in(node, "crd")
        return {}

    def _op_value_writer(self, node: Node) -> dict[str, _Stream]:
        name = node.params["tensor"]
        self.est.words_written[name] = self.est.words_written.get(name, 0.0) + \
            self._in(node, "val").count
        return {}

    def _write_levels(self) -> None:
        """crd + seg words of every compressed output level (seg: parent positions + 1)."""
        for name, spec in self.graph.tensors.items():
            if spec.role != "output":
                continue
            fmt = Format.parse(spec.format, len(spec.shape))
            parent = 1.0
            for lv in range(fmt.ndim):
                size = spec.shape[fmt.mode_order[lv]]
                if fmt.is_dense(lv):
                    parent *= size
                    continue
                crds = self.writers[(name, lv)].count
                self.est.words_written[name] = self.est.words_written.get(name, 0.0) + \
                    crds + parent + 1
                parent = crds


def estimate(graph: Graph, stats: Mapping[str, TensorStats | float | Any]) -> Estimate:
    """Expected FLOPs and bytes of ``graph`` for inputs described by ``stats``.

    ``stats`` maps every input tensor to a :class:`TensorStats`, a density (a float: the
    shape comes from the graph) or a tensor (measured with
    :meth:`TensorStats.from_tensor` in the format the graph binds it in).
    """
    inputs = {n: t for n, t in graph.tensors.items() if t.role == "input"}
    missing = sorted(set(inputs) - set(stats))
    if missing:
        raise ValueError(f"estimate: no statistics for input tensor(s) {missing} of graph "
                         f"{graph.name!r}; give a TensorStats, a density or a tensor")
    resolved: dict[str, TensorStats] = {}
    for name, spec in inputs.items():
        s = stats[name]
        if isinstance(s, int | float) and not isinstance(s, bool):
            s = TensorStats(spec.shape, float(s))
        elif not isinstance(s, TensorStats):
            s = TensorStats.from_tensor(s, spec.format)
        if tuple(s.shape) != tuple(spec.shape):
            raise ValueError(f"estimate: tensor {name!r} has shape {s.shape} but graph "
                             f"{graph.name!r} expects {tuple(spec.shape)}")
        resolved[name] = s
    return _Walker(graph, resolved).run()
