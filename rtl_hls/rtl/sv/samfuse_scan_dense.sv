// scan_dense: dense level scanner: crds 0..SIZE-1, refs r*SIZE + crd.
module samfuse_scan_dense #(
    parameter int SIZE = 1
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(ref_in),
    `SAMFUSE_OUT(crd),
    `SAMFUSE_OUT(ref)
);
  /* verilator lint_off UNUSEDSIGNAL */  // no memory system: no requests
  logic [15:0] seg_nlines, crd_nlines;
  /* verilator lint_on UNUSEDSIGNAL */
  samfuse_scan_core #(
      .COMPRESSED(1'b0), .SIZE(SIZE)
  ) u_core (
      .ap_clk(ap_clk),
      .ap_rst(ap_rst),
      .ref_in_dout(ref_in_dout),
      .ref_in_empty_n(ref_in_empty_n),
      .ref_in_read(ref_in_read),
      .crd_din(crd_din),
      .crd_full_n(crd_full_n),
      .crd_write(crd_write),
      .ref_din(ref_din),
      .ref_full_n(ref_full_n),
      .ref_write(ref_write),
      .mem_now('0),
      .seg_base('0),
      .crd_base('0),
      .seg_nlines(seg_nlines),
      .crd_nlines(crd_nlines)
  );
endmodule
