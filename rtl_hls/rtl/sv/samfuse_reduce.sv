// reduce: removes the innermost level. Data (and N as 0) accumulate without output; an
// inner stop meets `outer`: a ref there closes a level-0 fiber (emit acc, pop the ref, and
// pop the stop if it is S0); a stop/D there passes through and pops both.
module samfuse_reduce #(
    parameter bit FP = 1'b1,
    parameter int OP = 0  // OP_ADD (sum) or OP_MAX (max)
) (
    input  logic        ap_clk,
    input  logic        ap_rst,
    input  logic [33:0] val_in_dout,
    input  logic        val_in_empty_n,
    output logic        val_in_read,
    input  logic [33:0] outer_dout,
    input  logic        outer_empty_n,
    output logic        outer_read,
    output logic [33:0] val_din,
    input  logic        val_full_n,
    output logic        val_write
);
  import samfuse_pkg::*;
  localparam logic [31:0] IDENT = OP == OP_ADD ? 32'd0 : (FP ? F32_NEG_INF : 32'h80000000);
  logic fin, fin_n;
  logic [31:0] acc, acc_n;
  logic [1:0] vt, ot;
  assign vt = val_in_dout[33:32];
  assign ot = outer_dout[33:32];

  always @* begin
    val_in_read = 1'b0;
    outer_read = 1'b0;
    val_write = 1'b0;
    val_din = '0;
    acc_n = acc;
    fin_n = fin;
    if (!fin && val_in_empty_n) begin
      if (vt == TAG_DATA || vt == TAG_EMPTY) begin
        val_in_read = 1'b1;
        acc_n = binop(FP, OP, acc, vt == TAG_DATA ? val_in_dout[31:0] : 32'd0);
      end else if (outer_empty_n && val_full_n) begin
        outer_read = 1'b1;
        val_write = 1'b1;
        if (ot == TAG_DATA || ot == TAG_EMPTY) begin
          val_din = mk(TAG_DATA, acc);
          acc_n = IDENT;
          val_in_read = vt == TAG_STOP && val_in_dout[31:0] == 32'd0;
        end else begin
          val_in_read = 1'b1;
          val_din = outer_dout;
          fin_n = vt == TAG_DONE;
        end
      end
    end
  end

  always_ff @(posedge ap_clk) begin
    if (ap_rst) begin
      fin <= 1'b0;
      acc <= IDENT;
    end else begin
      fin <= fin_n;
      acc <= acc_n;
    end
  end
endmodule
