// samfuse_fifo: the contract FIFO (Vitis ap_fifo ports). empty_n and full_n depend only on
// registers, so a token written in cycle t is visible from t+1 and a slot freed by a read
// in cycle t is visible to the writer from t+1. DEPTH 2 sustains one token per cycle.
//
// Simulation only (`ifndef SYNTHESIS`): with the plusarg +samfuse_trace the FIFO records
// its stream in samfuse.fifotrace (working directory; one file shared by every FIFO,
// samfuse_pkg::trace_fd), one line per write "NAME w <cycle> <word hex>" and per read
// "NAME r <cycle>", cycles counted from reset release as in the timing contract. Without
// the plusarg nothing is opened or written.
module samfuse_fifo #(
    parameter int DEPTH = 2,
    parameter int W = 34,
    parameter NAME = "fifo"
) (
    `SAMFUSE_CLOCK,
    input  logic [W-1:0] if_din,
    output logic         if_full_n,
    input  logic         if_write,
    output logic [W-1:0] if_dout,
    output logic         if_empty_n,
    input  logic         if_read
);
  localparam int AW = DEPTH > 1 ? $clog2(DEPTH) : 1;
  localparam logic [AW:0] CAP = (AW + 1)'(DEPTH);
  localparam logic [AW-1:0] LAST = AW'(DEPTH - 1);
  logic [W-1:0] mem[DEPTH];
  logic [AW-1:0] rp, wp;
  logic [AW:0] cnt;
  logic do_w, do_r;

  assign if_empty_n = cnt != '0;
  assign if_full_n = cnt != CAP;
  assign if_dout = mem[rp];
  assign do_w = if_write & if_full_n;
  assign do_r = if_read & if_empty_n;

  always_ff @(posedge ap_clk) begin
    if (ap_rst) begin
      rp <= '0;
      wp <= '0;
      cnt <= '0;
    end else begin
      if (do_w) begin
        mem[wp] <= if_din;
        wp <= (wp == LAST) ? '0 : wp + 1'b1;
      end
      if (do_r) rp <= (rp == LAST) ? '0 : rp + 1'b1;
      if (do_w && !do_r) cnt <= cnt + 1'b1;
      else if (do_r && !do_w) cnt <= cnt - 1'b1;
    end
  end

`ifndef SYNTHESIS
  import samfuse_pkg::trace_fd;
  int unsigned trace_cycle;

  initial
    if ($test$plusargs("samfuse_trace") && trace_fd == 0)
      trace_fd = $fopen("samfuse.fifotrace", "w");

  always @(posedge ap_clk) begin  // not always_ff: simulation-only tasks inside
    if (ap_rst) trace_cycle <= 0;
    else if (trace_fd != 0) begin
      if (do_w) $fwrite(trace_fd, "%s w %0d %h\n", NAME, trace_cycle, if_din);
      if (do_r) $fwrite(trace_fd, "%s r %0d\n", NAME, trace_cycle);
      trace_cycle <= trace_cycle + 1;
    end
  end

  final if (trace_fd != 0) $fflush(trace_fd);
`endif
endmodule
