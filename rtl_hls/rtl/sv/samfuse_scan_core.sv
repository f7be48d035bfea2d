// Level scanner core shared by scan_compressed and scan_dense (docs/primitives.md).
// States IDLE (waiting for a ref), IN_FIBER (emitting), END (next input decides between
// S0 and a merged S_{k+1}). Compressed levels read seg/crd memories loaded with $readmemh.
//
// MEM (compressed levels on hardware with a memory system; the netlist instantiates this
// core directly then): seg and crd are off-chip, behind one read port each
// (samfuse_mem_rdport) on the channels the netlist wires. IDLE with a ref r visible reads
// seg[r] and seg[r+1] at once; the fiber's first crd is read once both are usable (its
// address is seg[r]); IN_FIBER reads crd[p] in its first cycle at p. Each access is made
// once, whether or not the outputs have space, and the firing waits for its data.
// SEG_BUF / CRD_BUF (docs/timing.md "On-chip buffers"): that array is in an on-chip buffer,
// read through samfuse_buf_rdport (same requester side; `<arr>_nlines`/`<arr>_base` are
// then the accesses and their ready cycles, to and from the buffer).
module samfuse_scan_core #(
    parameter bit COMPRESSED = 1'b1,
    parameter int SIZE = 1,
    parameter int SEG_N = 2,
    parameter int CRD_N = 1,
    parameter SEG_FILE = "",
    parameter CRD_FILE = "",
    `SAMFUSE_MEM_PARAMS,
    parameter int SEG_PORT = 0,
    parameter int CRD_PORT = 0,
    parameter SEG_LEN_FILE = "",
    parameter CRD_LEN_FILE = "",
    parameter bit SEG_BUF = 1'b0,
    parameter bit CRD_BUF = 1'b0
) (
    `SAMFUSE_SCAN_PORTS,
    // memory system (MEM): the cycle number, and each port's request to / grant from its
    // channel (samfuse_mem_channel); unused without MEM
    /* verilator lint_off UNUSEDSIGNAL */
    input  logic [31:0] mem_now,
    input  logic [63:0] seg_base,
    input  logic [63:0] crd_base,
    /* verilator lint_on UNUSEDSIGNAL */
    output logic [15:0] seg_nlines,
    output logic [15:0] crd_nlines
);
  import samfuse_pkg::*;
  localparam logic [1:0] IDLE = 2'd0, IN_FIBER = 2'd1, FEND = 2'd2;
  localparam int SA = SEG_N > 1 ? $clog2(SEG_N) : 1;
  localparam int CA = CRD_N > 1 ? $clog2(CRD_N) : 1;

  // loaded by $readmemh when COMPRESSED; unused (and undriven) in a dense scanner
  /* verilator lint_off UNDRIVEN */
  logic [31:0] seg[SEG_N];
  logic [31:0] crd[CRD_N];
  /* verilator lint_on UNDRIVEN */
  generate
    if (COMPRESSED) begin : g_mem
      initial begin
        $readmemh(SEG_FILE, seg);
        $readmemh(CRD_FILE, crd);
      end
    end
  endgenerate

  logic [1:0] state, state_n;
  logic [31:0] p, p_n, e, e_n, base, base_n;
  logic fin, fin_n;
  logic [1:0] tag;
  logic [31:0] val, fb, fe, first_crd, cur_crd;
  logic sp;

  assign tag = ref_in_dout[33:32];
  assign val = ref_in_dout[31:0];
  assign sp = crd_full_n & ref_full_n;
  /* verilator lint_off UNUSEDSIGNAL */  // only the seg address bits of ref + 1
  logic [31:0] val1;
  /* verilator lint_on UNUSEDSIGNAL */
  assign val1 = val + 32'd1;

  // memory: mok = the data the firing in this state needs is usable
  logic mok;
  generate
    if (MEM) begin : g_port
      logic want_fiber, seg_acc, crd_acc, seg_ok, crd_ok;
      logic seg_iss, crd_iss;  // this ref's seg words / this position's crd requested
      logic [31:0] seg_rdy, crd_rdy;
      logic [1:0] seg_okv;
      logic [63:0] seg_ready;
      logic crd_okv;
      logic [31:0] crd_ready;
      assign want_fiber = !fin && state == IDLE && ref_in_empty_n && tag == TAG_DATA;
      assign seg_acc = want_fiber && !seg_iss;
      assign seg_ok = seg_iss ? mem_now >= seg_rdy : &seg_okv;
      assign crd_acc = !crd_iss && (want_fiber ? seg_ok && fb != fe
                                               : !fin && state == IN_FIBER);
      assign crd_ok = crd_iss ? mem_now >= crd_rdy : crd_okv;
      if (SEG_BUF) begin : g_seg_buf
        samfuse_buf_rdport #(.NACC(2)) u_seg (
            .now(mem_now), .acc({seg_acc, seg_acc}), .ok_now(seg_okv), .ready(seg_ready),
            .nlines(seg_nlines), .base(seg_base)
        );
      end else begin : g_seg_dram
        samfuse_mem_rdport #(
            `SAMFUSE_MEM_PORT_PARAMS, .NACC(2),
            .PORT(SEG_PORT), .LEN_FILE(SEG_LEN_FILE)
        ) u_seg (
            .ap_clk(ap_clk), .ap_rst(ap_rst), .now(mem_now), .acc({seg_acc, seg_acc}),
            .word({val1, val}), .ok_now(seg_okv), .ready(seg_ready), .nlines(seg_nlines),
            .base(seg_base)
        );
      end
      if (CRD_BUF) begin : g_crd_buf
        samfuse_buf_rdport #(.NACC(1)) u_crd (
            .now(mem_now), .acc(crd_acc), .ok_now(crd_okv), .ready(crd_ready),
            .nlines(crd_nlines), .base(crd_base)
        );
      end else begin : g_crd_dram
        samfuse_mem_rdport #(
            `SAMFUSE_MEM_PORT_PARAMS, .NACC(1),
            .PORT(CRD_PORT), .LEN_FILE(CRD_LEN_FILE)
        ) u_crd (
            .ap_clk(ap_clk), .ap_rst(ap_rst), .now(mem_now), .acc(crd_acc),
            .word(state == IN_FIBER ? p : fb), .ok_now(crd_okv), .ready(crd_ready),
            .nlines(crd_nlines), .base(crd_base)
        );
      end
      // a data-consuming IDLE firing or an IN_FIBER firing ends the accesses it waited for
      logic step;
      assign step = ref_in_read && state == IDLE && tag == TAG_DATA
                    || crd_write && state == IN_FIBER;
      always_ff @(posedge ap_clk) begin
        if (ap_rst || step) begin
          seg_iss <= 1'b0;
          crd_iss <= 1'b0;
        end else begin
          if (seg_acc) begin
            seg_iss <= 1'b1;
            seg_rdy <= seg_ready[31:0] > seg_ready[63:32] ? seg_ready[31:0] : seg_ready[63:32];
          end
          if (crd_acc) begin
            crd_iss <= 1'b1;
            crd_rdy <= crd_ready;
          end
        end
      end
      assign mok = state == IN_FIBER ? crd_ok
                 : !want_fiber || seg_ok && (fb == fe || crd_ok);
    end else begin : g_ideal
      assign mok = 1'b1;
      assign seg_nlines = '0;
      assign crd_nlines = '0;
    end
  endgenerate

  `SAMFUSE_MEM_STALL(!mok && !fin)

  always @* begin
    if (COMPRESSED) begin
      fb = seg[val[SA-1:0]];
      fe = seg[val1[SA-1:0]];
      first_crd = crd[fb[CA-1:0]];
      cur_crd = crd[p[CA-1:0]];
    end else begin
      fb = val * 32'(SIZE);
      fe = fb + 32'(SIZE);
      first_crd = 32'd0;
      cur_crd = p - base;
    end
  end

  task automatic emit(input logic [33:0] c, input logic [33:0] r);
    crd_write = 1'b1;
    ref_write = 1'b1;
    crd_din = c;
    ref_din = r;
  endtask

  always @* begin
    ref_in_read = 1'b0;
    crd_write = 1'b0;
    ref_write = 1'b0;
    crd_din = '0;
    ref_din = '0;
    state_n = state;
    p_n = p;
    e_n = e;
    base_n = base;
    fin_n = fin;
    if (!fin) begin
      case (state)
        IN_FIBER:
        if (sp && mok) begin
          emit(mk(TAG_DATA, cur_crd), mk(TAG_DATA, p));
          p_n = p + 32'd1;
          if (p + 32'd1 == e) state_n = FEND;
        end
        IDLE:
        if (ref_in_empty_n) begin
          case (tag)
            TAG_DATA:  // (with MEM: once the fiber's seg words and first crd are usable)
            if (mok && fb == fe) begin
              ref_in_read = 1'b1;
              state_n = FEND;
            end else if (mok && fb != fe && sp) begin
              ref_in_read = 1'b1;
              emit(mk(TAG_DATA, first_crd), mk(TAG_DATA, fb));
              p_n = fb + 32'd1;
              e_n = fe;
              base_n = fb;
              state_n = (fb + 32'd1 < fe) ? IN_FIBER : FEND;
            end
            TAG_STOP:
            if (sp) begin
              ref_in_read = 1'b1;
              emit(mk(TAG_STOP, val + 32'd1), mk(TAG_STOP, val + 32'd1));
            end
            TAG_EMPTY:
            if (sp) begin
              ref_in_read = 1'b1;
              emit(mk(TAG_EMPTY, 32'd0), mk(TAG_EMPTY, 32'd0));
              state_n = FEND;
            end
            default:
            if (sp) begin
              ref_in_read = 1'b1;
              emit(mk(TAG_DONE, 32'd0), mk(TAG_DONE, 32'd0));
              fin_n = 1'b1;
            end
          endcase
        end
        default:  // FEND
        if (ref_in_empty_n && sp) begin
          if (tag == TAG_STOP) begin
            ref_in_read = 1'b1;
            emit(mk(TAG_STOP, val + 32'd1), mk(TAG_STOP, val + 32'd1));
          end else emit(mk(TAG_STOP, 32'd0), mk(TAG_STOP, 32'd0));
          state_n = IDLE;
        end
      endcase
    end
  end

  always_ff @(posedge ap_clk) begin
    if (ap_rst) begin
      state <= IDLE;
      p <= '0;
      e <= '0;
      base <= '0;
      fin <= 1'b0;
    end else begin
      state <= state_n;
      p <= p_n;
      e <= e_n;
      base <= base_n;
      fin <= fin_n;
    end
  end
endmodule
