"""Reference RTL: SystemVerilog primitives (``sv/``), the netlist generator and benches.

Takes an ``ir.Graph`` and produces a SystemVerilog top module that wires one
``samfuse_<op>`` instance per node with contract FIFOs (``samfuse_fifo``) per edge,
plus the ``$readmemh`` memory images of the input tensors. See ``docs/rtl.md``.
"""

from .netlist import (
                      SV_DIR,
                      Netlist,
                      edge_signal,
                      generate,
                      module_name,
                      rtl_sources,
                      write_memories,
)

__all__ = ["generate", "Netlist", "write_memories", "rtl_sources", "module_name",
           "edge_signal", "SV_DIR"]
