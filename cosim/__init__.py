"""Co-simulation: the Backend interface and its implementations, trace comparison,
run/sweep runners and the ``samfuse`` command line. Sits on top of every other package."""

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
from ._hls import HlsCompileError, HlsCsimBackend, HlsRunError
from ._systemc import SystemCBackend, SystemCError, SystemCRun

__all__ = ["Backend", "PythonBackend", "ToolNotFoundError", "register", "get_backend",
           "backend_names", "BACKENDS",
           # co-simulation
           "compare_backends", "CosimReport", "BackendRun",
           # SystemC backend
           "SystemCBackend", "SystemCError", "SystemCRun",
           # HLS C-simulation backend
           "HlsCsimBackend", "HlsCompileError", "HlsRunError"]
