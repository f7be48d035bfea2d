// lane_merge2, and with COMBINE (the catalogue's `combines`) lane_combine2 (its wrapper): one
// two-level lane merge machine. In PICK the smaller head crd1 (a crd before a stop) is
// written and its lane's inner fiber is copied (COPY_A/COPY_B) one crd0/val pair per cycle.
// The stop that closes a copied fiber is popped without writing (`pending`): the next PICK
// writes S0 before another outer crd, or S_{k+1} when both lanes end the outer fiber with
// S_k. A lane that closed no fiber since the last outer stop (`closed_x` clear) still holds
// that lone S_{k+1} on crd0/val, popped with the outer stops; D pops all six inputs. COMBINE
// adds MERGE: an outer crd both lanes hold is written once (popping both crd1 heads) and its
// two inner fibers are merged one crd0/val per cycle, the smaller crd first and an equal crd
// once with the sum of the two values (N counts as zero; FP: binary32, else int32); when both
// inner heads are stops they are popped without writing (needs the val heads, no space) and
// the closing stop is owed as after a COPY. COMBINE also folds (docs/timing.md,
// lane_combine2): the closing stops of a COPY or MERGE are not popped in a cycle of their own
// but at the heads act as PICK, whose firing pops an S0 (`hold_x`); a higher stop stays for
// the outer stops' firing.
module samfuse_lane_merge2 #(
    parameter int W = 34,  // value token width: 2 + 32*E for blocks of E elements
    parameter bit COMBINE = 1'b0,  // lane_combine2: MERGE the fibers of an equal outer crd
    parameter bit FP = 1'b1  // the sum's arithmetic (COMBINE): binary32, else int32
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(crd1_a),
    `SAMFUSE_IN(crd0_a),
    `SAMFUSE_IN(val_a, W),
    `SAMFUSE_IN(crd1_b),
    `SAMFUSE_IN(crd0_b),
    `SAMFUSE_IN(val_b, W),
    `SAMFUSE_OUT(crd1),
    `SAMFUSE_OUT(crd0),
    `SAMFUSE_OUT(val, W)
);
  import samfuse_pkg::*;
  // a control token (34-bit word) on this stream's width W (docs/blocks.md)
  function automatic logic [W-1:0] wide(input logic [33:0] t);
    wide = '0;
    wide[W-1-:2] = t[33:32];
    wide[31:0] = t[31:0];
  endfunction
  localparam logic [1:0] PICK = 2'd0, COPY_A = 2'd1, COPY_B = 2'd2, MERGE = 2'd3;
  logic [1:0] mode, mode_n;
  logic fin, fin_n, pending, pending_n, closed_a, closed_a_n, closed_b, closed_b_n;
  logic ad, bd, take_a, take_b, need_a, need_b, done, inner_sp;
  logic [33:0] c0, inner;
  logic [W-1:0] v0;
  logic c0_head, c0_stop;
  // MERGE: both lanes' inner fibers of one outer crd
  logic same, a0d, b0d, a0s, b0s, m_both, m_a, m_b, m_heads;
  logic [31:0] xa, xb;
  // COMBINE's fold: the closing stop(s) at the heads, PICK acts this cycle
  logic fold, hold_a, hold_b, pend;

  assign ad = crd1_a_dout[33:32] == TAG_DATA;
  assign bd = crd1_b_dout[33:32] == TAG_DATA;
  assign same = COMBINE && ad && bd && crd1_a_dout[31:0] == crd1_b_dout[31:0];
  assign take_a = ad && !same && (!bd || crd1_a_dout[31:0] < crd1_b_dout[31:0]);
  assign take_b = bd && !same && !take_a;
  assign a0d = crd0_a_dout[33:32] == TAG_DATA;
  assign b0d = crd0_b_dout[33:32] == TAG_DATA;
  assign a0s = crd0_a_dout[33:32] == TAG_STOP;
  assign b0s = crd0_b_dout[33:32] == TAG_STOP;
  assign m_both = a0d && b0d && crd0_a_dout[31:0] == crd0_b_dout[31:0];
  assign m_a = a0d && (m_both || !b0d || crd0_a_dout[31:0] < crd0_b_dout[31:0]);
  assign m_b = b0d && (m_both || !m_a);
  assign m_heads = (!m_a || val_a_empty_n) && (!m_b || val_b_empty_n);
  assign xa = val_a_dout[W-1-:2] == TAG_EMPTY ? 32'd0 : val_a_dout[31:0];
  assign xb = val_b_dout[W-1-:2] == TAG_EMPTY ? 32'd0 : val_b_dout[31:0];
  assign done = crd1_a_dout[33:32] == TAG_DONE;
  // outer stops: each lane that closed no inner fiber in a copy holds the closing stop
  assign need_a = done || !closed_a;
  assign need_b = done || !closed_b;
  assign inner = done ? crd1_a_dout : mk(TAG_STOP, crd1_a_dout[31:0] + 32'd1);
  assign inner_sp = crd0_full_n && val_full_n;
  // the lane being copied
  assign c0 = mode == COPY_B ? crd0_b_dout : crd0_a_dout;
  assign v0 = mode == COPY_B ? val_b_dout : val_a_dout;
  assign c0_head = mode == COPY_B ? crd0_b_empty_n && val_b_empty_n
                                  : crd0_a_empty_n && val_a_empty_n;
  assign c0_stop = c0[33:32] == TAG_STOP;
  assign fold = COMBINE && ((mode == COPY_A || mode == COPY_B) && c0_head && c0_stop ||
                            mode == MERGE && crd0_a_empty_n && crd0_b_empty_n && a0s &&
                            b0s && val_a_empty_n && val_b_empty_n);
  assign hold_a = fold && mode != COPY_B && crd0_a_dout[31:0] == 32'd0;
  assign hold_b = fold && mode != COPY_A && crd0_b_dout[31:0] == 32'd0;
  assign pend = pending || fold;

  always @* begin
    crd1_a_read = 1'b0;
    crd0_a_read = 1'b0;
    val_a_read = 1'b0;
    crd1_b_read = 1'b0;
    crd0_b_read = 1'b0;
    val_b_read = 1'b0;
    crd1_write = 1'b0;
    crd0_write = 1'b0;
    val_write = 1'b0;
    crd1_din = '0;
    crd0_din = '0;
    val_din = '0;
    mode_n = mode;
    fin_n = fin;
    pending_n = pending;
    closed_a_n = closed_a;
    closed_b_n = closed_b;
    if (fin) begin
    end else if (mode == MERGE && !fold) begin
      if (crd0_a_empty_n && crd0_b_empty_n) begin
        if (a0s && b0s) begin  // both fibers closed: their closing stop is owed
          if (val_a_empty_n && val_b_empty_n) begin
            crd0_a_read = 1'b1;
            val_a_read = 1'b1;
            crd0_b_read = 1'b1;
            val_b_read = 1'b1;
            pending_n = 1'b1;
            mode_n = PICK;
            closed_a_n = closed_a || crd0_a_dout[31:0] != 32'd0;
            closed_b_n = closed_b || crd0_b_dout[31:0] != 32'd0;
          end
        end else if (m_heads && inner_sp) begin
          crd0_a_read = m_a;
          val_a_read = m_a;
          crd0_b_read = m_b;
          val_b_read = m_b;
          crd0_write = 1'b1;
          val_write = 1'b1;
          crd0_din = m_a ? crd0_a_dout : crd0_b_dout;
          val_din = m_both ? wide(mk(TAG_DATA, binop(FP, OP_ADD, xa, xb)))
                           : m_a ? val_a_dout : val_b_dout;
        end
      end
    end else if (mode != PICK && !fold) begin
      if (c0_head && (c0_stop || inner_sp)) begin
        crd0_a_read = mode == COPY_A;
        val_a_read = mode == COPY_A;
        crd0_b_read = mode == COPY_B;
        val_b_read = mode == COPY_B;
        if (c0_stop) begin  // the fiber's closing stop is owed, written by the next PICK
          pending_n = 1'b1;
          mode_n = PICK;
          if (c0[31:0] != 32'd0) begin
            closed_a_n = closed_a || mode == COPY_A;
            closed_b_n = closed_b || mode == COPY_B;
          end
        end else begin
          crd0_write = 1'b1;
          val_write = 1'b1;
          crd0_din = c0;
          val_din = v0;
        end
      end
    end else if (crd1_a_empty_n && crd1_b_empty_n) begin
      if (take_a || take_b || same) begin
        if (crd1_full_n && (!pend || inner_sp)) begin
          crd1_a_read = take_a || same;
          crd1_b_read = take_b || same;
          crd0_a_read = hold_a;
          val_a_read = hold_a;
          crd0_b_read = hold_b;
          val_b_read = hold_b;
          crd1_write = 1'b1;
          crd1_din = take_a ? crd1_a_dout : crd1_b_dout;
          crd0_write = pend;
          val_write = pend;
          crd0_din = mk(TAG_STOP, 32'd0);
          val_din = wide(mk(TAG_STOP, 32'd0));
          pending_n = 1'b0;
          mode_n = same ? MERGE : take_a ? COPY_A : COPY_B;
        end
      end else if ((!need_a || (crd0_a_empty_n && val_a_empty_n)) &&
                   (!need_b || (crd0_b_empty_n && val_b_empty_n)) &&
                   crd1_full_n && inner_sp) begin
        crd1_a_read = 1'b1;
        crd1_b_read = 1'b1;
        crd0_a_read = need_a;
        val_a_read = need_a;
        crd0_b_read = need_b;
        val_b_read = need_b;
        crd1_write = 1'b1;
        crd0_write = 1'b1;
        val_write = 1'b1;
        crd1_din = crd1_a_dout;
        crd0_din = inner;
        val_din = wide(inner);
        mode_n = PICK;
        pending_n = 1'b0;
        closed_a_n = 1'b0;
        closed_b_n = 1'b0;
        fin_n = done;
      end
    end
  end

  always_ff @(posedge ap_clk) begin
    if (ap_rst) begin
      mode <= PICK;
      fin <= 1'b0;
      pending <= 1'b0;
      closed_a <= 1'b0;
      closed_b <= 1'b0;
    end else begin
      mode <= mode_n;
      fin <= fin_n;
      pending <= pending_n;
      closed_a <= closed_a_n;
      closed_b <= closed_b_n;
    end
  end
endmodule
