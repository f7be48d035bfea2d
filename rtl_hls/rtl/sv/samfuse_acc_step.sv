// acc_step: one accumulating firing of a sparse accumulator (spacc, spacc_core): the
// entry's sum, element by element, prev (0 if the entry is new) + the value (N as 0),
// and the initiation interval the firing starts (samfuse_ii; `fire` is a value firing).
module samfuse_acc_step #(
    parameter bit FP = 1'b1,
    parameter int E = 1,
    parameter int CYCLES = 1
) (
    `SAMFUSE_CLOCK,
    input  logic [32*E-1:0] prev,
    input  logic [32*E+1:0] val,
    input  logic            fire,
    output logic [32*E-1:0] sum,
    output logic            ready
);
  import samfuse_pkg::*;
  always @*
    for (int k = 0; k < E; k++)
      sum[32*k+:32] = binop(FP, OP_ADD, prev[32*k+:32],
                            val[32*E+1-:2] == TAG_DATA ? val[32*k+:32] : 32'd0);
  samfuse_ii #(.CYCLES(CYCLES)) u_ii (.*);
endmodule
