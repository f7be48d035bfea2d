// Buffered read port (docs/timing.md, "On-chip buffers"): a requester's side of an on-chip
// buffer, with the interface of samfuse_mem_rdport, so a core swaps one for the other.
// No window, no burst: the port passes its accesses of the cycle (NACC at most, in order)
// to its buffer (samfuse_onchip_buffer, in the top) as bits of `nlines` (bit i: access i)
// and gets back each one's ready cycle in `base` (32 bits each, access 0 lowest); an access
// is usable in its issue cycle when that cycle has come (latency 0, a free port, the fill
// done). The buffer serves and times the access combinationally, from its registers and
// this cycle's accesses only, so the requester may go on in the same cycle.
module samfuse_buf_rdport #(
    parameter int NACC = 1    // accesses per cycle (a scanner's seg[r], seg[r+1]): 1 or 2
) (
    input  logic [31:0]          now,
    input  logic [NACC-1:0]      acc,
    output logic [NACC-1:0]      ok_now,   // the word is usable in this cycle
    output logic [NACC*32-1:0]   ready,    // the cycle from which it is usable
    output logic [15:0]          nlines,   // to the buffer: this cycle's accesses, as bits
    /* verilator lint_off UNUSEDSIGNAL */  // NACC = 1 uses the low word only
    input  logic [63:0]          base      // from the buffer: each access's ready cycle
    /* verilator lint_on UNUSEDSIGNAL */
);
  assign nlines = 16'(acc);
  assign ready = base[NACC*32-1:0];
  always @*
    for (int i = 0; i < NACC; i++) ok_now[i] = acc[i] && base[i*32+:32] <= now;
endmodule
