// lane_combine: the lane reduction of one level. lane_merge, except that a crd both lanes
// hold passes once with the sum of the two values (N counts as zero; FP: binary32, else
// int32), popping all four inputs. Needs both crd heads, the taken sides' val heads (both
// for an equal crd or a stop) and space on both outputs whenever it fires. Scalar values.
module samfuse_lane_combine #(
    parameter bit FP = 1'b1
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(crd_a),
    `SAMFUSE_IN(val_a),
    `SAMFUSE_IN(crd_b),
    `SAMFUSE_IN(val_b),
    `SAMFUSE_OUT(crd),
    `SAMFUSE_OUT(val)
);
  import samfuse_pkg::*;
  logic fin, ad, bd, same, take_a, take_b, fire;
  logic [31:0] xa, xb;
  assign ad = crd_a_dout[33:32] == TAG_DATA;
  assign bd = crd_b_dout[33:32] == TAG_DATA;
  assign same = ad && bd && crd_a_dout[31:0] == crd_b_dout[31:0];
  // a crd below the other lane's crd or against its stop; neither: aligned stops or D
  assign take_a = ad && !same && (!bd || crd_a_dout[31:0] < crd_b_dout[31:0]);
  assign take_b = bd && !same && !take_a;
  assign xa = val_a_dout[33:32] == TAG_EMPTY ? 32'd0 : val_a_dout[31:0];
  assign xb = val_b_dout[33:32] == TAG_EMPTY ? 32'd0 : val_b_dout[31:0];
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
  assign val_din = same ? mk(TAG_DATA, binop(FP, OP_ADD, xa, xb))
                        : take_b ? val_b_dout : val_a_dout;

  always_ff @(posedge ap_clk) begin
    if (ap_rst) fin <= 1'b0;
    else if (fire && !take_a && !take_b && !same && crd_a_dout[33:32] == TAG_DONE) fin <= 1'b1;
  end
endmodule
