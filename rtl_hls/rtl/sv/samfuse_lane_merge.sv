// lane_merge: ordered merge of two lanes' (crd, val) streams of one level — the machine of
// samfuse_lane_merge_core without COMBINE.
module samfuse_lane_merge #(
    parameter int W = 34  // value token width: 2 + 32*E for blocks of E elements
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(crd_a),
    `SAMFUSE_IN(val_a, W),
    `SAMFUSE_IN(crd_b),
    `SAMFUSE_IN(val_b, W),
    `SAMFUSE_OUT(crd),
    `SAMFUSE_OUT(val, W)
);
  samfuse_lane_merge_core #(.W(W)) u_core (.*);
endmodule
