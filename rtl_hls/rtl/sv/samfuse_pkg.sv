// samfuse_pkg: token encoding and value semantics shared by every reference RTL primitive.
//
// Token word (34 bits): tag[33:32] above payload[31:0].
//   tag 0 data (crd/ref unsigned, val float32 bits or int32; repsig R), 1 stop (payload =
//   level), 2 empty N, 3 done D.
// int32 arithmetic is exact two's complement (synthesizable). float32 arithmetic is
// SIMULATION-ONLY: it converts to `real` (binary64), computes, and rounds once to binary32
// with an exact integer round-to-nearest-even (Icarus 11 lacks $bitstoshortreal and the
// shortreal of the other simulator is a binary64). Replace f_* with FP cores to synthesize.
//
// Port macros: the Vitis HLS ap_fifo stream ports (docs/rtl.md) written once. This file is
// compiled first (netlist.rtl_sources), so every primitive's port list uses them:
// SAMFUSE_IN(x, W) declares x_dout[W-1:0], x_empty_n, x_read; SAMFUSE_OUT(y, W) declares
// y_din[W-1:0], y_full_n, y_write (W defaults to the 34-bit token word).
// SAMFUSE_BIND_IN/OUT(port, sig) connect a core's stream `port` to a wrapper's `sig`
// (beside `.*` for the ports whose names agree).
`define SAMFUSE_CLOCK input logic ap_clk, input logic ap_rst
`define SAMFUSE_IN(n, w = 34) \
    input logic [(w)-1:0] n``_dout, input logic n``_empty_n, output logic n``_read
`define SAMFUSE_OUT(n, w = 34) \
    output logic [(w)-1:0] n``_din, input logic n``_full_n, output logic n``_write
`define SAMFUSE_BIND_IN(port, sig) \
    .port``_dout(sig``_dout), .port``_empty_n(sig``_empty_n), .port``_read(sig``_read)
`define SAMFUSE_BIND_OUT(port, sig) \
    .port``_din(sig``_din), .port``_full_n(sig``_full_n), .port``_write(sig``_write)
// The coordinate joiners' ports (intersect, union, their _val forms and their core):
// crd_a, a2 (ref_a or val_a, W bits), crd_b, ref_b -> crd, a2, ref_b.
`define SAMFUSE_JOIN_PORTS(a2, w) \
    `SAMFUSE_CLOCK, `SAMFUSE_IN(crd_a), `SAMFUSE_IN(a2, w), `SAMFUSE_IN(crd_b), \
    `SAMFUSE_IN(ref_b), `SAMFUSE_OUT(crd), `SAMFUSE_OUT(a2, w), `SAMFUSE_OUT(ref_b)
// The level scanners' ports (scan_compressed, scan_dense, their core): ref_in -> crd, ref.
`define SAMFUSE_SCAN_PORTS `SAMFUSE_CLOCK, `SAMFUSE_IN(ref_in), `SAMFUSE_OUT(crd), `SAMFUSE_OUT(ref)
// SAMFUSE_MEM_STALL(cond): a memory node's simulation-only count of the cycles `cond`
// holds (a firing waiting for memory), read by the whole-graph bench from the instance's
// `mem_stall` as NodeStats.stall_mem.
`ifndef SYNTHESIS
`define SAMFUSE_MEM_STALL(cond) \
  int unsigned mem_stall; \
  always @(posedge ap_clk) if (ap_rst) mem_stall <= 0; else if (cond) mem_stall <= mem_stall + 1;
`else
`define SAMFUSE_MEM_STALL(cond)
`endif
// A memory node core's memory-system parameters (MEM: off-chip behind ports; the netlist
// sets them by these names), and their binding to a samfuse_mem_rdport/wrport.
`define SAMFUSE_MEM_PARAMS \
    parameter bit MEM = 1'b0, parameter int MEM_K = 8, parameter int MEM_WPL = 16, \
    parameter int MEM_LB = 64, parameter int MEM_B = 64, parameter int MEM_LAT = 1
`define SAMFUSE_MEM_PORT_PARAMS .K(MEM_K), .WPL(MEM_WPL), .LB(MEM_LB), .B(MEM_B), .LAT(MEM_LAT)
// The join _val forms' core binding: the core's ref_a is their val_a.
`define SAMFUSE_JOIN_VAL_BIND .*, `SAMFUSE_BIND_IN(ref_a, val_a), `SAMFUSE_BIND_OUT(ref_a, val_a)

package samfuse_pkg;
  // each module uses only some of the constants below
  /* verilator lint_off UNUSEDPARAM */
  localparam logic [1:0] TAG_DATA = 2'd0, TAG_STOP = 2'd1, TAG_EMPTY = 2'd2, TAG_DONE = 2'd3;
  // alu ops (catalogue BINARY_OPS order)
  localparam int OP_ADD = 0, OP_SUB = 1, OP_MUL = 2, OP_DIV = 3, OP_MAX = 4, OP_MIN = 5;
  // unary ops (catalogue UNARY_OPS order)
  localparam int U_RELU = 0, U_EXP = 1, U_NEG = 2, U_RSQRT = 3, U_ADDC = 4, U_MULC = 5,
                 U_DIVC = 6;
  localparam logic [31:0] F32_NAN = 32'h7fc00000, F32_NEG_INF = 32'hff800000;

  /* verilator lint_on UNUSEDPARAM */

`ifndef SYNTHESIS
  // The one stream-trace file of every contract FIFO (+samfuse_trace; samfuse_fifo.sv),
  // opened by the first FIFO to start: a file per FIFO runs into the simulator's limit on
  // open files (Icarus fails at ~1,000 edges).
  /* verilator lint_off UNUSEDSIGNAL */  // read and written only by samfuse_fifo
  int trace_fd = 0;
  // The burst log of every memory port (docs/rtl.md, memory system), opened by the first
  // port to start; one line per burst "PORT CYCLE FIRST_LINE LINES r|w".
  int mem_fd = 0;
  /* verilator lint_on UNUSEDSIGNAL */
`endif

  // Memory system (docs/timing.md, Memory): the cycle from which a line is usable (read) or
  // acknowledged (write) when the channel finishes moving it at byte-time `fin`.
  function automatic logic [31:0] mem_ready(input logic [63:0] fin, input int b,
                                            input int lat);
    return 32'((fin + 64'(b) - 64'd1) / 64'(b) + 64'(lat));
  endfunction

  function automatic logic [33:0] mk(input logic [1:0] tag, input logic [31:0] payload);
    return {tag, payload};
  endfunction

  // ---------------- int32 (exact) ----------------
  function automatic logic [31:0] i_div(input logic [31:0] a, input logic [31:0] b);
    if (b == 32'd0) return 32'd0;
    if (b == 32'hffffffff) return 32'd0 - a;  // INT_MIN / -1 wraps, like to_i32
    return $signed(a) / $signed(b);           // truncates toward zero
  endfunction

  function automatic logic [31:0] i_binop(input int op, input logic [31:0] a,
                                          input logic [31:0] b);
    case (op)
      OP_ADD: return a + b;
      OP_SUB: return a - b;
      OP_MUL: return a * b;
      OP_DIV: return i_div(a, b);
      OP_MAX: return ($signed(a) >= $signed(b)) ? a : b;
      default: return ($signed(a) <= $signed(b)) ? a : b;
    endcase
  endfunction

  function automatic logic [31:0] i_exp(input logic [31:0] x);
    // int(exp(x)) for x < 22, INT_MAX above (samfuse value semantics)
    if ($signed(x) < 0) return 32'd0;
    if ($signed(x) >= 22) return 32'h7fffffff;
    case (x[4:0])
      5'd0: return 32'd1;
      5'd1: return 32'd2;
      5'd2: return 32'd7;
      5'd3: return 32'd20;
      5'd4: return 32'd54;
      5'd5: return 32'd148;
      5'd6: return 32'd403;
      5'd7: return 32'd1096;
      5'd8: return 32'd2980;
      5'd9: return 32'd8103;
      5'd10: return 32'd22026;
      5'd11: return 32'd59874;
      5'd12: return 32'd162754;
      5'd13: return 32'd442413;
      5'd14: return 32'd1202604;
      5'd15: return 32'd3269017;
      5'd16: return 32'd8886110;
      5'd17: return 32'd24154952;
      5'd18: return 32'd65659969;
      5'd19: return 32'd178482300;
      5'd20: return 32'd485165195;
      default: return 32'd1318815734;
    endcase
  endfunction

  function automatic logic [31:0] i_unop(input int op, input logic [31:0] c,
                                         input logic [31:0] x);
    case (op)
      U_RELU: return ($signed(x) > 0) ? x : 32'd0;
      U_EXP: return i_exp(x);
      U_NEG: return 32'd0 - x;
      U_RSQRT: return (x == 32'd1) ? 32'd1 : 32'd0;  // int(1/sqrt(x)); 0 for x <= 0
      U_ADDC: return x + c;
      U_MULC: return x * c;
      default: return i_div(x, c);
    endcase
  endfunction

  // ---------------- float32 (simulation-only arithmetic) ----------------
  function automatic logic [63:0] f32_to_f64(input logic [31:0] f);
    logic [10:0] e;
    logic [51:0] m;
    int p;
    if (f[30:23] == 8'hff) return {f[31], 11'h7ff, f[22:0], 29'd0};
    if (f[30:23] == 8'h00) begin
      if (f[22:0] == 23'd0) return {f[31], 63'd0};
      p = 0;  // leading one of the subnormal mantissa
      for (int i = 0; i < 23; i++) if (f[i]) p = i;
      e = 11'(p + 874);
      m = 52'({29'd0, f[22:0]} << (52 - p));
      return {f[31], e, m};
    end
    return {f[31], 11'({3'd0, f[30:23]} + 11'd896), f[22:0], 29'd0};
  endfunction

  // binary64 -> binary32, round to nearest even (what a C cast does)
  function automatic logic [31:0] f64_to_f32(input logic [63:0] d);
    logic s;
    int fe, n;
    logic [52:0] sig;
    logic [52:0] rem, half;
    logic [31:0] q;
    logic [31:0] r;
    s = d[63];
    if (d[62:52] == 11'h7ff)
      return (d[51:0] != 0) ? {s, 8'hff, 1'b1, d[50:29]} : {s, 8'hff, 23'd0};
    if (d[62:52] == 11'd0) return {s, 31'd0};
    fe = int'(d[62:52]) - 896;
    if (fe >= 255) return {s, 8'hff, 23'd0};
    if (fe >= 1) begin
      r = {s, 8'(fe), d[51:29]};
      if (d[28] && (d[27:0] != 0 || d[29])) r = r + 32'd1;  // carry may reach inf: correct
      return r;
    end
    n = 30 - fe;  // subnormal result: shift the 53-bit significand right by n
    if (n > 54) return {s, 31'd0};
    sig = {1'b1, d[51:0]};
    q = 32'(sig >> n);
    rem = sig & ((53'd1 << n) - 53'd1);
    half = 53'd1 << (n - 1);
    if (rem > half || (rem == half && q[0])) q = q + 32'd1;
    return {s, q[30:0]};
  endfunction

  function automatic real f2r(input logic [31:0] f);
    return $bitstoreal(f32_to_f64(f));
  endfunction

  function automatic logic [31:0] r2f(input real r);
    return f64_to_f32($realtobits(r));
  endfunction

  function automatic logic [31:0] f_div(input logic [31:0] a, input logic [31:0] b);
    real ra, rb;
    ra = f2r(a);
    rb = f2r(b);
    if (rb == 0.0) begin
      if (ra == 0.0 || ra != ra) return F32_NAN;
      return {a[31] ^ b[31], 8'hff, 23'd0};
    end
    return r2f(ra / rb);
  endfunction

  function automatic logic [31:0] f_binop(input int op, input logic [31:0] a,
                                          input logic [31:0] b);
    real ra, rb;
    ra = f2r(a);
    rb = f2r(b);
    case (op)
      OP_ADD: return r2f(ra + rb);
      OP_SUB: return r2f(ra - rb);
      OP_MUL: return r2f(ra * rb);
      OP_DIV: return f_div(a, b);
      OP_MAX: return (ra >= rb) ? a : b;
      default: return (ra <= rb) ? a : b;
    endcase
  endfunction

  function automatic logic [31:0] f_unop(input int op, input logic [31:0] c,
                                         input logic [31:0] x);
    real rx;
    rx = f2r(x);
    case (op)
      U_RELU: return (rx > 0.0) ? x : 32'd0;
      U_EXP: return r2f($exp(rx));
      U_NEG: return {~x[31], x[30:0]};
      U_RSQRT: begin
        if (rx > 0.0) return r2f(1.0 / $sqrt(rx));
        if (rx == 0.0) return {x[31], 8'hff, 23'd0};
        return F32_NAN;
      end
      U_ADDC: return r2f(rx + f2r(c));
      U_MULC: return r2f(rx * f2r(c));
      default: return f_div(x, c);
    endcase
  endfunction

  function automatic logic [31:0] binop(input bit fp, input int op, input logic [31:0] a,
                                        input logic [31:0] b);
    return fp ? f_binop(op, a, b) : i_binop(op, a, b);
  endfunction

  function automatic logic [31:0] unop(input bit fp, input int op, input logic [31:0] c,
                                       input logic [31:0] x);
    return fp ? f_unop(op, c, x) : i_unop(op, c, x);
  endfunction
endpackage
