"""The parts of a SAMML graph: nodes, edges, tensor declarations, names and the error.

Plain frozen data; :class:`~ir.Graph` (``ir/_graph.py``) validates how they fit together.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ._catalogue import CATALOGUE, Primitive
from ._formats import Format

__all__ = ["GraphError", "Node", "Edge", "TensorSpec", "SCHEMA", "DEFAULT_DEPTH", "MAX_DEPTH",
           "NAME_PATTERN", "check_name", "DTYPES", "ROLES", "LEVEL_READERS", "stored_arrays",
           "buffered_arrays"]

SCHEMA = "samfuse-graph/1"
DEFAULT_DEPTH = 2
#: the deepest bounded FIFO (tokens): the RTL backend declares every FIFO's slots as an
#: array, which Icarus allocates; deeper than this, use null (unbounded)
MAX_DEPTH = 1 << 20
DTYPES = ("float32", "int32")
ROLES = ("input", "output")
#: the storage level type each level reader walks (a scanner of the wrong kind would
#: read the other level's arrays: compressed seg/crd, or a dense level's size)
LEVEL_READERS = {p.name: "compressed" if p.reads_compressed else "dense"
                 for p in CATALOGUE.values() if p.reads_tensor and p.param("level")}


#: primitives whose ``ref`` output carries (a subset of) their ``ref_in`` stream
_REF_PASSERS = frozenset({"repeat", "lane_split", "position_split"})


class GraphError(ValueError):
    """A malformed graph: the message names the node, port or edge at fault."""


#: graph, tensor, node and region names become parts of file names (traces, outputs,
#: kernel JSON), so they are restricted to one portable set (docs/graph-json.md): a
#: letter or ``_``, then letters, digits and ``_ . - # +``; never ``..``; at most 200
NAME_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_.#+-]{0,199}")


def check_name(kind: str, name: object, error: type[Exception] = GraphError) -> str:
    """``name`` if it is in :data:`NAME_PATTERN`, else ``error`` naming ``kind``."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name) or ".." in name:
        raise error(f"{kind} name {name!r} is not allowed: a name starts with a letter or "
                    "'_' and has at most 200 letters, digits, '_', '.', '-', '#', '+' "
                    "(never '..')")
    return name


@dataclass(frozen=True)
class Node:
    id: str
    op: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def primitive(self) -> Primitive:
        return CATALOGUE[self.op]


@dataclass(frozen=True)
class Edge:
    """A FIFO from ``src`` (``node.port``) to ``dst``; ``depth=None`` means unbounded.

    ``pinned``: the graph needs at least this depth to run (a bypass that buffers a whole
    fiber, docs/timing.md "Which FIFO depth a run uses"): a run's depth raises it, never
    lowers it."""

    src: str
    dst: str
    depth: int | None = DEFAULT_DEPTH
    kind: str = ""
    pinned: bool = False

    @property
    def name(self) -> str:
        return f"{self.src}->{self.dst}"

    def at_depth(self, depth: int | None) -> int | None:
        """This FIFO's depth in a run at ``depth`` (None: unbounded): ``depth``, or its own
        if it is pinned deeper."""
        if self.pinned and depth is not None:
            return None if self.depth is None else max(depth, self.depth)
        return depth

    @property
    def src_node(self) -> str:
        return self.src.rsplit(".", 1)[0]

    @property
    def dst_node(self) -> str:
        return self.dst.rsplit(".", 1)[0]


@dataclass(frozen=True)
class TensorSpec:
    """A tensor a graph reads (``role="input"``) or writes (``"output"``)."""

    name: str
    shape: tuple[int, ...]
    format: str
    role: str = "input"
    #: block extents per mode (values are dense blocks, docs/blocks.md); None = scalars
    block: tuple[int, ...] | None = None
    #: arrays held in on-chip buffers (docs/timing.md, "On-chip buffers"): False (none),
    #: True (every stored array) or the arrays' names (``"vals"``, ``"seg1"``, ``"crd1"``)
    buffer: bool | tuple[str, ...] = False
    #: a *materialised intermediate* (docs/timing.md, "On-chip buffers"): the tensor lives
    #: on chip, written there by an earlier kernel of its region. An output: its writers
    #: write the on-chip buffer, no DRAM. An input: every array it stores is a buffer that
    #: needs no fill (it already holds the tensor)
    onchip: bool = False


def stored_arrays(spec: TensorSpec) -> tuple[str, ...]:
    """The arrays ``spec`` stores, by their names in ``buffer``: ``seg<k>`` and ``crd<k>``
    of every compressed level *k* (dense levels store none), then ``vals``."""
    fmt = Format.parse(spec.format, len(spec.shape))
    return tuple(f"{a}{k}" for k in range(fmt.ndim) if not fmt.is_dense(k)
                 for a in ("seg", "crd")) + ("vals",)


def buffered_arrays(spec: TensorSpec) -> tuple[str, ...]:
    """The arrays of ``spec`` held on chip (its ``buffer`` field resolved; a materialised
    input holds all of them)."""
    if spec.buffer is True or spec.onchip and spec.role == "input":
        return stored_arrays(spec)
    return tuple(spec.buffer) if spec.buffer else ()
