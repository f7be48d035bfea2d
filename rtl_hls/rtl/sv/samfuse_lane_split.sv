// lane_split: one lane's share of a level (docs/parallel.md). A crd is kept when
// crd mod LANES == LANE and LO <= crd < HI (LANES is a parameter: a power of two is a
// mask, any other a constant divider); an N crd when LANE == 0 and LO == 0. The firing
// is samfuse_split_core's.
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
  logic heads_n, keep_data, mine;
  /* verilator lint_off UNUSEDSIGNAL */
  logic fire;  // the core's firing: position_split pops pos_in with it, lane_split nothing
  /* verilator lint_on UNUSEDSIGNAL */
  logic [31:0] c;
  assign c = crd_in_dout[31:0];
  assign mine = c % 32'(LANES) == 32'(LANE);
  assign heads_n = 1'b1;
  always @* begin
    if (crd_in_dout[33:32] == TAG_EMPTY) keep_data = LANE == 0 && LO == 0;
    // LO = 0 (round-robin) or HI = 0 (an empty range) makes a comparison constant
    /* verilator lint_off UNSIGNED */
    else keep_data = mine && {1'b0, c} >= 33'(LO) && {1'b0, c} < 33'(HI);
    /* verilator lint_on UNSIGNED */
  end
  samfuse_split_core u_core (.*);
endmodule
