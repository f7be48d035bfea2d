// array: val = vals[ref]; N loads 0; stops and D pass through. vals loaded with $readmemh.
module samfuse_array #(
    parameter int VAL_N = 1,
    parameter VAL_FILE = ""
) (
    input  logic        ap_clk,
    input  logic        ap_rst,
    input  logic [33:0] ref_dout,
    input  logic        ref_empty_n,
    output logic        ref_read,
    output logic [33:0] val_din,
    input  logic        val_full_n,
    output logic        val_write
);
  import samfuse_pkg::*;
  localparam int VA = VAL_N > 1 ? $clog2(VAL_N) : 1;
  logic [31:0] vals[VAL_N];
  initial $readmemh(VAL_FILE, vals);
  logic fin;
  logic [1:0] tag;
  assign tag = ref_dout[33:32];
  assign ref_read = !fin && ref_empty_n && val_full_n;
  assign val_write = ref_read;
  always @* begin
    case (tag)
      TAG_DATA: val_din = mk(TAG_DATA, vals[ref_dout[VA-1:0]]);
      TAG_EMPTY: val_din = mk(TAG_DATA, 32'd0);  // 0 and 0.0 share the bits
      default: val_din = ref_dout;
    endcase
  end
  always_ff @(posedge ap_clk) begin
    if (ap_rst) fin <= 1'b0;
    else if (ref_read && tag == TAG_DONE) fin <= 1'b1;
  end
endmodule
