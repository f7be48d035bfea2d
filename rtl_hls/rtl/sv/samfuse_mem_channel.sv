// Memory channel (docs/timing.md, Memory): serves its ports' bursts first come, first
// served, in order of (issue cycle, port number). `free` is the byte-time at which the
// channel becomes idle. Every burst issued in a cycle is known in that cycle, so the
// channel orders them by priority combinationally: port i (0 = highest priority) requests
// nlines[i] consecutive lines and gets base[i] = max(now * B, free after ports 0..i-1),
// the byte-time its first line starts; the port turns it into ready cycles (mem_ready).
// 32 bits of lines a port: an on-chip buffer's fill is one burst of its whole array.
module samfuse_mem_channel #(
    parameter int NP = 1,    // ports on this channel, in priority order
    parameter int B = 64,    // bytes per cycle
    parameter int LB = 64    // line bytes
) (
    `SAMFUSE_CLOCK,
    input  logic [31:0]         now,
    input  logic [NP*32-1:0]    nlines,
    output logic [NP*64-1:0]    base
);
  logic [63:0] free, free_n, t0, s;

  always @* begin
    t0 = 64'(now) * 64'(B);
    free_n = free;
    base = '0;
    for (int i = 0; i < NP; i++) begin
      s = free_n > t0 ? free_n : t0;
      base[i*64+:64] = s;
      if (nlines[i*32+:32] != 32'd0) free_n = s + 64'(nlines[i*32+:32]) * 64'(LB);
    end
  end

  always_ff @(posedge ap_clk) begin
    if (ap_rst) free <= '0;
    else free <= free_n;
  end
endmodule
