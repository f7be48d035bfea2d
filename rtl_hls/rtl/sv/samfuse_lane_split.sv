// lane_split: one lane's share of a level (docs/parallel.md). A crd is kept when
// crd mod LANES == LANE and LO <= crd < HI (LANES is a parameter: a power of two is a
// mask, any other a constant divider); an N crd when LANE == 0 and LO == 0.
// Every firing needs both heads and pops both; only a kept token (a crd of this lane, a
// stop, D) is written and so needs space. One firing per cycle, kept or not.
module samfuse_lane_split #(
    parameter int LANES = 1,
    parameter int LANE = 0,
    parameter int LO = 0,
    parameter int HI = 1
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(crd_in),
    `SAMFUSE_IN(ref_in),
    `SAMFUSE_OUT(crd),
    `SAMFUSE_OUT(ref)
);
  import samfuse_pkg::*;
  logic fin, ctl, mine, keep, fire;
  logic [1:0] tc;
  logic [31:0] c;
  assign tc = crd_in_dout[33:32];
  assign c = crd_in_dout[31:0];
  assign ctl = tc == TAG_STOP || tc == TAG_DONE;
  assign mine = c % 32'(LANES) == 32'(LANE);
  always @* begin
    if (ctl) keep = 1'b1;
    else if (tc == TAG_EMPTY) keep = LANE == 0 && LO == 0;
    // LO = 0 (round-robin) or HI = 0 (an empty range) makes a comparison constant
    /* verilator lint_off UNSIGNED */
    else keep = mine && {1'b0, c} >= 33'(LO) && {1'b0, c} < 33'(HI);
    /* verilator lint_on UNSIGNED */
  end
  assign fire = !fin && crd_in_empty_n && ref_in_empty_n &&
                (!keep || (crd_full_n && ref_full_n));
  assign crd_in_read = fire;
  assign ref_in_read = fire;
  assign crd_write = fire && keep;
  assign ref_write = fire && keep;
  assign crd_din = crd_in_dout;
  assign ref_din = ref_in_dout;

  always_ff @(posedge ap_clk) begin
    if (ap_rst) begin
      fin <= 1'b0;
    end else if (fire) begin
      if (tc == TAG_DONE) fin <= 1'b1;
    end
  end
endmodule
