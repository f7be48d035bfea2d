"""Declarative what-if studies: the YAML file, validated, expanded into run configurations.

A study names workloads (bundled models, MLIR files or einsum expressions) and axes
(fusion schedule, dataflow order, FIFO depth, seed, backends, simulated hardware and its
overrides, parallel lanes and their partition and buffers, block sizes). Every
combination is one :class:`RunConfig`, a frozen, JSON-able value whose hash names its
cache file, so a study can be killed, resumed, re-run or farmed out without losing or
repeating a finished run. Axes that the machine does not model yet are rejected by name
rather than silently ignored.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import re
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from compiler import NAMED_SCHEDULES
from ir import (
    ASSOCIATIONS,
    DEFAULT_HW,
    HW_PRESETS,
    MAX_DEPTH,
    PARTITIONS,
    HwError,
    check_buffer,
    load_hw,
    load_yaml,
)

from ..runs._config import (
    DEFAULT_LANE_BUFFER,
    GRAPH_DATASETS,
    MAX_SEED,
    RunConfig,
    Workload,
    graph_dataset,
    hw_set_label,
    par_label,
    schedule_name,
)
from ..runs._hw_spec import hw_label, hw_to_json

__all__ = ["StudyError", "StudySpec", "RunConfig", "Workload", "load_study", "check_models",
           "AXES",
           "UNBUILT_AXES", "SAFE_NAME", "hw_label", "hw_set_label", "par_label",
           "GRAPH_DATASETS", "graph_dataset", "BUNDLED_STUDIES", "bundled_studies",
           "study_path"]

#: the studies shipped with the package (``samfuse study smoke``), so the tour and the
#: figure studies run from any folder, not only from a clone's root
BUNDLED_STUDIES = Path(__file__).with_name("bundled")


def bundled_studies() -> dict[str, Path]:
    """Bundled study name -> its YAML file."""
    return {p.stem: p for p in sorted(BUNDLED_STUDIES.glob("*.yaml"))}


def study_path(text: str) -> Path:
    """A study file, or the name of a bundled one (``smoke``); anything else is a
    :class:`StudyError` listing the bundled names."""
    path = Path(text)
    if path.is_file():
        return path
    bundled = bundled_studies()
    if text in bundled:
        return bundled[text]
    hint = f"{path.stem} (a bundled study)" if path.stem in bundled else \
        f"a bundled study: {', '.join(bundled)}"
    raise StudyError(f"no such study file; give a study YAML file or {hint}")

#: names that reach file paths (study names, workload labels): letters, digits, ``._-``
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")

#: lanes per parallel index (the compiler's limit)
_MAX_LANES = 64

#: the most runs one study may expand to (each a cached file and a row of the table)
MAX_RUNS = 100_000
#: seconds between the progress lines of a large study's expansion
_EXPAND_EVERY = 2.0

#: axis -> default value list
AXES: dict[str, list[Any]] = {
    "schedule": ["unfused"],
    "order": ["default"],
    "depth": [2],
    "seed": [0],
    "dtype": ["float32"],
    "backends": [["python"]],
    "hw": [DEFAULT_HW],
    "hw_set": [[]],
    "par": [None],
    "partition": ["round-robin"],
    "lane_buffer": [DEFAULT_LANE_BUFFER],
    "block": [1],
    "assoc": ["as-written"],
    "buffer": ["none"],
}

#: axes a study may name one day, with what the machine still lacks for them
UNBUILT_AXES: dict[str, str] = {}

#: the schedules a study names by word
_SCHEDULES = tuple(NAMED_SCHEDULES)

_DTYPES = ("float32", "int32")


class StudyError(ValueError):
    """A study file that cannot run: the message names the key and what was expected."""



@dataclass
class StudySpec:
    name: str
    workloads: list[Workload]
    axes: dict[str, list[Any]]
    mode: str = "product"
    runs: list[dict[str, Any]] = field(default_factory=list)
    #: seconds a model run may be predicted to take before it is skipped (None: no limit)
    budget: float | None = None

    def count(self) -> int:
        """How many runs :meth:`expand` makes at most, from the axes' lengths alone (an
        ``order: all`` counts every permutation), without building them."""
        if self.mode == "product":
            combos = math.prod(len(v) for a, v in self.axes.items() if a != "order")
            return sum(combos * sum(len(_all_orders(w)) if o == "all" else 1
                                    for o in self.axes["order"]) for w in self.workloads)
        return sum(len(_all_orders(w)) if r.get("order") == "all" else 1
                   for r in self.runs for w in self.workloads
                   if w.label in r.get("workloads", [w.label]))

    def expand(self, progress: bool = False) -> list[RunConfig]:
        """Every run: the cross product of the axes (``mode: product``) or the listed
        combinations (``mode: list``), for every workload; ``order: all`` on an
        expression becomes one run per permutation of its indices. More than
        :data:`MAX_RUNS` is refused before anything is built; ``progress`` prints a line
        on stderr every few seconds while a large study expands."""
        total = self.count()
        if total > MAX_RUNS:
            sizes = " x ".join(f"{a} {len(v)}" for a, v in self.axes.items() if len(v) > 1)
            raise StudyError(f"the study has {total:,} runs ({len(self.workloads)} "
                             f"workload(s) x {sizes or 'one combination'}), more than the "
                             f"{MAX_RUNS:,} a study may; split it or shorten its axes")
        combos = (dict(zip(self.axes, values, strict=True))
                  for values in itertools.product(*self.axes.values())) \
            if self.mode == "product" else [{**{a: v[0] for a, v in self.axes.items()}, **r}
                                            for r in self.runs]
        combos = list(combos)
        for c in combos:
            self._check_schedule_applies(c)
        out: list[RunConfig] = []
        shown = time.monotonic()
        for w in self.workloads:
            for c in combos:
                if w.label not in c.get("workloads", [w.label]):
                    continue
                if progress and time.monotonic() - shown > _EXPAND_EVERY:
                    shown = time.monotonic()
                    print(f"study {self.name}: expanding, {len(out):,} of {total:,} runs",
                          file=sys.stderr, flush=True)
                orders = _all_orders(w) if c["order"] == "all" else [c["order"]]
                if w.expr is None and orders != ["default"]:
                    raise StudyError(f"workload {w.label!r}: order {c['order']!r} applies "
                                     f"to expressions; a {w.kind} fixes its own")
                if w.is_program and c["dtype"] != "float32":
                    raise StudyError(f"workload {w.label!r}: models run in float32, not "
                                     f"{c['dtype']}")
                if c["par"]:
                    _check_par_applies(w, c["par"])
                if c["block"] > 1 and w.kernel is not None:
                    raise StudyError(f"workload {w.label!r}: block {c['block']} needs an "
                                     f"expression or a model; the example kernel "
                                     f"{w.kernel!r} is built by hand, with scalar values")
                if c["assoc"] != "as-written" and w.kernel is not None:
                    raise StudyError(f"workload {w.label!r}: assoc {c['assoc']!r} needs an "
                                     f"expression or a model; the example kernel "
                                     f"{w.kernel!r} is built by hand")
                # one expression or kernel is one graph: the fusion schedule does not apply
                schedule = c["schedule"] if w.is_program else "-"
                for order in orders:
                    out.append(RunConfig(
                        self.name, w, schedule, str(order), c["depth"], int(c["seed"]),
                        c["dtype"], tuple(c["backends"]), c["hw"], c["hw_set"],
                        par=c["par"], partition=c["partition"],
                        lane_buffer=c["lane_buffer"], block=c["block"],
                        budget=self.budget if w.is_program else None,
                        assoc=c["assoc"], buffer=c["buffer"]))
        return list(dict.fromkeys(out))

    def _check_schedule_applies(self, combo: dict[str, Any]) -> None:
        """A fusion schedule asked of expressions and kernels alone would be ignored."""
        if combo["schedule"] == "unfused" or any(
                w.is_program and w.label in combo.get("workloads", [w.label])
                for w in self.workloads):
            return
        raise StudyError(f"schedule {schedule_name(combo['schedule'])!r} applies to models; "
                         "this study's workloads here are expressions or kernels, each one "
                         "graph that no fusion schedule changes (leave the axis out)")


def _check_par_applies(w: Workload, par: tuple[tuple[str, int], ...]) -> None:
    """Lanes need a compiled graph (not a hand-built kernel) and, for an expression, an
    index of its output (a model's regions take the indices their kernels output)."""
    shown = par_label(par)
    if w.kernel is not None:
        raise StudyError(f"workload {w.label!r}: par {shown!r} needs an expression or a "
                         f"model; the example kernel {w.kernel!r} is built by hand, without "
                         "lanes")
    if w.expr is not None:
        from compiler import parse

        outs = parse(w.expr).target.indices
        bad = [k for k, _ in par if k not in outs]
        if bad:
            raise StudyError(f"workload {w.label!r}: par {shown!r}: {bad[0]!r} is not an "
                             f"index of the output (lanes split output indices: "
                             f"{', '.join(outs)})")




@functools.cache
def _all_orders(w: Workload) -> list[str]:
    if w.expr is None:
        return ["all"]  # rejected by the caller with the workload's name
    from compiler import normalize, parse

    norm = normalize(parse(w.expr))
    names = list(dict.fromkeys(norm.user[v] for v in norm.indices))
    return [",".join(p) for p in itertools.permutations(names)]


def check_models(workloads: Iterable[Workload]) -> None:
    """Every model workload names a bundled model and one of its configs.

    Separate from parsing because it imports the models (torch): a study whose runs are
    all cached never needs them, and a cached run proves its workload valid."""
    named = [w for w in workloads if w.model]
    if not named:
        return
    from compiler.models import MODELS

    for w in named:
        if w.model not in MODELS:
            raise StudyError(f"workload {w.label!r}: model {w.model!r}; bundled models: "
                             f"{', '.join(sorted(MODELS))}")
        configs = MODELS[w.model].default_config
        if w.config not in configs:
            raise StudyError(f"workload {w.label!r}: {w.model} has no config {w.config!r}; "
                             f"it has {', '.join(configs)}")


def load_study(source: str | Path | Mapping[str, Any], *,
               models: bool = True) -> StudySpec:
    """Read and validate a study (YAML file, YAML text or a mapping); ``models=False``
    leaves the model workloads to :func:`check_models` (``run_study`` calls it for the
    runs it has to run)."""
    base = Path(".")
    if isinstance(source, Mapping):
        doc: Any = dict(source)
    else:
        if isinstance(source, Path) or ("\n" not in str(source) and Path(str(source)).exists()):
            base = Path(source).parent
        try:
            text = Path(source).read_text() if isinstance(source, Path) or (
                "\n" not in str(source) and Path(str(source)).exists()) else str(source)
        except (OSError, UnicodeDecodeError) as exc:
            raise StudyError("not a readable YAML text file: "
                             f"{str(exc).splitlines()[0]}") from None
        try:
            doc = load_yaml(text)
        except yaml.YAMLError as exc:
            raise StudyError(f"study is not valid YAML: {exc}") from None
    if not isinstance(doc, dict):
        raise StudyError("a study is a YAML mapping with 'name', 'workloads' and 'axes'")
    unknown = sorted(set(doc) - {"name", "workloads", "axes", "mode", "runs", "budget"})
    if unknown:
        raise StudyError(f"unknown study key(s) {unknown}; expected name, workloads, axes, "
                         "mode, runs, budget")
    name = doc.get("name")
    if not isinstance(name, str) or not SAFE_NAME.match(name):
        raise StudyError(f"study name {name!r} must match {SAFE_NAME.pattern} (it names "
                         "files)")
    from ._workloads import parse_workload

    workloads = [parse_workload(w, n, base) for n, w in enumerate(_list(doc.get("workloads"),
                                                                   "workloads"))]
    labels = [w.label for w in workloads]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        raise StudyError(f"workload label(s) {dup} used twice; give each a unique 'label'")
    axes_doc = doc.get("axes") or {}
    if not isinstance(axes_doc, dict):
        raise StudyError("'axes' must be a mapping of axis name -> list of values")
    for axis in axes_doc:
        if axis in UNBUILT_AXES:
            raise StudyError(f"axis {axis!r} is not available: {UNBUILT_AXES[axis]}")
        if axis not in AXES:
            raise StudyError(f"unknown axis {axis!r}; known axes: {', '.join(AXES)}")
    axes = {a: [_axis_value(a, v, base) for v in _list(axes_doc.get(a, d), f"axes.{a}")]
            for a, d in AXES.items()}
    mode = doc.get("mode", "product")
    if mode not in ("product", "list"):
        raise StudyError(f"mode {mode!r}: expected 'product' or 'list'")
    runs = []
    if mode == "list":
        for n, r in enumerate(_list(doc.get("runs"), "runs")):
            if not isinstance(r, dict) or set(r) - set(AXES) - {"workloads"}:
                raise StudyError(f"runs[{n}] must map axis names ({', '.join(AXES)}) to "
                                 f"one value each (and optionally 'workloads': labels), "
                                 f"got {r!r}")
            chosen = r.get("workloads", labels)
            chosen = [chosen] if isinstance(chosen, str) else chosen
            if not isinstance(chosen, list) or set(chosen) - set(labels):
                raise StudyError(f"runs[{n}].workloads {chosen!r}: expected labels from "
                                 f"{labels}")
            runs.append({**{a: _axis_value(a, v, base) for a, v in r.items()
                            if a != "workloads"},
                         "workloads": chosen})
    elif "runs" in doc:
        raise StudyError("'runs' lists combinations for 'mode: list'; with 'mode: product' "
                         "the axes are crossed")
    spec = StudySpec(name, workloads, axes, mode, runs, _budget(doc.get("budget")))
    spec.expand(progress=True)  # order: all on a model is an error worth seeing now
    if models:
        check_models(workloads)
    return spec


def _budget(value: Any) -> float | None:
    """The study's ``budget``: predicted seconds per model run, a number > 0, or none."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value <= 0:
        raise StudyError(f"budget {value!r}: expected seconds per run, a number > 0")
    return float(value)


def _schedule_value(v: Any, base: Path) -> str:
    """A named schedule, or a schedule (inline mapping or YAML file) as canonical JSON."""
    from ir import Schedule, ScheduleError

    if isinstance(v, str) and v in _SCHEDULES:
        return v
    try:
        if isinstance(v, dict):
            sched = Schedule.from_dict(v)
        elif isinstance(v, str) and v.endswith((".yaml", ".yml")):
            path = base / v
            if not path.is_file():
                raise StudyError(f"schedule file {v!r} not found (relative to {base})")
            try:
                sched = Schedule.from_yaml(path.read_text())
            except (OSError, UnicodeDecodeError) as exc:
                raise StudyError(f"schedule file {v!r}: {str(exc).splitlines()[0]}") from None
        else:
            raise StudyError(f"schedule {v!r}: expected one of {', '.join(_SCHEDULES)}, a "
                             "schedule YAML file or an inline schedule mapping")
    except ScheduleError as exc:
        raise StudyError(f"schedule {v!r}: {exc}") from None
    if sched.name in _SCHEDULES or not SAFE_NAME.match(sched.name):
        raise StudyError(f"schedule name {sched.name!r} must match {SAFE_NAME.pattern} and "
                         f"differ from {', '.join(_SCHEDULES)}")
    return json.dumps(sched.to_dict(), sort_keys=True)




def _hw_value(v: Any, base: Path) -> str:
    """A preset name as is; a hardware YAML file (relative to the study) as its JSON."""
    if isinstance(v, str) and v in HW_PRESETS:
        return v
    if not isinstance(v, str) or not v.endswith((".yaml", ".yml")):
        raise StudyError(f"hw {v!r}: expected a preset ({', '.join(HW_PRESETS)}) or a "
                         "hardware YAML file")
    try:
        return hw_to_json(load_hw(base / v))
    except HwError as exc:
        raise StudyError(f"hw {v!r}: {exc}") from None


def _hw_set_value(v: Any) -> tuple[tuple[str, str], ...]:
    """Overrides as a mapping ``{KEY: VALUE}`` or a list of ``"KEY=VALUE"``, checked
    against the keys and value types (on ``ideal``; the run applies them to its ``hw``)."""
    if isinstance(v, dict):
        items = [f"{k}={_text(x)}" for k, x in v.items()]
    elif isinstance(v, list) and all(isinstance(x, str) for x in v):
        items = list(v)
    else:
        raise StudyError(f"hw_set {v!r}: expected a mapping of hardware keys to values or "
                         "a list of 'KEY=VALUE' strings")
    try:
        load_hw("ideal", items)
    except HwError as exc:
        raise StudyError(f"hw_set {v!r}: {exc}") from None
    pairs = {}
    for item in items:
        key, _, value = item.partition("=")
        pairs[key.strip()] = value.strip()
    return tuple(sorted(pairs.items()))


def _par_value(v: Any) -> tuple[tuple[str, int], ...]:
    """``none``/``{}``, ``{i: 4, j: 4}`` or ``"i=4,j=4"`` as sorted (index, lanes) pairs;
    an index at one lane is no split, so it is left out (``{i: 1}`` is one lane)."""
    expected = "expected none, a mapping such as {i: 4, j: 4} or a string such as 'i=4,j=4'"
    if v is None or v == {} or (isinstance(v, str) and v.strip().lower() in ("", "none")):
        return ()
    if isinstance(v, str):
        items = [p.partition("=") for p in v.replace(" ", "").split(",") if p]
        if any(not sep or not n.isdigit() for _, sep, n in items):
            raise StudyError(f"par {v!r}: {expected}")
        pairs = [(k, int(n)) for k, _, n in items]
    elif isinstance(v, dict):
        pairs = list(v.items())
    else:
        raise StudyError(f"par {v!r}: {expected}")
    for k, n in pairs:
        if not isinstance(k, str) or not k.isidentifier() or isinstance(n, bool) or \
                not isinstance(n, int) or not 1 <= n <= _MAX_LANES:
            raise StudyError(f"par {v!r}: {k!r}={n!r}: expected an index name and a number "
                             f"of lanes from 1 to {_MAX_LANES}")
    if len({k for k, _ in pairs}) != len(pairs):
        raise StudyError(f"par {v!r}: an index is named twice")
    return tuple(sorted((k, n) for k, n in pairs if n > 1))


def _text(x: Any) -> str:
    """A YAML scalar as an override value: ``true``, ``100`` (also for ``1e2``), ``2.5``."""
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return str(x)




def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list) or not value:
        raise StudyError(f"{where} must be a non-empty list")
    return value


def _axis_value(axis: str, v: Any, base: Path) -> Any:
    if axis == "schedule":
        return _schedule_value(v, base)
    if axis == "hw":
        return _hw_value(v, base)
    if axis == "hw_set":
        return _hw_set_value(v)
    if axis == "par":
        return _par_value(v)
    elif axis == "buffer":
        try:
            choice = check_buffer("buffer", v)
        except ValueError as exc:
            raise StudyError(str(exc)) from None
        return choice if isinstance(choice, str) else ",".join(choice)
    elif axis == "assoc":
        if v not in ASSOCIATIONS:
            raise StudyError(f"assoc {v!r}: expected one of {', '.join(ASSOCIATIONS)}")
    elif axis == "partition":
        if v not in PARTITIONS:
            raise StudyError(f"partition {v!r}: expected one of {', '.join(PARTITIONS)}")
    elif axis == "block":
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 256:
            raise StudyError(f"block {v!r}: expected a block extent from 1 (scalar values) "
                             "to 256")
    elif axis == "lane_buffer":
        if v is None or v == "auto":
            return None
        if isinstance(v, bool) or not isinstance(v, int) or v < 2:
            raise StudyError(f"lane_buffer {v!r}: expected an int >= 2 (tokens per lane "
                             "output buffer) or auto")
    elif axis == "order":
        if not isinstance(v, str) or not v:
            raise StudyError(f"order {v!r}: expected 'default', 'all' or e.g. 'i,k,j'")
    elif axis == "depth":
        if v == "inf" or v == float("inf"):  # as sim --depth spells unbounded
            return None
        if v is not None and (isinstance(v, bool) or not isinstance(v, int)
                              or not 1 <= v <= MAX_DEPTH):
            raise StudyError(f"depth {v!r}: expected an int from 1 to {MAX_DEPTH:,}, inf or "
                             "null (unbounded)")
    elif axis == "seed":
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_SEED:
            raise StudyError(f"seed {v!r}: expected an int from 0 to 2^63 - 1")
    elif axis == "dtype":
        if v not in _DTYPES:
            raise StudyError(f"dtype {v!r}: expected one of {', '.join(_DTYPES)}")
    elif axis == "backends":
        from ..backends._backend import backend_names

        known = backend_names()
        names = [v] if isinstance(v, str) else v
        if not isinstance(names, list) or not names or any(b not in known for b in names):
            raise StudyError(f"backends {v!r}: expected a backend or a list of them from "
                             f"{', '.join(known)}")
        return list(names)
    return v
