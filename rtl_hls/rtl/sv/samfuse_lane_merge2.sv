// lane_merge2: ordered merge of two lanes' (outer crd1, inner crd0, val) streams whose outer
// crds are disjoint: samfuse_lane_merge2_core without COMBINE (PICK, COPY_A, COPY_B).
module samfuse_lane_merge2 #(
    parameter int W = 34  // value token width: 2 + 32*E for blocks of E elements
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
  samfuse_lane_merge2_core #(.W(W), .COMBINE(1'b0), .FP(1'b0)) u_core (.*);
endmodule
