"""The Python reference cycle model: the executable form of the timing contract.

Takes an ``ir.Graph`` and input tensors, returns a :class:`SimResult` with the output
tensors, the cycle count, per-node statistics and (optionally) per-edge traces.
"""

from ._actor import StreamError
from ._engine import (
                      ACTORS,
                      DeadlockError,
                      InputError,
                      NodeStats,
                      SimResult,
                      SimulationError,
                      bind_inputs,
                      decode_levels,
                      simulate,
)
from ._harness import PrimitiveRun, run_primitive

__all__ = [
    # running
    "simulate", "SimResult", "NodeStats", "bind_inputs", "decode_levels",
    # errors
    "SimulationError", "DeadlockError", "InputError", "StreamError",
    # registry
    "ACTORS", "run_primitive", "PrimitiveRun",
]
