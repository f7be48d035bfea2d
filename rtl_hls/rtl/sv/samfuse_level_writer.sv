// level_writer: records a level (samfuse_level_writer_core without a memory system).
module samfuse_level_writer #(
    parameter int CRD_N = 16,
    parameter int STOP_N = 16,
    parameter DUMP_FILE = "level_writer.dump"
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(crd),
    output logic        done
);
  /* verilator lint_off UNUSEDSIGNAL */  // no memory system: no requests
  logic [15:0] crd_nlines, seg_nlines;
  /* verilator lint_on UNUSEDSIGNAL */
  samfuse_level_writer_core #(
      .CRD_N(CRD_N), .STOP_N(STOP_N), .DUMP_FILE(DUMP_FILE)
  ) u_core (.*, .mem_now('0), .crd_base('0), .seg_base('0));
endmodule
