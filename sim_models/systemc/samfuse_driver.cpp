// samfuse SystemC models: the driver (samfuse_driver.h) over the models of samfuse.h.
// Compiled with the models into one shared library (cosim/backends/_systemc_load.py); the objects
// it creates live until the process ends, which is a forked child's os._exit.
#include "samfuse_driver.h"

#include <functional>
#include <map>
#include <utility>

#include "samfuse.h"

namespace samfuse_driver {
namespace {

using namespace samfuse;

struct Args {
  const std::string& id;
  const std::int64_t* ints;
  std::size_t nints;
  const std::uint32_t* a;
  std::size_t na;
  const std::uint32_t* b;
  std::size_t nb;
};

struct Model {
  const char* (*inputs)();
  const char* (*outputs)();
  std::function<Primitive*(const Args&)> make;
};

template <class M>
Model model(std::function<Primitive*(const Args&)> make) {
  return {&M::inputs, &M::outputs, std::move(make)};
}

template <class M, std::size_t... I>
Model from_ints(std::index_sequence<I...>) {  // its id, then the catalogue's schema
  return model<M>([](const Args& x) -> Primitive* { return new M(x.id, x.ints[I]...); });
}

// catalogue primitive -> its model (the constructor arguments of _node_args): those whose
// arguments the catalogue's schema does not describe, then the rest, generated from the
// catalogue (cosim/backends/_systemc_load.py, generated_models: a class named as the
// Python actor, from its id, passed and derived parameters)
const std::map<std::string, Model>& models() {
  static const std::map<std::string, Model> table = {
      {"scan_compressed", model<ScanCompressed>([](const Args& x) -> Primitive* {
         return new ScanCompressed(x.id, x.a, x.na, x.b, x.nb);
       })},
      {"scan_dense", model<ScanDense>([](const Args& x) -> Primitive* {
         return new ScanDense(x.id, std::uint64_t(x.ints[0]), std::uint64_t(x.ints[1]));
       })},
      {"locate", model<Locate>([](const Args& x) -> Primitive* {
         return new Locate(x.id, std::uint64_t(x.ints[0]), std::uint64_t(x.ints[1]));
       })},
      {"array", model<Array>([](const Args& x) -> Primitive* {
         return new Array(x.id, x.a, x.na);
       })},
      {"alu", model<Alu>([](const Args& x) -> Primitive* {
         return new Alu(x.id, int(x.ints[0]), x.ints[1] != 0);
       })},
      {"unary", model<Unary>([](const Args& x) -> Primitive* {
         return new Unary(x.id, int(x.ints[0]), x.ints[1] != 0, std::uint32_t(x.ints[2]),
                          std::uint32_t(x.ints[3]), x.ints[4]);
       })},
      {"reduce", model<Reduce>([](const Args& x) -> Primitive* {
         return new Reduce(x.id, x.ints[0] != 0, x.ints[1] != 0);
       })},
      {"position_split", model<PositionSplit>([](const Args& x) -> Primitive* {
         return new PositionSplit(x.id, std::vector<long long>(x.ints, x.ints + x.nints));
       })},
#include "samfuse_models.inc"
  };
  return table;
}

struct NetEntry {
  Net* net;
  std::vector<std::string> ops;  // per node, to find its ports
};

Design* g_design = nullptr;
std::vector<NetEntry> g_nets;
bool g_attached = false;  // the nets are in the design (after the last add_node)

void attach_nets() {
  if (g_attached) return;
  for (NetEntry& e : g_nets) g_design->add_net(e.net);
  g_attached = true;
}

Net& net_at(int i) { return *g_nets.at(std::size_t(i)).net; }

int port_index(const std::string& names, const std::string& port) {
  int index = 0;
  std::size_t start = 0;
  while (start <= names.size()) {
    std::size_t end = names.find(',', start);
    if (end == std::string::npos) end = names.size();
    if (names.compare(start, end - start, port) == 0) return index;
    ++index;
    start = end + 1;
  }
  return -1;
}

template <class W>
W& writer(int net, int node) {
  return dynamic_cast<W&>(*net_at(net).node(node));
}

const StreamError& stream_error(int net) {
  const StreamError* e = net_at(net).error();
  if (!e) throw std::out_of_range("samfuse_driver: the net has no stream error");
  return *e;
}

}  // namespace

void begin(bool per_module_processes) {
  g_design = new Design("samfuse_top", per_module_processes);
  g_nets.clear();
  g_attached = false;
}

int add_net(const std::string& name, bool trace, std::int64_t max_cycles) {
  Net* net = new Net(name, trace);
  if (max_cycles) net->set_max_cycles(max_cycles);
  g_nets.push_back({net, {}});
  return int(g_nets.size()) - 1;
}

int add_fifo(int net, const std::string& name, std::int64_t depth) {
  return net_at(net).add_fifo(name, long(depth));
}

void set_fifo_visibility(int net, int fifo, int vis) {
  net_at(net).set_fifo_visibility(fifo, vis);
}

int add_node(int net, const std::string& op, const std::string& id,
             const std::int64_t* ints, std::size_t nints, const std::uint32_t* a,
             std::size_t na, const std::uint32_t* b, std::size_t nb) {
  Primitive* p = models().at(op).make(Args{id, ints, nints, a, na, b, nb});
  g_nets.at(std::size_t(net)).ops.push_back(op);
  return net_at(net).add(p);
}

void setup(int net, int node, const std::string& method, const std::int64_t* args,
           std::size_t n) {
  Primitive* p = net_at(net).node(node);
  const std::string op = p->op();
  if (method == "set_cycles") {
    p->set_cycles(int(args[0]));
  } else if (method == "set_load_queue" && op == "array") {
    dynamic_cast<Array&>(*p).set_load_queue(int(args[0]));
  } else if (method == "set_timing") {
    p->set_timing(int(args[0]), cycle_t(args[1]));
  } else if (method == "set_block" && op == "array") {
    dynamic_cast<Array&>(*p).set_block(int(args[0]));
  } else if (method == "set_block" && op == "alu") {
    dynamic_cast<Alu&>(*p).set_block(args, n);
  } else if (method == "set_block" && op == "reduce") {
    dynamic_cast<Reduce&>(*p).set_block(args, n);
  } else if (method == "set_elems" && op == "unary") {
    dynamic_cast<Unary&>(*p).set_elems(int(args[0]));
  } else if (method == "set_elems" && op == "spacc") {
    dynamic_cast<SpAcc&>(*p).set_elems(int(args[0]));
  } else if (method == "set_elems" && op == "spacc2") {
    dynamic_cast<SpAcc2&>(*p).set_elems(int(args[0]));
  } else if (method == "set_elems" && op == "spacc3") {
    dynamic_cast<SpAcc3&>(*p).set_elems(int(args[0]));
  } else {
    throw std::invalid_argument("samfuse_driver: no " + method + " on " + op);
  }
}

std::string ports(const std::string& op, bool inputs) {
  auto it = models().find(op);
  if (it == models().end()) return "";
  return inputs ? it->second.inputs() : it->second.outputs();
}

bool bind(int net, int node, bool input, const std::string& port, int fifo) {
  int index = port_index(ports(g_nets.at(std::size_t(net)).ops.at(std::size_t(node)), input),
                         port);
  if (index < 0) return false;
  if (input) {
    net_at(net).bind_input(node, index, fifo);
  } else {
    net_at(net).bind_output(node, index, fifo);
  }
  return true;
}

void set_memory(int net, int channels, std::int64_t bytes_per_cycle, std::int64_t latency,
                std::int64_t line_bytes, std::int64_t outstanding, bool log) {
  net_at(net).set_memory(channels, bytes_per_cycle, latency, line_bytes, outstanding, log);
}

void add_mem_port(int net, int node, int slot, bool write, std::int64_t words, int channel) {
  net_at(net).add_mem_port(node, slot, write, words, channel);
}

int add_buffer(int net, std::int64_t ports, std::int64_t latency) {
  return net_at(net).add_buffer(ports, latency);
}

void add_buffer_port(int net, int node, int slot, int buffer, std::int64_t fill_words, int channel) {
  net_at(net).add_buffer_port(node, slot, buffer, fill_words, channel);
}

void trace_vcd(const std::string& path) {
  attach_nets();
  g_design->trace_vcd(path);
}

std::string run() {
  attach_nets();
  return g_design->run();
}

std::int64_t clock_cycles() { return g_design->cycles; }

void fresh_simcontext() {
  samfuse::fresh_simcontext();
  g_design = nullptr;
  g_nets.clear();
}

std::vector<std::int64_t> net_info(int net) {
  const Net& n = net_at(net);
  return {n.status(), n.end_cycle(), n.num_nodes(), n.num_fifos()};
}

std::vector<std::int64_t> node_info(int net) {
  const Net& n = net_at(net);
  std::vector<std::int64_t> out;
  out.reserve(std::size_t(n.num_nodes()) * 9);
  for (int i = 0; i < n.num_nodes(); ++i) {
    const Primitive& p = *n.node(i);
    out.insert(out.end(), {p.fires, p.stall_in, p.stall_out, p.done_cycle, p.finished(),
                           p.blocked ? n.fifo_index(p.blocked) : -1, p.blocked_on_input,
                           p.stall_mem, p.peak_entries()});
  }
  return out;
}

std::string node_state(int net, int node) { return net_at(net).node(node)->describe_state(); }

std::vector<std::int64_t> fifo_info(int net) {
  const Net& n = net_at(net);
  std::vector<std::int64_t> out;
  out.reserve(std::size_t(n.num_fifos()) * 10);
  for (int i = 0; i < n.num_fifos(); ++i) {
    const Fifo& f = *n.fifo(i);
    out.insert(out.end(), {std::int64_t(f.depth()), f.writer, f.reader,
                           std::int64_t(f.max_occ), std::int64_t(f.unread()),
                           std::int64_t(f.data_written), std::int64_t(f.full_cycles),
                           std::int64_t(f.empty_cycles), std::int64_t(f.counted_to()),
                           std::int64_t(f.occ_start())});
  }
  return out;
}

const std::vector<std::uint64_t>& trace_words(int net, int fifo) {
  return net_at(net).fifo(fifo)->trace_toks;
}

const std::vector<std::uint32_t>& trace_block_words(int net, int fifo) {
  return net_at(net).fifo(fifo)->trace_block_words;
}

const std::vector<std::int64_t>& trace_cycles(int net, int fifo, int which) {
  const Fifo& f = *net_at(net).fifo(fifo);
  return which == 0 ? f.trace_cycles : f.trace_reads;
}

const std::vector<std::uint32_t>& written_words(int net, int node) {
  Primitive* p = net_at(net).node(node);
  if (auto* w = dynamic_cast<LevelWriter*>(p)) return w->crd;
  return dynamic_cast<ValueWriter&>(*p).vals;
}

const std::vector<std::int64_t>& written_stops(int net, int node, int which) {
  auto& w = writer<LevelWriter>(net, node);
  return which == 0 ? w.stop_pos : w.stop_level;
}

std::string error_text(int net, int part) {
  const StreamError* e = net_at(net).error();
  if (!e) return "";
  return part == 0 ? e->node : part == 1 ? std::string(e->what()) : e->kind_str();
}

std::vector<std::uint64_t> error_words(int net) {
  const StreamError& e = stream_error(net);
  std::vector<std::uint64_t> out{std::uint64_t(e.cycle)};
  out.insert(out.end(), e.toks, e.toks + StreamError::kToks);
  return out;
}

const std::vector<std::uint32_t>& error_block(int net, int token) {
  return stream_error(net).block(token);
}

std::vector<std::int64_t> memory_info(int net) {
  const MemSystem* m = net_at(net).memory();
  if (!m) return {};
  std::vector<std::int64_t> out{m->num_ports(), m->num_channels(), m->max_ack()};
  for (int i = 0; i < m->num_ports(); ++i) out.insert(out.end(), {m->port(i)->bursts,
                                                                  m->port(i)->lines});
  for (int c = 0; c < m->num_channels(); ++c) out.push_back(m->channel_bytes(c));
  out.push_back(m->num_buffers());
  for (int b = 0; b < m->num_buffers(); ++b) {
    const MemBuffer* buf = m->buffer(b);
    out.insert(out.end(), {buf->fill_lines, buf->filled, buf->reads, buf->conflict});
  }
  return out;
}

const std::vector<std::int64_t>& memory_log(int net, int column) {
  const MemLog& log = net_at(net).memory()->log();
  const std::vector<std::int64_t>* cols[] = {&log.cycle, &log.port, &log.line, &log.lines,
                                             &log.write};
  return *cols[column];
}

}  // namespace samfuse_driver

// libsystemc's own main() calls sc_main, so loading libsystemc needs a definition of it
// (cosim/backends/_systemc_load.py, workaround 1); simulations are started by run() instead.
extern "C" int sc_main(int, char**) { return 0; }
