"""Backends: a graph and its bound inputs in, a ``sim_models.python.SimResult`` out (outputs,
cycles, traces), from the Python model, SystemC, HLS C-simulation or RTL; and their
comparison. Bottom layer of ``cosim``: imports nothing from the other subpackages."""
