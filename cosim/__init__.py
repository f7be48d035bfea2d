"""Co-simulation: one graph, many backends, and everything that runs graphs at scale.

Takes graphs and compiled models (``ir``, ``compiler``) and produces simulation results,
comparisons, study tables, figures and tuned schedules. Organised by purpose, each layer
importing only from those below it (``tests/cosim/test_layering.py``):

- ``backends/``: the ``Backend`` interface and its four implementations (``python``,
  ``systemc``, ``rtl``, ``hls-csim``; the toolchain ones imported on first use), each
  returning the same ``sim_models.python.SimResult``; comparison by outputs, cycles and
  traces.
- ``runs/``: one run: whole models region by region, measured work counts, lane reports,
  memory traces, a study configuration run into result rows.
- ``studies/``: study files, executors (process pool or Dask), the run cache, tables,
  plots and the nightly regression.
- ``tuning/``: the autoscheduler.
- ``cli/``: the ``samfuse`` command line.

This module is the public façade over all of them.
"""

from .backends._backend import (
    AUTO_SYSTEMC_TOKENS,
    BACKENDS,
    AutoBackend,
    Backend,
    PythonBackend,
    ToolNotFoundError,
    backend_names,
    get_backend,
    register,
)

__all__ = ["Backend", "PythonBackend", "ToolNotFoundError", "register", "get_backend",
           "backend_names", "BACKENDS", "AutoBackend", "AUTO_SYSTEMC_TOKENS",
           # whole models, region by region
           "run_model", "ModelRun", "RegionRun", "storage_bytes", "RegionProgress",
           "region_weights",
           # measured work (FLOPs, bytes) of a run, and a model run as JSON (model --json)
           "measured_counts", "measure", "Counts", "relative_errors", "heuristic_error_table",
           "model_counts", "KernelCounts", "model_json",
           # studies and the nightly regression
           "load_study", "run_study", "StudySpec", "StudyResult", "StudyError",
           "bundled_studies", "study_path",
           "run_nightly", "NightlyResult",
           # the autoscheduler (docs/tune.md; botorch is imported when it proposes)
           "tune", "TuneResult", "TuneSpace", "Point", "TuneError", "search", "Trial",
           "Outcome", "StudyEvaluator", "model_space",
           # co-simulation
           "compare_backends", "CosimReport", "BackendRun",
           # SystemC backend
           "SystemCBackend", "SystemCError", "SystemCRun",
           # HLS C-simulation backend
           "HlsCsimBackend", "HlsCompileError", "HlsRunError",
           # RTL backend (cocotb with Icarus or Verilator)
           "RtlBackend"]

#: every other name, imported from its module on first use: the optional backends pull in
#: their toolchain glue (cppyy, the HLS generator, cocotb), and the command line's help
#: and a cached study re-run need none of the rest, so ``import cosim`` stays cheap
_LAZY_MODULES: dict[str, tuple[str, ...]] = {
    "backends._compare": ("BackendRun", "CosimReport", "compare_backends"),
    "runs._model_json": ("model_json",),
    "runs._counts": ("Counts", "KernelCounts", "heuristic_error_table", "measure",
                "measured_counts", "model_counts", "relative_errors"),
    "runs._model_run": ("ModelRun", "RegionProgress", "RegionRun", "region_weights", "run_model",
                   "storage_bytes"),
    "studies._nightly": ("NightlyResult", "run_nightly"),
    "studies._runner": ("StudyResult", "run_study"),
    "studies._spec": ("StudyError", "StudySpec", "bundled_studies", "load_study", "study_path"),
    "tuning._search": ("Outcome", "StudyEvaluator", "Trial", "search"),
    "tuning._run": ("TuneResult", "model_space", "tune"),
    "tuning._space": ("Point", "TuneError", "TuneSpace"),
    "backends._systemc": ("SystemCBackend", "SystemCError", "SystemCRun"),
    "backends._hls": ("HlsCsimBackend", "HlsCompileError", "HlsRunError"),
    "backends._rtl": ("RtlBackend",),
}
_LAZY = {name: module for module, names in _LAZY_MODULES.items() for name in names}


def __getattr__(name: str) -> object:
    """Import a module of the package when one of its names is first used."""
    module = _LAZY.get(name)
    if module is not None:
        import importlib

        return getattr(importlib.import_module(f".{module}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
