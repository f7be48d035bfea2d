// level_writer: appends crds to crd_mem and, per stop, (crd count, level) to the stop
// memories; N is ignored. `done` rises the cycle after it consumes D. For the testbench,
// simulation-only code dumps the memories to DUMP_FILE at that point (see docs/rtl.md).
// MEM (a compressed level on hardware with a memory system): crd and seg words go
// off-chip through one write port each (samfuse_mem_wrport); a firing that writes a line
// waits for a write slot, D flushes crd then seg, and `done` also waits until every write
// is acknowledged (the run's cycle count, docs/timing.md).
module samfuse_level_writer_core #(
    parameter int CRD_N = 16,
    parameter int STOP_N = 16,
    parameter DUMP_FILE = "level_writer.dump",
    `SAMFUSE_MEM_PARAMS,
    parameter int CRD_PORT = 0,
    parameter int SEG_PORT = 0
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(crd),
    output logic        done,
    // memory system (MEM); unused without it
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic [31:0] mem_now,
    input  logic [63:0] crd_base,
    input  logic [63:0] seg_base,
    /* verilator lint_on UNUSEDSIGNAL */
    output logic [15:0] crd_nlines,
    output logic [15:0] seg_nlines
);
  import samfuse_pkg::*;
  localparam int CA = CRD_N > 1 ? $clog2(CRD_N) : 1;
  localparam int SA = STOP_N > 1 ? $clog2(STOP_N) : 1;
  logic [31:0] crd_mem[CRD_N];
  logic [31:0] stop_pos[STOP_N];
  logic [31:0] stop_lvl[STOP_N];
  logic [31:0] ncrd, nstop;
  logic [1:0] tag;
  logic fin, mok, acked_n;  // D consumed; the firing's writes may go; all acked next cycle
  assign tag = crd_dout[33:32];
  assign crd_read = !fin && crd_empty_n && mok;

  generate
    if (MEM) begin : g_port
      logic cok, sok, cacked, sacked;
      // (Icarus 11 misses package constants in port expressions inside a generate scope)
      logic is_crd, is_stop, is_done;
      assign is_crd = tag == TAG_DATA;
      assign is_stop = tag == TAG_STOP;
      assign is_done = tag == TAG_DONE;
      samfuse_mem_wrport #(
          `SAMFUSE_MEM_PORT_PARAMS, .PORT(CRD_PORT)
      ) u_crd (
          .ap_clk(ap_clk), .ap_rst(ap_rst), .now(mem_now), .add(is_crd),
          .flush(is_done), .ok(cok), .fire(crd_read), .nlines(crd_nlines),
          .base(crd_base), .acked_n(cacked)
      );
      samfuse_mem_wrport #(
          `SAMFUSE_MEM_PORT_PARAMS, .PORT(SEG_PORT)
      ) u_seg (
          .ap_clk(ap_clk), .ap_rst(ap_rst), .now(mem_now), .add(is_stop),
          .flush(is_done), .ok(sok), .fire(crd_read), .nlines(seg_nlines),
          .base(seg_base), .acked_n(sacked)
      );
      assign mok = cok && sok;
      assign acked_n = cacked && sacked;
    end else begin : g_ideal
      assign {mok, acked_n} = 2'b11;
      assign {crd_nlines, seg_nlines} = '0;
    end
  endgenerate

  `SAMFUSE_MEM_STALL(!fin && crd_empty_n && !mok)

  samfuse_writer_done u_done (.*, .fire(crd_read));

  always_ff @(posedge ap_clk) begin
    if (ap_rst) begin
      fin <= 1'b0;
      ncrd <= '0;
      nstop <= '0;
    end else if (crd_read) begin
      case (tag)
        TAG_DATA: begin
          crd_mem[ncrd[CA-1:0]] <= crd_dout[31:0];
          ncrd <= ncrd + 32'd1;
        end
        TAG_STOP: begin
          stop_pos[nstop[SA-1:0]] <= ncrd;
          stop_lvl[nstop[SA-1:0]] <= crd_dout[31:0];
          nstop <= nstop + 32'd1;
        end
        TAG_DONE: fin <= 1'b1;
        default: ;
      endcase
    end
  end

`ifndef SYNTHESIS
  // simulation-only: hand the recorded level to the testbench
  always @(posedge ap_clk) begin
    if (!ap_rst && crd_read && tag == TAG_DONE) begin
      int fd;
      fd = $fopen(DUMP_FILE, "w");
      $fdisplay(fd, "crd %0d", ncrd);
      for (int i = 0; i < int'(ncrd); i++) $fdisplay(fd, "%0d", crd_mem[i[CA-1:0]]);
      $fdisplay(fd, "stops %0d", nstop);
      for (int i = 0; i < int'(nstop); i++)
        $fdisplay(fd, "%0d %0d", stop_pos[i[SA-1:0]], stop_lvl[i[SA-1:0]]);
      $fclose(fd);
    end
  end
`endif
endmodule
