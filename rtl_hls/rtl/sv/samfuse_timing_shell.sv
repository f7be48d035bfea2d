// timing_shell: a node's II, start-up and (for a writer) latency, rendered around its
// primitive instance by the netlist (docs/timing.md, "Latency, II and start-up"; the
// knobs come from ir.elaborate). `go` is low before cycle STARTUP and for II-1 cycles
// after each firing (`fire`: any pop or push of the node in that cycle); the netlist ANDs
// it into every empty_n, full_n, read and write of the node, so a throttled node neither
// pops nor pushes. `go` depends on registers only. A writer's `done` reaches `done_out`
// LATENCY-1 cycles later (its result commits then: the end-of-run rule). A node's latency
// on its stream outputs is its output FIFOs' visibility delay (samfuse_fifo VIS), not
// here. All defaults (II 1, STARTUP 0, LATENCY 1) = no shell: the netlist omits it.
module samfuse_timing_shell #(
    parameter int II = 1,
    parameter int STARTUP = 0,
    parameter int LATENCY = 1
) (
    /* verilator lint_off UNUSEDSIGNAL */  // II = 1 needs no firing input
    `SAMFUSE_CLOCK,
    input  logic fire,
    input  logic done_in,
    /* verilator lint_on UNUSEDSIGNAL */
    output logic go,
    output logic done_out
);
  logic started, free;
  generate
    if (STARTUP > 0) begin : g_startup
      logic [31:0] wait_left;  // cycles before the first allowed firing
      assign started = wait_left == '0;
      always_ff @(posedge ap_clk)
        if (ap_rst) wait_left <= 32'(STARTUP);
        else if (wait_left != '0) wait_left <= wait_left - 32'd1;
    end else begin : g_started
      assign started = 1'b1;
    end
    if (LATENCY > 1) begin : g_late
      logic [LATENCY-2:0] pipe;  // done_in of the last LATENCY-1 cycles
      assign done_out = pipe[LATENCY-2];
      always_ff @(posedge ap_clk)
        if (ap_rst) pipe <= '0;
        else pipe <= (pipe << 1) | (LATENCY - 1)'(done_in);
    end else begin : g_now
      assign done_out = done_in;
    end
  endgenerate
  samfuse_ii #(.CYCLES(II)) u_ii (.ap_clk(ap_clk), .ap_rst(ap_rst), .fire(fire), .ready(free));
  assign go = started & free;
endmodule
