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
from functools import cached_property
from typing import Any

from ir import (
    WORD_BYTES,
    BlockOp,
    Format,
    Graph,
    Hardware,
    Node,
    array_name,
    block_grid,
    buffered_arrays,
    memory_ports,
    position_windows,
    value_elems,
)

from ._cost_memory import PortAccess, PortCost, port_cost
from ._cost_stats import TensorStats, as_stats

__all__ = ["TensorStats", "Estimate", "estimate", "WORD_BYTES", "as_stats", "grid_shape"]


@dataclass(frozen=True)
class _Stream:
    """Expected shape of a stream: ``(size, density)`` per level, outermost first.

    ``real`` (reference streams): the fraction of positions holding a reference rather
    than ``N``; a scanner turns an ``N`` into an empty fiber, so it folds ``real`` into
    the density of the level it appends.
    """

    levels: tuple[tuple[float, float], ...] = ()
    real: float = 1.0
    #: reference streams, per level: whether its coordinate addresses the referenced
    #: tensor (a scanned or located level; not a repeat's) and which fraction of the
    #: stored positions of that fiber it visits (an intersection skips some); only the
    #: memory pricing reads them (``_address``)
    owned: tuple[bool, ...] = ()
    fill: tuple[float, ...] = ()

    def annotated(self, owned: tuple[bool, ...], fill: tuple[float, ...]) -> _Stream:
        """This shape with the address annotation of a reference stream, padded with
        unowned levels (a repeat's) up to its depth."""
        pad = len(self.levels) - len(owned)
        return _Stream(self.levels, self.real, owned + (False,) * pad, fill + (1.0,) * pad)

    @cached_property
    def count(self) -> float:
        """Expected data tokens (asked once per reader: a fused layer forks streams)."""
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
    #: expected tokens at each node's busiest port (an accumulator: input + drained
    #: output, which it cannot overlap); :func:`cycle_estimate` reads it
    busy: dict[str, float] = field(default_factory=dict)
    #: DRAM traffic priced on the hardware (``estimate(..., hw=)`` with memory): lines
    #: moved, not words; without memory the word bytes above
    dram_read_bytes: float = 0.0
    dram_write_bytes: float = 0.0
    #: each memory port's expected accesses and (on hardware with memory) cost
    ports: dict[tuple[str, str], PortAccess] = field(default_factory=dict)
    port_costs: dict[tuple[str, str], PortCost] = field(default_factory=dict)

    @property
    def bytes(self) -> float:
        return self.bytes_read + self.bytes_written

    @property
    def dram_bytes(self) -> float:
        return self.dram_read_bytes + self.dram_write_bytes


def _union_of(n: float, p: float) -> float:
    """P(at least one of ``n`` independent events of probability ``p``)."""
    return 1.0 - (1.0 - p) ** n


class _Walker:
    """One pass over the graph: node rules (``_op_<primitive>``) → stream shapes."""

    def __init__(self, graph: Graph, stats: Mapping[str, TensorStats],
                 hw: Hardware | None = None) -> None:
        self.graph, self.stats, self.hw = graph, stats, hw
        #: elements per value token (blocks) and each block node's work per firing
        self.elems = value_elems(graph) if _blocked(graph) else {}
        self.cycles: dict[str, float] = {}
        self.out: dict[tuple[str, str], _Stream] = {}
        self.est = Estimate()
        self.writers: dict[tuple[str, int], _Stream] = {}
        self.writer_nodes: dict[tuple[str, int], str] = {}
        self.levels: dict[str, list[tuple[int, float]]] = {}
        self.drained: dict[str, float] = {}  # accumulator -> expected input values

    def run(self) -> Estimate:
        rules: dict[str, Callable[[Node], dict[str, _Stream]] | None] = {}
        for nid in self.graph.topological_order():
            node = self.graph.nodes[nid]
            if node.op not in rules:
                rules[node.op] = getattr(self, f"_op_{node.op}", None)
            rule = rules[node.op]
            if rule is None:
                raise NotImplementedError(f"cost model: no rule for primitive {node.op!r}")
            for port, stream in rule(node).items():
                self.out[(nid, port)] = stream
        self._write_levels()
        est = self.est
        busy = est.busy
        for e in self.graph.edges:
            src, _, port = e.src.rpartition(".")
            s = self.out.get((src, port))
            if s is not None:
                t = est.tokens[e.name] = s.count * (s.real if e.kind == "ref" else 1.0)
                dst = e.dst.rpartition(".")[0]
                busy[src] = max(busy.get(src, 0.0), t)
                busy[dst] = max(busy.get(dst, 0.0), t)
        for nid, drained in self.drained.items():  # an accumulator: input, then drain
            busy[nid] = drained * self.cycles.get(nid, 1.0) + self.out[(nid, "val")].count
        for nid, cycles in self.cycles.items():  # a block firing occupies its node longer
            if nid not in self.drained:
                busy[nid] = busy.get(nid, 0.0) * cycles
        est.flops = sum(est.flops_by_node.values())
        est.bytes_read = WORD_BYTES * sum(est.words_read.values())
        est.bytes_written = WORD_BYTES * sum(est.words_written.values())
        est.dram_read_bytes, est.dram_write_bytes = est.bytes_read, est.bytes_written
        if self.hw is not None and self.hw.memory:
            self._price_ports()
        return est

    def _price_ports(self) -> None:
        """Lines per memory port on the hardware (``_cost_memory``)."""
        est, hw = self.est, self.hw
        assert hw is not None
        filled: set[int] = set()  # a buffer's fill is its first port's; the others read it
        for spec in memory_ports(self.graph, hw):
            acc = est.ports.get((spec.node, spec.array))
            if acc is not None:
                est.port_costs[(spec.node, spec.array)] = PortCost(0.0, 0.0) \
                    if spec.buffer in filled else port_cost(acc, hw)
            if spec.buffer is not None:
                filled.add(spec.buffer)
        lb = hw.dram.line_bytes
        est.dram_read_bytes = lb * sum(c.lines for (_, a), c in est.port_costs.items()
                                       if not est.ports[(_, a)].write)
        est.dram_write_bytes = lb * sum(c.lines for k, c in est.port_costs.items()
                                        if est.ports[k].write)

    # -- helpers --------------------------------------------------------------------
    def _in(self, node: Node, port: str) -> _Stream:
        src = self.graph.in_edges[node.id][port].src
        nid, _, p = src.rpartition(".")
        return self.out[(nid, p)]

    def _read(self, tensor: str, words: float) -> None:
        self.est.words_read[tensor] = self.est.words_read.get(tensor, 0.0) + words

    def _positions(self, name: str) -> list[float]:
        """Expected stored positions of each storage level of input ``name``."""
        out, acc = [], 1.0
        for size, dens in self.levels[name]:
            acc *= size * dens
            out.append(acc)
        return out

    def _port(self, node: Node, array: str, ref: _Stream, accesses: float,
              array_words: float, elems: int = 1, pair: bool = False) -> None:
        """Record the accesses of ``node``'s port on ``array`` (addressed by the
        reference stream ``ref``) for the memory pricing. ``pair``: each reference
        reads two words, ``array[r]`` and ``array[r + 1]`` (a scanner's ``seg``), so a
        run of ``n`` references reads ``n + 1`` consecutive words."""
        if self.hw is None or not self.hw.memory:
            return
        name = node.params["tensor"]
        level = None if array == "vals" else node.params.get("level")
        buffered = array_name(array, level) in buffered_arrays(self.graph.tensors[name])
        onchip = self.graph.tensors[name].onchip

        def access(s: _Stream, words: float, again: PortAccess | None = None
                   ) -> PortAccess:
            sweeps, above, run, repeats, aligned = _address(s)
            touched = words / repeats * elems
            span = array_words * elems / above
            if pair:  # a run of references ends one word further on
                touched, span, run = touched * (run + 1) / run, span + 1, run + 1
                aligned = False
            return PortAccess(node.id, array, touched, array_words * elems, sweeps, span,
                              min(run * elems, array_words * elems), aligned=aligned,
                              buffered=buffered, again=again, onchip=onchip,
                              rereads=(repeats - 1) * words / repeats if pair else 0.0)

        again = _without_restarts(ref)
        self.est.ports[(node.id, array)] = access(
            ref, accesses, None if again is None else access(again[0], accesses / again[1]))

    def _written(self, node_id: str, array: str, words: float) -> None:
        """A writer's port (none for a materialised output: its writers write on chip)."""
        tensor = self.graph.tensors[self.graph.nodes[node_id].params["tensor"]]
        if self.hw is not None and self.hw.memory and not tensor.onchip:
            self.est.ports[(node_id, array)] = PortAccess(node_id, array, words, words,
                                                          write=True)

    def _elems(self, node: Node, port: str) -> int:
        """Elements per value token on ``node``'s input ``port`` (1 for scalars)."""
        if not self.elems:
            return 1
        return self.elems.get(self.graph.in_edges[node.id][port].name, 1)

    def _flops(self, node: Node, port: str) -> dict[str, _Stream]:
        """One operation per value, or a block operator's work per block (its firings
        then take ``ceil(work / macs_per_cycle)`` cycles, docs/blocks.md)."""
        s = self._in(node, port)
        spec = node.params.get("block", "")
        work = BlockOp.parse(spec, 2 if node.op == "alu" else 1).work if spec else \
            self._elems(node, port)
        self.est.flops_by_node[node.id] = s.count * work
        if work > 1 and self.hw is not None:
            self.cycles[node.id] = float(self.hw.firing_cycles(work))
        return {"val": _Stream(s.levels)}

    # -- node rules -----------------------------------------------------------------
    def _op_root(self, node: Node) -> dict[str, _Stream]:
        return {"ref": _Stream()}

    def _scan(self, node: Node, compressed: bool) -> dict[str, _Stream]:
        ref = self._in(node, "ref_in")
        name, level = node.params["tensor"], node.params["level"]
        if name not in self.levels:  # once per tensor: scanners of a fused layer are many
            self.levels[name] = self.stats[name].levels(self.graph.tensors[name].format)
        size, dens = self.levels[name][level]
        s = _Stream(ref.levels + ((size, (dens if compressed else 1.0) * ref.real),)
                    ).annotated(_padded(ref) + (True,), _filled(ref) + (1.0,))
        if compressed:
            self._read(name, 2 * ref.count * ref.real + s.count)
            pos = self._positions(name)
            parents = pos[level - 1] if level else 1.0
            self._port(node, "seg", ref, ref.count * ref.real, parents + 1, pair=True)
            self._port(node, "crd", s, s.count, pos[level])
        return {"crd": s, "ref": s}

    def _op_scan_compressed(self, node: Node) -> dict[str, _Stream]:
        return self._scan(node, True)

    def _op_scan_dense(self, node: Node) -> dict[str, _Stream]:
        return self._scan(node, False)

    def _op_locate(self, node: Node) -> dict[str, _Stream]:
        """One reference per located coordinate: ``crd_in``'s shape, ``ref_in``'s
        ``real``; nothing is loaded (the position is computed), unlike a scan + intersect
        whose dense side carries every coordinate of the level."""
        crd, ref = self._in(node, "crd_in"), self._in(node, "ref_in")
        name, level = node.params["tensor"], node.params["level"]
        if name not in self.levels:
            self.levels[name] = self.stats[name].levels(self.graph.tensors[name].format)
        stored = self.levels[name][level][1]
        visited = crd.levels[-1][1] / stored if crd.levels and stored else 1.0
        depth = len(crd.levels) - 1
        owned, fill = _padded(ref), _filled(ref)
        pad = depth - len(owned)
        return {"ref": _Stream(crd.levels, ref.real).annotated(
            owned[:depth] + (False,) * pad + (True,),
            fill[:depth] + (1.0,) * pad + (min(1.0, visited),))}

    def _op_repsig(self, node: Node) -> dict[str, _Stream]:
        return {"repsig": _Stream(self._in(node, "crd").levels)}

    def _op_repeat(self, node: Node) -> dict[str, _Stream]:
        """``repeat`` and ``broadcast``: the repeat signal's shape; the repeated input's
        ``real`` (1 for values). Ports come from the catalogue: (ref_in | val_in, repsig)
        → (ref | val)."""
        (data, _), (out,) = node.primitive.inputs, node.primitive.outputs
        given = self._in(node, data.name)
        return {out.name: _Stream(self._in(node, "repsig").levels, given.real).annotated(
            _padded(given), _filled(given))}

    _op_broadcast = _op_repeat

    def _join(self, node: Node, union: bool) -> dict[str, _Stream]:
        a, b = self._in(node, "crd_a"), self._in(node, "crd_b")
        (size, pa), (_, pb) = a.inner()[0], b.inner()[0]
        p = pa + pb - pa * pb if union else pa * pb
        lv = a.levels[:-1] + ((size, p),)
        ra, rb = (pa / p, pb / p) if union and p > 0 else (1.0, 1.0)
        out = {"crd": _Stream(lv)}
        for side, real, other in (("a", ra, pb), ("b", rb, pa)):
            ref = self._in(node, f"ref_{side}") if f"ref_{side}" in \
                self.graph.in_edges[node.id] else None
            s = _Stream(lv, real)
            if ref is not None:  # an intersection visits a fraction of each side's fiber
                kept = 1.0 if union else other
                fill = _filled(ref)
                s = s.annotated(_padded(ref), fill[:-1] + (fill[-1] * kept,) if fill else ())
            out[f"ref_{side}"] = s
        return out

    def _op_intersect(self, node: Node) -> dict[str, _Stream]:
        return self._join(node, False)

    def _op_union(self, node: Node) -> dict[str, _Stream]:
        return self._join(node, True)

    def _val_join(self, node: Node, union: bool) -> dict[str, _Stream]:
        """``intersect_val``/``union_val``: the joiners, side a's second stream being
        values (``real`` 1: a missing value is a token, read as 0)."""
        out = self._join(node, union)
        return {"crd": out["crd"], "val_a": _Stream(out["crd"].levels), "ref_b": out["ref_b"]}

    def _op_intersect_val(self, node: Node) -> dict[str, _Stream]:
        return self._val_join(node, False)

    def _op_union_val(self, node: Node) -> dict[str, _Stream]:
        return self._val_join(node, True)

    def _op_array(self, node: Node) -> dict[str, _Stream]:
        ref = self._in(node, "ref")
        elems = self.elems.get(self.graph.out_edges[node.id]["val"][0].name, 1) \
            if self.elems and self.graph.out_edges[node.id].get("val") else 1
        name = node.params["tensor"]
        self._read(name, ref.count * ref.real * elems)
        if name in self.levels or name in self.stats:
            if name not in self.levels:
                self.levels[name] = self.stats[name].levels(self.graph.tensors[name].format)
            self._port(node, "vals", ref, ref.count * ref.real, self._positions(name)[-1],
                       elems)
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
        self.drained[node.id] = self._in(node, "val_in").count
        crd = self._in(node, "crd_in")
        (nk, pk), (nj, pj) = crd.inner(2)
        s = _Stream(crd.levels[:-2] + ((nj, _union_of(nk, pk * pj)),))
        return {"crd": s, "val": s}

    def _op_spacc2(self, node: Node) -> dict[str, _Stream]:
        self._flops(node, "val_in")
        self.drained[node.id] = self._in(node, "val_in").count
        crd = self._in(node, "crd0_in")
        (nk, pk), (ni, pi), (nj, pj) = crd.inner(3)
        rows = _union_of(nk, pk * pi * _union_of(nj, pj))   # row i has an entry
        cells = _union_of(nk, pk * pi * pj)                  # entry (i, j) exists
        outer = crd.levels[:-3] + ((ni, rows),)
        inner = _Stream(outer + ((nj, cells / rows if rows else 0.0),))
        return {"crd1": _Stream(outer), "crd0": inner, "val": inner}

    def _op_spacc3(self, node: Node) -> dict[str, _Stream]:
        self._flops(node, "val_in")
        self.drained[node.id] = self._in(node, "val_in").count
        crd = self._in(node, "crd0_in")
        (nk, pk), (ni, pi), (nj, pj), (nl, pl) = crd.inner(4)
        rows = _union_of(nk, pk * pi * _union_of(nj, pj * _union_of(nl, pl)))  # i
        fibers = _union_of(nk, pk * pi * pj * _union_of(nl, pl))              # (i, j)
        cells = _union_of(nk, pk * pi * pj * pl)                              # (i, j, l)
        outer = crd.levels[:-4] + ((ni, rows),)
        mid = outer + ((nj, fibers / rows if rows else 0.0),)
        inner = _Stream(mid + ((nl, cells / fibers if fibers else 0.0),))
        return {"crd2": _Stream(outer), "crd1": _Stream(mid), "crd0": inner, "val": inner}

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

    def _op_lane_split(self, node: Node) -> dict[str, _Stream]:
        """A lane keeps its share of the level: ``1/lanes`` of the positions, of which
        the fraction in ``[lo, hi)`` (coordinates assumed uniform); it fires once per
        input token (``busy``), kept or not."""
        p = node.params
        crd, ref = self._in(node, "crd_in"), self._in(node, "ref_in")
        size, dens = crd.inner()[0]
        share = (min(p["hi"], size) - min(p["lo"], size)) / size if size else 0.0
        lv = crd.levels[:-1] + ((size, dens * share / p["lanes"]),)
        fill = _filled(ref)
        return {"crd": _Stream(lv), "ref": _Stream(lv, ref.real).annotated(
            _padded(ref), fill[:-1] + (fill[-1] * share / p["lanes"],) if fill else ())}

    def _op_position_split(self, node: Node) -> dict[str, _Stream]:
        """A lane keeps its windows of the key's positions: ``Σ (hi - lo)`` of the
        positions the key stream is expected to hold (positions assumed spread evenly)."""
        crd, ref = self._in(node, "crd_in"), self._in(node, "ref_in")
        total = self._in(node, "pos_in").count
        kept = sum(hi - lo for lo, hi in position_windows(node.params))
        share = min(1.0, kept / total) if total else 0.0
        size, dens = crd.inner()[0]
        lv = crd.levels[:-1] + ((size, dens * share),)
        return {"crd": _Stream(lv), "ref": _Stream(lv, ref.real)}

    def _merged(self, node: Node, outer: str) -> tuple[_Stream, int]:
        """Two lanes' disjoint coordinates at the merged level: their densities add."""
        a, b = self._in(node, f"{outer}_a"), self._in(node, f"{outer}_b")
        (size, pa), (_, pb) = a.inner()[0], b.inner()[0]
        return _Stream(a.levels[:-1] + ((size, min(1.0, pa + pb)),)), len(a.levels)

    def _op_lane_merge(self, node: Node) -> dict[str, _Stream]:
        s, _ = self._merged(node, "crd")
        return {"crd": s, "val": s}

    def _op_lane_merge2(self, node: Node) -> dict[str, _Stream]:
        outer, k = self._merged(node, "crd1")
        inner = _Stream(outer.levels + self._in(node, "crd0_a").levels[k:])
        return {"crd1": outer, "crd0": inner, "val": inner}

    #: a lane reduction's coordinates: as a merge's (shared coordinates counted twice)
    _op_lane_combine = _op_lane_merge
    _op_lane_combine2 = _op_lane_merge2

    def _op_level_writer(self, node: Node) -> dict[str, _Stream]:
        self.writers[(node.params["tensor"], node.params["level"])] = self._in(node, "crd")
        self.writer_nodes[(node.params["tensor"], node.params["level"])] = node.id
        return {}

    def _op_value_writer(self, node: Node) -> dict[str, _Stream]:
        name = node.params["tensor"]
        words = self._in(node, "val").count * self._elems(node, "val")
        self.est.words_written[name] = self.est.words_written.get(name, 0.0) + words
        self._written(node.id, "vals", words)
        return {}

    def _write_levels(self) -> None:
        """crd + seg words of every compressed output level (seg: parent positions + 1)."""
        for name, spec in self.graph.tensors.items():
            if spec.role != "output":
                continue
            fmt = Format.parse(spec.format, len(spec.shape))
            shape = grid_shape(spec)
            parent = 1.0
            for lv in range(fmt.ndim):
                size = shape[fmt.mode_order[lv]]
                if fmt.is_dense(lv):
                    parent *= size
                    continue
                crds = self.writers[(name, lv)].count
                self.est.words_written[name] = self.est.words_written.get(name, 0.0) + \
                    crds + parent + 1
                self._written(self.writer_nodes[(name, lv)], "crd", crds)
                self._written(self.writer_nodes[(name, lv)], "seg", parent + 1)
                parent = crds


def _padded(s: _Stream) -> tuple[bool, ...]:
    """``s``'s owned flags, one per level (an unannotated level counts as owned)."""
    return s.owned + (True,) * (len(s.levels) - len(s.owned))


def _filled(s: _Stream) -> tuple[float, ...]:
    return s.fill + (1.0,) * (len(s.levels) - len(s.fill))


def _address(s: _Stream) -> tuple[float, float, float, float, bool]:
    """How a reference stream walks its tensor's array: ``(sweeps, positions above a
    sweep, run, repeats, aligned)``. An unowned level with owned levels inside restarts
    the address sequence once per coordinate (a sweep each); the owned levels above the
    innermost such level pick the part of the array a sweep ranges over; fully visited
    owned levels at the bottom are consecutive positions (a run, ``aligned`` when they
    are dense: a run starts at a multiple of its length); unowned levels at the bottom
    re-read the same address (repeats, free)."""
    lv, owned, fill = s.levels, _padded(s), _filled(s)
    last = max((i for i, o in enumerate(owned) if o), default=-1)
    star = max((i for i in range(last) if not owned[i]), default=-1)
    counts = [size * d for size, d in lv]
    repeats = max(1.0, math.prod(counts[last + 1:]))
    sweeps = max(1.0, math.prod(counts[:star + 1]))
    above = max(1.0, math.prod(counts[i] / fill[i] for i in range(star) if owned[i]
                               and fill[i] > 0))
    run, aligned = 1.0, True
    for i in range(last, star, -1):
        if not owned[i] or fill[i] < 0.999:
            break
        run *= max(1.0, counts[i])
        aligned = aligned and lv[i][1] >= 0.999
    return sweeps, above, run, repeats, aligned


def _without_restarts(s: _Stream) -> tuple[_Stream, float] | None:
    """``s`` without the unowned levels that restart a sweep over the same part of the
    array (the innermost block of them above an owned level, when an owned level is
    above them too), and how many times each address those levels repeat it; None when
    there are none. A restart is free when that part fits in the window's line."""
    owned = _padded(s)
    last = max((i for i, o in enumerate(owned) if o), default=-1)
    star = max((i for i in range(last) if not owned[i]), default=-1)
    top = star
    while top > 0 and not owned[top - 1]:
        top -= 1
    if star < 0 or top == 0:
        return None
    keep = [i for i in range(len(s.levels)) if not top <= i <= star]
    times = math.prod(size * d for size, d in s.levels[top:star + 1])
    return _Stream(tuple(s.levels[i] for i in keep), s.real,
                   tuple(owned[i] for i in keep),
                   tuple(_filled(s)[i] for i in keep)), max(1.0, times)


def _blocked(graph: Graph) -> bool:
    return any(t.block for t in graph.tensors.values())


def _grid(given: Any, spec) -> Any:
    """A blocked tensor's statistics as its block grid's (full-size data or densities
    are converted: :func:`compiler._blocks.grid_given`)."""
    if not spec.block:
        return given
    from ._blocks import grid_given

    return grid_given(given, spec.shape, spec.block)


def grid_shape(spec) -> tuple[int, ...]:
    """The shape a graph iterates for a tensor: its block grid when it is blocked."""
    return block_grid(spec.shape, spec.block) if spec.block else tuple(spec.shape)


def estimate(graph: Graph, stats: Mapping[str, TensorStats | float | Any],
             hw: Hardware | None = None) -> Estimate:
    """Expected FLOPs and bytes of ``graph`` for inputs described by ``stats``.

    ``stats`` maps every input tensor to a :class:`TensorStats`, a density (a float: the
    shape comes from the graph) or a tensor (measured with
    :meth:`TensorStats.from_tensor` in the format the graph binds it in). A blocked
    tensor's statistics describe its block grid (which blocks are stored). ``hw`` sets
    the block operators' datapath (``compute.macs_per_cycle``; None: unbounded).
    """
    inputs = {n: t for n, t in graph.tensors.items() if t.role == "input"}
    missing = sorted(set(inputs) - set(stats))
    if missing:
        raise ValueError(f"estimate: no statistics for input tensor(s) {missing} of graph "
                         f"{graph.name!r}; give a TensorStats, a density or a tensor")
    resolved = {name: as_stats(_grid(stats[name], spec), grid_shape(spec), spec.format,
                               f"graph {graph.name!r}", name) for name, spec in inputs.items()}
    return _Walker(graph, resolved, hw).run()
