// position_split: one lane's window of a level's position space (docs/parallel.md). A
// (crd, ref) pair is kept when the key position beside it (pos_in) has LO <= pos < HI.
// Every firing needs the three heads and pops the three; only a kept token (a pair of
// this lane's window, a stop, D) is written and so needs space. One firing per cycle.
module samfuse_position_split #(
    parameter int LO = 0,
    parameter int HI = 1
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(crd_in),
    `SAMFUSE_IN(ref_in),
    `SAMFUSE_IN(pos_in),
    `SAMFUSE_OUT(crd),
    `SAMFUSE_OUT(ref)
);
  import samfuse_pkg::*;
  logic fin, ctl, keep, fire;
  logic [1:0] tc;
  logic [31:0] p;
  assign tc = crd_in_dout[33:32];
  assign p = pos_in_dout[31:0];
  assign ctl = tc == TAG_STOP || tc == TAG_DONE;
  // LO = 0 or HI = 0 (an empty window) makes a comparison constant
  /* verilator lint_off UNSIGNED */
  // a position that is not data (N: an error in the model) is never kept
  assign keep = ctl || (pos_in_dout[33:32] == TAG_DATA && {1'b0, p} >= 33'(LO) &&
                        {1'b0, p} < 33'(HI));
  /* verilator lint_on UNSIGNED */
  assign fire = !fin && crd_in_empty_n && ref_in_empty_n && pos_in_empty_n &&
                (!keep || (crd_full_n && ref_full_n));
  assign crd_in_read = fire;
  assign ref_in_read = fire;
  assign pos_in_read = fire;
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
