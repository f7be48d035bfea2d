// ii: the initiation interval of a compute node (docs/blocks.md, Timing): a value-consuming
// firing (`fire`) in cycle t keeps the node from firing again before t + CYCLES
// (ir.block_cycles; 1 = every cycle, no logic). The output is still written at t.
module samfuse_ii #(
    parameter int CYCLES = 1
) (
    /* verilator lint_off UNUSEDSIGNAL */  // CYCLES = 1 needs no state
    `SAMFUSE_CLOCK,
    input  logic fire,
    /* verilator lint_on UNUSEDSIGNAL */
    output logic ready
);
  generate
    if (CYCLES > 1) begin : g_busy
      logic [31:0] left;  // busy cycles still to wait
      assign ready = left == '0;
      always_ff @(posedge ap_clk)
        if (ap_rst) left <= '0;
        else if (fire) left <= 32'(CYCLES - 1);
        else if (left != '0) left <= left - 32'd1;
    end else begin : g_free
      assign ready = 1'b1;
    end
  endgenerate
endmodule
