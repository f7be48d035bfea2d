// samfuse SystemC models: value computation (binary and unary ALUs, reducer, sparse
// vector accumulator). Behaviour: sim_models/python/_compute.py; value semantics:
// samfuse_token.h (= sim_models/python/_values.py).
#ifndef SAMFUSE_COMPUTE_H
#define SAMFUSE_COMPUTE_H

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "samfuse_primitive.h"

namespace samfuse {

// val = a op b on aligned streams; N counts as 0; stops must match.
class Alu : public Primitive {
 public:
  static const char* inputs() { return "a,b"; }
  static const char* outputs() { return "val"; }
  Alu(const std::string& id, int op, bool fp) : Primitive(id, "alu", 2, 1), op_(op), fp_(fp) {}

  bool eval(cycle_t now) override {
    Fifo &a_in = *in_[0], &b_in = *in_[1];
    if (!a_in.visible()) return wait_in(&a_in);
    if (!b_in.visible()) return wait_in(&b_in);
    if (Fifo* blk = out_[0].blocked()) return wait_out(blk);
    tok_t a = a_in.peek(), b = b_in.peek(), res;
    if (is_stop_or_done(a) || is_stop_or_done(b)) {
      if (a != b) fail("misaligned operands: a holds {0} while b holds {1}", a, KIND_VAL, b, KIND_VAL);
      res = a;
    } else {
      res = data_tok(binary_op(op_, fp_, payload(a), payload(b)));  // N's payload is 0
    }
    fire(now);
    a_in.pop();
    b_in.pop();
    out_[0].push(res, now);
    if (is_done(res)) finish(now);
    return true;
  }

 private:
  int op_;
  bool fp_;
};

class Unary : public Primitive {
 public:
  static const char* inputs() { return "a"; }
  static const char* outputs() { return "val"; }
  Unary(const std::string& id, int op, bool fp, std::uint32_t c_f32, std::uint32_t c_imod,
        std::int64_t c_idiv)
      : Primitive(id, "unary", 1, 1), op_(op), fp_(fp) {
    c_.f32 = c_f32;
    c_.imod = c_imod;
    c_.idiv = c_idiv;
  }

  bool eval(cycle_t now) override {
    Fifo& inp = *in_[0];
    if (!inp.visible()) return wait_in(&inp);
    if (Fifo* b = out_[0].blocked()) return wait_out(b);
    fire(now);
    tok_t tok = inp.pop();
    if (is_data(tok) || is_empty(tok)) {
      out_[0].push(data_tok(unary_op(op_, fp_, c_, payload(tok))), now);
    } else {
      out_[0].push(tok, now);
      if (is_done(tok)) finish(now);
    }
    return true;
  }

 private:
  int op_;
  bool fp_;
  UnaryConst c_;
};

// Removes the innermost level: one value per level-0 fiber. `outer` carries one ref per
// level-0 fiber, so an inner S_k (k>0) is unambiguous: a ref on `outer` means a fiber
// closes (emit the accumulator, pop the ref); S_{k-1} means the parent is done.
class Reduce : public Primitive {
 public:
  static const char* inputs() { return "val_in,outer"; }
  static const char* outputs() { return "val"; }
  Reduce(const std::string& id, bool is_max, bool fp)
      : Primitive(id, "reduce", 2, 1), op_(is_max ? OP_MAX : OP_ADD), fp_(fp),
        identity_(!is_max ? 0u : fp ? 0xFF800000u : 0x80000000u), acc_(identity_) {}

  bool eval(cycle_t now) override {
    Fifo &inp = *in_[0], &outer = *in_[1];
    if (!inp.visible()) return wait_in(&inp);
    tok_t tok = inp.peek();
    if (is_data(tok) || is_empty(tok)) {
      fire(now);
      inp.pop();
      acc_ = binary_op(op_, fp_, acc_, payload(tok));
      return true;
    }
    if (!outer.visible()) return wait_in(&outer);
    if (Fifo* b = out_[0].blocked()) return wait_out(b);
    tok_t o = outer.peek();
    fire(now);
    if (is_data(o) || is_empty(o)) {  // a level-0 fiber closes
      if (!is_stop(tok)) fail("val_in holds {0} while outer holds a ref", tok, KIND_VAL);
      outer.pop();
      out_[0].push(data_tok(acc_), now);
      acc_ = identity_;
      if (payload(tok) == 0) inp.pop();
    } else if ((is_stop(tok) && is_stop(o) && payload(o) + 1 == payload(tok)) ||
               (is_done(tok) && is_done(o))) {
      outer.pop();
      inp.pop();
      out_[0].push(o, now);
      if (is_done(tok)) finish(now);
    } else {
      fail("misaligned streams: val_in holds {0}, outer holds {1}", tok, KIND_VAL, o, KIND_CRD);
    }
    return true;
  }

 private:
  int op_;
  bool fp_;
  std::uint32_t identity_, acc_;
};

// Sparse vector accumulator: sums the level-0 fibers of each level-1 fiber by crd. S0
// ends one partial vector; S_k (k>0) ends the group: the vector is emitted sorted by crd,
// one entry per cycle, then S_{k-1}.
class SpAcc : public Primitive {
 public:
  static const char* inputs() { return "crd_in,val_in"; }
  static const char* outputs() { return "crd,val"; }
  SpAcc(const std::string& id, bool fp) : Primitive(id, "spacc", 2, 2), fp_(fp) {}

  std::int64_t peak_entries() const override { return max_entries_; }

  bool eval(cycle_t now) override {
    if (drain_pos_ < drain_.size()) {
      if (Fifo* b = space_block()) return wait_out(b);
      fire(now);
      out_[0].push(drain_[drain_pos_].first, now);
      out_[1].push(drain_[drain_pos_].second, now);
      ++drain_pos_;
      return true;
    }
    Fifo &ci = *in_[0], &vi = *in_[1];
    if (!ci.visible()) return wait_in(&ci);
    if (!vi.visible()) return wait_in(&vi);
    tok_t c = ci.peek(), v = vi.peek();
    if (is_data(c)) {
      if (is_stop_or_done(v)) fail("crd_in holds {0} while val_in holds {1}", c, KIND_CRD, v, KIND_VAL);
      fire(now);
      ci.pop();
      vi.pop();
      accumulate(payload(c), payload(v));
      return true;
    }
    if (is_empty(c)) {
      fire(now);
      ci.pop();
      vi.pop();
      return true;
    }
    if (c != v) fail("misaligned streams: crd_in holds {0}, val_in holds {1}", c, KIND_CRD, v, KIND_VAL);
    if (is_stop(c) && payload(c) == 0) {
      fire(now);
      ci.pop();
      vi.pop();
      return true;
    }
    if (Fifo* b = space_block()) return wait_out(b);
    fire(now);
    ci.pop();
    vi.pop();
    if (is_done(c)) {
      out_[0].push(DONE_TOK, now);
      out_[1].push(DONE_TOK, now);
      finish(now);
      return true;
    }
    start_drain(stop_tok(payload(c) - 1));
    out_[0].push(drain_[0].first, now);
    out_[1].push(drain_[0].second, now);
    drain_pos_ = 1;
    return true;
  }

 private:
  Fifo* space_block() const {
    if (Fifo* b = out_[0].blocked()) return b;
    return out_[1].blocked();
  }

  void accumulate(std::uint32_t crd, std::uint32_t val) {
    if (crd >= slot_.size()) slot_.resize(std::size_t(crd) + 1, -1);
    std::int64_t& s = slot_[crd];
    if (s < 0) {
      s = std::int64_t(acc_.size());
      acc_.emplace_back(crd, binary_op(OP_ADD, fp_, 0u, val));  // 0 + v, as in Python
      if (std::int64_t(acc_.size()) > max_entries_) max_entries_ = std::int64_t(acc_.size());
    } else {
      acc_[std::size_t(s)].second = binary_op(OP_ADD, fp_, acc_[std::size_t(s)].second, val);
    }
  }

  // The accumulated entries sorted by crd, then the closing stop; the accumulator empties.
  void start_drain(tok_t stop) {
    std::sort(acc_.begin(), acc_.end());
    drain_.clear();
    for (const auto& [crd, val] : acc_) {
      drain_.emplace_back(data_tok(crd), data_tok(val));
      slot_[crd] = -1;
    }
    drain_.emplace_back(stop, stop);
    acc_.clear();
  }

  bool fp_;
  std::int64_t max_entries_ = 0;
  std::vector<std::int64_t> slot_;                         // crd -> index in acc_, or -1
  std::vector<std::pair<std::uint32_t, std::uint32_t>> acc_;  // (crd, value bits)
  std::vector<std::pair<tok_t, tok_t>> drain_;
  std::size_t drain_pos_ = 0;
};

// Sparse matrix accumulator, the two-level form of SpAcc. Inputs nest [outer][crd1][crd0];
// crd1_in holds one crd per level-0 fiber. Values are summed by (crd1, crd0) over the
// outer fiber; when it ends (S_k, k>1, on crd0_in) the matrix is emitted row by row: a
// row's crd1 goes out with its first entry, rows are separated by S0 on crd0/val and the
// last one closes with the lowered stops (S_{k-2} on crd1, S_{k-1} on crd0 and val).
class SpAcc2 : public Primitive {
 public:
  static const char* inputs() { return "crd1_in,crd0_in,val_in"; }
  static const char* outputs() { return "crd1,crd0,val"; }
  SpAcc2(const std::string& id, bool fp) : Primitive(id, "spacc2", 3, 3), fp_(fp) {}

  std::int64_t peak_entries() const override { return max_entries_; }

  bool eval(cycle_t now) override {
    if (drain_pos_ < drain_.size()) return drain_step(now);
    Fifo &c1 = *in_[0], &c0 = *in_[1], &vi = *in_[2];
    for (Fifo* f : {&c0, &vi, &c1})
      if (!f->visible()) return wait_in(f);
    tok_t j = c0.peek(), v = vi.peek(), i = c1.peek();
    bool i_crd = is_data(i);
    if (is_data(j) || is_empty(j)) {
      if (!i_crd || is_stop_or_done(v))
        fail("crd0_in holds {0} with crd1_in {1}, val_in {2}", j, KIND_CRD, i, KIND_CRD, v,
             KIND_VAL);
      fire(now);
      c0.pop();
      vi.pop();
      if (!is_empty(j)) {
        std::map<std::uint32_t, std::uint32_t>& row = acc_[payload(i)];
        auto it = row.find(payload(j));
        std::uint32_t old = it == row.end() ? 0u : it->second;  // 0 + v, as in Python
        if (it == row.end() && ++entries_ > max_entries_) max_entries_ = entries_;
        row[payload(j)] = binary_op(OP_ADD, fp_, old, payload(v));
      }
      return true;
    }
    if (j != v) fail("misaligned streams: crd0_in holds {0}, val_in {1}", j, KIND_CRD, v, KIND_VAL);
    fire(now);
    if (is_done(j)) {
      if (!is_done(i)) fail("crd0_in ended (D) while crd1_in holds {0}", i, KIND_CRD);
      c0.pop();
      vi.pop();
      c1.pop();
      drain_.assign(1, Step{{DONE_TOK, DONE_TOK, DONE_TOK}, {true, true, true}});
      drain_pos_ = 0;
      return true;
    }
    if (i_crd) {  // a level-0 fiber closes: its crd1 is done
      c1.pop();
      if (payload(j) == 0) {
        c0.pop();
        vi.pop();
      }
      return true;
    }
    if (payload(j) == 0 || !is_stop(i) || payload(i) + 1 != payload(j))
      fail("misaligned streams: crd0_in holds {0}, crd1_in {1}", j, KIND_CRD, i, KIND_CRD);
    c0.pop();
    vi.pop();
    c1.pop();
    if (payload(j) >= 2) start_drain(payload(j));
    return true;
  }

 private:
  struct Step {
    tok_t tok[3];  // crd1, crd0, val
    bool has[3];   // which outputs this step writes
  };

  bool drain_step(cycle_t now) {
    const Step& s = drain_[drain_pos_];
    for (int o = 0; o < 3; ++o)
      if (s.has[o])
        if (Fifo* b = out_[o].blocked()) return wait_out(b);
    fire(now);
    for (int o = 0; o < 3; ++o)
      if (s.has[o]) out_[o].push(s.tok[o], now);
    ++drain_pos_;
    if (is_done(s.tok[0])) finish(now);
    return true;
  }

  // The output steps for the accumulated matrix, closed by input stop S_k (k >= 2).
  void start_drain(std::uint32_t k) {
    drain_.clear();
    std::size_t r = 0;
    for (const auto& [i, row] : acc_) {
      bool first = true;
      for (const auto& [j, v] : row) {
        drain_.push_back(Step{{data_tok(i), data_tok(j), data_tok(v)}, {first, true, true}});
        first = false;
      }
      if (++r < acc_.size())
        drain_.push_back(Step{{0, stop_tok(0), stop_tok(0)}, {false, true, true}});
    }
    drain_.push_back(Step{{stop_tok(k - 2), stop_tok(k - 1), stop_tok(k - 1)}, {true, true, true}});
    drain_pos_ = 0;
    acc_.clear();
    entries_ = 0;
  }

  bool fp_;
  std::int64_t entries_ = 0, max_entries_ = 0;  // entries in acc_, and the most at once
  std::map<std::uint32_t, std::map<std::uint32_t, std::uint32_t>> acc_;  // crd1 -> crd0 -> val
  std::vector<Step> drain_;
  std::size_t drain_pos_ = 0;
};

}  // namespace samfuse

#endif  // SAMFUSE_COMPUTE_H
