"""The timing knobs of docs/timing.md ("Latency, II and start-up"), described once.

Per primitive kind (hardware keys ``timing.<primitive>.latency|ii|startup``, overridable
per node by the node parameters ``latency``, ``ii``, ``startup``) and per edge
(``fifo.latency``: 1, 2 or ``vitis``). This module validates the keys against the
catalogue and resolves a node's and an edge's knobs; ``ir.elaborate`` calls it once per
graph and the backends render the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ._catalogue import CATALOGUE

__all__ = ["TIMING_KNOBS", "NODE_KNOBS", "NODE_DEFAULTS", "FIFO_LATENCIES", "TimingSpec",
           "NodeTiming", "EdgeTiming", "timing_key", "check_fifo_latency", "node_timing",
           "edge_timing", "check_node_timing", "DEFAULT_NODE_TIMING"]

#: the per-node knobs with their defaults (today's contract) and smallest legal value
NODE_DEFAULTS: Mapping[str, int] = MappingProxyType({"latency": 1, "ii": 1, "startup": 0})
_NODE_MIN = {"latency": 1, "ii": 1, "startup": 0}
NODE_KNOBS: tuple[str, ...] = tuple(NODE_DEFAULTS)
#: every knob a backend may have to render (``Backend.timing_knobs`` lists its own)
TIMING_KNOBS: tuple[str, ...] = (*NODE_KNOBS, "fifo.latency")
#: ``fifo.latency`` values: a read latency, or Vitis's choice by depth
FIFO_LATENCIES: tuple[int | str, ...] = (1, 2, "vitis")
#: the largest per-node knob a backend builds (a 16-bit pipeline / counter in the RTL)
_NODE_MAX = 1 << 16
#: the depth above which Vitis HLS builds a RAM FIFO (read latency 2, capacity depth + 1)
VITIS_SRL_MAX_DEPTH = 2


@dataclass(frozen=True)
class NodeTiming:
    """One node's knobs: its outputs are visible ``latency - 1`` cycles later than at the
    default, it fires at most once every ``ii`` cycles, never before cycle ``startup``."""

    latency: int = 1
    ii: int = 1
    startup: int = 0

    @property
    def is_default(self) -> bool:
        return self == DEFAULT_NODE_TIMING


DEFAULT_NODE_TIMING = NodeTiming()


@dataclass(frozen=True)
class EdgeTiming:
    """One edge's FIFO: read latency ``read_latency`` (1 or 2) and ``capacity`` tokens
    (None = unbounded); ``visibility`` adds its writer's latency: a token pushed at ``t``
    is visible to the reader from ``t + visibility``."""

    read_latency: int = 1
    capacity: int | None = 2
    visibility: int = 1


@dataclass(frozen=True)
class TimingSpec:
    """The ``timing.*`` keys a hardware description sets (the rest keep their defaults):
    ``knobs`` maps ``"<primitive>.<knob>"`` to its value."""

    knobs: Mapping[str, int] = field(default_factory=dict)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.knobs.items())))

    def of(self, primitive: str) -> NodeTiming:
        """The knobs of a primitive kind."""
        return NodeTiming(**{k: self.knobs.get(f"{primitive}.{k}", NODE_DEFAULTS[k])
                             for k in NODE_KNOBS})

    def flat(self) -> dict[str, int]:
        """``timing.<primitive>.<knob>`` → value, sorted (what ``samfuse hw`` lists)."""
        return {f"timing.{k}": v for k, v in sorted(self.knobs.items())}


def timing_key(key: str, where: str, error: type[Exception]) -> tuple[str, str]:
    """Split ``timing.<primitive>.<knob>`` into its primitive and knob, or raise ``error``
    naming what was wrong."""
    parts = key.split(".")
    if len(parts) != 3 or parts[0] != "timing":
        raise error(f"{where}: timing key {key!r} must be timing.<primitive>.<knob> with "
                    f"<knob> one of {', '.join(NODE_KNOBS)}, e.g. timing.alu.latency")
    _, prim, knob = parts
    if prim not in CATALOGUE:
        raise error(f"{where}: {key}: unknown primitive {prim!r}; known: "
                    f"{', '.join(sorted(CATALOGUE))}")
    if knob not in NODE_DEFAULTS:
        raise error(f"{where}: {key}: unknown timing knob {knob!r}; expected one of "
                    f"{', '.join(NODE_KNOBS)}")
    return prim, knob


def check_knob(knob: str, value: Any, what: str, error: type[Exception]) -> int:
    """A knob's value: a whole number, at least its minimum (latency, ii ≥ 1, startup ≥ 0)."""
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        value = int(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    lo = _NODE_MIN[knob]
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= _NODE_MAX:
        raise error(f"{what} = {value!r} must be a whole number from {lo} to {_NODE_MAX}")
    return value


def check_fifo_latency(value: Any, where: str, error: type[Exception]) -> int | str:
    """``fifo.latency``: 1, 2 or ``vitis``."""
    if isinstance(value, str) and value.strip().lower() == "vitis":
        return "vitis"
    if isinstance(value, str) and value.strip() in ("1", "2"):
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value in (1, 2):
        return value
    raise error(f"{where}: fifo.latency = {value!r} must be 1, 2 or vitis (1 at depth <= 2, "
                "2 at depth > 2 with capacity depth + 1, as Vitis HLS builds FIFOs)")


def check_node_timing(node_id: str, op: str, params: Mapping[str, Any],
                      error: type[Exception]) -> dict[str, int]:
    """The timing parameters a graph node sets (``latency``, ``ii``, ``startup``), checked
    as every graph field is: a JSON integer, never coerced from a string or a float."""
    out = {}
    for k in NODE_KNOBS:
        if k in params:
            what = f"node {node_id!r} ({op}): parameter {k}"
            v = params[k]
            if isinstance(v, bool) or not isinstance(v, int):
                raise error(f"{what} = {v!r} must be a whole number (a JSON integer)")
            out[k] = check_knob(k, v, what, error)
    return out


def node_timing(op: str, params: Mapping[str, Any], spec: TimingSpec | None) -> NodeTiming:
    """A node's knobs: its own parameter, else its primitive's hardware key, else the
    default."""
    base = spec.of(op) if spec is not None else DEFAULT_NODE_TIMING
    own = {k: params[k] for k in NODE_KNOBS if k in params}
    if not own:
        return base
    return NodeTiming(**{k: int(own.get(k, getattr(base, k))) for k in NODE_KNOBS})


def edge_timing(depth: int | None, fifo_latency: int | str, writer_latency: int) -> EdgeTiming:
    """An edge's read latency and capacity under ``fifo.latency`` (docs/timing.md)."""
    if fifo_latency == "vitis":
        ram = depth is not None and depth > VITIS_SRL_MAX_DEPTH
        f, cap = (2, depth + 1) if ram else (1, depth)
    else:
        f, cap = int(fifo_latency), depth
    return EdgeTiming(f, cap, writer_latency - 1 + f)
