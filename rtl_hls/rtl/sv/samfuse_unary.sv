// unary: val = op(a[, CONST]); N is treated as 0; stops and D pass through.
// CONST holds float32 bits (FP=1) or the int32 constant (FP=0).
module samfuse_unary #(
    parameter bit FP = 1'b1,
    parameter int OP = 0,
    parameter logic [31:0] CONST = 32'd0
) (
    input  logic        ap_clk,
    input  logic        ap_rst,
    input  logic [33:0] a_dout,
    input  logic        a_empty_n,
    output logic        a_read,
    output logic [33:0] val_din,
    input  logic        val_full_n,
    output logic        val_write
);
  import samfuse_pkg::*;
  logic fin;
  logic [1:0] ta;
  assign ta = a_dout[33:32];
  assign a_read = !fin && a_empty_n && val_full_n;
  assign val_write = a_read;
  always @* begin
    if (ta == TAG_DATA) val_din = mk(TAG_DATA, unop(FP, OP, CONST, a_dout[31:0]));
    else if (ta == TAG_EMPTY) val_din = mk(TAG_DATA, unop(FP, OP, CONST, 32'd0));
    else val_din = a_dout;
  end
  always_ff @(posedge ap_clk) begin
    if (ap_rst) fin <= 1'b0;
    else if (a_read && ta == TAG_DONE) fin <= 1'b1;
  end
endmodule
