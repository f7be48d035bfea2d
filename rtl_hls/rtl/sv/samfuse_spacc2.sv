// spacc2: sparse matrix accumulator, samfuse_spacc_core with two kept levels. Accumulates
// acc[crd1][crd0] (crd1 < N1, crd0 < N0) over a level-2 fiber; crd1_in holds one crd per
// level-0 fiber. S_k (k>=2) on crd0_in with S_{k-1} on crd1_in pops the three inputs and
// starts the drain in the next cycle, one step per cycle: rows in increasing crd1; a row's
// first entry also writes its crd1, rows are separated by S0 on crd0/val, and the drain
// ends with (S_{k-2}, S_{k-1}, S_{k-1}). A step needs space only on the outputs it writes.
// E > 1: blocks of E elements; CYCLES: the initiation interval of an accumulating firing.
module samfuse_spacc2 #(
    parameter bit FP = 1'b1,
    parameter int N1 = 16,
    parameter int N0 = 16,
    parameter int E = 1,
    parameter int CYCLES = 1
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(crd1_in),
    `SAMFUSE_IN(crd0_in),
    `SAMFUSE_IN(val_in, 32*E+2),
    `SAMFUSE_OUT(crd1),
    `SAMFUSE_OUT(crd0),
    `SAMFUSE_OUT(val, 32*E+2)
);

  samfuse_spacc_core #(
      .FP(FP), .L(2), .N2(1), .N1(N1), .N0(N0), .E(E), .CYCLES(CYCLES)
  ) u_core (
      .ap_clk(ap_clk),
      .ap_rst(ap_rst),
      .crd_in_dout({crd1_in_dout, crd0_in_dout}),
      .crd_in_empty_n({crd1_in_empty_n, crd0_in_empty_n}),
      .crd_in_read({crd1_in_read, crd0_in_read}),
      .val_in_dout(val_in_dout),
      .val_in_empty_n(val_in_empty_n),
      .val_in_read(val_in_read),
      .crd_din({crd1_din, crd0_din}),
      .crd_full_n({crd1_full_n, crd0_full_n}),
      .crd_write({crd1_write, crd0_write}),
      .val_din(val_din),
      .val_full_n(val_full_n),
      .val_write(val_write)
  );
endmodule
