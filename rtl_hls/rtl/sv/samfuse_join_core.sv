// Coordinate joiner core shared by intersect (UNION=0) and union (UNION=1). Every firing
// needs all four heads; skips write nothing and so need no output space. Aligned stops and
// D pass through as crd_a's token on all three outputs.
module samfuse_join_core #(
    parameter bit UNION = 1'b0,
    parameter int W = 34  // ref_a's token width (a value stream's: 2 + 32*E for blocks)
) (`SAMFUSE_JOIN_PORTS(ref_a, W));
  import samfuse_pkg::*;
  logic fin, fin_n, heads, sp, pop_a, pop_b, wr;
  logic ad, bd, an, bn;
  logic [31:0] a, b;
  logic [33:0] oc, ob;
  logic [W-1:0] oa;
  // a control token (34-bit word) on this stream's width W (docs/blocks.md)
  function automatic logic [W-1:0] wide(input logic [33:0] t);
    wide = '0;
    wide[W-1-:2] = t[33:32];
    wide[31:0] = t[31:0];
  endfunction


  assign heads = crd_a_empty_n & ref_a_empty_n & crd_b_empty_n & ref_b_empty_n;
  assign sp = crd_full_n & ref_a_full_n & ref_b_full_n;
  assign ad = crd_a_dout[33:32] == TAG_DATA;
  assign bd = crd_b_dout[33:32] == TAG_DATA;
  assign an = crd_a_dout[33:32] == TAG_EMPTY;
  assign bn = crd_b_dout[33:32] == TAG_EMPTY;
  assign a = crd_a_dout[31:0];
  assign b = crd_b_dout[31:0];
  assign crd_a_read = pop_a;
  assign ref_a_read = pop_a;
  assign crd_b_read = pop_b;
  assign ref_b_read = pop_b;
  assign crd_write = wr;
  assign ref_a_write = wr;
  assign ref_b_write = wr;
  assign crd_din = oc;
  assign ref_a_din = oa;
  assign ref_b_din = ob;

  // `space` is an argument, not read from `sp` inside: a combinational block's implicit
  // sensitivity list does not look into task bodies (Icarus)
  task automatic emit(input logic space, input logic [33:0] c, input logic [W-1:0] ra,
                      input logic [33:0] rb, input logic pa, input logic pb);
    if (space) begin
      wr = 1'b1;
      oc = c;
      oa = ra;
      ob = rb;
      pop_a = pa;
      pop_b = pb;
    end
  endtask

  always @* begin
    pop_a = 1'b0;
    pop_b = 1'b0;
    wr = 1'b0;
    oc = '0;
    oa = '0;
    ob = '0;
    fin_n = fin;
    if (!fin && heads) begin
      if (!UNION) begin
        if (ad && bd) begin
          if (a == b) emit(sp, crd_a_dout, ref_a_dout, ref_b_dout, 1'b1, 1'b1);
          else begin
            pop_a = a < b;
            pop_b = b < a;
          end
        end else if (ad || an) begin
          pop_a = 1'b1;
          pop_b = bn;
        end else if (bd || bn) pop_b = 1'b1;
        else emit(sp, crd_a_dout, wide(crd_a_dout), crd_a_dout, 1'b1, 1'b1);
      end else begin
        if (an || bn) begin
          pop_a = an;
          pop_b = bn;
        end else if (ad && (!bd || a < b)) emit(sp, crd_a_dout, ref_a_dout, {TAG_EMPTY, 32'd0}, 1'b1, 1'b0);
        else if (bd && (!ad || b < a)) emit(sp, crd_b_dout, wide({TAG_EMPTY, 32'd0}), ref_b_dout, 1'b0, 1'b1);
        else if (ad) emit(sp, crd_a_dout, ref_a_dout, ref_b_dout, 1'b1, 1'b1);
        else emit(sp, crd_a_dout, wide(crd_a_dout), crd_a_dout, 1'b1, 1'b1);
      end
      if (wr && crd_a_dout[33:32] == TAG_DONE) fin_n = 1'b1;
    end
  end

  always_ff @(posedge ap_clk) begin
    if (ap_rst) fin <= 1'b0;
    else fin <= fin_n;
  end
endmodule
