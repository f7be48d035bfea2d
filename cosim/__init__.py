"""Co-simulation: one graph, many backends, and everything that runs graphs at scale.

The ``Backend`` interface and its four implementations (``python``, ``systemc``, ``rtl``,
``hls-csim``; the toolchain ones imported on first use), each returning the same
``sim_models.python.SimResult``; backend comparison by outputs, cycles and traces; whole
model runs region by region with measured work counts; studies (cached runs on a process
pool or Dask) and the nightly regression; the ``samfuse`` command line. Sits on top of
every other package.
"""

from ._backend import (
    BACKENDS,
    Backend,
    PythonBackend,
    ToolNotFoundError,
    backend_names,
    get_backend,
    register,
)
from ._compare import BackendRun, CosimReport, compare_backends
from ._counts import (
    Counts,
    KernelCounts,
    heuristic_error_table,
    measure,
    measured_counts,
    model_counts,
    relative_errors,
)
from ._model_json import model_json
from ._model_run import (
    ModelRun,
    RegionProgress,
    RegionRun,
    region_weights,
    run_model,
    storage_bytes,
)
from ._nightly import NightlyResult, run_nightly
from ._study_run import StudyResult, run_study
from ._study_spec import StudyError, StudySpec, load_study
from ._tune import Outcome, StudyEvaluator, Trial, search
from ._tune_run import TuneResult, model_space, tune
from ._tune_space import Point, TuneError, TuneSpace

__all__ = ["Backend", "PythonBackend", "ToolNotFoundError", "register", "get_backend",
           "backend_names", "BACKENDS",
           # whole models, region by region
           "run_model", "ModelRun", "RegionRun", "storage_bytes", "RegionProgress",
           "region_weights",
           # measured work (FLOPs, bytes) of a run, and a model run as JSON (model --json)
           "measured_counts", "measure", "Counts", "relative_errors", "heuristic_error_table",
           "model_counts", "KernelCounts", "model_json",
           # studies and the nightly regression
           "load_study", "run_study", "StudySpec", "StudyResult", "StudyError",
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

#: the optional backends, imported on first use: each pulls in its own toolchain glue
#: (cppyy, the HLS generator, cocotb), which ``import cosim`` must not pay for
_LAZY = {"SystemCBackend": "_systemc", "SystemCError": "_systemc", "SystemCRun": "_systemc",
         "HlsCsimBackend": "_hls", "HlsCompileError": "_hls", "HlsRunError": "_hls",
         "RtlBackend": "_rtl"}


def __getattr__(name: str) -> object:
    """Import an optional backend's module when one of its names is first used."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
