// level_writer: appends crds to crd_mem and, per stop, (crd count, level) to the stop
// memories; N is ignored. `done` rises the cycle after it consumes D. For the testbench,
// simulation-only code dumps the memories to DUMP_FILE at that point (see docs/rtl.md).
module samfuse_level_writer #(
    parameter int CRD_N = 16,
    parameter int STOP_N = 16,
    parameter DUMP_FILE = "level_writer.dump"
) (
    input  logic        ap_clk,
    input  logic        ap_rst,
    input  logic [33:0] crd_dout,
    input  logic        crd_empty_n,
    output logic        crd_read,
    output logic        done
);
  import samfuse_pkg::*;
  localparam int CA = CRD_N > 1 ? $clog2(CRD_N) : 1;
  localparam int SA = STOP_N > 1 ? $clog2(STOP_N) : 1;
  logic [31:0] crd_mem[CRD_N];
  logic [31:0] stop_pos[STOP_N];
  logic [31:0] stop_lvl[STOP_N];
  logic [31:0] ncrd, nstop;
  logic [1:0] tag;
  assign tag = crd_dout[33:32];
  assign crd_read = !done && crd_empty_n;

  always_ff @(posedge ap_clk) begin
    if (ap_rst) begin
      done <= 1'b0;
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
        TAG_DONE: done <= 1'b1;
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
