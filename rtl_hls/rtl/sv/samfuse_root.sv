// root: emits the root reference stream 0, D (two firings).
module samfuse_root (
    `SAMFUSE_CLOCK,
    `SAMFUSE_OUT(ref)
);
  import samfuse_pkg::*;
  logic [1:0] sent;
  assign ref_write = ref_full_n && sent != 2'd2;
  assign ref_din = sent == 2'd0 ? mk(TAG_DATA, 32'd0) : mk(TAG_DONE, 32'd0);
  always_ff @(posedge ap_clk) begin
    if (ap_rst) sent <= 2'd0;
    else if (ref_write) sent <= sent + 2'd1;
  end
endmodule
