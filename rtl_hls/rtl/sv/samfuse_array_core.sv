// array: val = vals[ref]; N loads 0; stops and D pass through. vals loaded with $readmemh.
// MEM: vals is off-chip behind a read port (samfuse_mem_rdport); a data ref is read in the
// first cycle it is visible, whether or not `val` has space, and the firing waits for it.
// E > 1: block values (docs/blocks.md): value p is the E words from p*E, N loads the zero
// block, and with MEM a read accesses every line the block spans in one cycle (like
// consecutive single-word accesses) and waits for the last one.
// LQ > 1 (with MEM; dram.load_queue, docs/timing.md "Loads in flight"): two stages joined
// by LQ - 1 registers: a ref is taken from `ref` into the queue (its read issued when it
// became visible) while a register is free at the start of the cycle, and the oldest
// taken ref's value is written once usable, from the cycle it is taken (fall-through).
// VAL_BUF (with MEM; docs/timing.md "On-chip buffers"): vals is in an on-chip buffer, read
// through samfuse_buf_rdport: one access a value (the buffer is as wide as a value), and
// `vals_nlines`/`vals_base` are the access and its ready cycle, to and from the buffer.
module samfuse_array_core #(
    parameter int VAL_N = 1,
    parameter VAL_FILE = "",
    parameter int E = 1,
    `SAMFUSE_MEM_PARAMS,
    parameter int VAL_PORT = 0,
    parameter VAL_LEN_FILE = "",
    parameter int LQ = 1,
    parameter bit VAL_BUF = 1'b0
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(ref),
    `SAMFUSE_OUT(val, 32*E+2),
    // memory system (MEM); unused without it
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic [31:0] mem_now,
    input  logic [63:0] vals_base,
    /* verilator lint_on UNUSEDSIGNAL */
    output logic [15:0] vals_nlines
);
  import samfuse_pkg::*;
  localparam int VA = VAL_N * E > 1 ? $clog2(VAL_N * E) : 1;
  // most lines E consecutive words can span (E = 1: one access, the word itself)
  localparam int NACC = E == 1 || VAL_BUF ? 1 : (E + MEM_WPL - 2) / MEM_WPL + 1;
  logic [31:0] vals[VAL_N*E];
  /* verilator lint_off UNUSEDSIGNAL */  // read by the memory port's line span only
  logic [31:0] first;  // the value's first word
  /* verilator lint_on UNUSEDSIGNAL */
  logic [33:0] otok;   // the token `val` writes: the input's head, or the oldest queued ref
  logic [31:0] ofirst;
  /* verilator lint_off UNUSEDSIGNAL */  // read by the load queue only (LQ > 1)
  logic [31:0] hrdy;   // the head's read: ready cycle, stored with a queued ref
  /* verilator lint_on UNUSEDSIGNAL */
  logic mstall;        // the value to write waits for memory
  initial $readmemh(VAL_FILE, vals);
  logic fin;
  logic [1:0] tag;
  logic want, mok;  // a data ref waits for its value; the value is usable
  assign tag = ref_dout[33:32];
  assign first = ref_dout[31:0] * 32'(E);
  assign want = !fin && ref_empty_n && tag == TAG_DATA;
  assign ofirst = otok[31:0] * 32'(E);
  always @* begin
    case (otok[33:32])
      TAG_DATA: begin
        val_din[32*E+1-:2] = TAG_DATA;
        for (int k = 0; k < E; k++) val_din[32*k+:32] = vals[VA'(ofirst + 32'(k))];
      end
      TAG_EMPTY: val_din = '0;  // data 0 (0 and 0.0 share the bits; the zero block)
      default: begin  // a stop or D on the value's width
        val_din = '0;
        val_din[32*E+1-:2] = otok[33:32];
        val_din[31:0] = otok[31:0];
      end
    endcase
  end

  generate
    if (MEM && LQ > 1) begin : g_queue
      localparam int R = LQ - 1;  // queue registers
      logic [33:0] q_tok[R];
      logic [31:0] q_rdy[R];
      logic [31:0] qf, qn;        // first queued ref, queued refs
      logic ovalid, ook, push;
      // the oldest taken token: the first queued one, or (queue empty) the one taken now
      assign ref_read = !fin && ref_empty_n && qn < 32'(R);
      assign otok = qn != 0 ? q_tok[qf] : ref_dout;
      assign ovalid = qn != 0 || ref_read;
      assign ook = qn != 0 ? mem_now >= q_rdy[qf] : mok;  // its value is usable
      assign val_write = ovalid && val_full_n && (otok[33:32] != TAG_DATA || ook);
      assign push = ref_read && !(qn == 0 && val_write);
      always_ff @(posedge ap_clk) begin
        if (ap_rst) begin
          qf <= '0;
          qn <= '0;
        end else begin
          if (push) begin
            q_tok[(qf+qn)%32'(R)] <= ref_dout;
            q_rdy[(qf+qn)%32'(R)] <= hrdy;
          end
          if (val_write && qn != 0) qf <= (qf + 32'd1) % 32'(R);
          qn <= qn + 32'(push) - 32'(val_write && qn != 0);
        end
      end
      assign mstall = ovalid && otok[33:32] == TAG_DATA && !ook;
    end else begin : g_direct
      assign otok = ref_dout;
      assign ref_read = !fin && ref_empty_n && val_full_n && (!want || mok);
      assign val_write = ref_read;
      assign mstall = want && !mok;
    end
  endgenerate
  `SAMFUSE_MEM_STALL(mstall)
  always_ff @(posedge ap_clk) begin
    if (ap_rst) fin <= 1'b0;
    else if (ref_read && tag == TAG_DONE) fin <= 1'b1;
  end

  generate
    if (MEM) begin : g_port
      logic iss;  // this ref's value requested
      logic [31:0] rdy, nspan;
      logic [NACC-1:0] acc, okv;
      logic [NACC*32-1:0] words, ready;
      // the span's lines in order: its first word, then the first word of each further
      // line (ReadPort.read_span); the value is ready when the last line is
      assign nspan = VAL_BUF ? 32'd1
                   : (first + 32'(E) - 32'd1) / 32'(MEM_WPL) - first / 32'(MEM_WPL) + 32'd1;
      always @*
        for (int i = 0; i < NACC; i++) begin
          acc[i] = want && !iss && 32'(i) < nspan;
          words[i*32+:32] = i == 0 ? first : (first / 32'(MEM_WPL) + 32'(i)) * 32'(MEM_WPL);
        end
      if (VAL_BUF) begin : g_buf
        /* verilator lint_off UNUSEDSIGNAL */  // a buffer needs no address for timing
        logic [NACC*32-1:0] unused_words;
        /* verilator lint_on UNUSEDSIGNAL */
        assign unused_words = words;
        samfuse_buf_rdport #(.NACC(NACC)) u_vals (
            .now(mem_now), .acc(acc), .ok_now(okv), .ready(ready), .nlines(vals_nlines),
            .base(vals_base)
        );
      end else begin : g_dram
        samfuse_mem_rdport #(
            `SAMFUSE_MEM_PORT_PARAMS, .NACC(NACC),
            .PORT(VAL_PORT), .LEN_FILE(VAL_LEN_FILE)
        ) u_vals (
            .ap_clk(ap_clk), .ap_rst(ap_rst), .now(mem_now), .acc(acc),
            .word(words), .ok_now(okv), .ready(ready), .nlines(vals_nlines),
            .base(vals_base)
        );
      end
      assign mok = iss ? mem_now >= rdy : okv[nspan-32'd1];
      assign hrdy = iss ? rdy : ready[(nspan-32'd1)*32+:32];
      always_ff @(posedge ap_clk) begin
        if (ap_rst || ref_read) iss <= 1'b0;
        else if (want && !iss) begin
          iss <= 1'b1;
          rdy <= ready[(nspan-32'd1)*32+:32];
        end
      end
    end else begin : g_ideal
      assign mok = 1'b1;
      assign hrdy = '0;
      assign vals_nlines = '0;
    end
  endgenerate
endmodule
