"""The simulated hardware: one description every backend reads (docs/timing.md, memory).

A :class:`Hardware` is loaded from a bundled preset or a YAML file and adjusted by
``KEY=VALUE`` overrides; every key is documented once, in :data:`HW_KEYS`, which is what
``samfuse hw`` prints. ``ideal`` turns the memory system off: exactly the contract (and the
cycle counts) of a machine whose memory costs nothing. ``fifo.depth`` replaces the FIFO
depth compiled into every edge (``fuseflow``: unbounded, as FuseFlow's simulator runs).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._timing import TimingSpec, check_fifo_latency, check_knob, timing_key

if TYPE_CHECKING:
    from ._graph import Graph

__all__ = ["Hardware", "DramSpec", "OnchipSpec", "ComputeSpec", "FifoSpec", "HwError", "HW_KEYS",
           "HW_MAX", "HW_PRESETS", "DEFAULT_HW", "load_hw", "run_depth", "at_run_depth",
           "WORD_BYTES", "TimingSpec", "hw_key_doc"]

#: every stored word (a seg or crd entry, a value) is 32 bits, as on the token payload
WORD_BYTES = 4


class HwError(ValueError):
    """A hardware description or override that cannot describe a machine."""


@dataclass(frozen=True)
class DramSpec:
    """Off-chip memory: ``channels`` independent channels, each a first-come-first-served
    server of ``bytes_per_cycle`` bytes per clock cycle."""

    enabled: bool = True
    channels: int = 1
    bytes_per_cycle: int = 64
    latency_cycles: int = 1
    line_bytes: int = 64
    outstanding: int = 8
    #: loads in flight per value array (docs/timing.md, "Loads in flight"); 1 = none ahead
    load_queue: int = 1


@dataclass(frozen=True)
class OnchipSpec:
    """On-chip storage: the capacity the sparse accumulators, the lane buffers and the
    on-chip buffers share, and the buffers' read timing (docs/timing.md, "On-chip
    buffers")."""

    bytes: int = 1 << 30
    #: cycles from a buffer read's service to its word being usable
    latency: int = 0
    #: reads one buffer serves per cycle (2: a dual-port BRAM)
    ports: int = 2


@dataclass(frozen=True)
class ComputeSpec:
    """The datapath of a block operator (docs/blocks.md): multiply-accumulates (or
    elementwise operations) one ALU, reducer or accumulator node performs per cycle.
    0 = unbounded: every firing takes one cycle, the scalar contract."""

    macs_per_cycle: int = 0


#: ``fifo.depth`` values that are words: keep the graph's depths, or unbounded FIFOs
GRAPH_DEPTH, UNBOUNDED_DEPTH = "graph", "inf"


@dataclass(frozen=True)
class FifoSpec:
    """The FIFOs between primitives: ``graph`` keeps the depth compiled into each edge;
    a whole number >= 1 or ``inf`` (unbounded) replaces every edge's depth, the lanes'
    output buffers included (docs/timing.md, "Which FIFO depth a run uses")."""

    depth: int | str = GRAPH_DEPTH
    #: read latency of every edge: 1, 2 or ``vitis`` (docs/timing.md, "Latency, II and
    #: start-up")
    latency: int | str = 1


@dataclass(frozen=True)
class Hardware:
    name: str = "ideal"
    clock_mhz: float = 1000.0
    dram: DramSpec = field(default_factory=lambda: DramSpec(enabled=False))
    onchip: OnchipSpec = field(default_factory=OnchipSpec)
    compute: ComputeSpec = field(default_factory=ComputeSpec)
    fifo: FifoSpec = field(default_factory=FifoSpec)
    source: str = ""
    timing: TimingSpec = field(default_factory=TimingSpec)

    @property
    def memory(self) -> bool:
        """Whether scanners, arrays and writers pay for off-chip accesses."""
        return self.dram.enabled

    @property
    def fifo_depth(self) -> int | None | str:
        """The depth ``fifo.depth`` gives every edge, as backends take it: an int, ``None``
        (unbounded) or ``"graph"`` (each edge keeps its compiled depth)."""
        d = self.fifo.depth
        return None if d == UNBOUNDED_DEPTH else d

    def firing_cycles(self, work: int) -> int:
        """Cycles a block operator's firing of ``work`` operations occupies its node."""
        m = self.compute.macs_per_cycle
        return 1 if m == 0 or work <= m else -(-work // m)

    def words_per_line(self) -> int:
        return self.dram.line_bytes // WORD_BYTES

    def seconds(self, cycles: int) -> float:
        return cycles / (self.clock_mhz * 1e6)

    def peak_gbps(self) -> float:
        """Aggregate off-chip bandwidth in GB/s (all channels)."""
        d = self.dram
        return d.channels * d.bytes_per_cycle * self.clock_mhz * 1e6 / 1e9

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def with_overrides(self, overrides: list[str] | dict[str, Any]) -> Hardware:
        """A copy with ``KEY=VALUE`` overrides (``dram.latency_cycles=100``) applied."""
        pairs = _parse_overrides(overrides)
        data = self.to_dict()
        for key, value in pairs:
            head, _, tail = key.partition(".")
            if head == "timing":
                data["timing"] = {"knobs": {**data["timing"]["knobs"], tail: value}}
            elif tail:
                data[head][tail] = value
            else:
                data[key] = value
        return _build(data, f"{self.name} with {', '.join(f'{k}={v}' for k, v in pairs)}")


#: key → (type, unit, meaning); the one documentation of every knob
HW_KEYS: dict[str, tuple[type, str, str]] = {
    "name": (str, "", "preset or file name, for reports"),
    "clock_mhz": (float, "MHz", "clock the cycle counts are converted to seconds and GB/s with"),
    "dram.enabled": (bool, "", "false = ideal memory: scanners, arrays and writers cost no "
                     "memory cycles (the contract without a memory system)"),
    "dram.channels": (int, "", "independent off-chip channels (HBM pseudo-channels, DDR "
                      "channels); memory port k uses channel k mod channels"),
    "dram.bytes_per_cycle": (int, "B/cycle", "bandwidth of one channel per clock cycle"),
    "dram.latency_cycles": (int, "cycles", "from a line's transfer to its data being usable "
                            "(reads) or acknowledged (writes)"),
    "dram.line_bytes": (int, "B", "request granularity: one request moves one line; a "
                        "multiple of the 4-byte word"),
    "dram.outstanding": (int, "lines", "lines a memory port may have requested and not yet "
                         "consumed (reads: its prefetch window) or not yet acknowledged "
                         "(writes)"),
    "dram.load_queue": (int, "loads", "reads a value array keeps in flight: it takes up to "
                        "this minus 1 refs ahead of the value it emits into a load queue, "
                        "each with its read issued, and emits their values in order (1 = "
                        "no queue: one read in flight, the ref at its input's head)"),
    "onchip.bytes": (int, "B", "on-chip storage for the sparse accumulators' entries "
                     "(8 bytes per spacc entry, 12 per spacc2 entry, 16 per spacc3 "
                     "entry), the lane buffers and the on-chip buffers (4 bytes per word)"),
    "onchip.latency": (int, "cycles", "from an on-chip buffer read's service to its word "
                       "being usable (0 = in the cycle it is served, as ideal memory)"),
    "onchip.ports": (int, "reads", "reads one on-chip buffer serves per cycle, "
                     "shared by every port that reads it (2 = a dual-port BRAM)"),
    "compute.macs_per_cycle": (int, "ops/cycle", "operations one block ALU, reducer or "
                               "accumulator performs per cycle: a firing on a block of W "
                               "operations occupies its node ceil(W / this) cycles (0 = "
                               "unbounded; scalar values always take one cycle)"),
    "fifo.depth": (int, "tokens", "FIFO depth of every edge, the lanes' output buffers "
                   "included: graph = the depths compiled into the graph, a whole number >= 1, "
                   "or inf = unbounded (Python and SystemC models; HLS C-simulation sizes "
                   "unbounded streams at 8192, RTL refuses them); a run's --depth wins over it"),
    "source": (str, "", "where the numbers come from"),
    # the timing knobs (docs/timing.md, "Latency, II and start-up"); <primitive> is a
    # catalogue name, and a node's own parameter of the same name wins
    "fifo.latency": (str, "cycles", "FIFO read latency of every edge: 1 (a token written at "
                     "t is readable at t+1), 2 (at t+2), or vitis (1 at depth <= 2; 2 at depth "
                     "> 2 with capacity depth+1, Vitis HLS's RAM FIFO)"),
    "timing.<primitive>.latency": (int, "cycles", "a firing at t makes its outputs visible "
                                   "L-1 cycles later than at latency 1 (default 1); they hold "
                                   "their FIFO slot from t"),
    "timing.<primitive>.ii": (int, "cycles", "initiation interval: the node fires at most "
                              "once every ii cycles (default 1)"),
    "timing.<primitive>.startup": (int, "cycles", "no firing before this cycle (default 0)"),
}

#: the sections of a description: nested mappings in YAML, dotted keys in overrides
_SECTIONS = {"dram": DramSpec, "onchip": OnchipSpec, "compute": ComputeSpec, "fifo": FifoSpec}
#: the largest value of each numeric key a backend can build: channels and the per-port
#: line buffers (``line_bytes`` x ``outstanding``) are allocated by the simulators and
#: become SystemVerilog parameters; the others are 32-bit counters in the RTL
HW_MAX: dict[str, float] = {
    "clock_mhz": 1e6,
    "dram.channels": 1024,
    "dram.bytes_per_cycle": 1 << 20,
    "dram.latency_cycles": 1 << 20,
    "dram.line_bytes": 1 << 16,
    "dram.outstanding": 4096,
    "dram.load_queue": 4096,
    "onchip.bytes": 1 << 48,
    "onchip.latency": 1 << 20,
    "onchip.ports": 4096,
    "compute.macs_per_cycle": 1 << 20,
}

_PRESET_DIR = Path(__file__).with_name("hw")
#: the preset models and studies run on unless told otherwise
DEFAULT_HW = "hbm2-u280"


def hw_key_doc(key: str) -> tuple[type, str, str]:
    """``HW_KEYS``' entry for ``key``: a ``timing.<primitive>.<knob>`` key has its
    pattern's."""
    if key.startswith("timing."):
        return HW_KEYS["timing.<primitive>." + key.rsplit(".", 1)[1]]
    return HW_KEYS[key]


def _known_key(key: str, where: str) -> bool:
    """Whether ``key`` is a hardware key; a malformed ``timing.*`` key raises its own
    error (which primitive or knob is unknown)."""
    if key.startswith("timing."):
        timing_key(key, where, HwError)
        return True
    return key in HW_KEYS and "<" not in key


def _presets() -> dict[str, Path]:
    return {p.stem: p for p in sorted(_PRESET_DIR.glob("*.yaml"))}


HW_PRESETS: tuple[str, ...] = tuple(_presets())


def load_hw(spec: str | Path | Hardware | None = None,
            overrides: list[str] | dict[str, Any] | None = None) -> Hardware:
    """A preset name, a YAML file, or a :class:`Hardware`, with overrides applied.

    ``None`` means ``ideal`` (the contract without memory), which unit tests keep; the CLI
    and the studies pass :data:`DEFAULT_HW` explicitly.
    """
    if isinstance(spec, Hardware):
        hw = spec
    else:
        name = "ideal" if spec is None else str(spec)
        presets = _presets()
        path = presets.get(name)
        if path is None:
            path = Path(name)
            if path.suffix not in (".yaml", ".yml") or not path.is_file():
                raise HwError(f"unknown hardware {name!r}: give a preset "
                              f"({', '.join(presets)}) or a .yaml file")
        hw = _load_file(path)
    return hw.with_overrides(overrides) if overrides else hw


def _load_file(path: Path) -> Hardware:
    import yaml

    from ._yaml import load_yaml

    try:
        data = load_yaml(path.read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise HwError(f"{path}: cannot read the hardware description: "
                      f"{str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise HwError(f"{path}: a hardware description is a mapping of the keys "
                      f"{', '.join(HW_KEYS)}")
    if not set(data) - {"name", "source"}:
        only = f" (only {', '.join(sorted(data))})" if data else ""
        raise HwError(f"{path}: sets no hardware key{only}; a file describes a machine: "
                      "start from a preset's keys (`samfuse hw hbm2-u280`) and change the "
                      "ones that differ")
    data.setdefault("name", path.stem)
    return _build(data, str(path))


def _build(data: dict[str, Any], where: str) -> Hardware:
    """Validate every key and value; unknown keys and bad values name the key."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if key == "timing":
            flat.update(_timing_items(value, where))
        elif isinstance(value, dict) and key in _SECTIONS:
            for sub, v in value.items():
                flat[f"{key}.{sub}"] = v
        else:
            flat[key] = value
    for key in flat:
        if not _known_key(key, where):
            raise HwError(f"{where}: unknown hardware key {key!r}; keys: "
                          f"{', '.join(HW_KEYS)}")
    checked = {key: _check(key, value, where) for key, value in flat.items()}
    sections = {name: cls(**{k.split(".", 1)[1]: v for k, v in checked.items()
                             if k.startswith(f"{name}.")})
                for name, cls in _SECTIONS.items()}
    top = {k: v for k, v in checked.items() if "." not in k}
    top["timing"] = TimingSpec({k.split(".", 1)[1]: v for k, v in sorted(checked.items())
                                if k.startswith("timing.")})
    dram = sections["dram"]
    if dram.line_bytes % 4:
        raise HwError(f"{where}: dram.line_bytes = {dram.line_bytes} must be a multiple of "
                      "the 4-byte word")
    return Hardware(**sections, **top)


def at_run_depth(graph: Graph, depth: int | None | str, hw: Hardware | str | None) -> Graph:
    """``graph`` with every edge at the depth the run uses (:func:`run_depth`), or itself
    when that is the compiled depth; what each backend simulates and checks on-chip
    storage against (the lanes' output buffers at their run depth)."""
    d = run_depth(depth, hw)
    return graph if d == GRAPH_DEPTH else graph.with_depth(d)


def run_depth(depth: int | None | str, hw: Hardware | str | None) -> int | None | str:
    """The FIFO depth a run uses (docs/timing.md): the run's own ``depth`` (an int, or
    ``None`` = unbounded) wins; ``"graph"`` defers to the hardware's ``fifo.depth``, whose
    default ``graph`` keeps each edge's compiled depth. Every backend resolves it here;
    ``hw`` is a :class:`Hardware` or anything :func:`load_hw` takes (a preset's name)."""
    if depth != GRAPH_DEPTH or hw is None:
        return depth
    return (hw if isinstance(hw, Hardware) else load_hw(hw)).fifo_depth


def _timing_items(value: Any, where: str) -> dict[str, Any]:
    """A description's ``timing`` section as ``timing.<primitive>.<knob>`` items: YAML's
    nested ``{primitive: {knob: value}}``, or ``to_dict``'s ``{"knobs": {...}}``."""
    if not isinstance(value, dict):
        raise HwError(f"{where}: timing = {value!r} must be a mapping of primitives to "
                      "their knobs, e.g. timing: {alu: {latency: 3}}")
    if set(value) == {"knobs"}:
        value = value["knobs"]
    items = {}
    for prim, knobs in value.items():
        if isinstance(knobs, dict):
            items.update({f"timing.{prim}.{k}": v for k, v in knobs.items()})
        else:
            items[f"timing.{prim}"] = knobs
    return items


def _check(key: str, value: Any, where: str) -> Any:
    if key == "fifo.depth":
        return _check_depth(value, where)
    if key == "fifo.latency":
        return check_fifo_latency(value, where, HwError)
    if key.startswith("timing."):
        return check_knob(key.rsplit(".", 1)[1], value, f"{where}: {key}", HwError)
    typ = HW_KEYS[key][0]
    if typ is bool:
        if isinstance(value, str) and value.lower() in ("true", "false"):
            value = value.lower() == "true"
        if not isinstance(value, bool):
            raise HwError(f"{where}: {key} = {value!r} must be true or false")
        return value
    if typ is str:
        if not isinstance(value, str):
            raise HwError(f"{where}: {key} = {value!r} must be a string")
        return value
    if isinstance(value, str):  # from --hw-set or a quoted YAML value: 32, 32.0, 1e3
        try:
            value = float(value) if typ is float or not value.strip().lstrip("+-").isdigit() \
                else int(value)
        except ValueError:
            raise HwError(f"{where}: {key} = {value!r} must be a number") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise HwError(f"{where}: {key} = {value!r} must be a number")
    if not math.isfinite(value):
        raise HwError(f"{where}: {key} = {value!r} must be a finite number")
    if typ is int:
        if value != value or value in (float("inf"), float("-inf")) or value != int(value):
            raise HwError(f"{where}: {key} = {value!r} must be a whole number")
        value = int(value)
    if key in ("compute.macs_per_cycle", "onchip.latency") and value == 0:
        return 0
    if not value > 0:
        raise HwError(f"{where}: {key} = {value!r} must be positive")
    if value > HW_MAX[key]:
        raise HwError(f"{where}: {key} = {value!r} is above {int(HW_MAX[key]):,}, the "
                      "largest a simulated machine can have")
    return typ(value)


def _check_depth(value: Any, where: str) -> int | str:
    """``fifo.depth``: a whole number >= 1, ``inf`` (also YAML's ``.inf``) or ``graph``."""
    if isinstance(value, str) and value.strip().lower() in (GRAPH_DEPTH, UNBOUNDED_DEPTH):
        return value.strip().lower()
    if isinstance(value, float) and value == float("inf"):
        return UNBOUNDED_DEPTH
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1 << 48:
        raise HwError(f"{where}: fifo.depth = {value!r} must be a whole number >= 1, inf "
                      "(unbounded) or graph (the depths compiled into the graph)")
    return value


def _parse_overrides(overrides: list[str] | dict[str, Any]) -> list[tuple[str, Any]]:
    if isinstance(overrides, dict):
        return list(overrides.items())
    pairs = []
    for item in overrides:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise HwError(f"--hw-set {item!r}: expected KEY=VALUE, e.g. "
                          "dram.latency_cycles=100")
        if not _known_key(key, f"--hw-set {item!r}"):
            raise HwError(f"--hw-set {item!r}: unknown key {key!r}; keys: "
                          f"{', '.join(HW_KEYS)}")
        pairs.append((key, value.strip()))
    return pairs
