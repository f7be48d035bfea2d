"""The Python reference cycle model: the executable form of the timing contract.

Takes an ``ir.Graph`` and input tensors, returns a :class:`SimResult` with the output
tensors, the cycle count, per-node statistics and (optionally) per-edge traces.

It also holds the one result path of every backend (``_results``): SystemC, RTL and HLS
C-simulation build their :class:`SimResult` with :func:`outputs_from_writers` (writer
recordings -> ``ir.FiberTree``) and report a stuck run with :func:`deadlock_error`, so a
backend differs from this model only in how it runs, never in how it reports.
"""

from ._actor import StreamError
from ._engine import ACTORS, ENTRY_BYTES, bind_inputs, check_onchip, simulate
from ._harness import PrimitiveRun, run_primitive
from ._results import (
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
    "simulate", "SimResult", "NodeStats", "MemRequest", "FifoStats", "bind_inputs",
    # one result path for every backend: writer recordings -> tensors, deadlock reports
    "decode_levels", "outputs_from_writers", "deadlock_error", "check_onchip", "ENTRY_BYTES",
    # errors
    "SimulationError", "DeadlockError", "InputError", "StreamError",
    # registry
    "ACTORS", "run_primitive", "PrimitiveRun",
]
