"""Load-time rules of a SAMML graph (docs/graph-json.md): the checks :class:`~ir.Graph`
runs once when built or loaded, so every backend can trust a graph."""

from __future__ import annotations

import math

from ._blocks import MAX_BLOCK_ELEMS, BlockError, block_grid, value_elems
from ._catalogue import CATALOGUE, Primitive, position_windows
from ._codec import CodecError, int_constant
from ._formats import Format, FormatError
from ._graph_items import (
    _REF_PASSERS,
    DTYPES,
    LEVEL_READERS,
    MAX_DEPTH,
    ROLES,
    Edge,
    GraphError,
    Node,
    TensorSpec,
    check_name,
    stored_arrays,
)
from ._timing import NODE_KNOBS, check_node_timing

__all__ = ["GraphChecks"]


class GraphChecks:
    """The validation half of :class:`~ir.Graph` (a mixin: it reads the graph's fields)."""

    def _check_tensor(self, t: TensorSpec) -> None:
        check_name("tensor", t.name)
        if t.name in self.tensors:
            raise GraphError(f"tensor {t.name!r} is declared twice")
        if any(isinstance(d, bool) or not isinstance(d, int) or d < 1 for d in t.shape):
            raise GraphError(f"tensor {t.name!r}: shape {list(t.shape)} must be a list "
                             "of ints >= 1")
        if t.role not in ROLES:
            raise GraphError(f"tensor {t.name!r}: role {t.role!r} is not one of "
                             f"{', '.join(ROLES)}")
        try:
            Format.parse(t.format, len(t.shape))
        except FormatError as exc:
            raise GraphError(f"tensor {t.name!r}: {exc}") from None
        if t.block is not None:
            b = t.block
            if len(b) != len(t.shape) or any(isinstance(x, bool) or not isinstance(x, int)
                                             or x < 1 for x in b):
                raise GraphError(f"tensor {t.name!r}: block {list(b)} must give one extent "
                                 f">= 1 per mode of its shape {list(t.shape)}")
            if math.prod(b) > MAX_BLOCK_ELEMS:
                raise GraphError(f"tensor {t.name!r}: block {list(b)} holds {math.prod(b):,} "
                                 f"elements, more than the {MAX_BLOCK_ELEMS:,} a block may")
            if all(x == 1 for x in b):
                raise GraphError(f"tensor {t.name!r}: block {list(b)} has one element, which "
                                 "is a scalar value; omit block")
            bad = [m for m, (n, x) in enumerate(zip(t.shape, b, strict=True)) if n % x]
            if bad:
                m = bad[0]
                raise GraphError(f"tensor {t.name!r}: mode {m} has size {t.shape[m]}, not a "
                                 f"multiple of its block extent {b[m]}")
        self._check_buffer(t)

    def _check_buffer(self, t: TensorSpec) -> None:
        """``buffer`` names arrays the tensor stores, of an input (docs/graph-json.md)."""
        if t.onchip and t.buffer not in (False, True):
            raise GraphError(f"tensor {t.name!r}: buffer {_show(t.buffer)} beside onchip: a "
                             "tensor materialised on chip holds every array it stores")
        if not t.buffer:
            return
        if t.role != "input":
            raise GraphError(f"tensor {t.name!r}: buffer {_show(t.buffer)} but only an input "
                             "can be buffered (an on-chip buffer holds arrays the graph reads)")
        if t.buffer is True:
            return
        arrays = stored_arrays(t)
        for a in t.buffer:
            if a in arrays:
                continue
            dense = a[:3] in ("seg", "crd") and a[3:].isdigit() and int(a[3:]) < len(t.shape)
            why = (f"level {a[3:]} of format {t.format!r} is dense and stores no arrays"
                   if dense else "no such array")
            raise GraphError(f"tensor {t.name!r}: buffer array {a!r}: {why}; its arrays are "
                             f"{', '.join(arrays)}")
        if len(set(t.buffer)) != len(t.buffer):
            raise GraphError(f"tensor {t.name!r}: buffer {_show(t.buffer)} names an array twice")

    def _validate_blocks(self) -> None:
        """Block value widths must agree along every value path (docs/blocks.md)."""
        if not any(t.block for t in self.tensors.values()) and \
                not any(n.params.get("block") for n in self.nodes.values()):
            return
        if self.dtype != "float32":
            raise GraphError(f"graph {self.name!r}: block values are binary32; an "
                             f"{self.dtype} graph cannot carry them")
        try:
            value_elems(self)
        except BlockError as exc:
            raise GraphError(str(exc)) from None

    def _validate_nodes(self) -> None:
        if self.dtype not in DTYPES:
            raise GraphError(f"graph dtype {self.dtype!r} is not one of {', '.join(DTYPES)}")
        for node in self.nodes.values():
            if node.op not in CATALOGUE:
                raise GraphError(f"node {node.id!r}: unknown primitive {node.op!r}; known: "
                                 f"{', '.join(sorted(CATALOGUE))}")
            prim = CATALOGUE[node.op]
            params = dict(node.params)
            params.update(check_node_timing(node.id, node.op, params, GraphError))
            for key in params:
                if prim.param(key) is None and key not in NODE_KNOBS:
                    raise GraphError(f"node {node.id!r} ({node.op}): unknown parameter "
                                     f"{key!r}; expected {[p.name for p in prim.params]}")
            for p in prim.params:
                if p.name not in params:
                    if p.required:
                        raise GraphError(f"node {node.id!r} ({node.op}): missing parameter "
                                         f"{p.name!r}")
                    params[p.name] = p.default
                try:
                    params[p.name] = p.check(node.id, params[p.name])
                except ValueError as exc:
                    raise GraphError(str(exc)) from None
            if node.op == "lane_split" and not (
                    params["lane"] < params["lanes"] and params["lo"] <= params["hi"]):
                raise GraphError(f"node {node.id!r} (lane_split): lane {params['lane']} must "
                                 f"be below lanes {params['lanes']} and lo {params['lo']} at "
                                 f"most hi {params['hi']}")
            if node.op == "position_split":
                try:
                    position_windows(params)
                except ValueError as exc:
                    raise GraphError(f"node {node.id!r} (position_split): {exc}") from None
            if node.op == "unary" and self.dtype == "int32":
                try:  # the constant register is 32 bits wide in every backend
                    int_constant(params["const"], f"node {node.id!r} (unary): constant")
                except CodecError as exc:
                    raise GraphError(str(exc)) from None
            object.__setattr__(node, "params", params)

    def _port(self, end: str, outgoing: bool) -> tuple[Node, str]:
        node_id, _, port = end.rpartition(".")
        if not node_id or node_id not in self.nodes:
            raise GraphError(f"edge end {end!r}: no node {node_id!r}")
        node = self.nodes[node_id]
        ports = node.primitive.outputs if outgoing else node.primitive.inputs
        match = next((p for p in ports if p.name == port), None)
        if match is None:
            raise GraphError(f"edge end {end!r}: {node.op} has no "
                             f"{'output' if outgoing else 'input'} port {port!r}; it has "
                             f"{[p.name for p in ports]}")
        return node, match.kind

    def _validate_edges(self, edges: list[Edge]) -> list[Edge]:
        drivers: dict[str, str] = {}
        checked = []
        #: (primitive, outgoing) -> its ports' kinds by name (a fused layer has 20,000
        #: edges over a few dozen primitives)
        kinds: dict[tuple[str, bool], dict[str, str]] = {}

        def kind(end: str, outgoing: bool) -> str:
            node_id, _, port = end.rpartition(".")
            node = self.nodes.get(node_id)
            if node is not None:
                ports = kinds.get((node.op, outgoing))
                if ports is None:
                    ports = kinds[(node.op, outgoing)] = {}
                    for p in node.primitive.outputs if outgoing else node.primitive.inputs:
                        ports.setdefault(p.name, p.kind)
                found = ports.get(port)
                if found is not None:
                    return found
            return self._port(end, outgoing)[1]  # raises, naming what is wrong

        for e in edges:
            src_kind, dst_kind = kind(e.src, True), kind(e.dst, False)
            if src_kind != dst_kind:
                raise GraphError(f"edge {e.name}: stream kind mismatch, {e.src} is {src_kind}"
                                 f" but {e.dst} expects {dst_kind}")
            if e.depth is not None and (isinstance(e.depth, bool)
                                        or not isinstance(e.depth, int) or e.depth < 1
                                        or e.depth > MAX_DEPTH):
                raise GraphError(f"edge {e.name}: depth {e.depth!r} must be an int >= 1 or "
                                 f"null (unbounded); a FIFO holds at most {MAX_DEPTH:,} "
                                 "tokens")
            if e.dst in drivers:  # an edge listed twice drives its input twice
                raise GraphError(f"input port {e.dst} is driven twice: by {drivers[e.dst]} "
                                 f"and {e.src}")
            drivers[e.dst] = e.src
            checked.append(Edge(e.src, e.dst, e.depth, src_kind, e.pinned))
        for node in self.nodes.values():
            for p in node.primitive.inputs:
                if f"{node.id}.{p.name}" not in drivers:
                    raise GraphError(f"dangling input port {node.id}.{p.name} ({node.op}): "
                                     "no edge drives it")
        return checked

    def _validate_tensor_refs(self) -> None:
        for node in self.nodes.values():
            name = node.params.get("tensor")
            if name is None:
                continue
            spec = self.tensors.get(name)
            want = "output" if node.primitive.writes_tensor else "input"
            if spec is None:
                raise GraphError(f"node {node.id!r} ({node.op}) refers to tensor {name!r}, "
                                 f"which the graph does not declare")
            if spec.role != want:
                raise GraphError(f"node {node.id!r} ({node.op}) uses tensor {name!r} as an "
                                 f"{want}, but it is declared as an {spec.role}")

    def _ref_origin(self, node_id: str, port: str) -> tuple[str, Node]:
        """The root, scanner or locator whose ref stream reaches input ``node_id.port``,
        through repeaters, lane splits and the ref outputs of intersecters and unioners."""
        seen = set()
        edge = self.in_edges[node_id][port]
        while True:
            src, out = edge.src_node, edge.src.rsplit(".", 1)[1]
            node = self.nodes[src]
            if _makes_refs(node.primitive) or src in seen:
                return edge.src, node
            seen.add(src)
            edge = self.in_edges[src]["ref_in" if node.op in _REF_PASSERS else out]

    def _validate_chains(self) -> None:
        """Each scanner / array / writer chain stays in one tensor's level structure: the
        scanner (or locator) of level L of T gets its refs from root (L = 0) or T's level
        L-1 scanner or locator,
        an array of T from T's innermost scanner (or another tensor's scanner that numbers
        the fibers alike: all-dense levels of equal sizes), levels exist, and no output
        level or value array is written twice."""
        written: dict[tuple[str, int | None], str] = {}
        for node in self.nodes.values():
            name = node.params.get("tensor")
            if name is None:
                continue
            ndim = len(self.tensors[name].shape)
            level = node.params.get("level")
            if level is not None and level >= ndim:
                raise GraphError(f"node {node.id!r} ({node.op}): level {level} of tensor "
                                 f"{name!r}, which has {ndim} level(s)")
            if node.primitive.writes_tensor:
                key = (name, level)
                if key in written:
                    what = "values" if level is None else f"level {level}"
                    raise GraphError(f"nodes {written[key]!r} and {node.id!r} both write "
                                     f"{what} of tensor {name!r}")
                written[key] = node.id
                continue
            want = (level if level is not None else ndim) - 1
            port = "ref_in" if level is not None else "ref"
            end, origin = self._ref_origin(node.id, port)
            got = (origin.params.get("tensor"), origin.params.get("level", -1))
            if not origin.primitive.inputs:  # the root
                got = (name, -1)
            if got != (name, want) and not (got[1] == want and
                                            self._same_positions(name, got[0], want)):
                expect = "the root" if want < 0 else f"level {want} of {name!r}"
                found = "the root" if not origin.primitive.inputs else \
                    f"level {got[1]} of {got[0]!r}" if origin.primitive.reads_tensor else \
                    f"a ref cycle through {origin.id!r}"
                raise GraphError(f"node {node.id!r} ({node.op}) reads tensor {name!r} but "
                                 f"its refs come from {found} ({end}); expected {expect}")
            self._check_level_kind(node, name, level)

    def _level_size(self, name: str, level: int) -> tuple[int, int]:
        """(mode, size) of storage level ``level`` of tensor ``name``: of its block grid
        when its values are blocks (its levels store block coordinates)."""
        spec = self.tensors[name]
        mode = Format.parse(spec.format, len(spec.shape)).mode_order[level]
        shape = block_grid(spec.shape, spec.block) if spec.block else spec.shape
        return mode, shape[mode]

    def _crd_origin(self, node_id: str, port: str) -> Node | None:
        """The scanner whose coordinates reach input ``node_id.port``, through the nodes
        that pass a coordinate stream on (intersecters, unioners, droppers, accumulators,
        lane splits and merges); None where no scanner starts the stream."""
        seen = set()
        edge = self.in_edges[node_id][port]
        while edge.src_node not in seen:
            seen.add(edge.src_node)
            node, out = self.nodes[edge.src_node], edge.src.rsplit(".", 1)[1]
            if node.primitive.reads_tensor and node.primitive.output("crd"):  # a scanner
                return node
            ins = self.in_edges[edge.src_node]
            nxt = next((p for p in (f"{out}_in", f"{out}_a", "crd_a", "crd_in") if p in ins),
                       None)
            if nxt is None:
                return None
            edge = ins[nxt]
        return None

    def _validate_output_sizes(self) -> None:
        """Each output mode has the size of the index its writer's coordinates run over:
        a smaller one would be overrun at run time, a larger one padded with zeros."""
        for node in self.nodes.values():
            if not node.primitive.writes_level:
                continue
            name, level = node.params["tensor"], node.params["level"]
            source = self._crd_origin(node.id, "crd")
            if source is None:
                continue
            src_name, src_level = source.params["tensor"], source.params["level"]
            src_mode, want = self._level_size(src_name, src_level)
            mode, have = self._level_size(name, level)
            if have != want:
                raise GraphError(f"output tensor {name!r}: mode {mode} has size {have}, but "
                                 f"its coordinates come from {source.id!r}, which scans mode "
                                 f"{src_mode} of {src_name!r} (size {want}); declare "
                                 f"{name!r} with size {want} there")
    def _validate_lane_splits(self) -> None:
        """The lane splits of one tensor level share its coordinates out evenly: with
        nested lanes each coordinate reaches the same number of copies, so a coordinate
        kept by fewer splits than the others (a gap, which would silently drop its row)
        or by more (an overlap) is refused here, before any run."""
        groups: dict[tuple[str, int, int], list[Node]] = {}
        for node in self.nodes.values():
            if node.op != "lane_split":
                continue
            src = self.nodes[self.in_edges[node.id]["crd_in"].src_node]
            if src.params.get("tensor") is not None and src.params.get("level") is not None:
                key = (src.params["tensor"], src.params["level"], node.params["lanes"])
                groups.setdefault(key, []).append(node)
        windowed = any(node.op == "position_split" for node in self.nodes.values())
        for (name, level, lanes), splits in groups.items():
            size = self._level_size(name, level)[1]
            counts = {r: _coverage(r, lanes, size, [(s.params["lo"], s.params["hi"]) for s
                                                    in splits if s.params["lane"] == r])
                      for r in {s.params["lane"] for s in splits}}
            if len(counts) < min(lanes, size):  # a class no split keeps
                r = next(r for r in range(lanes) if r not in counts)
                counts[r] = [(r, 0)]
            want = max(n for runs in counts.values() for _, n in runs)
            bad = min(((c, n) for runs in counts.values() for c, n in runs if n != want),
                      default=(size, want))
            if bad[0] < size and windowed and min(n for runs in counts.values()
                                                  for _, n in runs) > 0:
                continue  # position lanes share their boundary rows (lane_combine adds)
            if bad[0] < size:
                raise GraphError(f"lane splits {sorted(s.id for s in splits)} of level "
                                 f"{level} of tensor {name!r} give coordinate {bad[0]} to "
                                 f"{bad[1]} lane(s) and others to {want}: lanes must "
                                 f"cover the coordinates 0..{size - 1} evenly")

    def _check_level_kind(self, node: Node, name: str, level: int | None) -> None:
        """A scanner or locator reads a level of its own kind (``LEVEL_READERS``)."""
        kind = LEVEL_READERS.get(node.op)
        if kind is None or level is None:
            return
        spec = self.tensors[name]
        have = Format.parse(spec.format, len(spec.shape)).levels[level]
        if have != kind:
            raise GraphError(f"node {node.id!r} ({node.op}) reads level {level} of tensor "
                             f"{name!r}, which is {have} in format {spec.format!r}; "
                             f"{node.op} needs a {kind} level")

    def _same_positions(self, a: str, b: object, level: int) -> bool:
        """Tensors ``a`` and ``b`` number the fibers of storage level ``level`` alike: every
        level up to it is dense with equal sizes, so one scanner's refs index both (two
        dense vectors sharing one scan_dense)."""
        if b not in self.tensors:
            return False
        sa, sb = self.tensors[a], self.tensors[str(b)]
        try:
            fa = Format.parse(sa.format, len(sa.shape))
            fb = Format.parse(sb.format, len(sb.shape))
        except FormatError:
            return False
        return all(fa.levels[k] == fb.levels[k] == "dense" and
                   sa.shape[fa.mode_order[k]] == sb.shape[fb.mode_order[k]]
                   for k in range(level + 1))


def _coverage(r: int, lanes: int, size: int, ranges: list[tuple[int, int]]
              ) -> list[tuple[int, int]]:
    """How many of ``ranges`` keep each coordinate ``c = r + lanes * k < size``, as runs
    ``(first coordinate, count)``; a sweep over the ranges' ends, never over coordinates."""
    top = -(-(size - r) // lanes)  # coordinates of this class below size
    events: dict[int, int] = {0: 0, top: 0}
    for lo, hi in ranges:
        a, b = max(0, -(-(lo - r) // lanes)), min(top, -(-(hi - r) // lanes))
        if a < b:
            events[a] = events.get(a, 0) + 1
            events[b] = events.get(b, 0) - 1
    runs, count = [], 0
    for k in sorted(events):
        if k >= top:
            break
        count += events[k]
        runs.append((r + lanes * k, count))
    return runs


def _makes_refs(prim: Primitive) -> bool:
    """A ref stream starts here: the root (no inputs), or a scanner or locator of a level."""
    return not prim.inputs or (prim.reads_tensor and prim.output("ref") is not None)


def _show(buffer: bool | tuple[str, ...]) -> str:
    return "true" if buffer is True else repr(list(buffer))
