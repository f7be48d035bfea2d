// block_op: the intra-block einsum of one block firing (docs/blocks.md, Block operators),
// combinational, shared by the block ALU, the block reducer's fold and the accumulators'
// elementwise sums. The generator passes ir.BlockOp.loops(): NL loops (the NOUT output
// letters row-major, then the contracted letters), loop l's extent in EXT[32l+:32] and
// each operand's element stride along it in SA/SB (0 = broadcast). Output element o
// meets contraction steps c = 0..CI-1 at flat loop index o*CI + c.
// MODE 0: elementwise y = binop(OP, a, b); 1: contraction, a binary64 sum from +0.0 of the
// exact products in loop order, rounded once; 2: a gather of a (a reducer with nothing to
// fold); 3: a reducer fold of a, OP_ADD summed like a contraction, OP_MAX by the scalar
// max rule from -inf. Simulation-only float arithmetic, like samfuse_pkg's f_*.
module samfuse_block_op #(
    parameter int EA = 1,
    parameter int EB = 1,
    parameter int EO = 1,
    parameter int NL = 1,
    parameter int CI = 1,
    parameter int MODE = 0,
    parameter int OP = 0,
    parameter logic [511:0] EXT = 512'd1,
    parameter logic [511:0] SA = 512'd1,
    parameter logic [511:0] SB = 512'd1
) (
    input  logic [32*EA-1:0] a,
    /* verilator lint_off UNUSEDSIGNAL */  // a fold reads only a
    input  logic [32*EB-1:0] b,
    /* verilator lint_on UNUSEDSIGNAL */
    output logic [32*EO-1:0] y
);
  import samfuse_pkg::*;

  // element offset, for strides `s`, at flat loop index `flat` (mixed radix over EXT,
  // last loop fastest)
  function automatic int offset(input int flat, input logic [511:0] s);
    int rem, off;
    rem = flat;
    off = 0;
    for (int l = NL - 1; l >= 0; l--) begin
      off = off + (rem % int'(EXT[32*l+:32])) * int'(s[32*l+:32]);
      rem = rem / int'(EXT[32*l+:32]);
    end
    return off;
  endfunction

  always @* begin
    real acc;
    logic [31:0] m, x;
    int oa, ob;
    y = '0;
    for (int o = 0; o < EO; o++) begin
      acc = 0.0;
      m = F32_NEG_INF;
      x = '0;
      for (int c = 0; c < CI; c++) begin
        oa = offset(o * CI + c, SA);
        ob = offset(o * CI + c, SB);
        x = a[32*oa+:32];
        case (MODE)
          0: m = f_binop(OP, x, b[32*ob+:32]);
          1: acc = acc + f2r(x) * f2r(b[32*ob+:32]);
          2: m = x;
          default:
            if (OP == OP_ADD) acc = acc + f2r(x);
            else m = f_binop(OP_MAX, m, x);
        endcase
      end
      y[32*o+:32] = (MODE == 1 || (MODE == 3 && OP == OP_ADD)) ? r2f(acc) : m;
    end
  end
endmodule
