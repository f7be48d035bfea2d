// repeat: repeats the head ref once per R; a repsig stop S_k pops the ref and passes S_k,
// and (k>0, a fiber was open) arms `skip` to drop the merged S_{k-1} that follows on ref_in.
// The payload is never inspected: samfuse_broadcast reuses this module on value streams
// (W: their token width, 2 + 32*E for blocks of E elements).
module samfuse_repeat #(
    parameter int W = 34
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(ref_in, W),
    `SAMFUSE_IN(repsig),
    `SAMFUSE_OUT(ref, W)
);
  import samfuse_pkg::*;
  // a control token (34-bit word) on this stream's width W (docs/blocks.md)
  function automatic logic [W-1:0] wide(input logic [33:0] t);
    wide = '0;
    wide[W-1-:2] = t[33:32];
    wide[31:0] = t[31:0];
  endfunction
  logic fin, fin_n, skip, skip_n;
  logic [1:0] rtag, stag;
  assign rtag = ref_in_dout[W-1-:2];
  assign stag = repsig_dout[33:32];

  always @* begin
    ref_in_read = 1'b0;
    repsig_read = 1'b0;
    ref_write = 1'b0;
    ref_din = '0;
    fin_n = fin;
    skip_n = skip;
    if (!fin && ref_in_empty_n) begin
      if (skip) begin
        ref_in_read = 1'b1;  // the merged stop: consumed without output
        skip_n = 1'b0;
      end else if (repsig_empty_n && ref_full_n) begin
        repsig_read = 1'b1;
        ref_write = 1'b1;
        case (stag)
          TAG_STOP: begin
            ref_in_read = 1'b1;
            ref_din = wide(repsig_dout);
            if (rtag != TAG_STOP && repsig_dout[31:0] != 32'd0) skip_n = 1'b1;
          end
          TAG_DONE: begin
            ref_in_read = 1'b1;
            ref_din = wide(repsig_dout);
            fin_n = 1'b1;
          end
          default: ref_din = ref_in_dout;  // R
        endcase
      end
    end
  end

  always_ff @(posedge ap_clk) begin
    if (ap_rst) begin
      fin <= 1'b0;
      skip <= 1'b0;
    end else begin
      fin <= fin_n;
      skip <= skip_n;
    end
  end
endmodule
