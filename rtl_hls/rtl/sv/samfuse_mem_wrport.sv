// Memory write port (docs/timing.md, Memory): write combining. Words fill a line buffer;
// the firing that fills a line, or a D firing with a partly filled one, writes it as a
// one-line burst. At most K writes may be unacknowledged: write j waits for ack(j - K),
// kept in a ring of the last K acknowledgements. `acked_n` tells the writer, for its
// registered `done`, whether every write up to and including this cycle's is acknowledged
// in the next cycle. E words per add (a block, docs/blocks.md, Memory): a firing that
// completes L lines writes them as L one-line bursts in its cycle and waits for the write
// K lines back from the last of them (every earlier write when L > K).
module samfuse_mem_wrport #(
    parameter int K = 8,      // dram.outstanding
    parameter int WPL = 16,   // words per line
    parameter int LB = 64,    // line bytes
    parameter int B = 64,     // channel bytes per cycle
    parameter int LAT = 1,    // dram.latency_cycles
    parameter int PORT = 0,   // ir.memory_ports number (burst log)
    parameter int E = 1       // words per add
) (
    `SAMFUSE_CLOCK,
    input  logic [31:0] now,
    input  logic        add,      // the head's firing appends E words
    input  logic        flush,    // the head's firing is D: write a partial line
    output logic        ok,       // the writes it would issue (if any) may go now
    input  logic        fire,     // the firing happens
    output logic [15:0] nlines,
    input  logic [63:0] base,
    output logic        acked_n   // every write, this firing's included, acked next cycle
);
  import samfuse_pkg::*;
  localparam int LMAX = E / WPL + 1;  // most lines one firing completes
  logic [31:0] words, j, last_ack, ack, nadd;
  logic [31:0] acks[K];
  logic issue;

  assign nadd = add ? (words + 32'(E)) / 32'(WPL) : 32'(flush && words != '0);
  assign issue = nadd != '0;
  always @*
    if (!issue || j + nadd <= 32'(K)) ok = 1'b1;  // nothing to wait for
    else if (nadd > 32'(K)) ok = acks[(j-32'd1)%K] <= now;  // the last write
    else ok = acks[(j+nadd-32'd1-32'(K))%K] <= now;
  assign nlines = fire && issue ? nadd[15:0] : 16'd0;
  assign ack = mem_ready(base + 64'(nadd) * 64'(LB), B, LAT);  // the last line's
  assign acked_n = (fire && issue ? ack : last_ack) <= now + 32'd1;

  always_ff @(posedge ap_clk) begin
    if (ap_rst) begin
      words <= '0;
      j <= '0;
      last_ack <= '0;
    end else if (fire) begin
      if (add) words <= (words + 32'(E)) % 32'(WPL);
      else if (issue) words <= '0;
      if (issue) begin
        for (int i = 0; i < LMAX; i++)  // in order: with L > K a later line wins its slot
          if (32'(i) < nadd)
            acks[(j+32'(i))%K] <= mem_ready(base + 64'(i + 1) * 64'(LB), B, LAT);
        last_ack <= ack;
        j <= j + nadd;
      end
    end
  end

`ifndef SYNTHESIS
  initial if (mem_fd == 0) mem_fd = $fopen("samfuse.memlog", "w");
  always @(posedge ap_clk)  // not always_ff: simulation-only tasks inside
    if (!ap_rst && fire && issue)
      for (int i = 0; i < LMAX; i++)
        if (32'(i) < nadd) $fwrite(mem_fd, "%0d %0d %0d 1 w\n", PORT, now, j + 32'(i));
  final if (mem_fd != 0) $fflush(mem_fd);
`endif
endmodule
