"""``cosim.tune``: tune a bundled model's schedule end to end and write the results.

Takes a model name (or a study file naming one model workload), exports it, builds the
:class:`TuneSpace` with the heuristic priced on the model's real weights and inputs,
evaluates through the study runner into ``out/runs`` and writes the history, the best
schedule and the plot (``cosim.tuning._report``) after every batch.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ir import DEFAULT_HW, Hardware, load_hw

from ..runs._files import write_atomic
from ..runs._hw_spec import hw_from_json
from ..studies._progress import Progress, clock
from ._search import StudyEvaluator, Trial, best_trial, search
from ._space import TuneError, TuneSpace

__all__ = ["tune", "TuneResult", "model_space", "default_depths"]


@dataclass
class TuneResult:
    space: TuneSpace
    trials: list[Trial]
    objective: str
    out: Path

    @property
    def best(self) -> Trial | None:
        return best_trial(self.trials)


def model_space(workload: Any, *, seed: int = 0, units: str = "scope",
                max_orders: int = 4, depths: Sequence[int | None] = (2,),
                hw_knobs: Mapping[str, Sequence[Any]] | None = None,
                prune: float | None = 100.0, lanes: Sequence[int] = (1,),
                partitions: Sequence[str] = ("round-robin",),
                blocks: Sequence[int] = (1,), block_tensors: str = "sparse",
                assocs: Sequence[str] = ("as-written",), hw: Hardware | None = None,
                buffers: Sequence[str] = ("none",)) -> TuneSpace:
    """The space of a model workload, priced on the tensors a run binds (seed ``seed``)
    and on the hardware its runs use (``hw``; None: ideal memory)."""
    from compiler import evaluate, from_torch, torch_inputs, torch_weights
    from compiler.models import MODELS

    model = MODELS[workload.model].from_config(workload.config, seed=seed).eval()
    example = model.example_inputs(seed=seed)
    program = from_torch(model, example, formats=model.sparse_formats)
    binds = {**torch_weights(model, program), **torch_inputs(program, example)}
    return TuneSpace.build(program, units=units, stats={**binds, **evaluate(program, binds)},
                           depths=depths, hw_knobs=hw_knobs, max_orders=max_orders,
                           prune=prune, lanes=lanes, partitions=partitions, blocks=blocks,
                           block_tensors=block_tensors, assocs=assocs, hw=hw,
                           buffers=buffers)


#: the file naming the tuning run whose results a folder holds
_CLAIM = "tune.json"


def _claim(out: Path, settings: dict[str, Any]) -> None:
    """Mark ``out`` as this tuning run's folder; refuse one holding another run's history,
    best schedule and plot, which this run would overwrite (the budget, batch and workers
    may change: a re-run with more budget resumes)."""
    path = out / _CLAIM
    try:
        held = json.loads(path.read_text()) if path.exists() else None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        held = {}
    if held is None and (out / "history.csv").exists():
        held = {}  # results from before tune.json, or its file was removed
    if held is not None and held != settings:
        diff = next((k for k in settings if held.get(k) != settings[k]), "settings")
        raise TuneError(f"--out {str(out)!r} holds the results of another tuning run "
                        f"({diff}: {held.get(diff)!r} there, {settings.get(diff)!r} now); "
                        "give another --out, or delete the folder to start over")
    if held is None:
        write_atomic(path, json.dumps(settings, indent=1) + "\n")


def _workload(target: str | Path, config: str) -> tuple[Any, dict[str, Any]]:
    """A model workload, and the run settings a study file fixes (first axis values)."""
    from compiler.models import MODELS

    from ..studies._spec import StudyError, Workload, load_study

    text = str(target)
    if text in MODELS:
        if config not in MODELS[text].default_config:
            raise TuneError(f"{text} has no config {config!r}; it has "
                            f"{', '.join(MODELS[text].default_config)}")
        return Workload(f"{text}-{config}", model=text, config=config), {}
    if not text.endswith((".yaml", ".yml")):
        raise TuneError(f"{text!r}: expected a bundled model ({', '.join(sorted(MODELS))}) "
                        "or a study YAML file")
    try:
        spec = load_study(Path(text))
    except (StudyError, OSError) as exc:
        raise TuneError(f"{text}: {exc}") from None
    models = [w for w in spec.workloads if w.model is not None]
    if len(models) != 1:
        raise TuneError(f"{text}: the study must name exactly one model workload to tune, "
                        f"it names {len(models)}")
    axes = spec.axes
    fixed = {"seed": axes["seed"][0], "backend": axes["backends"][0][0],
             "depths": tuple(axes["depth"])}
    if "hw" in axes:
        fixed["hw"], fixed["hw_set"] = axes["hw"][0], tuple(axes["hw_set"][0])
    return models[0], fixed


def _machine(hw: str | None, hw_set: Sequence[tuple[str, str]]) -> Hardware:
    """The hardware the tuner's runs use (``RunConfig.hardware``): the heuristic's prior
    and pruning price plans on it."""
    base = hw_from_json(hw) if hw and hw.startswith("{") else load_hw(hw or DEFAULT_HW)
    return load_hw(base, [f"{k}={v}" for k, v in hw_set])


def default_depths(machine: Hardware) -> tuple[int | None, ...]:
    """The FIFO depths a tuning run searches when none are given: the machine's own
    ``fifo.depth`` where it sets one (``fuseflow``: unbounded), else the compiled
    depth 2 — a machine's depth overrides every run's, so tuning another would price
    plans at a depth none of them runs at."""
    depth = machine.fifo_depth
    return (2,) if depth == "graph" else (depth,)


def tune(target: str | Path, out: str | Path, *, budget: int = 30,
         objective: str = "cycles", config: str = "small", seed: int | None = None,
         tune_seed: int = 0, units: str = "scope", max_orders: int = 4,
         depths: Sequence[int | None] | None = None, hw: str | None = None,
         hw_set: Sequence[tuple[str, str]] = (),
         hw_knobs: Mapping[str, Sequence[Any]] | None = None, batch: int = 1,
         workers: int = 1, dask: str | None = None, backend: str | None = None,
         hand: bool = True, prune: float | None = 100.0, lanes: Sequence[int] = (1,),
         partitions: Sequence[str] = ("round-robin",),
         blocks: Sequence[int] = (1,), block_tensors: str = "sparse",
         assocs: Sequence[str] = ("as-written",), buffers: Sequence[str] = ("none",),
         progress: bool = False) -> TuneResult:
    """Tune ``target`` (a bundled model at ``config``, or a study file with one model
    workload) for ``budget`` evaluations; results in ``out`` (see docs/tune.md).
    Re-running with the same arguments replays the cached evaluations. ``progress``
    prints the phases and every evaluation on stderr (``cosim.studies._progress``)."""
    from ._report import write_outputs

    workload, fixed = _workload(target, config)
    seed = fixed.get("seed", 0) if seed is None else seed
    backend = backend or fixed.get("backend", "python")
    hw, hw_set = hw or fixed.get("hw"), tuple(hw_set or fixed.get("hw_set", ()))
    depths = depths or fixed.get("depths") or default_depths(_machine(hw, hw_set))
    _claim(Path(out), {
        "workload": [workload.label, workload.model, workload.config], "seed": seed,
        "objective": objective, "units": units, "max_orders": max_orders,
        "depths": list(depths), "hw": hw, "hw_set": [list(p) for p in hw_set],
        "hw_knobs": {k: list(map(str, v)) for k, v in (hw_knobs or {}).items()},
        "lanes": list(lanes), "partitions": list(partitions), "blocks": list(blocks),
        "block_tensors": block_tensors, "assocs": list(assocs), "backend": backend,
        "prune": prune, "hand": hand, "tune_seed": tune_seed,
        # a folder tuned before the knob existed keeps its claim
        **({"buffers": list(buffers)} if tuple(buffers) != ("none",) else {})})
    watch = _TuneProgress(workload.label, objective, budget, enabled=progress)
    with watch.line:
        watch.phase("exporting the model and building the search space")
        watch.line.event(f"tune {workload.label}: {watch.doing}…")
        space = model_space(workload, seed=seed, units=units, max_orders=max_orders,
                            depths=depths, hw_knobs=hw_knobs,
                            prune=prune, lanes=lanes, partitions=partitions, blocks=blocks,
                            block_tensors=block_tensors, assocs=assocs,
                            hw=_machine(hw, hw_set), buffers=buffers)
        size = space.size()
        watch.line.event(f"tune {workload.label}: search space of {space.n} statements, "
                         f"{'many' if size is None else f'{size:,}'} points, built in "
                         f"{clock(watch.elapsed())}")
        watch.phase("evaluating")
        evaluator = StudyEvaluator(space, workload, objective, out, seed=seed,
                                   backend=backend, hw=hw, hw_set=hw_set,
                                   workers=workers, dask=dask,
                                   study=f"tune-{workload.label}", on_eval=watch.evaluated)
        out = Path(out)
        trials = search(space, evaluator, budget, seed=tune_seed, batch=batch, hand=hand,
                        on_batch=lambda ts: write_outputs(space, ts, objective, out))
    return TuneResult(space, trials, objective, out)


class _TuneProgress:
    """``tune gcn-small: evaluation 4/30: cycles 297003 (best 82130), 0:41 elapsed`` per
    evaluation, and a status line between them (a single evaluation can take minutes)."""

    def __init__(self, label: str, objective: str, budget: int, enabled: bool) -> None:
        self.label, self.objective, self.budget = label, objective, budget
        self.count, self.best, self.doing = 0, None, ""
        self.start = time.perf_counter()
        self.line = Progress(self._status, enabled=enabled, final_line=False)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def phase(self, doing: str) -> None:
        self.doing = doing
        self.line.refresh()

    def evaluated(self, value: float | None, row: dict[str, Any], cached: bool) -> None:
        self.count += 1
        if value is not None and (self.best is None or value < self.best):
            self.best = value
        got = f"{self.objective} {value:g}" if value is not None else \
            f"failed ({row.get('status', 'error')})"
        self.line.event(f"tune {self.label}: evaluation {self.count}/{self.budget}"
                        f"{' (cached)' if cached else ''}: {got}"
                        f"{'' if self.best is None else f' (best {self.best:g})'}, "
                        f"{clock(self.elapsed())} elapsed")

    def _status(self) -> str:
        doing = self.doing if self.doing != "evaluating" else \
            f"evaluating ({self.count}/{self.budget} done)"
        return f"tune {self.label}: {doing}, {clock(self.elapsed())} elapsed"
