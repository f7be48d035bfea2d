// locate: a coordinate stream addresses a dense level of SIZE coordinates:
// ref = ref_in*SIZE + crd_in on aligned streams; N on either side gives N; stops and D
// (aligned) pass through. One token per cycle, latency one (docs/primitives.md).
module samfuse_locate #(
    parameter int SIZE = 1
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(crd_in),
    `SAMFUSE_IN(ref_in),
    `SAMFUSE_OUT(ref)
);
  import samfuse_pkg::*;
  logic fin;
  logic [1:0] tc, tr;
  logic [31:0] pos;
  assign tc = crd_in_dout[33:32];
  assign tr = ref_in_dout[33:32];
  assign pos = ref_in_dout[31:0] * 32'(SIZE) + crd_in_dout[31:0];
  assign crd_in_read = !fin && crd_in_empty_n && ref_in_empty_n && ref_full_n;
  assign ref_in_read = crd_in_read;
  assign ref_write = crd_in_read;
  always @* begin
    if (tc == TAG_STOP || tc == TAG_DONE) ref_din = crd_in_dout;
    else if (tc == TAG_EMPTY || tr == TAG_EMPTY) ref_din = mk(TAG_EMPTY, 32'd0);
    else ref_din = mk(TAG_DATA, pos);
  end
  always_ff @(posedge ap_clk) begin
    if (ap_rst) fin <= 1'b0;
    else if (crd_in_read && tc == TAG_DONE) fin <= 1'b1;
  end
endmodule
