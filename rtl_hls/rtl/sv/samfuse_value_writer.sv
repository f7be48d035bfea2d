// value_writer: records values (samfuse_value_writer_core without a memory system).
module samfuse_value_writer #(
    parameter int VAL_N = 16,
    parameter DUMP_FILE = "value_writer.dump",
    parameter int E = 1
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(val, 32*E+2),
    output logic        done
);
  /* verilator lint_off UNUSEDSIGNAL */  // no memory system: no requests
  logic [15:0] vals_nlines;
  /* verilator lint_on UNUSEDSIGNAL */
  samfuse_value_writer_core #(
      .VAL_N(VAL_N), .DUMP_FILE(DUMP_FILE), .E(E)
  ) u_core (.*, .mem_now('0), .vals_base('0));
endmodule
