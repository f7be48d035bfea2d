// broadcast: repeats the head value once per R (val_in, repsig -> val). The firing rules
// are repeat's and the token word is payload-agnostic, so this is samfuse_repeat with its
// ports renamed: no logic of its own, identical timing.
module samfuse_broadcast #(
    parameter int W = 34  // value token width: 2 + 32*E for blocks of E elements
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(val_in, W),
    `SAMFUSE_IN(repsig),
    `SAMFUSE_OUT(val, W)
);
  samfuse_repeat #(.W(W)) u_repeat (
      .ap_clk(ap_clk),
      .ap_rst(ap_rst),
      .ref_in_dout(val_in_dout),
      .ref_in_empty_n(val_in_empty_n),
      .ref_in_read(val_in_read),
      .repsig_dout(repsig_dout),
      .repsig_empty_n(repsig_empty_n),
      .repsig_read(repsig_read),
      .ref_din(val_din),
      .ref_full_n(val_full_n),
      .ref_write(val_write)
  );
endmodule
