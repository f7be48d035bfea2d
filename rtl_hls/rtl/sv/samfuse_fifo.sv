// samfuse_fifo: the contract FIFO (Vitis ap_fifo ports). empty_n and full_n depend only on
// registers, so a token written in cycle t is visible from t+1 and a slot freed by a read
// in cycle t is visible to the writer from t+1. DEPTH 2 sustains one token per cycle.
//
// Timing knobs (docs/timing.md, "Latency, II and start-up"; rendered by the netlist from
// ir.elaborate): CAP is the capacity the writer sees (DEPTH; DEPTH+1 for a Vitis RAM FIFO,
// whose registered output holds one more token), VIS the cycles from a write to the
// token's visibility (1 = the contract FIFO; the producer's latency and a RAM FIFO's
// registered output add to it). A token written at t is readable from max(t+VIS, the
// previous token's read + 1), and it holds its slot from its write: tokens in flight
// count against the capacity. A registered-output RAM FIFO of depth D (read at t+2,
// capacity D+1) behaves exactly as CAP = D+1, VIS = 2. Defaults: today's FIFO.
//
// Simulation only (`ifndef SYNTHESIS`): with the plusarg +samfuse_trace the FIFO records
// its stream in samfuse.fifotrace (working directory; one file shared by every FIFO,
// samfuse_pkg::trace_fd), one line per write "NAME w <cycle> <word hex>" and per read
// "NAME r <cycle>", cycles counted from reset release as in the timing contract. Without
// the plusarg nothing is opened or written.
module samfuse_fifo #(
    parameter int DEPTH = 2,
    parameter int W = 34,
    parameter NAME = "fifo",
    parameter int CAP = DEPTH,
    parameter int VIS = 1
) (
    `SAMFUSE_CLOCK,
    input  logic [W-1:0] if_din,
    output logic         if_full_n,
    input  logic         if_write,
    output logic [W-1:0] if_dout,
    output logic         if_empty_n,
    input  logic         if_read
);
  localparam int AW = CAP > 1 ? $clog2(CAP) : 1;
  localparam logic [AW:0] FULL = (AW + 1)'(CAP);
  localparam logic [AW-1:0] LAST = AW'(CAP - 1);
  logic [W-1:0] mem[CAP];
  logic [AW-1:0] rp, wp;
  logic [AW:0] cnt;
  logic do_w, do_r;

  assign if_full_n = cnt != FULL;
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

  generate
    if (VIS > 1) begin : g_delayed  // tokens written but not yet visible: pend
      logic [VIS-2:0] flight;  // flight[k]: a write k+1 cycles ago
      logic [AW:0] pend;
      assign if_empty_n = cnt != pend;
      always_ff @(posedge ap_clk)
        if (ap_rst) begin
          flight <= '0;
          pend <= '0;
        end else begin
          flight <= (flight << 1) | (VIS - 1)'(do_w);
          pend <= pend + (AW + 1)'(do_w) - (AW + 1)'(flight[VIS-2]);
        end
    end else begin : g_now
      assign if_empty_n = cnt != '0;
    end
  endgenerate

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
