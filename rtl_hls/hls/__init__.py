"""Vitis HLS C++ for SAMML graphs: one template per catalogue primitive (``templates/``),
portable csim shims (``shim/``) and a generator from an ``ir.Graph`` to a dataflow top, a
file-driven C testbench and a Vitis TCL script (:mod:`rtl_hls.hls.codegen`). The
``hls-csim`` backend (``cosim/backends/_hls.py``) compiles and runs the result with g++."""

from .codegen import (
    DEFAULT_MEM_DEPTH,
    LANE_BUFFER_BRAM_DEPTH,
    SHIM_DIR,
    TEMPLATE_DIR,
    UNBOUNDED_DEPTH,
    ArrayArg,
    HlsDesign,
    MemArg,
    WriterArgs,
    generate,
    template_path,
    write_design,
    write_inputs,
)

__all__ = ["generate", "write_design", "write_inputs", "HlsDesign", "ArrayArg", "MemArg",
           "WriterArgs",
           "template_path", "TEMPLATE_DIR", "SHIM_DIR", "UNBOUNDED_DEPTH", "DEFAULT_MEM_DEPTH",
           "LANE_BUFFER_BRAM_DEPTH"]
