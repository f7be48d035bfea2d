// crdhold: repeats each outer crd once per inner crd; S0 passes on both; an inner S_k
// (k>0) first pops the outer crd whose fiber it closes, then passes with the outer stop.
module samfuse_crdhold (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(outer_in),
    `SAMFUSE_IN(inner_in),
    `SAMFUSE_OUT(outer),
    `SAMFUSE_OUT(inner)
);
  import samfuse_pkg::*;
  logic fin, fin_n, sp, wr, ocrd;
  logic [1:0] ht, ot;
  assign ht = inner_in_dout[33:32];
  assign ot = outer_in_dout[33:32];
  assign ocrd = ot == TAG_DATA || ot == TAG_EMPTY;
  assign sp = outer_full_n & inner_full_n;
  assign outer_write = wr;
  assign inner_write = wr;

  always @* begin
    outer_in_read = 1'b0;
    inner_in_read = 1'b0;
    wr = 1'b0;
    outer_din = '0;
    inner_din = '0;
    fin_n = fin;
    if (!fin && inner_in_empty_n && outer_in_empty_n) begin
      if (ht == TAG_DATA || ht == TAG_EMPTY) begin
        if (sp) begin
          wr = 1'b1;
          inner_in_read = 1'b1;
          outer_din = outer_in_dout;
          inner_din = inner_in_dout;
        end
      end else if (ht == TAG_STOP && inner_in_dout[31:0] == 32'd0) begin
        if (sp) begin
          wr = 1'b1;
          inner_in_read = 1'b1;
          outer_in_read = 1'b1;
          outer_din = inner_in_dout;
          inner_din = inner_in_dout;
        end
      end else if (ocrd) outer_in_read = 1'b1;
      else if (sp) begin
        wr = 1'b1;
        inner_in_read = 1'b1;
        outer_in_read = 1'b1;
        outer_din = inner_in_dout;
        inner_din = inner_in_dout;
        fin_n = ht == TAG_DONE;
      end
    end
  end

  always_ff @(posedge ap_clk) begin
    if (ap_rst) fin <= 1'b0;
    else fin <= fin_n;
  end
endmodule
