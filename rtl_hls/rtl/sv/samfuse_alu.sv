// alu: val = a op b on aligned streams; N counts as 0; stops and D (aligned) pass through.
// FP=1: float32 (simulation-only arithmetic, see samfuse_pkg); FP=0: exact int32.
// BLOCK=1: block values (docs/blocks.md): a, b and val carry EA, EB and EO binary32
// elements (a 2-bit tag above 32*E payload bits), N is the zero block, and the firing
// computes the block op given by NL..SB (samfuse_block_op). A value firing keeps the node
// busy for CYCLES cycles (samfuse_ii). The defaults are the scalar ALU.
module samfuse_alu #(
    parameter bit FP = 1'b1,
    parameter int OP = 0,
    parameter bit BLOCK = 1'b0,
    parameter int EA = 1,
    parameter int EB = 1,
    parameter int EO = 1,
    parameter int NL = 1,
    parameter int CI = 1,
    parameter int MODE = 0,
    parameter logic [511:0] EXT = 512'd1,
    parameter logic [511:0] SA = 512'd1,
    parameter logic [511:0] SB = 512'd1,
    parameter int CYCLES = 1
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(a, 32*EA+2),
    `SAMFUSE_IN(b, 32*EB+2),
    `SAMFUSE_OUT(val, 32*EO+2)
);
  import samfuse_pkg::*;
  logic fin, ctrl, rdy;
  logic [1:0] ta, tb;
  logic [32*EO-1:0] res;
  assign ta = a_dout[32*EA+1-:2];
  assign tb = b_dout[32*EB+1-:2];
  assign ctrl = ta == TAG_STOP || ta == TAG_DONE || tb == TAG_STOP || tb == TAG_DONE;
  assign a_read = !fin && rdy && a_empty_n && b_empty_n && val_full_n;
  assign b_read = a_read;
  assign val_write = a_read;

  logic ad, bd;
  assign ad = ta == TAG_DATA;
  assign bd = tb == TAG_DATA;
  generate
    if (BLOCK) begin : g_block
      logic [32*EA-1:0] av;
      logic [32*EB-1:0] bv;
      assign av = ad ? a_dout[32*EA-1:0] : '0;
      assign bv = bd ? b_dout[32*EB-1:0] : '0;
      samfuse_block_op #(
          .EA(EA), .EB(EB), .EO(EO), .NL(NL), .CI(CI), .MODE(MODE), .OP(OP), .EXT(EXT),
          .SA(SA), .SB(SB)
      ) u_op (.a(av), .b(bv), .y(res));
    end else begin : g_scalar
      logic [31:0] av, bv;
      assign av = ad ? a_dout[31:0] : 32'd0;
      assign bv = bd ? b_dout[31:0] : 32'd0;
      assign res = binop(FP, OP, av, bv);
    end
  endgenerate

  always @* begin
    val_din = '0;
    if (ctrl) begin  // a's control token, its tag moved above the output's payload
      val_din[32*EO+1-:2] = ta;
      val_din[31:0] = a_dout[31:0];
    end else val_din = {TAG_DATA, res};
  end

  samfuse_ii #(.CYCLES(CYCLES)) u_ii (
      .ap_clk(ap_clk), .ap_rst(ap_rst), .fire(a_read && !ctrl), .ready(rdy)
  );

  always_ff @(posedge ap_clk) begin
    if (ap_rst) fin <= 1'b0;
    else if (a_read && ta == TAG_DONE) fin <= 1'b1;
  end
endmodule
