// reduce: removes the innermost level. Data (and N as 0) accumulate without output; an
// inner stop meets `outer`: a ref there closes a level-0 fiber (emit acc, pop the ref, and
// pop the stop if it is S0); a stop/D there passes through and pops both.
// BLOCK=1: blocks (docs/blocks.md): val_in carries EI elements, val EO; each data or N
// firing folds the block by the block op NL..SA (samfuse_block_op, MODE 2 or 3) and
// combines it with the EO-element accumulator elementwise, keeping the node busy for
// CYCLES cycles (samfuse_ii). The defaults are the scalar reducer.
module samfuse_reduce #(
    parameter bit FP = 1'b1,
    parameter int OP = 0,  // OP_ADD (sum) or OP_MAX (max)
    parameter bit BLOCK = 1'b0,
    parameter int EI = 1,
    parameter int EO = 1,
    parameter int NL = 1,
    parameter int CI = 1,
    parameter int MODE = 2,
    parameter logic [511:0] EXT = 512'd1,
    parameter logic [511:0] SA = 512'd1,
    parameter int CYCLES = 1
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(val_in, 32*EI+2),
    `SAMFUSE_IN(outer),
    `SAMFUSE_OUT(val, 32*EO+2)
);
  import samfuse_pkg::*;
  localparam logic [31:0] IDENT = OP == OP_ADD ? 32'd0 : (FP ? F32_NEG_INF : 32'h80000000);
  logic fin, fin_n, rdy;
  logic [32*EO-1:0] acc, acc_n, y, comb;
  logic [1:0] vt, ot;
  assign vt = val_in_dout[32*EI+1-:2];
  assign ot = outer_dout[33:32];

  // y: the incoming value (N as 0) folded to the output's elements; comb: acc combined
  logic vdata, vfire;
  assign vdata = vt == TAG_DATA;
  generate
    if (BLOCK) begin : g_block
      logic [32*EI-1:0] x;
      assign x = vdata ? val_in_dout[32*EI-1:0] : '0;
      samfuse_block_op #(
          .EA(EI), .EB(1), .EO(EO), .NL(NL), .CI(CI), .MODE(MODE), .OP(OP), .EXT(EXT),
          .SA(SA), .SB(512'd0)
      ) u_fold (.a(x), .b(32'd0), .y(y));
    end else begin : g_scalar
      assign y = vdata ? val_in_dout[31:0] : 32'd0;
    end
  endgenerate
  always @*
    for (int k = 0; k < EO; k++) comb[32*k+:32] = binop(FP, OP, acc[32*k+:32], y[32*k+:32]);

  always @* begin
    val_in_read = 1'b0;
    outer_read = 1'b0;
    val_write = 1'b0;
    val_din = '0;
    acc_n = acc;
    fin_n = fin;
    if (!fin && rdy && val_in_empty_n) begin
      if (vt == TAG_DATA || vt == TAG_EMPTY) begin
        val_in_read = 1'b1;
        acc_n = comb;
      end else if (outer_empty_n && val_full_n) begin
        outer_read = 1'b1;
        val_write = 1'b1;
        if (ot == TAG_DATA || ot == TAG_EMPTY) begin
          val_din = {TAG_DATA, acc};
          acc_n = {EO{IDENT}};
          val_in_read = vt == TAG_STOP && val_in_dout[31:0] == 32'd0;
        end else begin
          val_in_read = 1'b1;
          val_din[32*EO+1-:2] = ot;  // the outer stop or D, on the output's width
          val_din[31:0] = outer_dout[31:0];
          fin_n = vt == TAG_DONE;
        end
      end
    end
  end

  // (Icarus 11 misses package constants in port expressions: the value firing is a wire)
  assign vfire = val_in_read && (vdata || vt == TAG_EMPTY);
  samfuse_ii #(.CYCLES(CYCLES)) u_ii (
      .ap_clk(ap_clk), .ap_rst(ap_rst), .fire(vfire), .ready(rdy)
  );

  always_ff @(posedge ap_clk) begin
    if (ap_rst) begin
      fin <= 1'b0;
      acc <= {EO{IDENT}};
    end else begin
      fin <= fin_n;
      acc <= acc_n;
    end
  end
endmodule
