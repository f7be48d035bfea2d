// samfuse SystemC models: what every primitive module shares.
//
// A primitive is a clocked SC_MODULE. Each cycle its `eval` looks only at start-of-cycle
// state (visible FIFO heads, registered full flags, its own registers) and either fires
// or stalls, exactly as the Python actor of the same name (sim_models/python) decides.
// Stall bookkeeping mirrors the Python model: a cycle in which a needed input head is not
// visible is `stall_in`; one with every needed head visible but a written output full is
// `stall_out`. With a memory system, a cycle with every needed head visible but a needed
// memory word not yet usable (or no free write slot) is `stall_mem`, charged before
// `stall_out` (docs/timing.md, "Memory"). The FIFO a module last stalled on is kept for
// deadlock reports. A value-consuming firing on blocks may take several cycles
// (docs/blocks.md, "Timing"): the primitive then neither fires nor stalls until it is
// free again, and the net does not count those cycles as a deadlock.
#ifndef SAMFUSE_PRIMITIVE_H
#define SAMFUSE_PRIMITIVE_H

#ifndef SC_CPLUSPLUS
#define SC_CPLUSPLUS 201703L  // Debian's libsystemc is built as C++17
#endif
#include <systemc>

#include <cctype>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "samfuse_fifo.h"
#include "samfuse_memory.h"
#include "samfuse_token.h"

// A primitive class's port names, comma-separated in catalogue order: the static
// inputs()/outputs() the driver's port table (samfuse_driver.cpp) reads.
#define SAMFUSE_PORTS(ins, outs)                  \
  static const char* inputs() { return ins; }   \
  static const char* outputs() { return outs; }

namespace samfuse {

// The part of a graph instance that its primitives see while running.
struct NetState {
  cycle_t now = 0;       // current cycle
  bool running = false;  // false once the graph ended (done, deadlock, error)
  bool fired = false;    // did any primitive fire this cycle
  bool mem_wait = false;  // did any primitive wait for memory or a multi-cycle firing this
                          // cycle (not a deadlock)
  int unfinished = 0;    // primitives that have not consumed D yet
  cycle_t settle = -1;   // when the last token in flight becomes visible: no deadlock before
  std::unique_ptr<StreamError> error;
  BlockPool pool;  // the words behind the block tokens of this graph instance

  void fail(const StreamError& e) {
    if (!error) error.reset(new StreamError(e));
  }
};

// Modules are created from Python, where no caller-owned sc_module_name can span the whole
// constructor. This first base holds the name (keeping the module on SystemC's hierarchy
// stack while its ports are built) until the constructor calls close().
class ScopedModuleName {
 protected:
  explicit ScopedModuleName(const std::string& name) : text_(name) { name_.emplace(text_.c_str()); }
  const sc_core::sc_module_name& module_name() const { return *name_; }
  void close() { name_.reset(); }

 private:
  std::string text_;
  std::optional<sc_core::sc_module_name> name_;
};

class Primitive : private ScopedModuleName, public sc_core::sc_module {
 public:
  sc_core::sc_in<bool> clk;

  // Own SC_METHOD per module (true), or evaluated by the graph's clocked process (false,
  // faster: one process activation per cycle instead of one per module).
  static inline bool per_module_processes = false;

  SC_HAS_PROCESS(Primitive);
  Primitive(const std::string& id, const char* op, int n_in, int n_out)
      : ScopedModuleName(sc_name_for(id)), sc_core::sc_module(module_name()), clk("clk"),
        id_(id), op_(op), in_(n_in, nullptr), out_(n_out) {
    if (per_module_processes) {
      SC_METHOD(on_clock);
      sensitive << clk.pos();
      dont_initialize();
    }
    close();  // derived classes add no SystemC objects
  }

  // One cycle; returns whether the module fired.
  virtual bool eval(cycle_t now) = 0;
  // Short state description for deadlock reports.
  virtual std::string describe_state() const { return ""; }
  // Most entries an accumulator held at once (the on-chip buffer rule); 0 for others.
  virtual std::int64_t peak_entries() const { return 0; }
  // Cycles a value-consuming firing takes (ir.block_cycles; set after Net::add).
  void set_cycles(int cycles) { cycles_ = cycles; }
  // Initiation interval and start-up (docs/timing.md, "Latency, II and start-up"; the
  // latency is the output FIFOs' visibility delay).
  void set_timing(int ii, cycle_t startup) {
    ii_ = ii;
    t_next_ = startup;
  }
  // The timing shell: before the start-up cycle, and inside a firing's II or block
  // cycles, the module neither fires nor stalls (and the net is not deadlocked).
  bool step(cycle_t now) {
    if (now < t_next_) return wait_busy();
    return eval(now);
  }

  void attach(NetState* net) {
    net_ = net;
    net->unfinished += 1;
  }
  void bind_input(int port, Fifo* f) { in_.at(port) = f; }
  void bind_output(int port, Fifo* f) { out_.at(port).bind(f); }
  // Memory port `slot` (the catalogue's mem_reads then mem_writes); unbound = ideal memory.
  void bind_mem(int slot, MemPort* p) {
    if (int(mem_.size()) <= slot) mem_.resize(std::size_t(slot) + 1, nullptr);
    mem_[std::size_t(slot)] = p;
  }
  int unbound_input() const {
    for (std::size_t i = 0; i < in_.size(); ++i)
      if (!in_[i]) return int(i);
    return -1;
  }

  const std::string& node_id() const { return id_; }
  const char* op() const { return op_; }
  bool finished() const { return finished_; }

  // statistics (docs/timing.md)
  std::int64_t fires = 0, stall_in = 0, stall_out = 0, stall_mem = 0;
  cycle_t done_cycle = -1;
  const Fifo* blocked = nullptr;  // the FIFO of the last stall
  bool blocked_on_input = false;

 protected:
  // -- firing-rule helpers; each returns the value `eval` should return --
  bool wait_in(const Fifo* f) {
    blocked = f;
    blocked_on_input = true;
    ++stall_in;
    return false;
  }
  bool wait_out(const Fifo* f) {
    blocked = f;
    blocked_on_input = false;
    ++stall_out;
    return false;
  }
  bool wait_mem() {
    net_->mem_wait = true;
    ++stall_mem;
    return false;
  }
  MemReadPort* read_port(int slot) const {
    return slot < int(mem_.size()) ? static_cast<MemReadPort*>(mem_[std::size_t(slot)]) : nullptr;
  }
  MemWritePort* write_port(int slot) const {
    return slot < int(mem_.size()) ? static_cast<MemWritePort*>(mem_[std::size_t(slot)]) : nullptr;
  }
  void fire(cycle_t now, int cycles = 1) {
    ++fires;
    t_next_ = now + (cycles > ii_ ? cycles : ii_);
  }
  // Still inside a multi-cycle firing: no firing, no stall.
  bool busy(cycle_t now) const { return now < t_next_; }
  bool wait_busy() {
    net_->mem_wait = true;
    return false;
  }
  BlockPool& pool() const { return net_->pool; }
  void finish(cycle_t now) {
    finished_ = true;
    done_cycle = now;
    net_->unfinished -= 1;
  }
  // Writes `tok` on output `i`; writing D ends the primitive (it passes the D it consumed).
  void pass(int i, tok_t tok, cycle_t now) {
    out_[std::size_t(i)].push(tok, now);
    if (is_done(tok)) finish(now);
  }
  // A stream-rule violation; the cycle is the module's next own cycle, as in Python.
  [[noreturn]] void fail(const std::string& format, tok_t a = 0, char ka = 0, tok_t b = 0,
                         char kb = 0, tok_t c = 0, char kc = 0, tok_t d = 0,
                         char kd = 0) const {
    StreamError e(id_, t_next_, format, a, ka, b, kb, c, kc, d, kd);
    for (int i = 0; i < StreamError::kToks; ++i)
      if (is_block(e.toks[i])) {
        const std::uint32_t* w = net_->pool.data(payload(e.toks[i]));
        e.block_words[i].assign(w, w + net_->pool.elems(payload(e.toks[i])));
      }
    throw e;
  }

  std::string id_;
  const char* op_;
  std::vector<Fifo*> in_;
  std::vector<OutPort> out_;
  std::vector<MemPort*> mem_;
  NetState* net_ = nullptr;
  cycle_t t_next_ = 0;
  int cycles_ = 1;
  int ii_ = 1;
  bool finished_ = false;

 private:
  void on_clock() {
    NetState& n = *net_;
    if (!n.running || finished_) return;
    try {
      if (step(n.now)) n.fired = true;
    } catch (const StreamError& e) {
      n.fail(e);
    }
  }

  // sc_object names may not contain '.' or spaces; graph node ids may.
  static std::string sc_name_for(const std::string& id) {
    static int counter = 0;
    std::string s = "n" + std::to_string(counter++) + "_";
    for (char c : id) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    return s;
  }
};

}  // namespace samfuse

#endif  // SAMFUSE_PRIMITIVE_H
