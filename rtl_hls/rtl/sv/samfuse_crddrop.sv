// crddrop: drops outer crds whose inner fiber is empty. An inner S0 after data is held
// back (`pending`) so that a following S_k replaces it; it is released before the next crd.
module samfuse_crddrop (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(outer_in),
    `SAMFUSE_IN(inner_in),
    `SAMFUSE_OUT(outer),
    `SAMFUSE_OUT(inner)
);
  import samfuse_pkg::*;
  logic fin, fin_n, has_data, has_data_n, pending, pending_n;
  logic [1:0] ht, ot;
  logic hctl, octl;
  assign ht = inner_in_dout[33:32];
  assign ot = outer_in_dout[33:32];
  assign hctl = ht == TAG_STOP || ht == TAG_DONE;
  assign octl = ot == TAG_STOP || ot == TAG_DONE;

  always @* begin
    outer_in_read = 1'b0;
    inner_in_read = 1'b0;
    outer_write = 1'b0;
    inner_write = 1'b0;
    outer_din = '0;
    inner_din = '0;
    fin_n = fin;
    has_data_n = has_data;
    pending_n = pending;
    if (!fin && inner_in_empty_n) begin
      if (!hctl) begin
        if (pending) begin
          if (inner_full_n) begin
            inner_write = 1'b1;
            inner_din = mk(TAG_STOP, 32'd0);
            pending_n = 1'b0;
          end
        end else if (has_data) begin
          if (inner_full_n) begin
            inner_in_read = 1'b1;
            inner_write = 1'b1;
            inner_din = inner_in_dout;
          end
        end else if (outer_in_empty_n && outer_full_n && inner_full_n) begin
          outer_in_read = 1'b1;
          inner_in_read = 1'b1;
          outer_write = 1'b1;
          inner_write = 1'b1;
          outer_din = outer_in_dout;
          inner_din = inner_in_dout;
          has_data_n = 1'b1;
        end
      end else if (outer_in_empty_n) begin
        if (ht == TAG_STOP && inner_in_dout[31:0] == 32'd0) begin
          inner_in_read = 1'b1;
          if (has_data) begin
            pending_n = 1'b1;
            has_data_n = 1'b0;
          end else outer_in_read = 1'b1;  // an empty fiber: drop its outer crd
        end else if (!octl) outer_in_read = 1'b1;  // the last fiber was empty
        else if (outer_full_n && inner_full_n) begin
          outer_in_read = 1'b1;
          inner_in_read = 1'b1;
          outer_write = 1'b1;
          inner_write = 1'b1;
          outer_din = outer_in_dout;
          inner_din = inner_in_dout;
          pending_n = 1'b0;
          has_data_n = 1'b0;
          fin_n = ht == TAG_DONE;
        end
      end
    end
  end

  always_ff @(posedge ap_clk) begin
    if (ap_rst) begin
      fin <= 1'b0;
      has_data <= 1'b0;
      pending <= 1'b0;
    end else begin
      fin <= fin_n;
      has_data <= has_data_n;
      pending <= pending_n;
    end
  end
endmodule
