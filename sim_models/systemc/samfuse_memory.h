// samfuse SystemC models: the off-chip memory system of docs/timing.md, "Memory".
//
// A graph's memory ports (numbered by ir.memory_ports) share `channels` first-come-
// first-served channels. Primitives issue accesses while they evaluate a cycle; the bursts
// of that cycle are served at the end of the cycle (MemSystem::commit), port by port in
// port-number order, so the result does not depend on the order in which modules were
// evaluated. A burst issued in cycle a is ready no earlier than a + 2 (one transfer cycle
// plus at least one cycle of latency), so no primitive could use it in cycle a anyway: it
// learns the ready cycle through a "need" register the commit raises.
//
// Read ports keep a prefetch window of at most K lines (a hit beyond its first line slides
// and tops it up; a miss restarts it: K lines when the access continues the stream, one
// line on a jump); write ports combine words into lines and allow K unacknowledged line
// writes.
//
// On-chip buffers (docs/timing.md, "On-chip buffers") serve the reads of their ports in
// the cycle they are made: the fused evaluation visits the nodes in topological order,
// which is port order, so a cycle's accesses reach a buffer in (issue cycle, port) order
// and each learns its service cycle at once (with onchip.latency 0 it may be usable in
// that cycle). The buffer's fill is a burst of its first port at cycle 0.
#ifndef SAMFUSE_MEMORY_H
#define SAMFUSE_MEMORY_H

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "samfuse_token.h"

namespace samfuse {

struct MemConfig {
  std::int64_t bytes_per_cycle, latency, line_bytes, outstanding;
  std::int64_t words_per_line() const { return line_bytes / 4; }
};

// One channel: `free` is the byte-time (cycle * B) from which it is idle.
struct MemChannel {
  std::int64_t free = 0;
  std::int64_t bytes = 0;
  // Serve one line issued at cycle a; returns its ready (read) / ack (write) cycle.
  cycle_t serve(cycle_t a, const MemConfig& c) {
    std::int64_t start = std::max(a * c.bytes_per_cycle, free);
    std::int64_t end = start + c.line_bytes;
    free = end;
    bytes += c.line_bytes;
    return (end + c.bytes_per_cycle - 1) / c.bytes_per_cycle + c.latency;
  }
};

// The burst log (mem_trace): one entry per burst, in service order = (issue cycle, port).
struct MemLog {
  std::vector<std::int64_t> cycle, port, line, lines, write;
};

// An on-chip buffer: `ports` accesses served per cycle, usable `latency` cycles after
// service and not before the fill's last line is ready.
class MemBuffer {
 public:
  static constexpr cycle_t PENDING = std::numeric_limits<cycle_t>::max();
  MemBuffer(std::int64_t ports, std::int64_t latency) : ports_(ports), latency_(latency) {}

  // Serve an access issued at `now` (accesses arrive in (issue cycle, port) order).
  void read(cycle_t now, cycle_t* need) {
    if (now > cycle_) cycle_ = now, used_ = 0;
    if (used_ == ports_) cycle_ += 1, used_ = 0;
    ++used_;
    ++reads;
    conflict += cycle_ - now;
    cycle_t r = cycle_ + latency_;
    if (filled == PENDING) {  // before the fill's commit (cycle 0): raised then
      waiters_.push_back(need);
      r = std::max(r, now + 1);
    } else {
      r = std::max(r, filled);
    }
    *need = std::max(*need, r);
  }
  void on_filled(cycle_t ready) {
    filled = ready;
    for (cycle_t* w : waiters_) *w = std::max(*w, ready);
    waiters_.clear();
  }

  cycle_t filled = 0;  // PENDING while the fill is in flight
  std::int64_t fill_lines = 0, reads = 0, conflict = 0;

 private:
  std::int64_t ports_, latency_;
  cycle_t cycle_ = 0;
  std::int64_t used_ = 0;
  std::vector<cycle_t*> waiters_;
};

class MemSystem;

class MemPort {
 public:
  MemPort(MemSystem* sys, int no, int channel, bool write)
      : no_(no), channel_(channel), write_(write), sys_(sys) {}
  virtual ~MemPort() = default;
  int no() const { return no_; }
  int channel() const { return channel_; }
  bool write() const { return write_; }
  // statistics
  std::int64_t bursts = 0, lines = 0;

  // End of cycle: serve this cycle's bursts on the channel (called in port order).
  void commit(cycle_t now);

 protected:
  struct Burst {
    std::int64_t first, count;
  };
  void issue(std::int64_t first, std::int64_t count);
  virtual void on_ready(std::int64_t line, cycle_t ready) = 0;
  virtual void after_commit() {}

  int no_, channel_;
  bool write_;
  MemSystem* sys_;
  std::vector<Burst> pending_;
};

class MemSystem {
 public:
  MemSystem(int channels, std::int64_t bytes_per_cycle, std::int64_t latency,
            std::int64_t line_bytes, std::int64_t outstanding, bool log)
      : cfg{bytes_per_cycle, latency, line_bytes, outstanding}, channels_(channels),
        log_(log) {}

  MemPort* add_port(std::unique_ptr<MemPort> p) {
    ports_.push_back(std::move(p));
    return ports_.back().get();
  }
  int num_ports() const { return int(ports_.size()); }
  MemPort* port(int i) const { return ports_.at(i).get(); }
  int num_channels() const { return int(channels_.size()); }
  MemBuffer* add_buffer(std::int64_t ports, std::int64_t latency) {
    buffers_.push_back(std::make_unique<MemBuffer>(ports, latency));
    return buffers_.back().get();
  }
  int num_buffers() const { return int(buffers_.size()); }
  const MemBuffer* buffer(int i) const { return buffers_.at(i).get(); }
  MemBuffer* buffer(int i) { return buffers_.at(i).get(); }
  std::int64_t channel_bytes(int c) const { return channels_.at(c).bytes; }
  cycle_t max_ack() const { return max_ack_; }
  const MemLog& log() const { return log_entries_; }

  // Serve every burst issued this cycle, in port order (ports enrol on their first burst).
  void commit(cycle_t now) {
    if (dirty_.empty()) return;
    std::sort(dirty_.begin(), dirty_.end(),
              [](const MemPort* a, const MemPort* b) { return a->no() < b->no(); });
    for (MemPort* p : dirty_) p->commit(now);
    dirty_.clear();
  }

  const MemConfig cfg;

 private:
  friend class MemPort;
  std::vector<MemChannel> channels_;
  std::vector<std::unique_ptr<MemPort>> ports_;
  std::vector<std::unique_ptr<MemBuffer>> buffers_;
  std::vector<MemPort*> dirty_;
  bool log_;
  MemLog log_entries_;
  cycle_t max_ack_ = -1;
};

inline void MemPort::issue(std::int64_t first, std::int64_t count) {
  if (pending_.empty()) sys_->dirty_.push_back(this);
  pending_.push_back(Burst{first, count});
  bursts += 1;
  lines += count;
}

inline void MemPort::commit(cycle_t now) {
  MemChannel& ch = sys_->channels_[channel_];
  for (const Burst& b : pending_) {
    if (sys_->log_) {
      MemLog& l = sys_->log_entries_;
      l.cycle.push_back(now);
      l.port.push_back(no_);
      l.line.push_back(b.first);
      l.lines.push_back(b.count);
      l.write.push_back(write_);
    }
    for (std::int64_t i = 0; i < b.count; ++i) {
      cycle_t ready = ch.serve(now, sys_->cfg);
      if (write_ && ready > sys_->max_ack_) sys_->max_ack_ = ready;
      on_ready(b.first + i, ready);
    }
  }
  pending_.clear();
  after_commit();
}

// A read port: the prefetch window [lo, hi) of at most K lines over an array of n lines.
class MemReadPort : public MemPort {
 public:
  MemReadPort(MemSystem* sys, int no, int channel, std::int64_t n_words)
      : MemPort(sys, no, channel, false), W_(sys->cfg.words_per_line()),
        K_(sys->cfg.outstanding), n_((n_words + W_ - 1) / W_), ring_(std::size_t(K_)) {}

  // Access `words` consecutive words (a block) from word `first`: each line they span in
  // turn, as single-word accesses would; *need becomes the last line's ready cycle.
  virtual void read_span(std::int64_t first, std::int64_t words, cycle_t now, cycle_t* need) {
    read(first, now, need);
    for (std::int64_t l = first / W_ + 1; l <= (first + words - 1) / W_; ++l) read(l * W_, now, need);
  }

  // Access word w at issue cycle `now`; raises *need to the cycle the word is usable
  // from (for a line requested this cycle: to now + 1 now, to its ready cycle at commit).
  virtual void read(std::int64_t w, cycle_t now, cycle_t* need) {
    std::int64_t l = w / W_;
    if (lo_ <= l && l < hi_) {
      if (l > lo_) {
        lo_ = l;
        std::int64_t top = std::min(lo_ + K_, n_);
        if (top > hi_) request(hi_, top);
      }
    } else {  // a miss: continuing the stream refills the window, a jump fetches one line
      std::int64_t end = l == hi_ ? std::min(l + K_, n_) : l + 1;
      lo_ = l;
      request(l, end);
    }
    Slot& s = ring_[std::size_t(l % K_)];
    if (s.ready == PENDING) {
      waiters_.push_back(Waiter{l, need});
      *need = std::max(*need, now + 1);
    } else {
      *need = std::max(*need, s.ready);
    }
  }

 private:
  static constexpr cycle_t PENDING = std::numeric_limits<cycle_t>::max();
  struct Slot {
    std::int64_t line = -1;
    cycle_t ready = 0;
  };
  struct Waiter {
    std::int64_t line;
    cycle_t* need;
  };

  void request(std::int64_t first, std::int64_t end) {
    for (std::int64_t l = first; l < end; ++l) ring_[std::size_t(l % K_)] = Slot{l, PENDING};
    hi_ = end;
    issue(first, end - first);
  }
  void on_ready(std::int64_t line, cycle_t ready) override {
    Slot& s = ring_[std::size_t(line % K_)];
    if (s.line == line) s.ready = ready;
    for (const Waiter& w : waiters_)
      if (w.line == line) *w.need = std::max(*w.need, ready);
  }
  void after_commit() override { waiters_.clear(); }

  std::int64_t W_, K_, n_;
  std::int64_t lo_ = 0, hi_ = 0;  // the window; empty at first
  std::vector<Slot> ring_;        // line l of the window lives in slot l mod K
  std::vector<Waiter> waiters_;   // accesses this cycle to lines requested this cycle
};

// A port whose reads its buffer serves (one access per read, a block's words included);
// the buffer's first port issues the fill, all `lines` of the array, at cycle 0.
class MemBufferPort : public MemReadPort {
 public:
  MemBufferPort(MemSystem* sys, int no, int channel, MemBuffer* buffer, std::int64_t fill_lines)
      : MemReadPort(sys, no, channel, 0), buffer_(buffer) {
    if (fill_lines > 0) {
      buffer_->fill_lines = fill_lines;
      buffer_->filled = MemBuffer::PENDING;
      issue(0, fill_lines);
    }
  }
  void read_span(std::int64_t, std::int64_t, cycle_t now, cycle_t* need) override {
    buffer_->read(now, need);
  }
  void read(std::int64_t, cycle_t now, cycle_t* need) override { buffer_->read(now, need); }

 private:
  void on_ready(std::int64_t line, cycle_t ready) override {
    if (line == buffer_->fill_lines - 1) buffer_->on_filled(ready);
  }
  void after_commit() override {}
  MemBuffer* buffer_;
};

// A write port: words fill a line buffer; a full line (or the final partial one) is a
// one-line burst; write j (from 0) may issue only once write j - K is acknowledged.
class MemWritePort : public MemPort {
 public:
  MemWritePort(MemSystem* sys, int no, int channel)
      : MemPort(sys, no, channel, true), W_(sys->cfg.words_per_line()),
        K_(sys->cfg.outstanding), acks_(std::size_t(K_), 0) {}

  // Would appending one word issue a write?
  bool append_writes() const { return (words_ + 1) % W_ == 0; }
  // Would flushing issue a write (a partly filled line)?
  bool flush_writes() const { return words_ % W_ != 0; }
  // May the port issue its next write in cycle `now`?
  bool slot_free(cycle_t now) const { return writes_ < K_ || acks_[std::size_t(writes_ % K_)] <= now; }
  // May a firing that adds `words` words (or flushes: `done`) issue its writes in cycle
  // `now`? Its L writes wait for the write K back from the last one (docs/blocks.md,
  // "Memory"); when L > K, for every earlier write. For one word: slot_free when it writes.
  bool slot_free_for(std::int64_t words, bool done, cycle_t now) const {
    std::int64_t open = words_ % W_;
    std::int64_t lines = done ? (open > 0 ? 1 : 0) : (open + words) / W_;
    if (!lines) return true;
    std::int64_t must = lines > K_ ? writes_ - 1 : writes_ + lines - 1 - K_;
    return must < 0 || acks_[std::size_t(must % K_)] <= now;
  }

  void append() {
    if (append_writes()) write_line();
    ++words_;
  }
  void flush() {
    if (flush_writes()) write_line();
  }

 private:
  void write_line() {
    issue(words_ / W_, 1);
    ++writes_;
  }
  void on_ready(std::int64_t line, cycle_t ready) override {
    acks_[std::size_t(line % K_)] = ready;  // write j is line j
  }

  std::int64_t W_, K_;
  std::int64_t words_ = 0, writes_ = 0;
  std::vector<cycle_t> acks_;  // ack of write j in slot j mod K
};

}  // namespace samfuse

#endif  // SAMFUSE_MEMORY_H
