// Level scanner core shared by scan_compressed and scan_dense (docs/primitives.md).
// States IDLE (waiting for a ref), IN_FIBER (emitting), END (next input decides between
// S0 and a merged S_{k+1}). Compressed levels read seg/crd memories loaded with $readmemh.
module samfuse_scan_core #(
    parameter bit COMPRESSED = 1'b1,
    parameter int SIZE = 1,
    parameter int SEG_N = 2,
    parameter int CRD_N = 1,
    parameter SEG_FILE = "",
    parameter CRD_FILE = ""
) (
    input  logic        ap_clk,
    input  logic        ap_rst,
    input  logic [33:0] ref_in_dout,
    input  logic        ref_in_empty_n,
    output logic        ref_in_read,
    output logic [33:0] crd_din,
    input  logic        crd_full_n,
    output logic        crd_write,
    output logic [33:0] ref_din,
    input  logic        ref_full_n,
    output logic        ref_write
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
        if (sp) begin
          emit(mk(TAG_DATA, cur_crd), mk(TAG_DATA, p));
          p_n = p + 32'd1;
          if (p + 32'd1 == e) state_n = FEND;
        end
        IDLE:
        if (ref_in_empty_n) begin
          case (tag)
            TAG_DATA:
            if (fb == fe) begin
              ref_in_read = 1'b1;
              state_n = FEND;
            end else if (sp) begin
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
