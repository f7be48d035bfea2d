// value_writer: appends data values to val_mem; stops and N are ignored. `done` rises the
// cycle after it consumes D; simulation-only code then dumps the values to DUMP_FILE.
// MEM: values go off-chip through a write port (samfuse_mem_wrport); a firing that
// writes a line waits for a write slot, D flushes, and `done` also waits until every
// write is acknowledged (the run's cycle count, docs/timing.md).
// E > 1: block values (docs/blocks.md): a value is E words, recorded and written together;
// the dump lists every word (the bench groups them by E).
module samfuse_value_writer_core #(
    parameter int VAL_N = 16,
    parameter DUMP_FILE = "value_writer.dump",
    parameter int E = 1,
    `SAMFUSE_MEM_PARAMS,
    parameter int VAL_PORT = 0
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(val, 32*E+2),
    output logic        done,
    // memory system (MEM); unused without it
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic [31:0] mem_now,
    input  logic [63:0] vals_base,
    /* verilator lint_on UNUSEDSIGNAL */
    output logic [15:0] vals_nlines
);
  import samfuse_pkg::*;
  localparam int VA = VAL_N * E > 1 ? $clog2(VAL_N * E) : 1;
  logic [31:0] val_mem[VAL_N*E];
  logic [31:0] nval;
  logic [1:0] tag;
  logic fin, mok, acked_n;  // D consumed; the firing's write may go; all acked next cycle
  assign tag = val_dout[32*E+1-:2];
  assign val_read = !fin && val_empty_n && mok;

  generate
    if (MEM) begin : g_port
      // (Icarus 11 misses package constants in port expressions inside a generate scope)
      logic is_val, is_done;
      assign is_val = tag == TAG_DATA;
      assign is_done = tag == TAG_DONE;
      samfuse_mem_wrport #(
          `SAMFUSE_MEM_PORT_PARAMS, .PORT(VAL_PORT),
          .E(E)
      ) u_vals (
          .ap_clk(ap_clk), .ap_rst(ap_rst), .now(mem_now), .add(is_val),
          .flush(is_done), .ok(mok), .fire(val_read), .nlines(vals_nlines),
          .base(vals_base), .acked_n(acked_n)
      );
    end else begin : g_ideal
      assign {mok, acked_n} = 2'b11;
      assign vals_nlines = '0;
    end
  endgenerate

  `SAMFUSE_MEM_STALL(!fin && val_empty_n && !mok)

  samfuse_writer_done u_done (.*, .fire(val_read));

  always_ff @(posedge ap_clk) begin
    if (ap_rst) begin
      fin <= 1'b0;
      nval <= '0;
    end else if (val_read) begin
      if (tag == TAG_DATA) begin
        for (int k = 0; k < E; k++) val_mem[VA'(nval + 32'(k))] <= val_dout[32*k+:32];
        nval <= nval + 32'(E);
      end else if (tag == TAG_DONE) fin <= 1'b1;
    end
  end

`ifndef SYNTHESIS
  // simulation-only: hand the recorded values (hex bits) to the testbench
  always @(posedge ap_clk) begin
    if (!ap_rst && val_read && tag == TAG_DONE) begin
      int fd;
      fd = $fopen(DUMP_FILE, "w");
      $fdisplay(fd, "vals %0d", nval);
      for (int i = 0; i < int'(nval); i++) $fdisplay(fd, "%08h", val_mem[i[VA-1:0]]);
      $fclose(fd);
    end
  end
`endif
endmodule
