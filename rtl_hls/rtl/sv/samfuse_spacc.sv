// spacc: sparse vector accumulator. Accumulates level-0 fibers by crd (crds < N); S0 ends
// one partial vector; S_k (k>0) starts the drain: one (crd, val) per cycle in crd order,
// lowest first (a priority encoder over the valid bits), then S_{k-1}.
// E > 1: blocks of E elements (docs/blocks.md), summed elementwise (an entry's first value
// is 0 + v); a firing that accumulates a crd keeps the node busy for CYCLES cycles.
module samfuse_spacc #(
    parameter bit FP = 1'b1,
    parameter int N = 16,
    parameter int E = 1,
    parameter int CYCLES = 1
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(crd_in),
    `SAMFUSE_IN(val_in, 32*E+2),
    `SAMFUSE_OUT(crd),
    `SAMFUSE_OUT(val, 32*E+2)
);
  import samfuse_pkg::*;
  // a control token on the value output's width
  function automatic logic [32*E+1:0] ctl(input logic [1:0] tag, input logic [31:0] p);
    ctl = '0;
    ctl[32*E+1-:2] = tag;
    ctl[31:0] = p;
  endfunction
  localparam int IA = N > 1 ? $clog2(N) : 1;
  logic [32*E-1:0] acc[N], acc_wdata, prev;
  logic [N-1:0] valid;
  logic fin, fin_n, drain, drain_n, found, sp, pop, wr, acc_we, clr, rdy;
  logic [31:0] dlevel, dlevel_n;
  logic [IA-1:0] low, acc_waddr;
  logic [1:0] ct;
  logic [31:0] c;

  assign ct = crd_in_dout[33:32];
  assign c = crd_in_dout[31:0];
  assign sp = crd_full_n & val_full_n;
  assign crd_in_read = pop;
  assign val_in_read = pop;
  assign crd_write = wr;
  assign val_write = wr;
  assign acc_waddr = c[IA-1:0];

  always @* begin  // lowest valid entry
    found = 1'b0;
    low = '0;
    for (int i = N - 1; i >= 0; i--) begin
      if (valid[i]) begin
        found = 1'b1;
        low = i[IA-1:0];
      end
    end
  end

  always @* begin
    pop = 1'b0;
    wr = 1'b0;
    crd_din = '0;
    val_din = '0;
    acc_we = 1'b0;
    clr = 1'b0;
    drain_n = drain;
    dlevel_n = dlevel;
    fin_n = fin;
    if (fin || !rdy) begin
    end else if (drain) begin
      if (sp) begin
        wr = 1'b1;
        if (found) begin
          crd_din = mk(TAG_DATA, 32'(low));
          val_din = {TAG_DATA, acc[low]};
          clr = 1'b1;
        end else begin
          crd_din = mk(TAG_STOP, dlevel);
          val_din = ctl(TAG_STOP, dlevel);
          drain_n = 1'b0;
        end
      end
    end else if (crd_in_empty_n && val_in_empty_n) begin
      if (ct == TAG_DATA) begin
        pop = 1'b1;
        acc_we = 1'b1;
      end else if (ct == TAG_EMPTY || (ct == TAG_STOP && c == 32'd0)) pop = 1'b1;
      else if (sp) begin
        pop = 1'b1;
        wr = 1'b1;
        if (ct == TAG_DONE) begin
          crd_din = crd_in_dout;
          val_din = ctl(TAG_DONE, c);
          fin_n = 1'b1;
        end else if (found) begin
          crd_din = mk(TAG_DATA, 32'(low));
          val_din = {TAG_DATA, acc[low]};
          clr = 1'b1;
          drain_n = 1'b1;
          dlevel_n = c - 32'd1;
        end else begin
          crd_din = mk(TAG_STOP, c - 32'd1);
          val_din = ctl(TAG_STOP, c - 32'd1);
        end
      end
    end
  end

  // the entry's sum (prev 0 if none) and the firing's initiation interval
  assign prev = valid[acc_waddr] ? acc[acc_waddr] : '0;
  // (Icarus 11 misses package constants in port expressions: the value firing is a wire)
  logic vfire;
  assign vfire = pop && ct == TAG_DATA;
  samfuse_acc_step #(.FP(FP), .E(E), .CYCLES(CYCLES)) u_step (
      .ap_clk(ap_clk), .ap_rst(ap_rst), .prev(prev), .val(val_in_dout), .fire(vfire),
      .sum(acc_wdata), .ready(rdy)
  );

  always_ff @(posedge ap_clk) begin
    if (ap_rst) begin
      valid <= '0;
      fin <= 1'b0;
      drain <= 1'b0;
      dlevel <= '0;
    end else begin
      fin <= fin_n;
      drain <= drain_n;
      dlevel <= dlevel_n;
      if (acc_we) begin
        acc[acc_waddr] <= acc_wdata;
        valid[acc_waddr] <= 1'b1;
      end
      if (clr) valid[low] <= 1'b0;
    end
  end

`ifndef SYNTHESIS
  // simulation-only statistic read by the whole-graph bench: the most entries held when a
  // group ends (an S_k, k>0, popped), for the on-chip buffer rule (docs/timing.md)
  int unsigned peak, held;
  always @* begin
    held = 0;
    for (int i = 0; i < N; i++) held = held + 32'(valid[i]);
  end
  always @(posedge ap_clk)
    if (ap_rst) peak <= 0;
    else if (pop && ct == TAG_STOP && c != 32'd0 && held > peak) peak <= held;
`endif
endmodule
