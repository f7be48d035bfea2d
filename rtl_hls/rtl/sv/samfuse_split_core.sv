// The firing of a lane's filter of a (crd, ref) stream, shared by lane_split and
// position_split: the wrapper decides whether a data (or N) pair is kept (`keep_data`)
// and says whether its further heads are present (`heads_n`, 1 when it reads none).
// Every firing needs all heads and pops them all; only a kept token (a pair the wrapper
// keeps, a stop, D) is written and so needs space. One firing per cycle, kept or not.
module samfuse_split_core (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(crd_in),
    `SAMFUSE_IN(ref_in),
    `SAMFUSE_OUT(crd),
    `SAMFUSE_OUT(ref),
    input logic heads_n,
    input logic keep_data,
    output logic fire
);
  import samfuse_pkg::*;
  logic fin, ctl, keep;
  logic [1:0] tc;
  assign tc = crd_in_dout[33:32];
  assign ctl = tc == TAG_STOP || tc == TAG_DONE;
  assign keep = ctl || keep_data;
  assign fire = !fin && crd_in_empty_n && ref_in_empty_n && heads_n &&
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
