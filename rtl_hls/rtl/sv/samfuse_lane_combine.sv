// lane_combine: the lane reduction of one level — samfuse_lane_merge with COMBINE: a
// crd both lanes hold passes once with the sum of the two values (FP: binary32, else
// int32). Scalar values.
module samfuse_lane_combine #(
    parameter bit FP = 1'b1
) (
    `SAMFUSE_CLOCK,
    `SAMFUSE_IN(crd_a),
    `SAMFUSE_IN(val_a),
    `SAMFUSE_IN(crd_b),
    `SAMFUSE_IN(val_b),
    `SAMFUSE_OUT(crd),
    `SAMFUSE_OUT(val)
);
  samfuse_lane_merge #(.W(34), .COMBINE(1'b1), .FP(FP)) u_core (.*);
endmodule
