"""Simulation models of the SAMML primitives, one per language.

* :mod:`sim_models.python` -- the reference cycle model (the executable timing contract)
  and the result path every backend shares: ``SimResult``, decoding writer recordings
  into output tensors, deadlock reports.
* ``sim_models/systemc/`` -- C++ headers, not a Python package: a SystemC module per
  primitive over the same token word, loaded into Python through cppyy by the
  ``systemc`` backend in :mod:`cosim` (``docs/systemc.md``).
"""
