// writer_done: a writer's `done` (level_writer, value_writer cores), set the cycle after
// it consumes D (`fire` with a D `tag`, or `fin` after) and every write is acknowledged
// (`acked_n`), and never cleared. One register: `fin && (now >= last ack)` from several
// registers that change at the same edge can glitch high for a delta cycle in simulation,
// which an edge-triggered bench then takes for the end of the run (the top's ap_done, an
// AND of these monotone registers, cannot glitch).
module samfuse_writer_done (
    `SAMFUSE_CLOCK,
    input  logic       fin,
    input  logic       fire,
    input  logic [1:0] tag,
    input  logic       acked_n,
    output logic       done
);
  import samfuse_pkg::*;
  always_ff @(posedge ap_clk)
    if (ap_rst) done <= 1'b0;
    else done <= (fin || (fire && tag == TAG_DONE)) && acked_n;
endmodule
