// repsig: one firing per input token: crd or N -> R (tag 0), S_k -> S_k, D -> D.
module samfuse_repsig (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(crd),
    `SAMFUSE_OUT(repsig)
);
  import samfuse_pkg::*;
  logic fin;
  logic [1:0] tag;
  assign tag = crd_dout[33:32];
  assign crd_read = !fin && crd_empty_n && repsig_full_n;
  assign repsig_write = crd_read;
  assign repsig_din = (tag == TAG_DATA || tag == TAG_EMPTY) ? mk(TAG_DATA, 32'd0) : crd_dout;
  always_ff @(posedge ap_clk) begin
    if (ap_rst) fin <= 1'b0;
    else if (crd_read && tag == TAG_DONE) fin <= 1'b1;
  end
endmodule
