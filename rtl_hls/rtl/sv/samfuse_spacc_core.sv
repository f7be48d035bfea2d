// spacc_core: the sparse accumulator over L kept levels, the core of samfuse_spacc2 (L = 2)
// and samfuse_spacc3 (L = 3) (docs/primitives.md). The crd ports are flat, level m in
// bits [34m +: 34] (bit m of the handshakes): crd 0 the innermost, crd L-1 the outermost
// kept level; crd_in m (m >= 1) holds one crd per level m-1 fiber of crd_in 0. Accumulates acc[crd_{L-1}]...[crd0] (crd2 < N2, crd1 < N1,
// crd0 < N0; N2 is 1 when L = 2) over a level-L fiber, stored as rows of N0 entries, one
// row per (crd2, crd1), with valid bits. Every input firing needs all heads:
//   crd0 a crd or N: pops crd0 and val, accumulates (N is skipped);
//   crd0 S_k, crd m the lowest crd level holding a crd: the fiber of crd m closes; it
//     pops crd m, and when k == m-1 the stops below too (crd0, val, crds 1..m);
//   crd0 S_k, every other level a stop: pops all; k >= L loads the drain;
//   D on all: pops all; D goes out on every output in the next cycle with space.
// The drain starts in the next cycle, one step per cycle, in increasing key order (the
// lowest valid row, then its lowest valid column, by priority encoders): an entry writes
// val, crd0 and the crds of the levels it opens (every level for a group's first entry);
// between two entries whose keys first differ at level t > 0 a step closes the fibers
// below t (S_{t-1-m} on crd m < t, S_{t-1} on val); the group ends with S_{k-1-m} on crd m
// and S_{k-1} on val. A step needs space only on the outputs it writes.
// E > 1: blocks of E elements (docs/blocks.md), summed elementwise (an entry's first value
// is 0 + v); a firing that accumulates a crd keeps the node busy for CYCLES cycles.
module samfuse_spacc_core #(
    parameter bit FP = 1'b1,
    parameter int L = 2,
    parameter int N2 = 1,
    parameter int N1 = 16,
    parameter int N0 = 16,
    parameter int E = 1,
    parameter int CYCLES = 1
) (
    `SAMFUSE_CLOCK,
    input  logic [34*L-1:0]    crd_in_dout,
    input  logic [L-1:0]       crd_in_empty_n,
    output logic [L-1:0]       crd_in_read,
    `SAMFUSE_IN(val_in, 32*E+2),
    output logic [34*L-1:0]    crd_din,
    input  logic [L-1:0]       crd_full_n,
    output logic [L-1:0]       crd_write,
    `SAMFUSE_OUT(val, 32*E+2)
);
  import samfuse_pkg::*;
  // a control token on the value output's width
  function automatic logic [32*E+1:0] ctl(input logic [1:0] tag, input logic [31:0] p);
    ctl = '0;
    ctl[32*E+1-:2] = tag;
    ctl[31:0] = p;
  endfunction
  localparam int NR = N2 * N1;  // rows: one per (crd2, crd1)
  localparam int IR = NR > 1 ? $clog2(NR) : 1;
  localparam int I0 = N0 > 1 ? $clog2(N0) : 1;
  logic [32*E-1:0] acc[NR][N0], acc_wdata, prev;
  logic [N0-1:0] valid[NR];
  // fin: D sent; dpend: D popped, not yet sent; drain: emitting the group; opened: the
  // group has written an entry, whose key is cur; sep: the step closing the fibers below
  // the next entry's first differing level has gone out
  logic fin, fin_n, dpend, dpend_n, drain, drain_n, opened, opened_n, sep, sep_n;
  logic [31:0] dlevel, dlevel_n;
  logic [32*L-1:0] low_k, cur, cur_n;  // per level m ([32m+:32]): the lowest, the last key
  logic [IR-1:0] low_r, acc_r;
  logic [I0-1:0] low_c, acc_c;
  logic found, heads, pop0, acc_we, clr, rdy, load;
  logic [L-1:0] pop, w;
  logic w_val;
  int top, open_m;  // the highest level where the lowest key differs from cur; see below
  logic [1:0] t0;
  logic [31:0] p0;
  // of the outer crd inputs only a crd's index bits matter: their stops follow crd0_in's
  /* verilator lint_off UNUSEDSIGNAL */
  logic [31:0] row_in;
  /* verilator lint_on UNUSEDSIGNAL */

  assign t0 = crd_in_dout[33:32];
  assign p0 = crd_in_dout[31:0];
  assign heads = (&crd_in_empty_n) & val_in_empty_n;
  assign crd_in_read = pop;
  assign val_in_read = pop0;
  assign pop0 = pop[0];
  assign crd_write = w;
  assign val_write = w_val;
  // the row of (crd2, crd1): crd2 * N1 + crd1
  assign row_in = (L > 2 ? crd_in_dout[34*(L-1)+:32] * 32'(N1) : 32'd0) + crd_in_dout[34+:32];
  assign acc_r = row_in[IR-1:0];
  assign acc_c = p0[I0-1:0];

  always @* begin  // lowest valid row, then the lowest valid column in it; their key
    found = 1'b0;
    low_r = '0;
    low_k = '0;
    for (int i = N2 - 1; i >= 0; i--) begin
      for (int j = N1 - 1; j >= 0; j--) begin
        if (|valid[i * N1 + j]) begin
          found = 1'b1;
          low_r = IR'(i * N1 + j);
          low_k[32+:32] = 32'(j);
          if (L > 2) low_k[32*(L-1)+:32] = 32'(i);
        end
      end
    end
    low_c = '0;
    for (int c = N0 - 1; c >= 0; c--) if (valid[low_r][c]) low_c = I0'(c);
    low_k[31:0] = 32'(low_c);
    top = 0;  // a group's first entry opens every level
    for (int m = 0; m < L; m++) if (!opened || low_k[32*m+:32] != cur[32*m+:32]) top = m;
  end

  always @* begin  // the lowest crd level above crd0 holding a crd (0: none)
    open_m = 0;
    for (int m = L - 1; m >= 1; m--) if (crd_in_dout[34*m+32+:2] == TAG_DATA) open_m = m;
  end

  always @* begin
    pop = '0;
    w = '0;
    w_val = 1'b0;
    crd_din = '0;
    val_din = '0;
    acc_we = 1'b0;
    clr = 1'b0;
    load = 1'b0;
    fin_n = fin;
    dpend_n = dpend;
    drain_n = drain;
    opened_n = opened;
    sep_n = sep;
    dlevel_n = dlevel;
    cur_n = cur;
    if (fin || !rdy) begin
    end else if (dpend) begin
      if (val_full_n && &crd_full_n) begin
        w = '1;
        w_val = 1'b1;
        for (int m = 0; m < L; m++) crd_din[34*m+:34] = mk(TAG_DONE, 32'd0);
        val_din = ctl(TAG_DONE, 32'd0);
        dpend_n = 1'b0;
        fin_n = 1'b1;
      end
    end else if (drain) begin
      // the step (its outputs in w, w_val); it fires if every output it writes has space
      w_val = 1'b1;
      if (found && opened && top > 0 && !sep) begin  // close the fibers below level top
        for (int m = 0; m < L; m++) begin
          if (m < top) begin
            w[m] = 1'b1;
            crd_din[34*m+:34] = mk(TAG_STOP, 32'(top - 1 - m));
          end
        end
        val_din = ctl(TAG_STOP, 32'(top - 1));
      end else if (found) begin  // the next entry, with the crds of the levels it opens
        for (int m = 0; m < L; m++) begin
          if (m <= top) begin
            w[m] = 1'b1;
            crd_din[34*m+:34] = mk(TAG_DATA, low_k[32*m+:32]);
          end
        end
        val_din = {TAG_DATA, acc[low_r][low_c]};
      end else begin  // the group is out: the lowered stops
        w = '1;
        for (int m = 0; m < L; m++) crd_din[34*m+:34] = mk(TAG_STOP, dlevel - 32'(1 + m));
        val_din = ctl(TAG_STOP, dlevel - 32'd1);
      end
      if (!val_full_n || (w & ~crd_full_n) != '0) begin
        w = '0;
        w_val = 1'b0;
      end else if (found && opened && top > 0 && !sep) begin
        sep_n = 1'b1;
      end else if (found) begin
        clr = 1'b1;
        opened_n = 1'b1;
        sep_n = 1'b0;
        cur_n = low_k;
      end else begin
        drain_n = 1'b0;
        opened_n = 1'b0;
        sep_n = 1'b0;
      end
    end else if (heads) begin
      if (t0 == TAG_DATA || t0 == TAG_EMPTY) begin  // accumulate (N is skipped)
        pop[0] = 1'b1;
        acc_we = t0 == TAG_DATA;
      end else if (t0 == TAG_DONE) begin
        pop = '1;
        dpend_n = 1'b1;
      end else if (open_m != 0) begin  // the fiber of crd open_m closes
        pop[open_m] = 1'b1;
        if (p0 == 32'(open_m - 1)) for (int m = 0; m < open_m; m++) pop[m] = 1'b1;
      end else begin  // S_k on crd0 with the aligned stops on every level above
        pop = '1;
        if (p0 >= 32'(L)) begin
          drain_n = 1'b1;
          dlevel_n = p0;
          load = 1'b1;
        end
      end
    end
  end

  // the entry's sum (prev 0 if none) and the firing's initiation interval
  assign prev = valid[acc_r][acc_c] ? acc[acc_r][acc_c] : '0;
  // (Icarus 11 misses package constants in port expressions: the value firing is a wire)
  logic vfire;
  assign vfire = pop0 && t0 == TAG_DATA;
  samfuse_acc_step #(.FP(FP), .E(E), .CYCLES(CYCLES)) u_step (
      .ap_clk(ap_clk), .ap_rst(ap_rst), .prev(prev), .val(val_in_dout), .fire(vfire),
      .sum(acc_wdata), .ready(rdy)
  );

  always_ff @(posedge ap_clk) begin
    if (ap_rst) begin
      for (int r = 0; r < NR; r++) valid[r] <= '0;
      fin <= 1'b0;
      dpend <= 1'b0;
      drain <= 1'b0;
      opened <= 1'b0;
      sep <= 1'b0;
      dlevel <= '0;
      cur <= '0;
    end else begin
      fin <= fin_n;
      dpend <= dpend_n;
      drain <= drain_n;
      opened <= opened_n;
      sep <= sep_n;
      dlevel <= dlevel_n;
      cur <= cur_n;
      if (acc_we) begin
        acc[acc_r][acc_c] <= acc_wdata;
        valid[acc_r][acc_c] <= 1'b1;
      end
      if (clr) valid[low_r][low_c] <= 1'b0;
    end
  end

`ifndef SYNTHESIS
  // simulation-only statistic read by the whole-graph bench: the most entries held when a
  // group ends (its closing stop popped), for the on-chip buffer rule (docs/timing.md).
  // held counts the valid bits (a new entry adds one, a drained entry removes one).
  int unsigned peak, held;
  always @(posedge ap_clk)
    if (ap_rst) begin
      held <= 0;
      peak <= 0;
    end else begin
      if (acc_we && !valid[acc_r][acc_c]) held <= held + 1;
      else if (clr) held <= held - 1;
      if (load && held > peak) peak <= held;
    end
`endif
endmodule
