// Memory read port (docs/timing.md, Memory): a prefetch window [lo, hi) of at most K lines
// over one stored array of n lines (its word count comes from LEN_FILE, written with the
// memory images, so one build serves any input). NACC accesses per cycle, applied in
// order (a scanner reads seg[r] and seg[r+1]); each may issue one burst: a hit past lo
// tops the window up from hi, a miss at hi refills K lines, any other miss fetches one.
// The lines one cycle fetches are consecutive (every burst starts at hi or replaces the
// window), so the port asks its channel for one run of `nlines` lines from line f0; the
// channel's `base` (byte-time of the first) gives each line's ready cycle.
// The port models timing only: the requester reads the data from its own image.
module samfuse_mem_rdport #(
    parameter int K = 8,      // dram.outstanding
    parameter int WPL = 16,   // words per line
    parameter int LB = 64,    // line bytes
    parameter int B = 64,     // channel bytes per cycle
    parameter int LAT = 1,    // dram.latency_cycles
    parameter int NACC = 1,   // accesses per cycle
    parameter int PORT = 0,   // ir.memory_ports number (burst log)
    parameter LEN_FILE = ""
) (
    `SAMFUSE_CLOCK,
    input  logic [31:0]          now,
    input  logic [NACC-1:0]      acc,
    input  logic [NACC*32-1:0]   word,
    output logic [NACC-1:0]      ok_now,   // the word is usable in this cycle
    output logic [NACC*32-1:0]   ready,    // the cycle from which it is usable
    output logic [15:0]          nlines,
    input  logic [63:0]          base
);
  import samfuse_pkg::*;
  logic [31:0] len_mem[1];
  initial $readmemh(LEN_FILE, len_mem);
  logic [31:0] n;
  assign n = (len_mem[0] + 32'(WPL) - 32'd1) / 32'(WPL);

  logic [31:0] tbl[K];  // ready cycle of each window line, at line mod K
  logic [31:0] lo, hi, lo_n, hi_n, f0, nl, l, b0, b1;
  logic [NACC-1:0] fresh;                    // fetched in this cycle: ready from `base`
  logic [NACC*32-1:0] line_v, idx_v, bf_v, bl_v;

  // window rules, access by access (depends on registers and requests only, never on
  // `base`, so a requester may issue in the cycle another access of the same node is ok)
  always @* begin
    lo_n = lo;
    hi_n = hi;
    l = '0;
    b0 = '0;
    b1 = '0;
    f0 = '0;
    nl = '0;
    fresh = '0;
    ok_now = '0;
    line_v = '0;
    idx_v = '0;
    bf_v = '0;
    bl_v = '0;
    for (int i = 0; i < NACC; i++) begin
      if (acc[i]) begin
        l = word[i*32+:32] / 32'(WPL);
        b0 = '0;
        b1 = '0;
        if (l >= lo_n && l < hi_n) begin
          if (l > lo_n) begin  // lines before l leave; top up to lo + K
            lo_n = l;
            b0 = hi_n;
            b1 = (l + 32'(K) < n) ? l + 32'(K) : n;
          end
        end else begin  // miss: continue the stream at hi, or fetch one line
          lo_n = l;
          b0 = l;
          b1 = (l != hi_n) ? l + 32'd1 : (l + 32'(K) < n) ? l + 32'(K) : n;
        end
        if (b1 > b0) begin
          if (nl == 0) f0 = b0;
          nl = nl + (b1 - b0);
          hi_n = b1;
          bf_v[i*32+:32] = b0;
          bl_v[i*32+:32] = b1 - b0;
        end
        line_v[i*32+:32] = l;
        fresh[i] = nl != 0 && l >= f0 && l < f0 + nl;
        idx_v[i*32+:32] = l - f0;
        ok_now[i] = !fresh[i] && tbl[l%K] <= now;
      end
    end
  end
  assign nlines = nl[15:0];

  always @* begin
    for (int i = 0; i < NACC; i++)
      ready[i*32+:32] = fresh[i]
          ? mem_ready(base + 64'(idx_v[i*32+:32] + 32'd1) * 64'(LB), B, LAT)
          : tbl[line_v[i*32+:32]%K];
  end

  always_ff @(posedge ap_clk) begin
    if (ap_rst) begin
      lo <= '0;
      hi <= '0;
    end else begin
      lo <= lo_n;
      hi <= hi_n;
      for (int j = 0; j < K * NACC; j++)  // in order: a line refetched last wins its slot
        if (32'(j) < nl) tbl[(f0+32'(j))%K] <= mem_ready(base + 64'(j + 1) * 64'(LB), B, LAT);
    end
  end

`ifndef SYNTHESIS
  initial if (mem_fd == 0) mem_fd = $fopen("samfuse.memlog", "w");
  always @(posedge ap_clk)  // not always_ff: simulation-only tasks inside
    if (!ap_rst)
      for (int i = 0; i < NACC; i++)
        if (acc[i] && bl_v[i*32+:32] != 0)
          $fwrite(mem_fd, "%0d %0d %0d %0d r\n", PORT, now, bf_v[i*32+:32], bl_v[i*32+:32]);
  final if (mem_fd != 0) $fflush(mem_fd);
`endif
endmodule
