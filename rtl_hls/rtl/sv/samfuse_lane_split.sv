// lane_split: one lane's share of a level (docs/parallel.md). `ph` is the position of the
// head in its fiber modulo LANES (a wrapping counter, no divider), 0 after every stop. A
// crd is kept when ph == LANE and LO <= crd < HI; an N crd when ph == LANE and LO == 0.
// Every firing needs both heads and pops both; only a kept token (a crd of this lane, a
// stop, D) is written and so needs space. One firing per cycle, kept or not.
module samfuse_lane_split #(
    parameter int LANES = 1,
    parameter int LANE = 0,
    parameter int LO = 0,
    parameter int HI = 1
) (
    input  logic        ap_clk,
    input  logic        ap_rst,
    input  logic [33:0] crd_in_dout,
    input  logic        crd_in_empty_n,
    output logic        crd_in_read,
    input  logic [33:0] ref_in_dout,
    input  logic        ref_in_empty_n,
    output logic        ref_in_read,
    output logic [33:0] crd_din,
    input  logic        crd_full_n,
    output logic        crd_write,
    output logic [33:0] ref_din,
    input  logic        ref_full_n,
    output logic        ref_write
);
  import samfuse_pkg::*;
  localparam int PW = LANES > 1 ? $clog2(LANES) : 1;
  localparam logic [PW-1:0] PLAST = PW'(LANES - 1);
  logic fin, ctl, mine, keep, fire;
  logic [PW-1:0] ph;
  logic [1:0] tc;
  logic [31:0] c;
  assign tc = crd_in_dout[33:32];
  assign c = crd_in_dout[31:0];
  assign ctl = tc == TAG_STOP || tc == TAG_DONE;
  assign mine = 32'(ph) == 32'(LANE);
  always @* begin
    if (ctl) keep = 1'b1;
    else if (tc == TAG_EMPTY) keep = mine && LO == 0;
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
      ph <= '0;
    end else if (fire) begin
      if (ctl) ph <= '0;
      else ph <= (ph == PLAST) ? '0 : ph + 1'b1;
      if (tc == TAG_DONE) fin <= 1'b1;
    end
  end
endmodule
