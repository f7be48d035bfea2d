"""The Python reference cycle model: the executable form of the timing contract.

Takes an ``ir.Graph`` and input tensors, returns a :class:`SimResult` with the output
tensors, the cycle count, per-node statistics and (optionally) per-edge traces.

It also holds the one result path of every backend (``_results``): SystemC, RTL and HLS
C-simulation build their :class:`SimResult` with :func:`outputs_from_writers` (writer
recordings -> ``ir.FiberTree``) and report a stuck run with :func:`deadlock_error`, so a
backend differs from this model only in how it runs, never in how it reports.

The same modules also run compiled (``_core``: Cython, built once per change of the
sources); ``CORE`` says which one this process runs.
"""

from ._core import activate as _activate

#: ``"compiled"`` or ``"pure"``: the core this process runs (``SAMFUSE_SIM_CORE``)
CORE = _activate(__path__)

from ._actor import StreamError  # noqa: E402 (after the core is chosen)
from ._engine import ACTORS, ENTRY_BYTES, bind_inputs, check_onchip, simulate  # noqa: E402
from ._harness import PrimitiveRun, run_primitive  # noqa: E402
from ._results import (  # noqa: E402
                       BufferStats,
                       DeadlockError,
                       FifoStats,
                       InputError,
                       MemRequest,
                       NodeStats,
                       SimResult,
                       SimulationError,
                       deadlock_error,
                       decode_levels,
                       outputs_from_writers,
)

__all__ = [
    # running
    "simulate", "SimResult", "NodeStats", "MemRequest", "FifoStats", "BufferStats",
    "bind_inputs",
    # one result path for every backend: writer recordings -> tensors, deadlock reports
    "decode_levels", "outputs_from_writers", "deadlock_error", "check_onchip", "ENTRY_BYTES",
    # errors
    "SimulationError", "DeadlockError", "InputError", "StreamError",
    # registry
    "ACTORS", "run_primitive", "PrimitiveRun",
    # which core runs
    "CORE",
]
