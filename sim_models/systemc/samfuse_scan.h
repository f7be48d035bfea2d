// samfuse SystemC models: stream sources and reference transformers
// (root, level scanners, repeat-signal generator, repeater and value broadcaster, value
// array).
// Behaviour: sim_models/python/_scan.py; firing rules: docs/primitives.md.
#ifndef SAMFUSE_SCAN_H
#define SAMFUSE_SCAN_H

#include <cstdint>
#include <string>
#include <vector>

#include "samfuse_primitive.h"

namespace samfuse {

class Root : public Primitive {
 public:
  SAMFUSE_PORTS("", "ref")
  explicit Root(const std::string& id) : Primitive(id, "root", 0, 1) {}

  bool eval(cycle_t now) override {
    if (Fifo* b = out_[0].blocked()) return wait_out(b);
    fire(now);
    if (!sent_) {
      out_[0].push(data_tok(0), now);
      sent_ = true;
    } else {
      out_[0].push(DONE_TOK, now);
      finish(now);
    }
    return true;
  }

 private:
  bool sent_ = false;
};

// Level scanner. States: IDLE (waiting for a reference), IN_FIBER (emitting), END (the
// fiber is done; the next input decides between S0 and a merged S_{k+1}).
template <class Level>
class Scanner : public Primitive {
 public:
  SAMFUSE_PORTS("ref_in", "crd,ref")
  using Primitive::Primitive;

  bool eval(cycle_t now) override {
    OutPort &oc = out_[0], &orf = out_[1];
    if (state_ == IN_FIBER) {
      if (!crd_usable(now)) return wait_mem();
      if (Fifo* b = space_block()) return wait_out(b);
      fire(now);
      emit(now);
      return true;
    }
    Fifo& inp = *in_[0];
    if (!inp.visible()) return wait_in(&inp);
    tok_t tok = inp.peek();
    if (state_ == IDLE) {
      if (is_data(tok)) {
        std::uint64_t p, e;
        static_cast<Level*>(this)->fiber(payload(tok), p, e);
        if (MemReadPort* seg = read_port(0)) {  // seg[r], seg[r+1]: where the fiber is
          if (!seg_issued_) {
            seg_need_ = 0;
            seg->read(payload(tok), now, &seg_need_);
            seg->read(std::int64_t(payload(tok)) + 1, now, &seg_need_);
            seg_issued_ = true;
          }
          if (seg_need_ > now) return wait_mem();
        }
        if (p == e) {  // empty fiber: only its stop will be emitted
          fire(now);
          inp.pop();
          seg_issued_ = false;
          state_ = END;
          return true;
        }
        p_ = p;  // the first crd's address is known from here on
        if (!crd_usable(now)) return wait_mem();
        if (Fifo* b = space_block()) return wait_out(b);
        fire(now);
        inp.pop();
        seg_issued_ = false;
        p_ = p;
        e_ = e;
        emit(now);
        return true;
      }
      if (Fifo* b = space_block()) return wait_out(b);
      fire(now);
      inp.pop();
      if (is_stop(tok)) {
        tok_t s = stop_tok(payload(tok) + 1);
        oc.push(s, now);
        orf.push(s, now);
      } else if (is_empty(tok)) {
        oc.push(EMPTY_TOK, now);
        orf.push(EMPTY_TOK, now);
        state_ = END;
      } else {  // D
        oc.push(DONE_TOK, now);
        orf.push(DONE_TOK, now);
        finish(now);
      }
      return true;
    }
    // END
    if (Fifo* b = space_block()) return wait_out(b);
    fire(now);
    tok_t s = stop_tok(0);
    if (is_stop(tok)) {
      inp.pop();
      s = stop_tok(payload(tok) + 1);
    }
    oc.push(s, now);
    orf.push(s, now);
    state_ = IDLE;
    return true;
  }

  std::string describe_state() const override {
    static const char* names[] = {"idle", "in fiber", "fiber ended"};
    return names[state_];
  }

 protected:
  enum State { IDLE, IN_FIBER, END };

  [[noreturn]] void bad_ref(std::uint32_t ref, std::uint64_t nfib) const {
    fail("reference " + std::to_string(ref) + " is outside the level's " +
         std::to_string(nfib) + " fibers");
  }

 private:
  Fifo* space_block() const {
    if (Fifo* b = out_[0].blocked()) return b;
    return out_[1].blocked();
  }
  // Push the crd and position of p_, then advance.
  void emit(cycle_t now) {
    out_[0].push(data_tok(static_cast<Level*>(this)->crd_at(p_)), now);
    out_[1].push(data_tok(std::uint32_t(p_)), now);
    ++p_;
    state_ = p_ == e_ ? END : IN_FIBER;
    crd_issued_ = false;
  }
  // Is crd[p_] usable in cycle `now`? Issues its access the first time it is asked.
  bool crd_usable(cycle_t now) {
    MemReadPort* crd = read_port(1);
    if (!crd) return true;
    if (!crd_issued_) {
      crd_need_ = 0;
      crd->read(std::int64_t(p_), now, &crd_need_);
      crd_issued_ = true;
    }
    return crd_need_ <= now;
  }

  State state_ = IDLE;
  std::uint64_t p_ = 0, e_ = 0;
  // memory (compressed levels with a memory system): the pending seg / crd accesses
  bool seg_issued_ = false, crd_issued_ = false;
  cycle_t seg_need_ = 0, crd_need_ = 0;
};

class ScanCompressed : public Scanner<ScanCompressed> {
 public:
  ScanCompressed(const std::string& id, const std::uint32_t* seg, std::size_t nseg,
                 const std::uint32_t* crd, std::size_t ncrd)
      : Scanner(id, "scan_compressed", 1, 2), seg_(seg, seg + nseg), crd_(crd, crd + ncrd) {}

  void fiber(std::uint32_t ref, std::uint64_t& p, std::uint64_t& e) const {
    std::uint64_t nfib = seg_.empty() ? 0 : seg_.size() - 1;
    if (ref >= nfib) bad_ref(ref, nfib);
    p = seg_[ref];
    e = seg_[ref + 1];
  }
  std::uint32_t crd_at(std::uint64_t p) const { return crd_[p]; }

 private:
  std::vector<std::uint32_t> seg_, crd_;
};

class ScanDense : public Scanner<ScanDense> {
 public:
  ScanDense(const std::string& id, std::uint64_t size, std::uint64_t nfib)
      : Scanner(id, "scan_dense", 1, 2), size_(size), nfib_(nfib) {}

  void fiber(std::uint32_t ref, std::uint64_t& p, std::uint64_t& e) {
    if (ref >= nfib_) bad_ref(ref, nfib_);
    base_ = std::uint64_t(ref) * size_;
    p = base_;
    e = base_ + size_;
  }
  std::uint32_t crd_at(std::uint64_t p) const { return std::uint32_t(p - base_); }

 private:
  std::uint64_t size_, nfib_, base_ = 0;
};

class RepSig : public Primitive {
 public:
  SAMFUSE_PORTS("crd", "repsig")
  explicit RepSig(const std::string& id) : Primitive(id, "repsig", 1, 1) {}

  bool eval(cycle_t now) override {
    Fifo& inp = *in_[0];
    if (!inp.visible()) return wait_in(&inp);
    if (Fifo* b = out_[0].blocked()) return wait_out(b);
    fire(now);
    tok_t tok = inp.pop();
    if (is_data(tok) || is_empty(tok)) {
      out_[0].push(REPEAT_TOK, now);
    } else {
      pass(0, tok, now);
    }
    return true;
  }
};

// Repeats the current ref once per R; a repsig stop ends its fiber. ref_in holds one ref
// per fiber of the repsig stream, so its head tells whether a repsig stop closes a fiber
// (a ref: pop it) or an empty parent (a stop). Broadcast (below) is the same module on a
// value stream: the op name, the repeated port's name and its token kind are arguments.
class Repeat : public Primitive {
 public:
  SAMFUSE_PORTS("ref_in,repsig", "ref")
  explicit Repeat(const std::string& id) : Repeat(id, "repeat", "ref_in", KIND_CRD) {}

  bool eval(cycle_t now) override {
    Fifo &ref = *in_[0], &sig = *in_[1];
    if (!ref.visible()) return wait_in(&ref);
    tok_t r = ref.peek();
    if (skip_ >= 0) {
      if (r != stop_tok(std::uint32_t(skip_)))
        fail("expected S" + std::to_string(skip_) + " on " + port_ +
                 " after a merged stop, got {0}",
             r, kind_);
      fire(now);
      ref.pop();
      skip_ = -1;
      return true;
    }
    if (!sig.visible()) return wait_in(&sig);
    if (Fifo* b = out_[0].blocked()) return wait_out(b);
    tok_t s = sig.peek();
    fire(now);
    sig.pop();
    if (is_data(s)) {  // R
      if (!is_data(r) && !is_empty(r))
        fail("repeat signal R but " + port_ + " holds {0}", r, kind_);
      out_[0].push(r, now);
    } else if (is_stop(s)) {
      ref.pop();
      out_[0].push(s, now);
      if (is_stop(r)) {  // an empty parent: no fiber was open
        if (payload(r) + 1 != payload(s))
          fail("repsig {0} against " + port_ + " {1}", s, KIND_REPSIG, r, kind_);
      } else if (payload(s) > 0) {
        skip_ = int(payload(s)) - 1;
      }
    } else if (is_done(s)) {
      if (!is_done(r)) fail("repsig D but " + port_ + " holds {0}", r, kind_);
      ref.pop();
      out_[0].push(DONE_TOK, now);
      finish(now);
    } else {
      fail("unexpected token {0} on repsig", s, KIND_REPSIG);
    }
    return true;
  }

 protected:
  // op: catalogue name; port: the repeated input (for messages); kind: its token kind
  Repeat(const std::string& id, const char* op, const char* port, TokenKind kind)
      : Primitive(id, op, 2, 1), port_(port), kind_(kind) {}

 private:
  int skip_ = -1;  // level of an input stop merged into the last emitted stop
  std::string port_;
  TokenKind kind_;
};

// Repeats the current value once per R: Repeat on a value stream (val_in, repsig -> val).
// It feeds a value computed once per outer coordinate into a deeper loop.
class Broadcast : public Repeat {
 public:
  SAMFUSE_PORTS("val_in,repsig", "val")
  explicit Broadcast(const std::string& id) : Repeat(id, "broadcast", "val_in", KIND_VAL) {}
};

// Value array: val = vals[ref]; N loads as 0 (the zero block); stops and D pass through.
// A blocked tensor's values are blocks of `elems` words (set_block), kept as pinned pool
// blocks so that a load pushes a handle; its memory accesses span the block's lines.
class Array : public Primitive {
 public:
  SAMFUSE_PORTS("ref", "val")
  Array(const std::string& id, const std::uint32_t* vals, std::size_t n)
      : Primitive(id, "array", 1, 1), vals_(vals, vals + n), n_(n) {}

  // The values are blocks of `elems` words (after Net::add: the pool is the net's).
  void set_block(int elems) {
    elems_ = elems;
    n_ = vals_.size() / std::size_t(elems);
    if (elems == 1) return;  // a 1-element value is a scalar token
    handles_.resize(n_);
    for (std::size_t p = 0; p < n_; ++p)
      handles_[p] = pool().pinned(vals_.data() + p * std::size_t(elems), elems);
    std::vector<std::uint32_t> zeros(std::size_t(elems), 0u);
    zero_ = block_tok(pool().pinned(zeros.data(), elems));
  }

  // Loads in flight (docs/timing.md): q > 1 queues up to q - 1 taken refs (with a port).
  void set_load_queue(int q) {
    q_ = q;
    ring_.assign(std::size_t(q), Load{});
  }

  bool eval(cycle_t now) override {
    Fifo& inp = *in_[0];
    MemReadPort* vals = read_port(0);
    if (q_ > 1 && vals) return eval_queued(now, inp, vals);
    if (!inp.visible()) return wait_in(&inp);
    if (vals && is_data(inp.peek())) {
      if (payload(inp.peek()) >= n_) {  // no word to read: fail before firing
        if (Fifo* b = out_[0].blocked()) return wait_out(b);
        fail("reference " + std::to_string(payload(inp.peek())) + " is outside the " +
             std::to_string(n_) + " values");
      }
      if (!issued_) {  // vals[r], once per ref, as soon as the ref is visible
        need_ = 0;
        vals->read_span(std::int64_t(payload(inp.peek())) * elems_, elems_, now, &need_);
        issued_ = true;
      }
      if (need_ > now) return wait_mem();
    }
    if (Fifo* b = out_[0].blocked()) return wait_out(b);
    fire(now);
    issued_ = false;
    emit(inp.pop(), now);
    return true;
  }

 private:
  void emit(tok_t tok, cycle_t now) {
    if (is_data(tok)) {
      if (payload(tok) >= n_)
        fail("reference " + std::to_string(payload(tok)) + " is outside the " +
             std::to_string(n_) + " values");
      out_[0].push(handles_.empty() ? data_tok(vals_[payload(tok)]) : block_tok(handles_[payload(tok)]),
                   now);
    } else if (is_empty(tok)) {
      out_[0].push(zero_, now);  // 0.0f and 0 share the all-zero word
    } else {
      pass(0, tok, now);
    }
  }

  // Two stages joined by q - 1 registers (sim_models/python/_loadq.py): the intake takes
  // the input's head when a register was free at the start of the cycle, its read issued
  // as soon as it is visible; the output emits the oldest taken ref's value once usable,
  // from the cycle it was taken on (the queue falls through).
  // The ring has q slots: the queued refs' and, after them, the head's (its read's need).
  bool eval_queued(cycle_t now, Fifo& inp, MemReadPort* vals) {
    const std::size_t q = std::size_t(q_);
    bool moved = false;
    if (!taken_done_ && inp.visible()) {
      Load& head = ring_[(first_ + std::size_t(count_)) % q];
      tok_t tok = inp.peek();
      if (is_data(tok)) {
        if (payload(tok) >= n_)
          fail("reference " + std::to_string(payload(tok)) + " is outside the " +
               std::to_string(n_) + " values");
        if (!issued_) {
          head.need = 0;
          vals->read_span(std::int64_t(payload(tok)) * elems_, elems_, now, &head.need);
          issued_ = true;
        }
      }
      if (count_ < q_ - 1) {  // a register free at the start of the cycle
        head.tok = inp.pop();
        ++count_;
        issued_ = false;
        taken_done_ = is_done(tok);
        moved = true;
      }
    }
    if (count_ == 0) {
      wait_in(&inp);
      return moved;
    }
    Load& e = ring_[first_];
    if (is_data(e.tok) && e.need > now) {
      wait_mem();
    } else if (Fifo* b = out_[0].blocked()) {
      wait_out(b);
    } else {
      fire(now);
      first_ = (first_ + 1) % q;
      --count_;
      emit(e.tok, now);
      return true;
    }
    return moved;
  }

  struct Load {
    tok_t tok = 0;
    cycle_t need = 0;
  };
  int q_ = 1;
  std::vector<Load> ring_;     // q slots from first_: count_ taken refs, then the head's
  std::size_t first_ = 0;
  int count_ = 0;
  bool taken_done_ = false;
  std::vector<std::uint32_t> vals_;
  std::size_t n_;                       // stored values
  int elems_ = 1;                       // words per value
  std::vector<std::uint32_t> handles_;  // blocks: the pool block of each value
  tok_t zero_ = data_tok(0);
  bool issued_ = false;  // the head ref's vals access is in flight (memory system)
  cycle_t need_ = 0;
};

}  // namespace samfuse

#endif  // SAMFUSE_SCAN_H
