// samfuse SystemC models: the contract FIFO of docs/timing.md.
//
// A synchronous FIFO with registered empty_n / full_n. During a cycle the reader sees only
// tokens written in earlier cycles (`visible`), the writer sees only the start-of-cycle
// occupancy (`has_space`); `commit` at the end of the cycle updates both registers. This
// is the evaluate-then-commit scheme of a clocked RTL FIFO, done on plain C++ objects so
// that a cycle costs a few loads and stores instead of sc_signal updates.
// Only the edges touched in a cycle are committed (they put themselves on a dirty list).
// A block token (samfuse_block.h) holds a pool reference while it is in the FIFO.
// Timing knobs (docs/timing.md, "Latency, II and start-up"): `depth` is the capacity the
// elaboration gives the edge; a visibility delay `vis` > 1 (writer latency - 1 + read
// latency) keeps a pushed token invisible until `vis` cycles after its push, while it
// holds its slot from the push. The FIFO report counts the cycles that start full or
// empty, at each commit for the cycles since the previous one.
#ifndef SAMFUSE_FIFO_H
#define SAMFUSE_FIFO_H

#include <cstdint>
#include <string>
#include <vector>

#include "samfuse_block.h"
#include "samfuse_token.h"

namespace samfuse {

class Fifo {
 public:
  static constexpr std::size_t kInitialCap = 64;

  // depth <= 0 means unbounded; `clock` is the current cycle (read cycles in traces).
  Fifo(std::string name, long depth, bool trace, std::vector<Fifo*>* dirty,
       const cycle_t* clock, BlockPool* pool)
      : name_(std::move(name)), depth_(depth), trace_(trace), dirty_list_(dirty),
        clock_(clock), pool_(pool) {
    // Start small and grow on demand (push doubles a full buffer): a declared depth is a
    // bound on occupancy, not an allocation, so depth 2^40 costs what the run fills.
    std::size_t cap = 4;
    while (depth > 0 && cap < std::size_t(depth) && cap < kInitialCap) cap <<= 1;
    buf_.resize(cap);
    mask_ = cap - 1;
  }

  // ---- reader side (start-of-cycle view) ----
  bool visible() const {
    return head_ != vis_tail_ && (vis_ == 1 || wcyc_[head_ & mask_] + vis_ <= *clock_);
  }
  tok_t peek() const { return buf_[head_ & mask_]; }
  tok_t pop() {
    popped_ = true;
    out_tok_ = buf_[head_ & mask_];
    ++head_;
    if (is_block(out_tok_)) pool_->unref_later(payload(out_tok_));
    if (trace_) trace_reads.push_back(*clock_);
    touch();
    return out_tok_;
  }

  // ---- writer side ----
  bool has_space() const { return full_n_; }
  void push(tok_t t, cycle_t now) {
    if (tail_ - head_ == buf_.size()) grow();
    buf_[tail_ & mask_] = t;
    if (vis_ != 1) {
      wcyc_[tail_ & mask_] = now;
      if (now + vis_ > *settle_) *settle_ = now + vis_;  // in flight: not a deadlock
    }
    ++tail_;
    pushed_ = true;
    in_tok_ = t;
    if (tag_of(t) == 0) ++data_written;  // the work counters' data tokens (ir/_work.py)
    if (is_block(t)) pool_->ref(payload(t));
    if (trace_) {
      trace_toks.push_back(t);
      trace_cycles.push_back(now);
      if (is_block(t)) {  // the words as they are now: the handle is reused once freed
        const std::uint32_t* w = pool_->data(payload(t));
        trace_block_words.insert(trace_block_words.end(), w, w + pool_->elems(payload(t)));
      }
    }
    touch();
  }

  // ---- end of cycle: the registers take their next values ----
  void commit() {
    if (pushed_ || popped_) count_cycles(*clock_ + 1);
    std::uint64_t occ = tail_ - head_;
    if (occ > max_occ) max_occ = occ;
    vis_tail_ = tail_;
    full_n_ = depth_ <= 0 || occ < std::uint64_t(depth_);
    pushed_ = popped_ = false;
    dirty_ = false;
  }

  // ---- handshake view of the current cycle (for waveform mirrors) ----
  bool empty_n_reg() const { return head_ - (popped_ ? 1 : 0) != vis_tail_; }
  bool full_n_reg() const { return full_n_; }
  bool pushed() const { return pushed_; }
  bool popped() const { return popped_; }
  tok_t din() const { return in_tok_; }
  tok_t dout() const { return popped_ ? out_tok_ : (visible() ? peek() : 0); }

  // Give the edge a visibility delay > 1; `settle` is the net's last cycle with a token
  // in flight (a net whose only activity is tokens in flight is not deadlocked).
  void set_visibility(int vis, cycle_t* settle) {
    vis_ = vis;
    settle_ = settle;
    wcyc_.resize(buf_.size());
  }
  // The FIFO report up to the start of cycle `end` (exclusive): cycles starting full
  // (occupancy = capacity) and empty (occupancy 0).
  void count_cycles(cycle_t end) {
    cycle_t n = end - counted_to_;
    if (n <= 0) return;
    if (depth_ > 0 && occ_start_ == std::uint64_t(depth_)) full_cycles += std::uint64_t(n);
    if (occ_start_ == 0) empty_cycles += std::uint64_t(n);
    counted_to_ = end;
    occ_start_ = tail_ - head_;
  }

  cycle_t counted_to() const { return counted_to_; }
  std::uint64_t occ_start() const { return occ_start_; }

  const std::string& name() const { return name_; }
  long depth() const { return depth_; }
  std::uint64_t unread() const { return tail_ - head_; }
  std::uint64_t written() const { return tail_; }

  int writer = -1;  // node indices, for deadlock reports
  int reader = -1;
  std::uint64_t max_occ = 0;
  std::uint64_t full_cycles = 0, empty_cycles = 0;
  // data tokens written (tag 0: a value, crd or ref; on a repsig stream also R, which no
  // counted edge carries)
  std::uint64_t data_written = 0;
  std::vector<tok_t> trace_toks;
  std::vector<cycle_t> trace_cycles;  // write cycle of each token
  std::vector<cycle_t> trace_reads;   // read cycle of each token read
  std::vector<std::uint32_t> trace_block_words;  // the words of each block token, in order

 private:
  void touch() {
    if (!dirty_) {
      dirty_ = true;
      dirty_list_->push_back(this);
    }
  }
  void grow() {
    std::vector<tok_t> bigger(buf_.size() * 2);
    for (std::uint64_t i = head_; i != tail_; ++i) bigger[i & (bigger.size() - 1)] = buf_[i & mask_];
    if (vis_ != 1) {
      std::vector<cycle_t> later(bigger.size());
      for (std::uint64_t i = head_; i != tail_; ++i) later[i & (later.size() - 1)] = wcyc_[i & mask_];
      wcyc_.swap(later);
    }
    buf_.swap(bigger);
    mask_ = buf_.size() - 1;
  }

  std::string name_;
  long depth_;
  bool trace_;
  std::vector<Fifo*>* dirty_list_;
  const cycle_t* clock_;
  BlockPool* pool_;
  std::vector<tok_t> buf_;
  std::uint64_t mask_ = 0;
  std::uint64_t head_ = 0, tail_ = 0;  // absolute read / write counts
  std::uint64_t vis_tail_ = 0;         // register: tokens written before this cycle
  bool full_n_ = true;                 // register: space at the start of this cycle
  int vis_ = 1;                        // cycles from a push to the token being visible
  std::vector<cycle_t> wcyc_;          // push cycle of each token (only when vis_ > 1)
  cycle_t* settle_ = nullptr;
  cycle_t counted_to_ = 0;             // the FIFO report covers cycles before this one
  std::uint64_t occ_start_ = 0;        // occupancy at the start of cycle counted_to_
  bool dirty_ = false, pushed_ = false, popped_ = false;
  tok_t in_tok_ = 0, out_tok_ = 0;
};

// An output port: zero edges (tokens are discarded), one edge, or a fork (every edge needs
// space for a push; each edge is its own FIFO).
class OutPort {
 public:
  void bind(Fifo* f) { fifos_.push_back(f); }
  // The first edge without space, or nullptr when a push may happen this cycle.
  Fifo* blocked() const {
    for (Fifo* f : fifos_)
      if (!f->has_space()) return f;
    return nullptr;
  }
  void push(tok_t t, cycle_t now) {
    for (Fifo* f : fifos_) f->push(t, now);
  }
  std::size_t size() const { return fifos_.size(); }

 private:
  std::vector<Fifo*> fifos_;
};

}  // namespace samfuse

#endif  // SAMFUSE_FIFO_H
