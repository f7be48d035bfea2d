// lane_combine2: the lane reduction of two levels — samfuse_lane_merge2 with COMBINE:
// an outer crd both lanes hold passes once and its two inner fibers are merged, equal inner
// crds adding their values (FP: binary32, else int32). Scalar values.
module samfuse_lane_combine2 #(
    parameter bit FP = 1'b1
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(crd1_a),
    `SAMFUSE_IN(crd0_a),
    `SAMFUSE_IN(val_a),
    `SAMFUSE_IN(crd1_b),
    `SAMFUSE_IN(crd0_b),
    `SAMFUSE_IN(val_b),
    `SAMFUSE_OUT(crd1),
    `SAMFUSE_OUT(crd0),
    `SAMFUSE_OUT(val)
);
  samfuse_lane_merge2 #(.W(34), .COMBINE(1'b1), .FP(FP)) u_core (.*);
endmodule
