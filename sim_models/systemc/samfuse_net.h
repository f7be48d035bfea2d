// samfuse SystemC models: a graph instance (Net) and the clocked top (Design).
//
// A Net owns the FIFOs of one SAMML graph and points at its primitive modules; the
// graph is elaborated from Python (cosim/backends/_systemc.py). A Design owns the sc_clock and
// runs one or more Nets side by side (a batch of independent runs shares one SystemC
// elaboration). Each clock cycle is evaluate-all-then-commit:
//   * fused mode (default): one SC_METHOD on the rising edge evaluates every primitive,
//     then commits the FIFOs touched in the cycle;
//   * per-module mode: every primitive has its own SC_METHOD on the rising edge, and the
//     Design commits on the falling edge.
// Both give the same cycles because evaluation reads registered state only.
// A Net ends when every primitive has consumed D (done), when a cycle passes in which
// nothing fired (deadlock: nothing can ever fire again), on a stream error, or at the
// cycle limit. The simulation stops when every Net has ended. A Net with a memory system
// (set_memory, add_mem_port) serves the cycle's bursts after the FIFO commit; a cycle in
// which a primitive waits for memory is not a deadlock.
#ifndef SAMFUSE_NET_H
#define SAMFUSE_NET_H

#include <memory>
#include <string>
#include <vector>

#include "samfuse_fifo.h"
#include "samfuse_memory.h"
#include "samfuse_primitive.h"

namespace samfuse {

class Net {
 public:
  enum Status { RUNNING = 0, DONE = 1, DEADLOCK = 2, ERROR = 3, LIMIT = 4 };

  Net(std::string name, bool trace) : name_(std::move(name)), trace_(trace) {}

  int add_fifo(const std::string& name, long depth) {
    fifos_.emplace_back(new Fifo(name, depth, trace_, &dirty_, &state_.now, &state_.pool));
    return int(fifos_.size()) - 1;
  }
  int add(Primitive* p) {
    p->attach(&state_);
    nodes_.push_back(p);
    return int(nodes_.size()) - 1;
  }
  void bind_input(int node, int port, int fifo) {
    nodes_.at(node)->bind_input(port, fifos_.at(fifo).get());
    fifos_[fifo]->reader = node;
  }
  void bind_output(int node, int port, int fifo) {
    nodes_.at(node)->bind_output(port, fifos_.at(fifo).get());
    fifos_[fifo]->writer = node;
  }
  // "" when every input port is bound, else what is missing.
  std::string check() const {
    for (const Primitive* p : nodes_) {
      int port = p->unbound_input();
      if (port >= 0) return "node '" + p->node_id() + "': input port " + std::to_string(port) + " is unbound";
    }
    return "";
  }
  void set_max_cycles(cycle_t n) { max_cycles_ = n; }
  // An edge whose tokens become visible `vis` > 1 cycles after their push.
  void set_fifo_visibility(int fifo, int vis) { fifos_.at(fifo)->set_visibility(vis, &state_.settle); }

  // -- memory system (docs/timing.md, "Memory"); without it memory is ideal ------------
  void set_memory(int channels, std::int64_t bytes_per_cycle, std::int64_t latency,
                  std::int64_t line_bytes, std::int64_t outstanding, bool log) {
    mem_.reset(new MemSystem(channels, bytes_per_cycle, latency, line_bytes, outstanding, log));
  }
  // Port number = order of calls (ir.memory_ports order); `slot` is the array's index in
  // the node's catalogue mem_reads + mem_writes; `words`: a read array's length.
  int add_mem_port(int node, int slot, bool write, std::int64_t words, int channel) {
    int no = mem_->num_ports();
    MemPort* p = write ? mem_->add_port(std::make_unique<MemWritePort>(mem_.get(), no, channel))
                       : mem_->add_port(std::make_unique<MemReadPort>(mem_.get(), no, channel, words));
    nodes_.at(node)->bind_mem(slot, p);
    return no;
  }
  int add_buffer(std::int64_t ports, std::int64_t latency) {
    mem_->add_buffer(ports, latency);
    return mem_->num_buffers() - 1;
  }
  // A port served by buffer `buffer`; `fill_words` > 0 on its first port (the fill).
  int add_buffer_port(int node, int slot, int buffer, std::int64_t fill_words, int channel) {
    int no = mem_->num_ports();
    std::int64_t W = mem_->cfg.words_per_line();
    MemBuffer* b = mem_->buffer(buffer);
    nodes_.at(node)->bind_mem(slot, mem_->add_port(std::make_unique<MemBufferPort>(
                                        mem_.get(), no, channel, b, (fill_words + W - 1) / W)));
    return no;
  }
  MemSystem* memory() const { return mem_.get(); }
  void start() {
    state_.running = true;
    for (auto& f : fifos_) f->commit();
  }

  // -- one cycle ------------------------------------------------------------------------
  // Evaluate every primitive on start-of-cycle state (fused mode).
  void evaluate() {
    state_.fired = false;
    state_.mem_wait = false;
    const cycle_t now = state_.now;
    for (Primitive* p : nodes_) {
      if (p->finished()) continue;
      try {
        if (p->step(now)) state_.fired = true;
      } catch (const StreamError& e) {
        state_.fail(e);
      }
    }
  }
  // Commit the touched FIFOs and decide whether the graph has ended.
  void commit(bool all_fifos) {
    if (all_fifos) {
      for (auto& f : fifos_) f->commit();
      dirty_.clear();
    } else {
      for (Fifo* f : dirty_) f->commit();
      dirty_.clear();
    }
    if (mem_) mem_->commit(state_.now);
    state_.pool.commit();
    if (state_.error) {
      end(ERROR);
    } else if (state_.unfinished == 0) {
      end(DONE);
    } else if (!state_.fired && !state_.mem_wait && state_.now >= state_.settle) {
      end(DEADLOCK);  // nothing fired or awaits memory: the state can no longer change
    } else if (max_cycles_ > 0 && state_.now + 1 >= max_cycles_) {
      end(LIMIT);
    }
    state_.now += 1;
    state_.fired = false;
    state_.mem_wait = false;
  }

  // -- results --------------------------------------------------------------------------
  bool running() const { return state_.running; }
  int status() const { return status_; }
  cycle_t end_cycle() const { return end_cycle_; }  // the cycle in which the net ended
  const std::string& name() const { return name_; }
  int num_nodes() const { return int(nodes_.size()); }
  int num_fifos() const { return int(fifos_.size()); }
  Primitive* node(int i) const { return nodes_.at(i); }
  Fifo* fifo(int i) const { return fifos_.at(i).get(); }
  int fifo_index(const Fifo* f) const {
    for (std::size_t i = 0; i < fifos_.size(); ++i)
      if (fifos_[i].get() == f) return int(i);
    return -1;
  }
  const StreamError* error() const { return state_.error.get(); }
  const BlockPool& pool() const { return state_.pool; }
  NetState& state() { return state_; }

 private:
  void end(Status s) {
    status_ = s;
    end_cycle_ = state_.now;
    state_.running = false;
  }

  std::string name_;
  bool trace_;
  NetState state_;
  std::vector<Primitive*> nodes_;
  std::vector<std::unique_ptr<Fifo>> fifos_;
  std::vector<Fifo*> dirty_;
  std::unique_ptr<MemSystem> mem_;
  cycle_t max_cycles_ = 0;
  int status_ = RUNNING;
  cycle_t end_cycle_ = -1;
};

// sc_signal mirrors of one edge's ap_fifo-style handshake, for waveform dumps only.
struct EdgeMirror {
  sc_core::sc_signal<bool> empty_n, read, full_n, write;
  sc_core::sc_signal<sc_dt::sc_uint<34> > dout, din;  // the token word: 2-bit tag, payload
  explicit EdgeMirror(const std::string& base)
      : empty_n((base + "_empty_n").c_str()), read((base + "_read").c_str()),
        full_n((base + "_full_n").c_str()), write((base + "_write").c_str()),
        dout((base + "_dout").c_str()), din((base + "_din").c_str()) {}
  void update(const Fifo& f) {
    empty_n.write(f.empty_n_reg());
    read.write(f.popped());
    dout.write(f.dout());
    full_n.write(f.full_n_reg());
    write.write(f.pushed());
    din.write(f.pushed() ? f.din() : 0);
  }
};

class Design : private ScopedModuleName, public sc_core::sc_module {
 public:
  sc_core::sc_clock clk;

  SC_HAS_PROCESS(Design);
  // Must be constructed before any primitive: it fixes the process style.
  Design(const char* name, bool per_module_processes)
      : ScopedModuleName(name), sc_core::sc_module(module_name()),
        clk("clk", sc_core::sc_time(1, sc_core::SC_NS)), per_module_(per_module_processes) {
    Primitive::per_module_processes = per_module_processes;
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    if (per_module_) {
      SC_METHOD(on_falling_edge);
      sensitive << clk.negedge_event();
    } else {
      SC_METHOD(on_rising_edge);
      sensitive << clk.posedge_event();
    }
    dont_initialize();
    close();
  }

  void add_net(Net* net) {
    for (int i = 0; i < net->num_nodes(); ++i) net->node(i)->clk(clk);
    nets_.push_back(net);
  }

  // Dump every edge's handshake (empty_n/read/dout, full_n/write/din) and the clock to
  // `path` + ".vcd". Values of cycle c are stamped at the clock edge that commits cycle c.
  void trace_vcd(const std::string& path) {
    vcd_ = sc_core::sc_create_vcd_trace_file(path.c_str());
    sc_core::sc_trace(vcd_, clk, "clk");
    for (std::size_t n = 0; n < nets_.size(); ++n) {
      std::vector<std::unique_ptr<EdgeMirror>> mirrors;
      std::string scope = ident(nets_[n]->name());
      for (int i = 0; i < nets_[n]->num_fifos(); ++i) {
        std::string edge = ident(nets_[n]->fifo(i)->name());
        std::string base = scope + "." + edge;  // '.' opens a VCD scope
        auto* m = new EdgeMirror("m" + std::to_string(n) + "_" + edge);
        sc_core::sc_trace(vcd_, m->empty_n, base + ".empty_n");
        sc_core::sc_trace(vcd_, m->read, base + ".read");
        sc_core::sc_trace(vcd_, m->dout, base + ".dout");
        sc_core::sc_trace(vcd_, m->full_n, base + ".full_n");
        sc_core::sc_trace(vcd_, m->write, base + ".write");
        sc_core::sc_trace(vcd_, m->din, base + ".din");
        mirrors.emplace_back(m);
      }
      mirrors_.push_back(std::move(mirrors));
    }
  }

  // Elaborate and simulate until every net has ended. Returns "" or the SystemC error
  // text (sc_report is turned into a string here, inside the simulating process).
  std::string run() {
    for (Net* n : nets_) {
      std::string problem = n->check();
      if (!problem.empty()) return "net '" + n->name() + "': " + problem;
      n->start();
    }
    std::string err;
    try {
      sc_core::sc_start();
    } catch (const sc_core::sc_report& r) {
      err = std::string("SystemC ") + r.what();
    } catch (const std::exception& e) {
      err = std::string("C++ exception: ") + e.what();
    }
    if (vcd_) sc_core::sc_close_vcd_trace_file(vcd_);
    vcd_ = nullptr;
    return err;
  }

  cycle_t cycles = 0;  // clock cycles simulated

 private:
  void on_rising_edge() {
    bool any = false;
    for (std::size_t n = 0; n < nets_.size(); ++n) {
      Net* net = nets_[n];
      if (!net->running()) continue;
      net->evaluate();
      finish_cycle(n);
      any = any || net->running();
    }
    after_cycle(any);
  }

  void on_falling_edge() {  // per-module mode: the primitives evaluated on the rising edge
    bool any = false;
    for (std::size_t n = 0; n < nets_.size(); ++n) {
      if (!nets_[n]->running()) continue;
      finish_cycle(n);
      any = any || nets_[n]->running();
    }
    after_cycle(any);
  }

  void finish_cycle(std::size_t n) {
    Net* net = nets_[n];
    if (vcd_) {
      for (int i = 0; i < net->num_fifos(); ++i) mirrors_[n][i]->update(*net->fifo(i));
    }
    net->commit(vcd_ != nullptr);
  }

  void after_cycle(bool any_running) {
    ++cycles;
    if (!any_running) sc_core::sc_stop();
  }

  // An edge name as a VCD identifier: "Bi.crd->X.crd_a" -> "Bi_crd__X_crd_a".
  static std::string ident(const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s.compare(i, 2, "->") == 0) {
        out += "__";
        ++i;
      } else {
        out += std::isalnum(static_cast<unsigned char>(s[i])) ? s[i] : '_';
      }
    }
    return out;
  }

  bool per_module_;
  std::vector<Net*> nets_;
  sc_core::sc_trace_file* vcd_ = nullptr;
  std::vector<std::vector<std::unique_ptr<EdgeMirror>>> mirrors_;
};

// Abandon the current SystemC simulation context; the next SystemC call creates a fresh
// one. Used once, after the JIT warm-up elaborated and ran a throwaway design in the
// parent, so that forked children start from an empty context (docs/systemc.md).
inline void fresh_simcontext() {
  sc_core::sc_curr_simcontext = nullptr;
  sc_core::sc_default_global_context = nullptr;
}

}  // namespace samfuse

#endif  // SAMFUSE_NET_H
