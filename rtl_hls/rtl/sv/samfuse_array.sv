// array: val = vals[ref] (samfuse_array_core without a memory system); E elements a value.
module samfuse_array #(
    parameter int VAL_N = 1,
    parameter VAL_FILE = "",
    parameter int E = 1
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(ref),
    `SAMFUSE_OUT(val, 32*E+2)
);
  /* verilator lint_off UNUSEDSIGNAL */  // no memory system: no requests
  logic [15:0] vals_nlines;
  /* verilator lint_on UNUSEDSIGNAL */
  samfuse_array_core #(
      .VAL_N(VAL_N), .VAL_FILE(VAL_FILE), .E(E)
  ) u_core (.*, .mem_now('0), .vals_base('0));
endmodule
