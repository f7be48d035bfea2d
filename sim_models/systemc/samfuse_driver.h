// samfuse SystemC models: the driver, a flat interface to the models on plain types.
//
// cosim/backends/_systemc_child.py builds, runs and reads out a design through these functions
// only. The header declares no class and includes no SystemC header, so cppyy parses
// it in milliseconds and JIT-compiles nothing but one small call wrapper per function:
// the models themselves are compiled ahead of time, with samfuse_driver.cpp, into a
// shared library cached per header hash and compiler (cosim/backends/_systemc_load.py,
// docs/systemc.md, "The compiled library"). One Design per process; nets are numbered
// in the order they were added, nodes and FIFOs per net likewise.
#ifndef SAMFUSE_DRIVER_H
#define SAMFUSE_DRIVER_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace samfuse_driver {

// -- building ---------------------------------------------------------------------------
// A new Design (must come before any node): fused or per-module processes.
void begin(bool per_module_processes);
int add_net(const std::string& name, bool trace, std::int64_t max_cycles);
int add_fifo(int net, const std::string& name, std::int64_t depth);  // depth 0: unbounded
// A FIFO whose tokens become visible `vis` > 1 cycles after their push (docs/timing.md).
void set_fifo_visibility(int net, int fifo, int vis);
// The model of catalogue primitive `op`; `ints` and the word arrays `a`, `b` are its
// constructor arguments after the node id (cosim/backends/_systemc_child.py, _node_args).
int add_node(int net, const std::string& op, const std::string& id,
             const std::int64_t* ints, std::size_t n_ints, const std::uint32_t* a,
             std::size_t na, const std::uint32_t* b, std::size_t nb);
// A call after add_node: set_block (an operator spec, or an array's block words),
// set_elems, set_cycles or set_timing (ii, startup) with `args`.
void setup(int net, int node, const std::string& method, const std::int64_t* args,
           std::size_t n);
// Port names of `op`, comma separated, in port order ("" if `op` is unknown).
std::string ports(const std::string& op, bool inputs);
// Bind `node`'s port `port` (input or output) to `fifo`; false if it has no such port.
bool bind(int net, int node, bool input, const std::string& port, int fifo);
void set_memory(int net, int channels, std::int64_t bytes_per_cycle, std::int64_t latency,
                std::int64_t line_bytes, std::int64_t outstanding, bool log);
void add_mem_port(int net, int node, int slot, bool write, std::int64_t words, int channel);
// An on-chip buffer (its index, in call order) and a port it serves; the buffer's first
// port gives `fill_words` (the array's length; 0 for the others) and fills it at cycle 0.
int add_buffer(int net, std::int64_t ports, std::int64_t latency);
void add_buffer_port(int net, int node, int slot, int buffer, std::int64_t fill_words, int channel);
// Dump every edge's handshake to `path`.vcd (after the last add_node).
void trace_vcd(const std::string& path);
// Elaborate and simulate every net; "" or the SystemC error as text.
std::string run();
std::int64_t clock_cycles();
// Abandon the simulation context (after a warm-up run, before forking).
void fresh_simcontext();

// -- results ----------------------------------------------------------------------------
// status, end cycle, nodes, fifos
std::vector<std::int64_t> net_info(int net);
// per node: fires, stall_in, stall_out, done_cycle, finished, blocked fifo (-1 none),
// blocked_on_input, stall_mem, peak entries
std::vector<std::int64_t> node_info(int net);
std::string node_state(int net, int node);
// per fifo: depth, writer, reader, max occupancy, unread, data tokens written, cycles
// starting full, cycles starting empty, first cycle not yet counted in those two, the
// occupancy from that cycle on
std::vector<std::int64_t> fifo_info(int net);
const std::vector<std::uint64_t>& trace_words(int net, int fifo);
const std::vector<std::uint32_t>& trace_block_words(int net, int fifo);
// which: 0 write cycles, 1 read cycles
const std::vector<std::int64_t>& trace_cycles(int net, int fifo, int which);
// a level writer's coordinates or a value writer's value words
const std::vector<std::uint32_t>& written_words(int net, int node);
// a level writer's stops: which 0 positions, 1 levels
const std::vector<std::int64_t>& written_stops(int net, int node, int which);
// the stream error: part 0 node, 1 message format, 2 token kinds ("" when none)
std::string error_text(int net, int part);
// the stream error's cycle, then its token words
std::vector<std::uint64_t> error_words(int net);
const std::vector<std::uint32_t>& error_block(int net, int token);
// memory (empty without): ports, channels, max ack, (bursts, lines) per port, bytes per
// channel, buffers, (fill lines, filled, reads, conflict cycles) per buffer
std::vector<std::int64_t> memory_info(int net);
// the burst log, column 0 cycle, 1 port, 2 line, 3 lines, 4 write
const std::vector<std::int64_t>& memory_log(int net, int column);

}  // namespace samfuse_driver

#endif  // SAMFUSE_DRIVER_H
