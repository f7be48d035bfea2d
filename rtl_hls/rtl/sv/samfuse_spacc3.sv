// spacc3: sparse order-3 accumulator, samfuse_spacc_core with three kept levels.
// Accumulates acc[crd2][crd1][crd0] (crd2 < N2, crd1 < N1, crd0 < N0) over a level-3
// fiber; crd2_in holds one crd per level-1 fiber of crd0_in, crd1_in one per level-0
// fiber. S_k (k>=3) on crd0_in with S_{k-1} on crd1_in and S_{k-2} on crd2_in pops the
// four inputs and starts the drain in the next cycle, one step per cycle in increasing
// (crd2, crd1, crd0): an entry writes crd1 when it opens a (crd2, crd1) fiber and crd2
// when it opens a crd2 fiber; (-, -, S0, S0) separates crd1 fibers of one crd2,
// (-, S0, S1, S1) crd2 fibers, and the drain ends with (S_{k-3}, S_{k-2}, S_{k-1},
// S_{k-1}). A step needs space only on the outputs it writes.
// E > 1: blocks of E elements; CYCLES: the initiation interval of an accumulating firing.
module samfuse_spacc3 #(
    parameter bit FP = 1'b1,
    parameter int N2 = 16,
    parameter int N1 = 16,
    parameter int N0 = 16,
    parameter int E = 1,
    parameter int CYCLES = 1
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(crd2_in),
    `SAMFUSE_IN(crd1_in),
    `SAMFUSE_IN(crd0_in),
    `SAMFUSE_IN(val_in, 32*E+2),
    `SAMFUSE_OUT(crd2),
    `SAMFUSE_OUT(crd1),
    `SAMFUSE_OUT(crd0),
    `SAMFUSE_OUT(val, 32*E+2)
);

  samfuse_spacc_core #(
      .FP(FP), .L(3), .N2(N2), .N1(N1), .N0(N0), .E(E), .CYCLES(CYCLES)
  ) u_core (
      .ap_clk(ap_clk),
      .ap_rst(ap_rst),
      .crd_in_dout({crd2_in_dout, crd1_in_dout, crd0_in_dout}),
      .crd_in_empty_n({crd2_in_empty_n, crd1_in_empty_n, crd0_in_empty_n}),
      .crd_in_read({crd2_in_read, crd1_in_read, crd0_in_read}),
      .val_in_dout(val_in_dout),
      .val_in_empty_n(val_in_empty_n),
      .val_in_read(val_in_read),
      .crd_din({crd2_din, crd1_din, crd0_din}),
      .crd_full_n({crd2_full_n, crd1_full_n, crd0_full_n}),
      .crd_write({crd2_write, crd1_write, crd0_write}),
      .val_din(val_din),
      .val_full_n(val_full_n),
      .val_write(val_write)
  );
endmodule
