// On-chip buffer (docs/timing.md, "On-chip buffers"): one array of an input, loaded once
// and read by every port of that array (samfuse_buf_rdport) on chip. The netlist makes one
// per ir.onchip_buffers entry.
//
// Fill: at cycle 0 it asks its fill port's channel slot (samfuse_mem_channel, the fill
// port's number as priority) for all n lines of the array (n from LEN_FILE, as a read
// port's); `filled` is the last line's ready cycle (mem_ready of the channel's `base`),
// 0 when the array is empty (no fill). A materialised intermediate's buffer (FILL 0) was
// written by an earlier kernel of its region: no fill, `filled` 0.
// Reads: like a channel whose unit is an access, not a byte: it serves P accesses a cycle
// (onchip.ports). Every access issued in a cycle is known in that cycle, so it orders them
// combinationally by (port number, order within the port), i.e. by its access bits, lowest
// first: access i takes slot max(now * P, free after the accesses before it), is served
// in cycle slot / P and is usable from max(filled, served + LAT). `free` (the next free
// slot) is a register, so accesses of earlier cycles go first. The data come from the
// requester's own image, as with DRAM ports: this models timing only.
module samfuse_onchip_buffer #(
    parameter int NA = 1,       // access bits of its readers, in priority order
    parameter int P = 2,        // onchip.ports: accesses served per cycle
    parameter int LAT = 0,      // onchip.latency: cycles from service to use
    parameter int WPL = 16,     // the fill on DRAM: words per line,
    parameter int LB = 64,      //   line bytes,
    parameter int B = 64,       //   channel bytes per cycle,
    parameter int MEM_LAT = 1,  //   dram.latency_cycles
    parameter int PORT = 0,     // the fill port's ir.memory_ports number (burst log)
    parameter bit FILL = 1'b1,  // 0: BufferSpec.source "onchip", already holds its array
    parameter LEN_FILE = ""
) (
    `SAMFUSE_CLOCK,
    input  logic [31:0]        now,
    input  logic [NA-1:0]      acc,
    output logic [NA*32-1:0]   ready,
    output logic [31:0]        fill_nlines,  // the fill burst, at cycle 0
    input  logic [63:0]        fill_base
);
  import samfuse_pkg::*;
  logic [31:0] len_mem[1];
  initial $readmemh(LEN_FILE, len_mem);
  logic [31:0] n, filled_r, filled, r;
  logic [63:0] free, f, s, t0;
  logic [31:0] nread, lost;  // this cycle's accesses and their cycles lost to the ports
  logic start;  // cycle 0: the fill is issued and timed
  assign n = FILL ? (len_mem[0] + 32'(WPL) - 32'd1) / 32'(WPL) : 32'd0;
  assign start = !ap_rst && now == 32'd0;
  assign fill_nlines = start ? n : 32'd0;
  assign filled = !start ? filled_r : n == 32'd0 ? 32'd0
                : mem_ready(fill_base + 64'(n) * 64'(LB), B, MEM_LAT);

  always @* begin
    t0 = 64'(now) * 64'(P);
    f = free;
    s = '0;
    r = '0;
    ready = '0;
    nread = '0;
    lost = '0;
    for (int i = 0; i < NA; i++)
      if (acc[i]) begin
        s = f > t0 ? f : t0;
        f = s + 64'd1;
        r = 32'(s / 64'(P));
        nread = nread + 32'd1;
        lost = lost + (r - now);
        r = r + 32'(LAT);
        ready[i*32+:32] = r > filled ? r : filled;
      end
  end

  always_ff @(posedge ap_clk) begin
    if (ap_rst) begin
      free <= '0;
      filled_r <= '0;
    end else begin
      free <= f;
      if (start) filled_r <= filled;
    end
  end

`ifndef SYNTHESIS
  // statistics (SimResult.buffers): reads, and the cycles they lost to the ports
  int unsigned reads, conflict;
  always @(posedge ap_clk)  // not always_ff: simulation-only tasks inside
    if (ap_rst) begin
      reads <= 0;
      conflict <= 0;
    end else begin
      reads <= reads + nread;
      conflict <= conflict + lost;
      if (start && n != 32'd0) $fwrite(mem_fd, "%0d 0 0 %0d r\n", PORT, n);
    end
  initial if (mem_fd == 0) mem_fd = $fopen("samfuse.memlog", "w");
  final if (mem_fd != 0) $fflush(mem_fd);
`else
  /* verilator lint_off UNUSEDSIGNAL */
  logic unused_stats;
  assign unused_stats = ^{nread, lost};
  /* verilator lint_on UNUSEDSIGNAL */
`endif
endmodule
