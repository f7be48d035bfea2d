"""A run's configuration: one workload under one value of every study axis, and the data
sets a workload's tensors may hold. A frozen, JSON-able value whose hash (with the hardware's
numbers and the version of the code that computes results) names its cache file.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ir import DEFAULT_HW, Hardware, load_hw

from ._hw_spec import hw_from_json, hw_to_json

__all__ = ["Workload", "RunConfig", "code_version", "source_hash", "RESULT_PACKAGES",
           "MAX_SEED", "DEFAULT_LANE_BUFFER", "schedule_name", "par_label", "hw_set_label",
           "GRAPH_DATASETS", "RMAT_DEFAULT", "RMAT_MAX_SCALE", "RMAT_MAX_EDGE_FACTOR",
           "rmat_params", "graph_dataset"]

#: the largest seed: torch's generators take 64-bit seeds; study tables store int64
MAX_SEED = (1 << 63) - 1
#: a lane's output buffer unless the study says otherwise: None, the compiler sizes it for
#: the partition (docs/parallel.md, "Lane buffers")
DEFAULT_LANE_BUFFER: int | None = None

#: the project's root: the folder holding the packages below
_ROOT = Path(__file__).resolve().parents[2]
#: the packages whose sources decide a run's result; the study machinery, the
#: autoscheduler, the plots and the command line choose, schedule and show runs, and
#: editing them keeps every cached result
RESULT_PACKAGES = ("ir", "compiler", "sim_models", "rtl_hls", "cosim/backends", "cosim/runs")
_CODE_SUFFIXES = {".py", ".h", ".sv", ".cpp", ".in", ".json"}


def source_hash(root: Path) -> str:
    """Hash of every source file under :data:`RESULT_PACKAGES` of ``root`` (each package
    walked, so a new or renamed file counts without being listed anywhere)."""
    h = hashlib.sha256()
    for package in RESULT_PACKAGES:
        for path in sorted((root / package).rglob("*")):
            if path.suffix in _CODE_SUFFIXES and "__pycache__" not in path.parts:
                h.update(str(path.relative_to(root)).encode())
                h.update(path.read_bytes())
    return h.hexdigest()[:16]


@functools.cache
def code_version() -> str:
    """The installed code's :func:`source_hash`: part of every run's cache key."""
    return source_hash(_ROOT)


@dataclass(frozen=True)
class Workload:
    """A bundled model (``model``/``config``), one einsum expression (``expr`` with
    ``formats``/``shapes``), a hand-built example kernel (``kernel`` at ``size``) or an
    MLIR file (``mlir``: its path; ``mlir_sha``: its content's hash, for the cache key)."""

    label: str
    model: str | None = None
    config: str = "small"
    expr: str | None = None
    formats: tuple[tuple[str, str], ...] = ()
    shapes: tuple[tuple[str, tuple[int, ...]], ...] = ()
    density: float = 0.1
    kernel: str | None = None
    size: int = 0
    #: tensor -> bundled data set whose adjacency it is (others are random)
    datasets: tuple[tuple[str, str], ...] = ()
    mlir: str | None = None
    mlir_sha: str = ""

    @property
    def kind(self) -> str:
        return "model" if self.model else "mlir" if self.mlir else \
            "kernel" if self.kernel else "expr"

    @property
    def is_program(self) -> bool:
        """A whole program under a fusion schedule (a model or an MLIR file)."""
        return self.model is not None or self.mlir is not None


@dataclass(frozen=True)
class RunConfig:
    """One run of a study: a workload under one value of every axis."""

    study: str
    workload: Workload
    schedule: str = "unfused"
    order: str = "default"
    depth: int | None = 2
    seed: int = 0
    dtype: str = "float32"
    backends: tuple[str, ...] = ("python",)
    #: a preset name, or a hardware read from a file as JSON (``cosim.runs._hw_spec``)
    hw: str = DEFAULT_HW
    #: overrides applied to it: sorted (key, value) pairs
    hw_set: tuple[tuple[str, str], ...] = ()
    #: parallel lanes: sorted (index, lanes > 1) pairs; empty = one lane
    par: tuple[tuple[str, int], ...] = ()
    partition: str = "round-robin"
    lane_buffer: int | None = DEFAULT_LANE_BUFFER
    #: block extent of the workload's sparse tensors (1 = scalar values; docs/blocks.md)
    block: int = 1
    #: skip a model run whose heuristic predicts more seconds than this (None: never), as
    #: FuseFlow skips full fusion where it would not finish (docs/studies.md)
    budget: float | None = None
    #: association of the workload's chains of products (docs/fusion.md, "Association")
    assoc: str = "as-written"
    #: on-chip buffers (docs/timing.md): auto, none, or comma-separated tensor[.array]
    #: names; a model's schedule may set its own
    buffer: str = "none"

    def __post_init__(self) -> None:
        # one lane has no partition and no lane buffers: every spelling of it is one run
        if not self.par:
            object.__setattr__(self, "partition", "round-robin")
            object.__setattr__(self, "lane_buffer", DEFAULT_LANE_BUFFER)

    @property
    def lanes(self) -> int:
        """Lanes in all: the product of every parallel index's lanes."""
        return math.prod(n for _, n in self.par)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        if self.workload.mlir is None:  # other workloads keep the keys they had before
            del out["workload"]["mlir"], out["workload"]["mlir_sha"]
        if not self.par:  # a one-lane run keeps the key it had before lanes existed
            for k in ("par", "partition", "lane_buffer"):
                del out[k]
        if self.block == 1:  # so does a scalar run, from before blocks
            del out["block"]
        if self.budget is None:  # and a run without a budget, from before budgets
            del out["budget"]
        if self.assoc == "as-written":  # and a run as written, from before association
            del out["assoc"]
        if self.buffer == "none":  # and a run without buffers, from before buffers
            del out["buffer"]
        return out

    def hardware(self) -> Hardware:
        """The machine this run simulates."""
        base = hw_from_json(self.hw) if self.hw.startswith("{") else load_hw(self.hw)
        return load_hw(base, [f"{k}={v}" for k, v in self.hw_set])

    def key(self, code_version: str) -> str:
        """Hash of the configuration, the hardware's every number (a preset's file can
        change) and the code that computes its result."""
        payload = json.dumps({"run": self.to_json(), "hw": hw_to_json(self.hardware()),
                              "code": code_version}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:20]



def schedule_name(value: str) -> str:
    """What a run's ``schedule`` column shows: the named schedule or the schedule's name."""
    return value if not value.startswith("{") else json.loads(value)["name"]


def par_label(par: tuple[tuple[str, int], ...] | list) -> str | None:
    """What a run's ``par`` column shows: ``i=4,j=4``, or nothing for one lane."""
    return ",".join(f"{k}={n}" for k, n in par) or None


def hw_set_label(pairs: tuple[tuple[str, str], ...] | list) -> str | None:
    """What a run's ``hw_set`` column shows: ``key=value,…`` or nothing."""
    return ",".join(f"{k}={v}" for k, v in pairs) or None


#: data sets an expression's tensor can hold (its adjacency matrix); ``rmat`` is a
#: generated power-law graph, ``rmat:SCALE:EDGE_FACTOR[:SEED]`` at another size
GRAPH_DATASETS = ("karate", "cora", "rmat", "hubs")
#: ``rmat`` alone: 2**10 nodes, 8 edges per node (before duplicates), seed 0
RMAT_DEFAULT = (10, 8, 0)
#: the largest R-MAT a study builds: the numpy reference holds the adjacency dense
RMAT_MAX_SCALE = 12
#: edges drawn per node: 64 x 2^12 nodes is a quarter of the dense adjacency's entries, and
#: the generator holds every drawn edge at once
RMAT_MAX_EDGE_FACTOR = 64


def rmat_params(name: str) -> tuple[int, int, int] | None:
    """``(scale, edge_factor, seed)`` of an ``rmat`` data set name, None for another name;
    raises ``ValueError`` for a malformed one."""
    head, *rest = name.split(":")
    if head != "rmat":
        return None
    if not rest:
        return RMAT_DEFAULT
    if len(rest) not in (2, 3) or not all(x.isdigit() for x in rest):
        raise ValueError("expected rmat:SCALE:EDGE_FACTOR or rmat:SCALE:EDGE_FACTOR:SEED")
    scale, factor, *seed = map(int, rest)
    if not 1 <= scale <= RMAT_MAX_SCALE or not 1 <= factor <= RMAT_MAX_EDGE_FACTOR:
        raise ValueError(f"expected 1 <= SCALE <= {RMAT_MAX_SCALE} and 1 <= EDGE_FACTOR <= "
                         f"{RMAT_MAX_EDGE_FACTOR}")
    return scale, factor, seed[0] if seed else 0



def graph_dataset(name: str) -> Any:
    """The named data set's adjacency (scipy CSR, 0/1)."""
    from ir import datasets

    rmat = rmat_params(name)
    if rmat is not None:
        scale, factor, seed = rmat
        return datasets.rmat_graph(scale, factor, seed=seed)
    if name == "hubs":  # issue 28: power law, the heaviest row a tenth of the entries
        return datasets.chung_lu_graph(2000, 10_000, 1.6, seed=1, directed=True)
    return datasets.karate_club().adj if name == "karate" else datasets.cora_like().adj

