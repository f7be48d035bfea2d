// scan_compressed: compressed level scanner: ref -> (crd, ref) of the fiber seg[r]..seg[r+1].
module samfuse_scan_compressed #(
    parameter int SEG_N = 2,
    parameter int CRD_N = 1,
    parameter SEG_FILE = "",
    parameter CRD_FILE = ""
) (`SAMFUSE_SCAN_PORTS);
  /* verilator lint_off UNUSEDSIGNAL */  // no memory system: no requests
  logic [15:0] seg_nlines, crd_nlines;
  /* verilator lint_on UNUSEDSIGNAL */
  samfuse_scan_core #(
      .COMPRESSED(1'b1), .SEG_N(SEG_N), .CRD_N(CRD_N), .SEG_FILE(SEG_FILE), .CRD_FILE(CRD_FILE)
  ) u_core (.*, .mem_now('0), .seg_base('0), .crd_base('0));
endmodule
