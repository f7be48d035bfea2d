// intersect_val: intersect whose side a carries values (crd_a, val_a, crd_b, ref_b -> crd,
// val_a, ref_b), e.g. an accumulator's drained rows meeting an operand. The join core only
// compares the crd heads and passes the second streams' 34-bit words through untouched, so
// this is samfuse_intersect with ref_a renamed val_a: no logic of its own, identical timing,
// value payloads (float32 bits incl. -0.0 and NaN, int32) unchanged.
module samfuse_intersect_val #(
    parameter int W = 34  // val_a's token width: 2 + 32*E for blocks of E elements
) (
    input  logic        ap_clk,
    input  logic        ap_rst,
    input  logic [33:0] crd_a_dout,
    input  logic        crd_a_empty_n,
    output logic        crd_a_read,
    input  logic [W-1:0] val_a_dout,
    input  logic        val_a_empty_n,
    output logic        val_a_read,
    input  logic [33:0] crd_b_dout,
    input  logic        crd_b_empty_n,
    output logic        crd_b_read,
    input  logic [33:0] ref_b_dout,
    input  logic        ref_b_empty_n,
    output logic        ref_b_read,
    output logic [33:0] crd_din,
    input  logic        crd_full_n,
    output logic        crd_write,
    output logic [W-1:0] val_a_din,
    input  logic        val_a_full_n,
    output logic        val_a_write,
    output logic [33:0] ref_b_din,
    input  logic        ref_b_full_n,
    output logic        ref_b_write
);
  samfuse_join_core #(.UNION(1'b0), .W(W)) u_core (
      .ap_clk(ap_clk),
      .ap_rst(ap_rst),
      .crd_a_dout(crd_a_dout),
      .crd_a_empty_n(crd_a_empty_n),
      .crd_a_read(crd_a_read),
      .ref_a_dout(val_a_dout),
      .ref_a_empty_n(val_a_empty_n),
      .ref_a_read(val_a_read),
      .crd_b_dout(crd_b_dout),
      .crd_b_empty_n(crd_b_empty_n),
      .crd_b_read(crd_b_read),
      .ref_b_dout(ref_b_dout),
      .ref_b_empty_n(ref_b_empty_n),
      .ref_b_read(ref_b_read),
      .crd_din(crd_din),
      .crd_full_n(crd_full_n),
      .crd_write(crd_write),
      .ref_a_din(val_a_din),
      .ref_a_full_n(val_a_full_n),
      .ref_a_write(val_a_write),
      .ref_b_din(ref_b_din),
      .ref_b_full_n(ref_b_full_n),
      .ref_b_write(ref_b_write)
  );
endmodule
