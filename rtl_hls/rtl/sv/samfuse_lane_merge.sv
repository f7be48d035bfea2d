// lane_merge: ordered merge of two lanes' (crd, val) streams of one level. The lanes'
// fibers are aligned and their crds disjoint within a fiber, so the smaller head crd goes
// first (a crd before a stop); aligned stops and D pass once, popping all four inputs.
// Needs both crd heads, the taken side's val head (both for a stop) and space on both
// outputs whenever it fires (every firing writes).
module samfuse_lane_merge #(
    parameter int W = 34  // value token width: 2 + 32*E for blocks of E elements
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(crd_a),
    `SAMFUSE_IN(val_a, W),
    `SAMFUSE_IN(crd_b),
    `SAMFUSE_IN(val_b, W),
    `SAMFUSE_OUT(crd),
    `SAMFUSE_OUT(val, W)
);
  import samfuse_pkg::*;
  logic fin, ad, bd, take_a, take_b, fire;
  assign ad = crd_a_dout[33:32] == TAG_DATA;
  assign bd = crd_b_dout[33:32] == TAG_DATA;
  // a crd below the other lane's crd or against its stop; neither: aligned stops or D
  assign take_a = ad && (!bd || crd_a_dout[31:0] < crd_b_dout[31:0]);
  assign take_b = bd && !take_a;
  always @* begin
    fire = !fin && crd_a_empty_n && crd_b_empty_n && crd_full_n && val_full_n;
    if (take_a) fire = fire && val_a_empty_n;
    else if (take_b) fire = fire && val_b_empty_n;
    else fire = fire && val_a_empty_n && val_b_empty_n;
  end
  assign crd_a_read = fire && !take_b;
  assign val_a_read = fire && !take_b;
  assign crd_b_read = fire && !take_a;
  assign val_b_read = fire && !take_a;
  assign crd_write = fire;
  assign val_write = fire;
  assign crd_din = take_b ? crd_b_dout : crd_a_dout;
  assign val_din = take_b ? val_b_dout : val_a_dout;

  always_ff @(posedge ap_clk) begin
    if (ap_rst) fin <= 1'b0;
    else if (fire && !take_a && !take_b && crd_a_dout[33:32] == TAG_DONE) fin <= 1'b1;
  end
endmodule
