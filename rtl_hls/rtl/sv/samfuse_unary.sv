// unary: val = op(a[, CONST]); N is treated as 0; stops and D pass through.
// CONST holds float32 bits (FP=1) or the int32 constant (FP=0). E > 1: blocks of E
// elements, op applied to each (N is the zero block); a data or N firing keeps the node
// busy for CYCLES cycles (samfuse_ii).
module samfuse_unary #(
    parameter bit FP = 1'b1,
    parameter int OP = 0,
    parameter logic [31:0] CONST = 32'd0,
    parameter int E = 1,
    parameter int CYCLES = 1
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(a, 32*E+2),
    `SAMFUSE_OUT(val, 32*E+2)
);
  import samfuse_pkg::*;
  logic fin, rdy;
  logic [1:0] ta;
  assign ta = a_dout[32*E+1-:2];
  assign a_read = !fin && rdy && a_empty_n && val_full_n;
  assign val_write = a_read;
  always @* begin
    if (ta == TAG_DATA || ta == TAG_EMPTY) begin
      val_din[32*E+1-:2] = TAG_DATA;
      for (int k = 0; k < E; k++)
        val_din[32*k+:32] = unop(FP, OP, CONST, ta == TAG_DATA ? a_dout[32*k+:32] : 32'd0);
    end else val_din = a_dout;
  end
  // (Icarus 11 misses package constants in port expressions: the value firing is a wire)
  logic vfire;
  assign vfire = a_read && (ta == TAG_DATA || ta == TAG_EMPTY);
  samfuse_ii #(.CYCLES(CYCLES)) u_ii (
      .ap_clk(ap_clk), .ap_rst(ap_rst), .fire(vfire), .ready(rdy)
  );
  always_ff @(posedge ap_clk) begin
    if (ap_rst) fin <= 1'b0;
    else if (a_read && ta == TAG_DONE) fin <= 1'b1;
  end
endmodule
