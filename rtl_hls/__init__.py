"""Hardware generators: an ``ir.Graph`` in, source a hardware toolchain can build out.

Two subpackages, one per hardware flow, both implementing the token word of
``docs/streams.md`` (the Python side encodes and decodes it with ``ir``'s codec):

* :mod:`rtl_hls.rtl` -- reference SystemVerilog, one module per catalogue primitive
  (``rtl/sv/``), a netlist generator that wires a graph's top module and writes the input
  tensors' memory images, and the cocotb benches that run it under Icarus or Verilator.
* :mod:`rtl_hls.hls` -- Vitis HLS C++: one template per primitive, a generator of the
  dataflow top, its C testbench (``hls/tb/testbench.cpp.in``) and the Vitis TCL script,
  and the csim shims that let g++ run it without Vitis.

Running either one and decoding its output tensors and traces is the job of the ``rtl`` and
``hls-csim`` backends in :mod:`cosim`.
"""
