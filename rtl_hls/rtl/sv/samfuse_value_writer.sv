// value_writer: appends data values to val_mem; stops and N are ignored. `done` rises the
// cycle after it consumes D; simulation-only code then dumps the values to DUMP_FILE.
module samfuse_value_writer #(
    parameter int VAL_N = 16,
    parameter DUMP_FILE = "value_writer.dump"
) (
    input  logic        ap_clk,
    input  logic        ap_rst,
    input  logic [33:0] val_dout,
    input  logic        val_empty_n,
    output logic        val_read,
    output logic        done
);
  import samfuse_pkg::*;
  localparam int VA = VAL_N > 1 ? $clog2(VAL_N) : 1;
  logic [31:0] val_mem[VAL_N];
  logic [31:0] nval;
  logic [1:0] tag;
  assign tag = val_dout[33:32];
  assign val_read = !done && val_empty_n;

  always_ff @(posedge ap_clk) begin
    if (ap_rst) begin
      done <= 1'b0;
      nval <= '0;
    end else if (val_read) begin
      if (tag == TAG_DATA) begin
        val_mem[nval[VA-1:0]] <= val_dout[31:0];
        nval <= nval + 32'd1;
      end else if (tag == TAG_DONE) done <= 1'b1;
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
