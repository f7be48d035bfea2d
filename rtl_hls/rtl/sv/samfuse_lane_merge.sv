// lane_merge, and with COMBINE (the catalogue's `combines`) lane_combine (its wrapper): the
// one-level lane merge. The lanes' fibers are aligned and their crds disjoint within a fiber,
// so the smaller head crd goes first (a crd before a stop); aligned stops and D pass once,
// popping all four inputs. COMBINE (lane_combine) passes a crd both lanes hold once with the
// sum of the two values (N counts as zero; FP: binary32, else int32), popping all four. Needs
// both crd heads, the taken sides' val heads (both for an equal crd or a stop) and space on
// both outputs whenever it fires (every firing writes).
module samfuse_lane_merge #(
    parameter int W = 34,  // value token width: 2 + 32*E for blocks of E elements
    parameter bit COMBINE = 1'b0,  // lane_combine: add the values of an equal crd
    parameter bit FP = 1'b1  // the sum's arithmetic (COMBINE): binary32, else int32
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
  logic fin, ad, bd, same, take_a, take_b, fire;
  logic [31:0] xa, xb;
  logic [W-1:0] sum;
  assign ad = crd_a_dout[33:32] == TAG_DATA;
  assign bd = crd_b_dout[33:32] == TAG_DATA;
  assign same = COMBINE && ad && bd && crd_a_dout[31:0] == crd_b_dout[31:0];
  // a crd below the other lane's crd or against its stop; neither: aligned stops or D
  assign take_a = ad && !same && (!bd || crd_a_dout[31:0] < crd_b_dout[31:0]);
  assign take_b = bd && !same && !take_a;
  assign xa = val_a_dout[W-1-:2] == TAG_EMPTY ? 32'd0 : val_a_dout[31:0];
  assign xb = val_b_dout[W-1-:2] == TAG_EMPTY ? 32'd0 : val_b_dout[31:0];
  always @* begin  // the sum as a data token of width W (COMBINE runs on scalars, W = 34)
    sum = '0;
    sum[W-1-:2] = TAG_DATA;
    sum[31:0] = binop(FP, OP_ADD, xa, xb);
  end
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
  assign val_din = same ? sum : take_b ? val_b_dout : val_a_dout;

  always_ff @(posedge ap_clk) begin
    if (ap_rst) fin <= 1'b0;
    else if (fire && !take_a && !take_b && !same && crd_a_dout[33:32] == TAG_DONE) fin <= 1'b1;
  end
endmodule
