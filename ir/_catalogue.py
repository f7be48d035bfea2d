"""The primitive catalogue: the one place a SAMML primitive is described.

Every backend (Python model, SystemC, HLS C++, RTL) looks primitives up here by name and
the test suite checks that each backend implements every entry. The firing rule of each
primitive is specified in ``docs/primitives.md``; the catalogue holds what tools need to
wire and check a graph: ports, their stream kinds, parameters, and the properties the
backends would otherwise restate (compute class, block operands, accumulator levels and
their on-chip bytes, memory ports, lane merging). Adding a primitive: docs/primitives.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = ["StreamKind", "Port", "Param", "Primitive", "CATALOGUE", "primitive", "DERIVED_PARAMS",
           "BINARY_OPS", "UNARY_OPS", "REDUCE_OPS", "STREAM_KINDS", "WRITER_PRIMITIVES",
           "COMPUTE_PRIMITIVES", "ENTRY_BYTES", "LANE_MERGES", "MEMORY_PRIMITIVES",
           "position_windows"]

StreamKind = str
STREAM_KINDS: tuple[StreamKind, ...] = ("crd", "ref", "val", "repsig")

BINARY_OPS = ("add", "sub", "mul", "div", "max", "min")
UNARY_OPS = ("relu", "exp", "neg", "rsqrt", "add_const", "mul_const", "div_const")
REDUCE_OPS = ("sum", "max")


@dataclass(frozen=True)
class Port:
    name: str
    kind: StreamKind


#: the implementation parameters a backend takes from the elaboration rather than from
#: the graph (``Primitive.derived``), each rendered by every backend in its own syntax
DERIVED_PARAMS = {
    "acc_bounds": "a sparse accumulator's crd bound per kept level, outermost first "
                  "(ir.NodeElab.acc_bounds: its dense capacity in the RTL and HLS)",
    "fp": "the graph's values are float32 (else int32)",
}


@dataclass(frozen=True)
class Param:
    """A node parameter. ``choices`` restricts strings; ``required`` has no default.

    ``passed``: given in the graph and passed as it is to every backend's implementation,
    in declaration order (a SystemC constructor argument, an RTL module parameter named
    in upper case, an HLS template argument); ``ir.elaborate`` resolves them
    (``NodeElab.given``). The others are read by the tools (``tensor``, ``level``) or
    encoded by each backend (``op``) in its registry of custom parameters."""

    name: str
    type: type
    required: bool = True
    default: Any = None
    choices: tuple[str, ...] | None = None
    doc: str = ""
    passed: bool = False

    def check(self, node_id: str, value: Any) -> Any:
        """Return the value coerced to the declared type, or raise ``ValueError``."""
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if self.type is int and isinstance(value, bool) or not isinstance(value, self.type):
            raise ValueError(
                f"node {node_id!r}: parameter {self.name!r} = {value!r} should be a "
                f"{self.type.__name__}")
        if self.choices is not None and value not in self.choices:
            raise ValueError(
                f"node {node_id!r}: parameter {self.name!r} = {value!r} is not one of "
                f"{', '.join(self.choices)}")
        if self.type is int and value < 0:
            raise ValueError(f"node {node_id!r}: parameter {self.name!r} = {value!r} "
                             "must be >= 0")
        return value


@dataclass(frozen=True)
class Primitive:
    name: str
    summary: str
    inputs: tuple[Port, ...]
    outputs: tuple[Port, ...]
    params: tuple[Param, ...] = field(default=())
    #: names of tensors this primitive reads (its ``tensor`` parameter names an input)
    reads_tensor: bool = False
    #: writers record the result; their consuming ``D`` ends the run
    writes_tensor: bool = False
    #: arrays of its tensor level it reads / writes off-chip when memory is modelled, in
    #: port order (docs/timing.md, "Memory"); a dense level stores none of them
    mem_reads: tuple[str, ...] = ()
    mem_writes: tuple[str, ...] = ()
    #: a compute primitive: a value-consuming firing on blocks costs
    #: ``ceil(work / macs_per_cycle)`` cycles (docs/blocks.md)
    compute: bool = False
    #: operands of its block operator (the ``block`` parameter): 2 for the ALU, 1 for the
    #: reducer, 0 without one
    block_arity: int = 0
    #: a sparse accumulator keeping this many coordinate levels (0: not one); each entry
    #: it holds on chip is those crds and a value (:attr:`entry_bytes`)
    acc_levels: int = 0
    #: consumes a whole fiber of the loop it sums over before it emits (an accumulator):
    #: a stream forked inside that loop and joined past it buffers the whole fiber
    #: (``compiler/_fifo_hazard.py``, docs/compiler.md rule 5)
    drains_fiber: bool = False
    #: merges two lanes' streams: its bounded input FIFOs are lane buffers
    #: (docs/parallel.md, "Lane buffers")
    merges_lanes: bool = False
    #: a lane reduction (of a lane merge): a crd both lanes hold passes once with the sum
    #: of the two values, and at two levels a fiber's closing stop is popped by the next
    #: outer step's firing, not one of its own (docs/timing.md); every backend's merge
    #: takes this one flag
    combines: bool = False
    #: forwards coordinates: the crds of each input ``<p>_in`` leave on output ``<p>``
    #: (followed when bounding an accumulator's crds by the level they are written to)
    forwards_crds: bool = False
    #: implementation parameters from the elaboration (words of :data:`DERIVED_PARAMS`),
    #: after the ``passed`` ones: with those, a backend needs no registry entry
    derived: tuple[str, ...] = ()

    @property
    def passed_params(self) -> tuple[Param, ...]:
        """Its parameters passed as given to every backend's implementation, in order."""
        return tuple(p for p in self.params if p.passed)

    @property
    def entry_bytes(self) -> int:
        """On-chip bytes per accumulator entry: 32-bit crds and value (0: no entries)."""
        return 4 * (self.acc_levels + 1) if self.acc_levels else 0

    @property
    def writes_level(self) -> bool:
        """A level writer: it writes a tensor's coordinates (crds and stops), not values."""
        return self.writes_tensor and any(p.kind == "crd" for p in self.inputs)

    @property
    def reads_compressed(self) -> bool:
        """A compressed level scanner: it reads a level's ``seg`` and ``crd`` arrays."""
        return self.reads_tensor and "seg" in self.mem_reads

    @property
    def reads_values(self) -> bool:
        """A value array: it reads a tensor's stored values onto a value stream."""
        return self.reads_tensor and any(p.kind == "val" for p in self.outputs)

    @property
    def mem_arrays(self) -> tuple[str, ...]:
        """Its memory ports' arrays in slot order: reads, then writes."""
        return self.mem_reads + self.mem_writes

    def input(self, name: str) -> Port | None:
        return next((p for p in self.inputs if p.name == name), None)

    def output(self, name: str) -> Port | None:
        return next((p for p in self.outputs if p.name == name), None)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


def _ports(*spec: str) -> tuple[Port, ...]:
    """``"crd:crd"`` → Port("crd", "crd")."""
    return tuple(Port(*s.split(":")) for s in spec)


_BLOCK = Param("block", str, required=False, default="",
               doc="block operator 'ik,kj->ij;i=16,j=16,k=16' on block values "
                   "(docs/blocks.md); empty = scalar values")
_TENSOR = Param("tensor", str, doc="name of the graph tensor this node reads or writes")
_LEVEL = Param("level", int, doc="storage level of the tensor (0 = outermost)")
#: a sparse accumulator's implementation: its capacity and the dtype
_ACC = ("acc_bounds", "fp")

_ENTRIES = [
    Primitive("root", "emits the root reference stream 0, D", (), _ports("ref:ref")),
    Primitive("scan_compressed", "compressed level scanner: ref -> (crd, ref) of the fiber",
              _ports("ref_in:ref"), _ports("crd:crd", "ref:ref"), (_TENSOR, _LEVEL),
              reads_tensor=True, mem_reads=("seg", "crd")),
    Primitive("scan_dense", "dense level scanner: crds 0..n-1, refs in_ref*n + crd",
              _ports("ref_in:ref"), _ports("crd:crd", "ref:ref"), (_TENSOR, _LEVEL),
              reads_tensor=True),
    Primitive("locate", "dense level locator: ref = ref_in*n + crd_in on aligned streams "
              "(a sparser coordinate stream addresses the dense level, no scan)",
              _ports("crd_in:crd", "ref_in:ref"), _ports("ref:ref"), (_TENSOR, _LEVEL),
              reads_tensor=True),
    Primitive("repsig", "repeat-signal generator: R per crd, stops and D pass",
              _ports("crd:crd"), _ports("repsig:repsig")),
    Primitive("repeat", "repeater: repeats each input ref once per R of its fiber",
              _ports("ref_in:ref", "repsig:repsig"), _ports("ref:ref")),
    Primitive("broadcast", "value broadcaster: repeats each input value once per R of its "
              "fiber (a hoisted reduction's result over the indices it does not depend on)",
              _ports("val_in:val", "repsig:repsig"), _ports("val:val")),
    Primitive("intersect", "coordinate intersecter of two (crd, ref) streams",
              _ports("crd_a:crd", "ref_a:ref", "crd_b:crd", "ref_b:ref"),
              _ports("crd:crd", "ref_a:ref", "ref_b:ref")),
    Primitive("union", "coordinate unioner of two (crd, ref) streams; N on the missing side",
              _ports("crd_a:crd", "ref_a:ref", "crd_b:crd", "ref_b:ref"),
              _ports("crd:crd", "ref_a:ref", "ref_b:ref")),
    Primitive("intersect_val", "intersecter of a (crd, val) stream with a (crd, ref) stream: "
              "an accumulator's rows meeting an operand",
              _ports("crd_a:crd", "val_a:val", "crd_b:crd", "ref_b:ref"),
              _ports("crd:crd", "val_a:val", "ref_b:ref")),
    Primitive("union_val", "unioner of a (crd, val) stream with a (crd, ref) stream; N on "
              "the missing side (a missing value reads as 0)",
              _ports("crd_a:crd", "val_a:val", "crd_b:crd", "ref_b:ref"),
              _ports("crd:crd", "val_a:val", "ref_b:ref")),
    Primitive("array", "value array: val = vals[ref]; N loads 0",
              _ports("ref:ref"), _ports("val:val"), (_TENSOR,), reads_tensor=True,
              mem_reads=("vals",)),
    Primitive("alu", "binary elementwise ALU on two aligned value streams",
              _ports("a:val", "b:val"), _ports("val:val"),
              (Param("op", str, choices=BINARY_OPS), _BLOCK), compute=True, block_arity=2),
    Primitive("unary", "unary elementwise ALU, optionally with a constant operand",
              _ports("a:val"), _ports("val:val"),
              (Param("op", str, choices=UNARY_OPS),
               Param("const", float, required=False, default=0.0,
                     doc="the constant of add_const / mul_const / div_const")),
              compute=True),
    Primitive("reduce", "reducer: removes the innermost level by sum or max; `outer` is the"
              " parent level's ref stream (one ref per reduced fiber)",
              _ports("val_in:val", "outer:ref"), _ports("val:val"),
              (Param("op", str, required=False, default="sum", choices=REDUCE_OPS), _BLOCK),
              compute=True, block_arity=1, drains_fiber=True),
    Primitive("spacc", "sparse vector accumulator: sums the inner fibers of each outer fiber,"
              " emits them sorted by crd", _ports("crd_in:crd", "val_in:val"),
              _ports("crd:crd", "val:val"), compute=True, acc_levels=1, derived=_ACC,
              drains_fiber=True),
    Primitive("spacc2", "sparse matrix accumulator: sums the level-1/level-0 sub-matrices of "
              "each level-2 fiber by (crd1, crd0), emits them sorted",
              _ports("crd1_in:crd", "crd0_in:crd", "val_in:val"),
              _ports("crd1:crd", "crd0:crd", "val:val"), compute=True, acc_levels=2,
              derived=_ACC, drains_fiber=True),
    Primitive("spacc3", "sparse order-3 accumulator: spacc2 with one more kept level; sums "
              "each level-3 fiber's sub-tensors by (crd2, crd1, crd0), emits them sorted",
              _ports("crd2_in:crd", "crd1_in:crd", "crd0_in:crd", "val_in:val"),
              _ports("crd2:crd", "crd1:crd", "crd0:crd", "val:val"), compute=True,
              acc_levels=3, derived=_ACC, drains_fiber=True),
    Primitive("crddrop", "coordinate dropper: drops outer crds whose inner fiber is empty",
              _ports("outer_in:crd", "inner_in:crd"), _ports("outer:crd", "inner:crd"),
              forwards_crds=True),
    Primitive("crdhold", "coordinate hold: repeats each outer crd once per inner crd",
              _ports("outer_in:crd", "inner_in:crd"), _ports("outer:crd", "inner:crd"),
              forwards_crds=True),
    Primitive("lane_split", "one lane's share of a level: keeps a crd when crd mod lanes == "
              "lane and lo <= crd < hi; stops pass",
              _ports("crd_in:crd", "ref_in:ref"), _ports("crd:crd", "ref:ref"),
              (Param("lanes", int, doc="round-robin period (1: no dealing)", passed=True),
               Param("lane", int, doc="the position class this lane keeps (< lanes)",
                     passed=True),
               Param("lo", int, doc="first coordinate of this lane's range", passed=True),
               Param("hi", int, doc="coordinate bound (exclusive) of this lane's range",
                     passed=True))),
    Primitive("lane_merge", "ordered merge of two lanes' (crd, val) streams of one level "
              "(disjoint crds per fiber, aligned stops)",
              _ports("crd_a:crd", "val_a:val", "crd_b:crd", "val_b:val"),
              _ports("crd:crd", "val:val"), merges_lanes=True),
    Primitive("lane_merge2", "ordered merge of two lanes' (outer crd, inner crd, val) "
              "streams: the smaller outer crd, then its inner fiber from that lane",
              _ports("crd1_a:crd", "crd0_a:crd", "val_a:val", "crd1_b:crd", "crd0_b:crd",
                     "val_b:val"),
              _ports("crd1:crd", "crd0:crd", "val:val"), merges_lanes=True),
    Primitive("position_split", "one lane's windows of a level's position space: keeps a "
              "crd (and its ref) when the key operand's position pos_in lies in [lo, hi) "
              "or a further window; stops pass",
              _ports("crd_in:crd", "ref_in:ref", "pos_in:ref"), _ports("crd:crd", "ref:ref"),
              (Param("lo", int, doc="first position of the key level this lane keeps"),
               Param("hi", int, doc="position bound (exclusive) of this lane's window"),
               Param("windows", str, required=False, default="",
                     doc="the lane's further windows after [lo, hi), ascending, as "
                         "'lo:hi,lo:hi' (interleaved windows; empty: one window)"))),
    Primitive("lane_combine", "lane reduction of one level: ordered merge of two lanes' "
              "(crd, val) streams that adds the values of equal crds",
              _ports("crd_a:crd", "val_a:val", "crd_b:crd", "val_b:val"),
              _ports("crd:crd", "val:val"), merges_lanes=True, combines=True,
              derived=("fp",)),
    Primitive("lane_combine2", "lane reduction of two levels: ordered merge of two lanes' "
              "(outer crd, inner crd, val) streams; equal outer crds merge their inner "
              "fibers, adding the values of equal inner crds",
              _ports("crd1_a:crd", "crd0_a:crd", "val_a:val", "crd1_b:crd", "crd0_b:crd",
                     "val_b:val"),
              _ports("crd1:crd", "crd0:crd", "val:val"), merges_lanes=True, combines=True,
              derived=("fp",)),
    Primitive("level_writer", "coordinate level writer: appends crds, one seg entry per fiber",
              _ports("crd:crd"), (), (_TENSOR, _LEVEL), writes_tensor=True,
              mem_writes=("crd", "seg")),
    Primitive("value_writer", "value writer: appends values",
              _ports("val:val"), (), (_TENSOR,), writes_tensor=True,
              mem_writes=("vals",)),
]

CATALOGUE: Mapping[str, Primitive] = MappingProxyType({p.name: p for p in _ENTRIES})
WRITER_PRIMITIVES = frozenset(p.name for p in _ENTRIES if p.writes_tensor)
#: primitives whose firings on a block cost ``ceil(work / macs_per_cycle)`` cycles
COMPUTE_PRIMITIVES = frozenset(p.name for p in _ENTRIES if p.compute)
#: on-chip bytes per entry of each sparse accumulator (the on-chip buffer rule)
ENTRY_BYTES: Mapping[str, int] = MappingProxyType(
    {p.name: p.entry_bytes for p in _ENTRIES if p.acc_levels})
#: primitives whose bounded input FIFOs are lane buffers
LANE_MERGES = frozenset(p.name for p in _ENTRIES if p.merges_lanes)
#: primitives with off-chip memory ports when memory is modelled
MEMORY_PRIMITIVES = frozenset(p.name for p in _ENTRIES if p.mem_arrays)


def primitive(name: str) -> Primitive:
    """Look a primitive up; an unknown name is a user error listing the known ones."""
    try:
        return CATALOGUE[name]
    except KeyError:
        raise KeyError(f"unknown primitive {name!r}; known primitives: "
                       f"{', '.join(sorted(CATALOGUE))}") from None


def position_windows(params: Mapping[str, Any]) -> list[tuple[int, int]]:
    """A ``position_split``'s windows, ``[lo, hi)`` then its further ``windows``; every
    backend reads them here. ``ValueError`` unless each is ``lo <= hi`` and each starts
    at or after the previous one's end (disjoint and ascending)."""
    out = [(params["lo"], params["hi"])]
    for part in filter(None, (params.get("windows") or "").split(",")):
        lo, sep, hi = part.partition(":")
        if not (sep and lo.strip().isdigit() and hi.strip().isdigit()):
            raise ValueError(f"window {part!r}: expected 'lo:hi' with lo, hi >= 0")
        out.append((int(lo), int(hi)))
    for k, (lo, hi) in enumerate(out):
        if lo > hi or k and lo < out[k - 1][1]:
            raise ValueError(f"window [{lo}, {hi}) must have lo <= hi and start at or after "
                             "the previous window's end")
    return out
