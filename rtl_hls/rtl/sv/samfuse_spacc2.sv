// spacc2: sparse matrix accumulator. Accumulates acc[crd1][crd0] (crd1 < N1, crd0 < N0)
// over a level-2 fiber; crd1_in holds one crd per level-0 fiber. Every input firing needs
// all three heads. S_k (k>=2) on crd0_in with S_{k-1} on crd1_in pops the three inputs and
// starts the drain in the next cycle, one step per cycle: rows in increasing crd1 (lowest
// valid row, then its lowest valid column, by priority encoders); a row's first entry also
// writes its crd1, rows are separated by S0 on crd0/val, and the drain ends with
// (S_{k-2}, S_{k-1}, S_{k-1}). A step needs space only on the outputs it writes. D on the
// inputs is popped, then D goes out on all three in the next cycle with space.
// E > 1: blocks of E elements (docs/blocks.md), summed elementwise (an entry's first value
// is 0 + v); a firing that accumulates a crd keeps the node busy for CYCLES cycles.
module samfuse_spacc2 #(
    parameter bit FP = 1'b1,
    parameter int N1 = 16,
    parameter int N0 = 16,
    parameter int E = 1,
    parameter int CYCLES = 1
) (
    input  logic        ap_clk,
    input  logic        ap_rst,
    input  logic [33:0] crd1_in_dout,
    input  logic        crd1_in_empty_n,
    output logic        crd1_in_read,
    input  logic [33:0] crd0_in_dout,
    input  logic        crd0_in_empty_n,
    output logic        crd0_in_read,
    input  logic [32*E+1:0] val_in_dout,
    input  logic        val_in_empty_n,
    output logic        val_in_read,
    output logic [33:0] crd1_din,
    input  logic        crd1_full_n,
    output logic        crd1_write,
    output logic [33:0] crd0_din,
    input  logic        crd0_full_n,
    output logic        crd0_write,
    output logic [32*E+1:0] val_din,
    input  logic        val_full_n,
    output logic        val_write
);
  import samfuse_pkg::*;
  // a control token on the value output's width
  function automatic logic [32*E+1:0] ctl(input logic [1:0] tag, input logic [31:0] p);
    ctl = '0;
    ctl[32*E+1-:2] = tag;
    ctl[31:0] = p;
  endfunction
  localparam int I1 = N1 > 1 ? $clog2(N1) : 1;
  localparam int I0 = N0 > 1 ? $clog2(N0) : 1;
  logic [32*E-1:0] acc[N1][N0], acc_wdata, prev;
  logic [N0-1:0] valid[N1];
  // fin: D sent; dpend: D popped, not yet sent; drain: emitting the matrix; row_open: the
  // row `cur` has had its first entry written (next: its other entries, or S0)
  logic fin, fin_n, dpend, dpend_n, drain, drain_n, row_open, row_open_n;
  logic [31:0] dlevel, dlevel_n;
  logic [I1-1:0] cur, cur_n, low_r, acc_r;
  logic [I0-1:0] low_c, acc_c;
  logic found;
  logic pop0, pop1, w1, w0, acc_we, clr, rdy;
  logic [1:0] t1, t0, tv;
  logic [31:0] p0;
  // of crd1_in only a crd's row-index bits matter: its stop levels follow crd0_in's
  /* verilator lint_off UNUSEDSIGNAL */
  logic [31:0] p1;
  /* verilator lint_on UNUSEDSIGNAL */
  logic heads, sp_all, sp_inner;

  assign t1 = crd1_in_dout[33:32];
  assign t0 = crd0_in_dout[33:32];
  assign tv = val_in_dout[32*E+1-:2];
  assign p1 = crd1_in_dout[31:0];
  assign p0 = crd0_in_dout[31:0];
  assign heads = crd1_in_empty_n & crd0_in_empty_n & val_in_empty_n;
  assign sp_inner = crd0_full_n & val_full_n;
  assign sp_all = sp_inner & crd1_full_n;
  assign crd1_in_read = pop1;
  assign crd0_in_read = pop0;
  assign val_in_read = pop0;
  assign crd1_write = w1;
  assign crd0_write = w0;
  assign val_write = w0;
  assign acc_r = p1[I1-1:0];
  assign acc_c = p0[I0-1:0];

  always @* begin  // lowest valid row, then the lowest valid column in it
    found = 1'b0;
    low_r = '0;
    low_c = '0;
    for (int r = N1 - 1; r >= 0; r--) begin
      if (|valid[r]) begin
        found = 1'b1;
        low_r = r[I1-1:0];
      end
    end
    for (int c = N0 - 1; c >= 0; c--) if (valid[low_r][c]) low_c = c[I0-1:0];
  end

  always @* begin
    pop0 = 1'b0;
    pop1 = 1'b0;
    w1 = 1'b0;
    w0 = 1'b0;
    crd1_din = '0;
    crd0_din = '0;
    val_din = '0;
    acc_we = 1'b0;
    clr = 1'b0;
    fin_n = fin;
    dpend_n = dpend;
    drain_n = drain;
    row_open_n = row_open;
    dlevel_n = dlevel;
    cur_n = cur;
    if (fin || !rdy) begin
    end else if (dpend) begin
      if (sp_all) begin
        {w1, w0} = 2'b11;
        crd1_din = mk(TAG_DONE, 32'd0);
        crd0_din = mk(TAG_DONE, 32'd0);
        val_din = ctl(TAG_DONE, 32'd0);
        dpend_n = 1'b0;
        fin_n = 1'b1;
      end
    end else if (drain) begin
      if (found && row_open && low_r == cur) begin  // next entry of the open row
        if (sp_inner) begin
          w0 = 1'b1;
          crd0_din = mk(TAG_DATA, 32'(low_c));
          val_din = {TAG_DATA, acc[low_r][low_c]};
          clr = 1'b1;
        end
      end else if (found && row_open) begin  // the open row is done: S0 between rows
        if (sp_inner) begin
          w0 = 1'b1;
          crd0_din = mk(TAG_STOP, 32'd0);
          val_din = ctl(TAG_STOP, 32'd0);
          row_open_n = 1'b0;
        end
      end else if (found) begin  // first entry of the next row, with its crd1
        if (sp_all) begin
          {w1, w0} = 2'b11;
          crd1_din = mk(TAG_DATA, 32'(low_r));
          crd0_din = mk(TAG_DATA, 32'(low_c));
          val_din = {TAG_DATA, acc[low_r][low_c]};
          clr = 1'b1;
          row_open_n = 1'b1;
          cur_n = low_r;
        end
      end else if (sp_all) begin  // the matrix is out: the lowered stops
        {w1, w0} = 2'b11;
        crd1_din = mk(TAG_STOP, dlevel - 32'd2);
        crd0_din = mk(TAG_STOP, dlevel - 32'd1);
        val_din = ctl(TAG_STOP, dlevel - 32'd1);
        drain_n = 1'b0;
        row_open_n = 1'b0;
      end
    end else if (heads) begin
      if (t0 == TAG_DATA || t0 == TAG_EMPTY) begin  // accumulate (N is skipped)
        pop0 = 1'b1;
        acc_we = t0 == TAG_DATA;
      end else if (t0 == TAG_DONE) begin
        {pop1, pop0} = 2'b11;
        dpend_n = 1'b1;
      end else if (t1 == TAG_DATA) begin  // a level-0 fiber closes: its crd1 is done
        pop1 = 1'b1;
        pop0 = p0 == 32'd0;
      end else begin  // S_k on crd0 with S_{k-1} on crd1
        {pop1, pop0} = 2'b11;
        if (p0 >= 32'd2) begin
          drain_n = 1'b1;
          dlevel_n = p0;
        end
      end
    end
  end

  // the entry's sum, element by element: prev (0 if none) + the value (N as 0)
  assign prev = valid[acc_r][acc_c] ? acc[acc_r][acc_c] : '0;
  always @*
    for (int k = 0; k < E; k++)
      acc_wdata[32*k+:32] = binop(FP, OP_ADD, prev[32*k+:32],
                                  tv == TAG_DATA ? val_in_dout[32*k+:32] : 32'd0);

  // (Icarus 11 misses package constants in port expressions: the value firing is a wire)
  logic vfire;
  assign vfire = pop0 && t0 == TAG_DATA;
  samfuse_ii #(.CYCLES(CYCLES)) u_ii (
      .ap_clk(ap_clk), .ap_rst(ap_rst), .fire(vfire), .ready(rdy)
  );

  always_ff @(posedge ap_clk) begin
    if (ap_rst) begin
      for (int r = 0; r < N1; r++) valid[r] <= '0;
      fin <= 1'b0;
      dpend <= 1'b0;
      drain <= 1'b0;
      row_open <= 1'b0;
      dlevel <= '0;
      cur <= '0;
    end else begin
      fin <= fin_n;
      dpend <= dpend_n;
      drain <= drain_n;
      row_open <= row_open_n;
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
  // matrix ends (S_k, k>=2, popped on crd0_in), for the on-chip buffer rule (docs/timing.md)
  int unsigned peak, held;
  always @* begin
    held = 0;
    for (int r = 0; r < N1; r++)
      for (int c = 0; c < N0; c++) held = held + 32'(valid[r][c]);
  end
  always @(posedge ap_clk)
    if (ap_rst) peak <= 0;
    else if (!fin && !dpend && !drain && heads && t0 == TAG_STOP && t1 != TAG_DATA
             && p0 >= 32'd2 && held > peak) peak <= held;
`endif
endmodule
