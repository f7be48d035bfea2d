// scan_dense: dense level scanner: crds 0..SIZE-1, refs r*SIZE + crd.
module samfuse_scan_dense #(
    parameter int SIZE = 1
) (`SAMFUSE_SCAN_PORTS);
  /* verilator lint_off UNUSEDSIGNAL */  // no memory system: no requests
  logic [15:0] seg_nlines, crd_nlines;
  /* verilator lint_on UNUSEDSIGNAL */
  samfuse_scan_core #(
      .COMPRESSED(1'b0), .SIZE(SIZE)
  ) u_core (.*, .mem_now('0), .seg_base('0), .crd_base('0));
endmodule
