// position_split: one lane's windows of a level's position space (docs/parallel.md). A
// (crd, ref) pair is kept when the key position beside it (pos_in) lies in one of the NW
// windows: window k is WIN[64k +: 32] <= pos < WIN[64k + 32 +: 32] (a comparator pair
// each); a position that is not data (N: an error in the model) is never kept. pos_in is
// popped with the pair; the firing is samfuse_split_core's.
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
  logic heads_n, keep_data, fire, in_win;
  logic [31:0] p;
  assign p = pos_in_dout[31:0];
  always @* begin
    in_win = 1'b0;
    for (int k = 0; k < NW; k++)
      if (p >= WIN[64*k +: 32] && p < WIN[64*k+32 +: 32]) in_win = 1'b1;
  end
  assign keep_data = pos_in_dout[33:32] == TAG_DATA && in_win;
  assign heads_n = pos_in_empty_n;
  assign pos_in_read = fire;
  samfuse_split_core u_core (.*);
endmodule
