"""Simulation models: ``python`` (the reference cycle model) and ``systemc`` (C++ headers)."""
