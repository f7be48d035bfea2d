// alu: val = a op b on aligned streams; N counts as 0; stops and D (aligned) pass through.
// FP=1: float32 (simulation-only arithmetic, see samfuse_pkg); FP=0: exact int32.
module samfuse_alu #(
    parameter bit FP = 1'b1,
    parameter int OP = 0
) (
    input  logic        ap_clk,
    input  logic        ap_rst,
    input  logic [33:0] a_dout,
    input  logic        a_empty_n,
    output logic        a_read,
    input  logic [33:0] b_dout,
    input  logic        b_empty_n,
    output logic        b_read,
    output logic [33:0] val_din,
    input  logic        val_full_n,
    output logic        val_write
);
  import samfuse_pkg::*;
  logic fin;
  logic [1:0] ta, tb;
  logic [31:0] av, bv;
  assign ta = a_dout[33:32];
  assign tb = b_dout[33:32];
  assign av = ta == TAG_DATA ? a_dout[31:0] : 32'd0;
  assign bv = tb == TAG_DATA ? b_dout[31:0] : 32'd0;
  assign a_read = !fin && a_empty_n && b_empty_n && val_full_n;
  assign b_read = a_read;
  assign val_write = a_read;
  always @* begin
    if (ta == TAG_STOP || ta == TAG_DONE || tb == TAG_STOP || tb == TAG_DONE) val_din = a_dout;
    else val_din = mk(TAG_DATA, binop(FP, OP, av, bv));
  end
  always_ff @(posedge ap_clk) begin
    if (ap_rst) fin <= 1'b0;
    else if (a_read && ta == TAG_DONE) fin <= 1'b1;
  end
endmodule
