"""Fusion schedules: which statements of a :class:`Program` fuse into one dataflow graph.

A schedule is a list of *regions*. Each region names program statements (by target); the
compiler inlines the producers a region keeps to itself into their consumers and emits
one fused expression per tensor the region exports. A region may carry a (partial)
dataflow order over the index names of its fused expression, and the schedule may
override the storage format of any tensor — typically of intermediates that are
materialised in memory between regions. ``docs/fusion.md`` shows the YAML form.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._formats import Format, FormatError
from ._graph import check_name
from ._program import Program

__all__ = ["Region", "Schedule", "ScheduleError", "SCHEDULE_SCHEMA", "PARTITIONS",
           "ASSOCIATIONS", "check_assoc"]

SCHEDULE_SCHEMA = 1


class ScheduleError(ValueError):
    """A schedule that does not fit its program (unknown statement, overlap, cycle...)."""


@dataclass
class Region:
    """A fusion region: statement targets, an optional partial dataflow order over the
    fused expression's index names, and whether tensors may be transposed in memory."""

    name: str
    statements: list[str]
    order: list[str] | None = None
    transpose: bool = True
    #: parallel lanes per output index (``{"i": 4, "j": 4}`` nests; docs/parallel.md)
    par: dict[str, int] = field(default_factory=dict)
    #: how lanes share an index: "round-robin" or "balanced" (equal measured work)
    partition: str = "round-robin"
    #: output buffer per lane in front of the lane merges, in tokens (None: sized for the
    #: partition by the compiler)
    lane_buffer: int | None = None
    #: how the region's chains of products associate (:data:`ASSOCIATIONS`; None: the
    #: schedule's); docs/fusion.md, "Association"
    assoc: str | None = None
    #: which inputs' arrays live in on-chip buffers (:func:`check_buffer`; None: the
    #: schedule's); docs/timing.md, "On-chip buffers"
    buffer: str | tuple[str, ...] | None = None
    #: intermediates the region computes once into an on-chip buffer instead of inlining
    #: them into their consumers (docs/fusion.md, "Materialised intermediates")
    materialise: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_name("region", self.name, ScheduleError)
        self.materialise = _check_materialise(self.name, self.materialise)
        if self.assoc is not None:
            check_assoc(f"region {self.name!r}", self.assoc)
        if self.buffer is not None:
            self.buffer = check_buffer(f"region {self.name!r}: buffer", self.buffer)
        self.par = _check_par(self.name, self.par)
        if self.partition not in PARTITIONS:
            raise ScheduleError(f"region {self.name!r}: partition {self.partition!r} is not "
                                f"one of {', '.join(PARTITIONS)}")
        if self.lane_buffer is not None and (
                isinstance(self.lane_buffer, bool) or not isinstance(self.lane_buffer, int)
                or self.lane_buffer < 2):
            raise ScheduleError(f"region {self.name!r}: lane_buffer {self.lane_buffer!r} must "
                                "be a number of tokens >= 2")
        if isinstance(self.statements, str):
            raise ScheduleError(f"region {self.name!r}: statements must be a list of "
                                f"statement targets, not the string {self.statements!r}")
        self.statements = [str(s) for s in self.statements]
        if isinstance(self.order, str):
            self.order = [p for p in self.order.replace(" ", "").split(",") if p]
        elif self.order is not None and not isinstance(self.order, (list, tuple)):
            raise ScheduleError(f"region {self.name!r}: order must be a list of index "
                                f"names or a comma-separated string such as 'i,k,j', got "
                                f"{self.order!r}")
        elif self.order is not None:
            self.order = [str(p) for p in self.order]
        if self.order is not None:
            dup = sorted({p for p in self.order if self.order.count(p) > 1})
            if dup:
                raise ScheduleError(f"region {self.name!r}: order {self.order!r} lists "
                                    f"{dup} more than once; an order is a chain, each index "
                                    "at most once")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "statements": list(self.statements)}
        if self.order is not None:
            out["order"] = ",".join(self.order)
        if not self.transpose:
            out["transpose"] = False
        if self.par:
            out["par"] = dict(self.par)
        if self.partition != "round-robin":
            out["partition"] = self.partition
        if self.lane_buffer is not None:
            out["lane_buffer"] = self.lane_buffer
        if self.assoc is not None:
            out["assoc"] = self.assoc
        if self.buffer is not None:
            out["buffer"] = _buffer_out(self.buffer)
        if self.materialise:
            out["materialise"] = list(self.materialise)
        return out


def _check_materialise(region: str, value: Any) -> tuple[str, ...]:
    """A region's ``materialise``: tensor names (a list or one comma-separated string)."""
    if isinstance(value, str):
        value = [p for p in value.replace(" ", "").split(",") if p]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v
                                                        for v in value):
        raise ScheduleError(f"region {region!r}: materialise {value!r}: expected a list of "
                            "tensors the region defines, such as [XW]")
    return tuple(value)


@dataclass
class Schedule:
    """Fusion regions (run in list order, dependencies permitting) and format overrides."""

    regions: list[Region]
    formats: dict[str, str] = field(default_factory=dict)
    name: str = "schedule"
    #: lanes for every region that sets no ``par`` of its own, on those of the indices
    #: that are output indices of its kernels (a study's ``par`` axis; docs/parallel.md)
    par: dict[str, int] = field(default_factory=dict)
    partition: str = "round-robin"
    lane_buffer: int | None = None
    #: block sparsity: seed tensor -> block extent of each of its modes; the compiler
    #: blocks every index the seeds' indices meet (docs/blocks.md, "Models")
    block: dict[str, int] = field(default_factory=dict)
    #: how chains of products associate in every region that sets no ``assoc`` of its
    #: own (:data:`ASSOCIATIONS`; "as-written" keeps the program's)
    assoc: str = "as-written"
    #: on-chip buffers of every region that sets none of its own (:func:`check_buffer`;
    #: None: the caller's default, ``samfuse model``'s ``--buffer``)
    buffer: str | tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.buffer is not None:
            self.buffer = check_buffer(f"schedule {self.name!r}: buffer", self.buffer)
        check = Region("schedule", [], None, True, self.par, self.partition,
                       self.lane_buffer)  # the same rules as a region's
        self.par = check.par
        check_assoc(f"schedule {self.name!r}", self.assoc)
        if not isinstance(self.block, dict):
            raise ScheduleError(f"schedule block {self.block!r} must map tensor names to "
                                "block extents, e.g. {mask: 16}")
        for tensor, b in self.block.items():
            if isinstance(b, bool) or not isinstance(b, int) or b < 1:
                raise ScheduleError(f"schedule block {tensor}: {b!r} must be an int >= 1")
        self.block = {str(t): b for t, b in self.block.items() if b > 1}

    @property
    def has_lanes(self) -> bool:
        """Whether some region may run on parallel lanes (its own ``par`` or the
        schedule's): its compile then wants the data, for balanced partitions."""
        return bool(self.par) or any(r.par for r in self.regions)

    def lanes_of(self, region: Region, outputs: Iterable[str]) -> Region:
        """``region`` with the schedule's lanes where it sets none: the schedule's
        ``par`` restricted to ``outputs`` (its kernels' output indices)."""
        if region.par or not self.par:
            return region
        outs = set(outputs)  # once: ``outputs`` may be a generator
        par = {k: v for k, v in self.par.items() if k in outs}
        return Region(region.name, region.statements, region.order, region.transpose, par,
                      self.partition, self.lane_buffer, region.assoc, region.buffer,
                      region.materialise)

    def assoc_of(self, region: Region) -> str:
        """The association of ``region``'s product chains: its own, else the schedule's."""
        return region.assoc if region.assoc is not None else self.assoc

    @property
    def reassociates(self) -> bool:
        """Whether some region re-associates its chains (any assoc but "as-written")."""
        return any(self.assoc_of(r) != "as-written" for r in self.regions)

    @property
    def prices_assoc(self) -> bool:
        """Whether some region lets the cost model choose its association: its compile
        then wants the data (the densities decide which association is cheaper)."""
        return any(self.assoc_of(r) == "cost" for r in self.regions)

    # -- constructors ----------------------------------------------------------------
    @classmethod
    def unfused(cls, program: Program) -> Schedule:
        """One region per statement: every intermediate goes through memory."""
        return cls([Region(st.target, [st.target]) for st in program.statements],
                   name="unfused")

    @classmethod
    def fused(cls, program: Program) -> Schedule:
        """One region holding every statement: only outputs reach memory."""
        return cls([Region("all", [st.target for st in program.statements])], name="fused")

    @classmethod
    def by_scope(cls, program: Program, depth: int | None = 1) -> Schedule:
        """Partial fusion: one region per model layer, i.e. per run of consecutive
        statements whose scopes share their first ``depth`` components, a numeric
        component (a ``ModuleList`` index) counting with the name before it: ``layers.0``
        and ``layers.0.lin`` are both layer ``layers.0``. Statements of the model's own
        ``forward`` (scope ``""``) between layers form regions ``main``, ``main#2``…; a
        layer that reappears later starts ``name#2``. ``depth=None``: the whole scope."""
        if depth is not None and (not isinstance(depth, int) or depth < 1):
            raise ScheduleError(f"by_scope depth {depth!r}: expected a positive number of "
                                "scope components, or None for the whole scope")
        regions: list[Region] = []
        seen: dict[str, int] = {}
        last = None
        for st in program.statements:
            layer = _layer_of(st.scope, depth) or "main"
            if layer == last:
                regions[-1].statements.append(st.target)
                continue
            last = layer
            seen[layer] = seen.get(layer, 0) + 1
            name = layer if seen[layer] == 1 else f"{layer}#{seen[layer]}"
            regions.append(Region(name, [st.target]))
        return cls(regions, name="by_scope")

    @classmethod
    def groups(cls, program: Program, groups: Iterable[Sequence[str]],
               formats: dict[str, str] | None = None) -> Schedule:
        """One region per group of statement targets (named by its targets)."""
        regions = [Region("+".join(g), list(g)) for g in groups]
        sched = cls(regions, dict(formats or {}), name="groups")
        sched.validate(program)
        return sched

    # -- checks ----------------------------------------------------------------------
    def validate(self, program: Program) -> None:
        """Every statement in exactly one region, known names, valid formats, no cycle."""
        targets = [st.target for st in program.statements]
        owner: dict[str, str] = {}
        names: set[str] = set()
        for reg in self.regions:
            if reg.name in names:
                raise ScheduleError(f"two regions are named {reg.name!r}; region names "
                                    "must be unique")
            names.add(reg.name)
            if not reg.statements:
                raise ScheduleError(f"region {reg.name!r} has no statements; expected at "
                                    f"least one of {targets}")
            for t in reg.statements:
                if t not in targets:
                    raise ScheduleError(f"region {reg.name!r} names {t!r}, which no "
                                        f"statement of program {program.name!r} defines; "
                                        f"statement targets: {targets}")
                if t in owner:
                    where = ("twice" if owner[t] == reg.name
                             else f"in regions {owner[t]!r} and {reg.name!r}")
                    raise ScheduleError(f"statement {t!r} is listed {where}; each "
                                        "statement belongs to exactly one region")
                owner[t] = reg.name
            for t in reg.materialise:
                if t not in reg.statements:
                    raise ScheduleError(f"region {reg.name!r}: materialise names {t!r}, which "
                                        f"is not one of its statements {reg.statements}")
        missing = [t for t in targets if t not in owner]
        if missing:
            raise ScheduleError(f"statement(s) {missing} are in no region; every statement "
                                "of the program must be scheduled")
        for tensor, spec in self.formats.items():
            decl = program.tensors.get(tensor)
            if decl is None:
                raise ScheduleError(f"format override for {tensor!r}, which program "
                                    f"{program.name!r} does not declare; tensors: "
                                    f"{sorted(program.tensors)}")
            try:
                Format.parse(spec, len(decl.shape))
            except FormatError as exc:
                raise ScheduleError(f"format override for {tensor!r}: {exc}") from None
        for tensor in self.block:
            if tensor not in program.tensors:
                raise ScheduleError(f"block names {tensor!r}, which program "
                                    f"{program.name!r} does not declare; tensors: "
                                    f"{sorted(program.tensors)}")
        self.execution_order(program)

    def region_of(self, target: str) -> Region:
        for reg in self.regions:
            if target in reg.statements:
                return reg
        raise ScheduleError(f"statement {target!r} is in no region of schedule "
                            f"{self.name!r}")

    def dependencies(self, program: Program) -> dict[str, list[str]]:
        """Region → the regions whose exported tensors it reads."""
        owner = {t: reg.name for reg in self.regions for t in reg.statements}
        deps: dict[str, list[str]] = {reg.name: [] for reg in self.regions}
        for st in program.statements:
            me = owner.get(st.target)
            for r in st.reads:
                other = owner.get(r)
                if me is not None and other is not None and other != me \
                        and other not in deps[me]:
                    deps[me].append(other)
        return deps

    def execution_order(self, program: Program) -> list[Region]:
        """Regions in list order, moved only as far as dependencies require; a cycle of
        regions (A reads from B and B from A) is an error naming it."""
        deps = self.dependencies(program)
        by_name = {reg.name: reg for reg in self.regions}
        done: list[str] = []
        pending = [reg.name for reg in self.regions]
        while pending:
            ready = next((n for n in pending if all(d in done for d in deps[n])), None)
            if ready is None:
                cycle = _cycle(pending, deps)
                raise ScheduleError("regions depend on each other in a cycle: "
                                    + " -> ".join(map(repr, cycle))
                                    + " (each reads a tensor the next one computes); "
                                    "merge them or move statements so data flows one way")
            done.append(ready)
            pending.remove(ready)
        return [by_name[n] for n in done]

    # -- serialisation ---------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out = {"schema": SCHEDULE_SCHEMA, "name": self.name,
               "regions": [reg.to_dict() for reg in self.regions],
               "formats": dict(self.formats)}
        if self.par:
            out.update(par=dict(self.par), partition=self.partition,
                       lane_buffer=self.lane_buffer)
        if self.block:
            out["block"] = dict(self.block)
        if self.assoc != "as-written":
            out["assoc"] = self.assoc
        if self.buffer is not None:
            out["buffer"] = _buffer_out(self.buffer)
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Schedule:
        if not isinstance(data, dict):
            raise ScheduleError(f"a schedule must be a mapping with 'regions', got "
                                f"{type(data).__name__}")
        if data.get("schema", SCHEDULE_SCHEMA) != SCHEDULE_SCHEMA:
            raise ScheduleError(f"schedule schema {data.get('schema')!r}: expected "
                                f"{SCHEDULE_SCHEMA}")
        unknown = sorted(set(data) - {"schema", "name", "regions", "formats", "par",
                                      "partition", "lane_buffer", "block", "assoc", "buffer"})
        if unknown:
            raise ScheduleError(f"unknown schedule key(s) {unknown}; expected schema, "
                                "name, regions, formats, par, partition, lane_buffer, "
                                "block, assoc, buffer")
        regions = data.get("regions")
        if not isinstance(regions, list):
            raise ScheduleError(f"schedule 'regions' must be a list, got {regions!r}")
        formats = data.get("formats") or {}
        if not isinstance(formats, dict):
            raise ScheduleError(f"schedule 'formats' must map tensor names to format "
                                f"specs, got {formats!r}")
        return cls([_region_from(r, n) for n, r in enumerate(regions)],
                   {str(k): str(v) for k, v in formats.items()},
                   str(data.get("name", "schedule")), data.get("par") or {},
                   data.get("partition", "round-robin"), data.get("lane_buffer"),
                   data.get("block") or {}, data.get("assoc", "as-written"),
                   data.get("buffer"))

    def to_yaml(self) -> str:
        import yaml

        return yaml.safe_dump(self.to_dict(), sort_keys=False)

    @classmethod
    def from_yaml(cls, text: str) -> Schedule:
        import yaml

        from ._yaml import load_yaml

        try:
            data = load_yaml(text)
        except yaml.YAMLError as exc:
            raise ScheduleError(f"schedule YAML does not parse: {exc}") from None
        return cls.from_dict(data)

    def __str__(self) -> str:
        lines = [f"schedule {self.name}"
                 + (f"  assoc {self.assoc}" if self.assoc != "as-written" else "")]
        for reg in self.regions:
            extra = f"  order {','.join(reg.order)}" if reg.order else ""
            extra += "  (no transposes)" if not reg.transpose else ""
            if reg.par:
                extra += "  par " + ",".join(f"{k}={v}" for k, v in reg.par.items()) + \
                    f" {reg.partition}"
            if reg.assoc is not None:
                extra += f"  assoc {reg.assoc}"
            if reg.materialise:
                extra += f"  materialise {','.join(reg.materialise)}"
            lines.append(f"  region {reg.name}: {', '.join(reg.statements)}{extra}")
        lines += [f"  format {t}: {f}" for t, f in self.formats.items()]
        return "\n".join(lines)


def _layer_of(scope: str, depth: int | None = 1) -> str:
    """The first ``depth`` components of a module scope, a numeric component (an
    ``nn.ModuleList`` or ``nn.Sequential`` index) counting with the name before it:
    ``_layer_of("layers.0.lin") == "layers.0"``, ``_layer_of("attention.attn.qkv.q") ==
    "attention"``, ``_layer_of("attention.attn.qkv.q", 2) == "attention.attn"``.
    ``depth=None`` keeps the whole scope."""
    if depth is None:
        return scope
    parts: list[str] = []
    for part in scope.split(".") if scope else ():
        if part.isdigit() and parts:
            parts[-1] += f".{part}"
        elif len(parts) == depth:
            break
        else:
            parts.append(part)
    return ".".join(parts)


def _region_from(data: Any, n: int) -> Region:
    if not isinstance(data, dict) or "statements" not in data:
        raise ScheduleError(f"region #{n}: expected a mapping with 'statements' (and "
                            f"optionally name, order, transpose), got {data!r}")
    unknown = sorted(set(data) - set(_REGION_KEYS))
    if unknown:
        raise ScheduleError(f"region #{n}: unknown key(s) {unknown}; expected "
                            f"{', '.join(_REGION_KEYS)}")
    stmts = data["statements"]
    if isinstance(stmts, str):
        stmts = [p for p in stmts.replace(" ", "").split(",") if p]
    if not isinstance(stmts, list):
        raise ScheduleError(f"region #{n}: statements must be a list, got {stmts!r}")
    transpose = data.get("transpose", True)
    if not isinstance(transpose, bool):
        raise ScheduleError(f"region #{n}: transpose must be true or false, got "
                            f"{transpose!r}")
    return Region(data.get("name", f"r{n}"), stmts, data.get("order"), transpose,
                  data.get("par") or {}, data.get("partition", "round-robin"),
                  data.get("lane_buffer"), data.get("assoc"), data.get("buffer"),
                  data.get("materialise") or ())


_REGION_KEYS = ("name", "statements", "order", "transpose", "par", "partition",
                "lane_buffer", "assoc", "buffer", "materialise")
#: the on-chip buffer choices that are not a list of names (docs/timing.md)
BUFFER_MODES = ("auto", "none")


def check_buffer(where: str, value: Any) -> str | tuple[str, ...]:
    """A ``buffer`` choice: ``auto``, ``none``, or tensors / ``tensor.array`` names (a
    list or one comma-separated string); anything else is one error line."""
    if isinstance(value, str):
        if value.strip() in BUFFER_MODES:
            return value.strip()
        value = [p for p in value.replace(" ", "").split(",") if p]
    if not isinstance(value, (list, tuple)) or not value or not all(
            isinstance(v, str) and v and v.count(".") <= 1 and not v.startswith(".")
            for v in value):
        raise ScheduleError(f"{where} {value!r}: expected auto, none, or a list of tensors "
                            "or tensor.array names such as [X, A.crd1]")
    return tuple(value)


def _buffer_out(buffer: str | tuple[str, ...]) -> str | list[str]:
    return buffer if isinstance(buffer, str) else list(buffer)
#: partitioning strategies of parallel lanes (docs/parallel.md)
PARTITIONS = ("round-robin", "balanced", "position", "position-contiguous")
#: how a chain of products associates: as the program writes it, ((A·B)·C)·D,
#: A·(B·(C·D)), or the cheapest by the compiler's cost model (docs/fusion.md)
ASSOCIATIONS = ("as-written", "left", "right", "cost")


def check_assoc(where: str, assoc: Any) -> str:
    """``assoc`` if it is one of :data:`ASSOCIATIONS`, else a one-line ScheduleError."""
    if assoc not in ASSOCIATIONS:
        raise ScheduleError(f"{where}: assoc {assoc!r} is not one of "
                            f"{', '.join(ASSOCIATIONS)}")
    return assoc


def _check_par(region: str, par: Any) -> dict[str, int]:
    """``{"i": 4}`` or ``"i=4,j=2"``: index names with lane counts from 1 to 64."""
    if isinstance(par, str):
        items = [p.partition("=") for p in par.replace(" ", "").split(",") if p]
        if any(not sep for _, sep, _ in items):
            raise ScheduleError(f"region {region!r}: par {par!r}: expected INDEX=LANES "
                                "pairs such as 'i=4,j=2'")
        par = {k: int(v) if v.isdigit() else v for k, _, v in items}
    if not isinstance(par, dict):
        raise ScheduleError(f"region {region!r}: par must map index names to lane counts "
                            f"({{i: 4}}), got {par!r}")
    for k, v in par.items():
        if not isinstance(k, str) or isinstance(v, bool) or not isinstance(v, int) or \
                not 1 <= v <= 64:
            raise ScheduleError(f"region {region!r}: par {k}={v!r}: expected an index name "
                                "and a number of lanes from 1 to 64")
    return dict(par)


def _cycle(nodes: list[str], deps: dict[str, list[str]]) -> list[str]:
    """A dependency cycle among ``nodes`` (each of which waits on another of them)."""
    path = [nodes[0]]
    while True:
        nxt = next(d for d in deps[path[-1]] if d in nodes)
        if nxt in path:
            return [*path[path.index(nxt):], nxt]
        path.append(nxt)
