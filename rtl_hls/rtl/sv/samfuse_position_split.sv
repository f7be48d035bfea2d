// position_split: one lane's windows of a level's position space (docs/parallel.md). A
// (crd, ref) pair is kept when the key position beside it (pos_in) lies in one of the NW
// windows: window k is WIN[64k +: 32] <= pos < WIN[64k + 32 +: 32] (a comparator pair
// each). Every firing needs the three heads and pops the three; only a kept token (a
// pair of this lane's windows, a stop, D) is written and so needs space. One firing per
// cycle.
module samfuse_position_split #(
    parameter int NW = 1,
    parameter logic [64*NW-1:0] WIN = 64'(1) << 32
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(crd_in),
    `SAMFUSE_IN(ref_in),
    `SAMFUSE_IN(pos_in),
    `SAMFUSE_OUT(crd),
    `SAMFUSE_OUT(ref)
);
  import samfuse_pkg::*;
  logic fin, ctl, keep, in_win, fire;
  logic [1:0] tc;
  logic [31:0] p;
  assign tc = crd_in_dout[33:32];
  assign p = pos_in_dout[31:0];
  assign ctl = tc == TAG_STOP || tc == TAG_DONE;
  always @* begin
    in_win = 1'b0;
    for (int k = 0; k < NW; k++)
      if (p >= WIN[64*k +: 32] && p < WIN[64*k+32 +: 32]) in_win = 1'b1;
  end
  // a position that is not data (N: an error in the model) is never kept
  assign keep = ctl || (pos_in_dout[33:32] == TAG_DATA && in_win);
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
