// Memory write port (docs/timing.md, Memory): write combining. Words fill a line buffer;
// the firing that fills a line, or a D firing with a partly filled one, writes it as a
// one-line burst. At most K writes may be unacknowledged: write j waits for ack(j - K),
// kept in a ring of the last K acknowledgements.
module samfuse_mem_wrport #(
    parameter int K = 8,      // dram.outstanding
    parameter int WPL = 16,   // words per line
    parameter int LB = 64,    // line bytes
    parameter int B = 64,     // channel bytes per cycle
    parameter int LAT = 1,    // dram.latency_cycles
    parameter int PORT = 0    // ir.memory_ports number (burst log)
) (
    input  logic        ap_clk,
    input  logic        ap_rst,
    input  logic [31:0] now,
    input  logic        add,      // the head's firing appends a word
    input  logic        flush,    // the head's firing is D: write a partial line
    output logic        ok,       // the write it would issue (if any) may go now
    input  logic        fire,     // the firing happens
    output logic [15:0] nlines,
    input  logic [63:0] base,
    output logic        acked     // every write so far is acknowledged
);
  import samfuse_pkg::*;
  logic [31:0] words, j, last_ack, ack;
  logic [31:0] acks[K];
  logic issue;

  assign issue = add ? words + 32'd1 == 32'(WPL) : flush && words != '0;
  assign ok = !issue || j < 32'(K) || acks[j%K] <= now;
  assign nlines = {15'd0, fire && issue};
  assign ack = mem_ready(base + 64'(LB), B, LAT);
  assign acked = now >= last_ack;

  always_ff @(posedge ap_clk) begin
    if (ap_rst) begin
      words <= '0;
      j <= '0;
      last_ack <= '0;
    end else if (fire) begin
      if (issue) begin
        words <= '0;
        acks[j%K] <= ack;
        last_ack <= ack;
        j <= j + 32'd1;
      end else if (add) words <= words + 32'd1;
    end
  end

`ifndef SYNTHESIS
  initial if (mem_fd == 0) mem_fd = $fopen("samfuse.memlog", "w");
  always @(posedge ap_clk)  // not always_ff: simulation-only tasks inside
    if (!ap_rst && fire && issue) $fwrite(mem_fd, "%0d %0d %0d 1 w\n", PORT, now, j);
  final if (mem_fd != 0) $fflush(mem_fd);
`endif
endmodule
