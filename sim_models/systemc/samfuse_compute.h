// samfuse SystemC models: value computation (binary and unary ALUs, reducer, sparse
// accumulators). Behaviour: sim_models/python/_compute.py; value semantics:
// samfuse_token.h (= sim_models/python/_values.py); on blocks: samfuse_block.h (=
// sim_models/python/_blocks.py). A value-consuming firing takes `cycles_` cycles.
#ifndef SAMFUSE_COMPUTE_H
#define SAMFUSE_COMPUTE_H

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "samfuse_block.h"
#include "samfuse_primitive.h"

namespace samfuse {

// An accumulator entry (SpAcc, SpAccN): a scalar's bits, or the handle of a block the
// accumulator owns until the drain pushes it. The first value is 0 + v, later ones held + v.
class EntryAdder {
 public:
  explicit EntryAdder(bool fp) : fp_(fp) {}
  void set_elems(int elems) {
    elems_ = elems;
    x_ = Operand(elems);
  }
  std::uint32_t first(tok_t v, BlockPool& pool) {
    if (elems_ == 1) return binary_op(OP_ADD, fp_, 0u, payload(v));
    std::uint32_t h = pool.alloc(elems_);
    add_into(pool.data(h), v, pool, true);
    return h;
  }
  void add(std::uint32_t& held, tok_t v, BlockPool& pool) {
    if (elems_ == 1) held = binary_op(OP_ADD, fp_, held, payload(v));
    else add_into(pool.data(held), v, pool, false);
  }
  tok_t token(std::uint32_t held) const { return elems_ == 1 ? data_tok(held) : block_tok(held); }
  // After pushing an entry's token: the FIFOs hold the block now, not the accumulator.
  void pushed(tok_t t, BlockPool& pool) const {
    if (is_block(t)) pool.unref_later(payload(t));
  }

 private:
  void add_into(std::uint32_t* acc, tok_t v, BlockPool& pool, bool fresh) {
    const std::uint32_t* x = x_.words(v, pool);
    for (int k = 0; k < elems_; ++k) acc[k] = binary_op(OP_ADD, true, fresh ? 0u : acc[k], x[k]);
  }
  bool fp_;
  int elems_ = 1;
  Operand x_;
};

// val = a op b on aligned streams; N counts as 0; stops must match.
class Alu : public Primitive {
 public:
  SAMFUSE_PORTS("a,b", "val")
  Alu(const std::string& id, int op, bool fp) : Primitive(id, "alu", 2, 1), op_(op), fp_(fp) {}

  // The block operator (spec: see BlockOp); without it the ALU is scalar.
  void set_block(const std::int64_t* spec, std::size_t n) {
    bop_.reset(new BlockOp(spec, n));
    xa_ = Operand(bop_->in_elems[0]);
    xb_ = Operand(bop_->in_elems[1]);
  }

  bool eval(cycle_t now) override {
    if (busy(now)) return wait_busy();
    Fifo &a_in = *in_[0], &b_in = *in_[1];
    if (!a_in.visible()) return wait_in(&a_in);
    if (!b_in.visible()) return wait_in(&b_in);
    if (Fifo* blk = out_[0].blocked()) return wait_out(blk);
    tok_t a = a_in.peek(), b = b_in.peek(), res;
    int cycles = 1;
    if (is_stop_or_done(a) || is_stop_or_done(b)) {
      if (a != b) fail("misaligned operands: a holds {0} while b holds {1}", a, KIND_VAL, b, KIND_VAL);
      res = a;
    } else if (bop_) {
      Result r(bop_->out);
      block_binary(*bop_, op_, xa_.words(a, pool()), xb_.words(b, pool()), r.begin(pool()));
      res = r.token();
      cycles = cycles_;
    } else {
      res = data_tok(binary_op(op_, fp_, payload(a), payload(b)));  // N's payload is 0
    }
    fire(now, cycles);
    a_in.pop();
    b_in.pop();
    pass(0, res, now);
    return true;
  }

 private:
  int op_;
  bool fp_;
  std::unique_ptr<BlockOp> bop_;
  Operand xa_, xb_;
};

class Unary : public Primitive {
 public:
  SAMFUSE_PORTS("a", "val")
  Unary(const std::string& id, int op, bool fp, std::uint32_t c_f32, std::uint32_t c_imod,
        std::int64_t c_idiv)
      : Primitive(id, "unary", 1, 1), op_(op), fp_(fp) {
    c_.f32 = c_f32;
    c_.imod = c_imod;
    c_.idiv = c_idiv;
  }

  // Elements of the values it transforms (> 1: blocks, elementwise).
  void set_elems(int elems) {
    elems_ = elems;
    x_ = Operand(elems);
  }

  bool eval(cycle_t now) override {
    if (busy(now)) return wait_busy();
    Fifo& inp = *in_[0];
    if (!inp.visible()) return wait_in(&inp);
    if (Fifo* b = out_[0].blocked()) return wait_out(b);
    tok_t tok = inp.peek();
    bool value = is_data(tok) || is_empty(tok);
    fire(now, value ? cycles_ : 1);
    inp.pop();
    if (value && elems_ > 1) {
      Result r(elems_);
      const std::uint32_t* x = x_.words(tok, pool());
      std::uint32_t* y = r.begin(pool());
      for (int k = 0; k < elems_; ++k) y[k] = unary_op(op_, true, c_, x[k]);
      out_[0].push(r.token(), now);
    } else if (value) {
      out_[0].push(data_tok(unary_op(op_, fp_, c_, payload(tok))), now);
    } else {
      pass(0, tok, now);
    }
    return true;
  }

 private:
  int op_;
  bool fp_;
  UnaryConst c_;
  int elems_ = 1;
  Operand x_;
};

// Removes the innermost level: one value per level-0 fiber. `outer` carries one ref per
// level-0 fiber, so an inner S_k (k>0) is unambiguous: a ref on `outer` means a fiber
// closes (emit the accumulator, pop the ref); S_{k-1} means the parent is done.
class Reduce : public Primitive {
 public:
  SAMFUSE_PORTS("val_in,outer", "val")
  Reduce(const std::string& id, bool is_max, bool fp)
      : Primitive(id, "reduce", 2, 1), op_(is_max ? OP_MAX : OP_ADD), fp_(fp),
        identity_(!is_max ? 0u : fp ? 0xFF800000u : 0x80000000u), acc_(identity_) {}

  // The block operator (spec: see BlockOp): fold each block, then combine elementwise.
  void set_block(const std::int64_t* spec, std::size_t n) {
    bop_.reset(new BlockOp(spec, n));
    x_ = Operand(bop_->in_elems[0]);
    fold_.assign(std::size_t(bop_->out), 0u);
    accs_.assign(std::size_t(bop_->out), identity_);
  }

  bool eval(cycle_t now) override {
    if (busy(now)) return wait_busy();
    Fifo &inp = *in_[0], &outer = *in_[1];
    if (!inp.visible()) return wait_in(&inp);
    tok_t tok = inp.peek();
    if (is_data(tok) || is_empty(tok)) {
      fire(now, cycles_);
      inp.pop();
      if (bop_) {
        block_fold(*bop_, op_ == OP_MAX, x_.words(tok, pool()), fold_.data());
        for (std::size_t o = 0; o < fold_.size(); ++o) accs_[o] = binary_op(op_, true, accs_[o], fold_[o]);
      } else {
        acc_ = binary_op(op_, fp_, acc_, payload(tok));
      }
      return true;
    }
    if (!outer.visible()) return wait_in(&outer);
    if (Fifo* b = out_[0].blocked()) return wait_out(b);
    tok_t o = outer.peek();
    fire(now);
    if (is_data(o) || is_empty(o)) {  // a level-0 fiber closes
      if (!is_stop(tok)) fail("val_in holds {0} while outer holds a ref", tok, KIND_VAL);
      outer.pop();
      out_[0].push(emit(), now);
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
  // The accumulator's token; the accumulator restarts from the identity.
  tok_t emit() {
    if (!bop_) {
      tok_t t = data_tok(acc_);
      acc_ = identity_;
      return t;
    }
    Result r(bop_->out);
    std::copy(accs_.begin(), accs_.end(), r.begin(pool()));
    std::fill(accs_.begin(), accs_.end(), identity_);
    return r.token();
  }

  int op_;
  bool fp_;
  std::uint32_t identity_, acc_;
  std::unique_ptr<BlockOp> bop_;
  Operand x_;
  std::vector<std::uint32_t> fold_, accs_;  // blocks: the folded value, the accumulator
};

// Sparse vector accumulator: sums the level-0 fibers of each level-1 fiber by crd. S0
// ends one partial vector; S_k (k>0) ends the group: the vector is emitted sorted by crd,
// one entry per cycle, then S_{k-1}.
class SpAcc : public Primitive {
 public:
  SAMFUSE_PORTS("crd_in,val_in", "crd,val")
  SpAcc(const std::string& id, bool fp) : Primitive(id, "spacc", 2, 2), add_(fp) {}

  std::int64_t peak_entries() const override { return max_entries_; }
  // Elements of the values it accumulates (> 1: blocks, elementwise).
  void set_elems(int elems) { add_.set_elems(elems); }

  bool eval(cycle_t now) override {
    if (busy(now)) return wait_busy();
    if (drain_pos_ < drain_.size()) {
      if (Fifo* b = space_block()) return wait_out(b);
      fire(now);
      push_entry(drain_[drain_pos_], now);
      ++drain_pos_;
      return true;
    }
    Fifo &ci = *in_[0], &vi = *in_[1];
    if (!ci.visible()) return wait_in(&ci);
    if (!vi.visible()) return wait_in(&vi);
    tok_t c = ci.peek(), v = vi.peek();
    if (is_data(c)) {
      if (is_stop_or_done(v)) fail("crd_in holds {0} while val_in holds {1}", c, KIND_CRD, v, KIND_VAL);
      fire(now, cycles_);
      ci.pop();
      vi.pop();
      accumulate(payload(c), v);
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
    push_entry(drain_[0], now);
    drain_pos_ = 1;
    return true;
  }

 private:
  Fifo* space_block() const {
    if (Fifo* b = out_[0].blocked()) return b;
    return out_[1].blocked();
  }

  void push_entry(const std::pair<tok_t, tok_t>& e, cycle_t now) {
    out_[0].push(e.first, now);
    out_[1].push(e.second, now);
    add_.pushed(e.second, pool());
  }

  void accumulate(std::uint32_t crd, tok_t val) {
    if (crd >= slot_.size()) slot_.resize(std::size_t(crd) + 1, -1);
    std::int64_t& s = slot_[crd];
    if (s < 0) {
      s = std::int64_t(acc_.size());
      acc_.emplace_back(crd, add_.first(val, pool()));  // 0 + v, as in Python
      if (std::int64_t(acc_.size()) > max_entries_) max_entries_ = std::int64_t(acc_.size());
    } else {
      add_.add(acc_[std::size_t(s)].second, val, pool());
    }
  }

  // The accumulated entries sorted by crd, then the closing stop; the accumulator empties.
  void start_drain(tok_t stop) {
    std::sort(acc_.begin(), acc_.end());
    drain_.clear();
    for (const auto& [crd, val] : acc_) {
      drain_.emplace_back(data_tok(crd), add_.token(val));
      slot_[crd] = -1;
    }
    drain_.emplace_back(stop, stop);
    acc_.clear();
  }

  EntryAdder add_;
  std::int64_t max_entries_ = 0;
  std::vector<std::int64_t> slot_;                         // crd -> index in acc_, or -1
  std::vector<std::pair<std::uint32_t, std::uint32_t>> acc_;  // (crd, EntryAdder entry)
  std::vector<std::pair<tok_t, tok_t>> drain_;
  std::size_t drain_pos_ = 0;
};

// Sparse accumulator over L kept levels (spacc2: L = 2, spacc3: L = 3), the multi-level
// form of SpAcc. Inputs nest [outer][crd_{L-1}]...[crd0]; crd_m_in (m >= 1) holds one crd
// per level-(m-1) fiber of crd0_in. Values are summed by (crd_{L-1}, ..., crd0) over the
// outer fiber; when it ends (S_k, k >= L, on crd0_in) the entries are emitted in increasing
// crd order, one step per cycle from the next cycle: an entry writes crd0 and val, and crd_m
// when it opens a level-m fiber; two entries whose crds first differ at level m >= 1 are
// separated by S_{m-1-q} on crd_q (q < m) and S_{m-1} on val; the last step closes with
// the lowered stops (S_{k-1-m} on crd_m, S_{k-1} on val). Port order: crd_{L-1}, ...,
// crd0, val (inputs and outputs).
template <int L>
class SpAccN : public Primitive {
  static_assert(L == 2 || L == 3, "spacc2 and spacc3");

 public:
  SAMFUSE_PORTS(L == 2 ? "crd1_in,crd0_in,val_in" : "crd2_in,crd1_in,crd0_in,val_in",
                L == 2 ? "crd1,crd0,val" : "crd2,crd1,crd0,val")
  SpAccN(const std::string& id, bool fp)
      : Primitive(id, L == 2 ? "spacc2" : "spacc3", L + 1, L + 1), add_(fp) {}

  std::int64_t peak_entries() const override { return max_entries_; }
  // Elements of the values it accumulates (> 1: blocks, elementwise).
  void set_elems(int elems) { add_.set_elems(elems); }

  bool eval(cycle_t now) override {
    if (busy(now)) return wait_busy();
    if (drain_pos_ < drain_.size()) return drain_step(now);
    Fifo& vi = *in_[L];
    if (!crd(0).visible()) return wait_in(&crd(0));
    if (!vi.visible()) return wait_in(&vi);
    for (int m = 1; m < L; ++m)
      if (!crd(m).visible()) return wait_in(&crd(m));
    tok_t h[L];  // h[m]: the head of crd_m_in
    for (int m = 0; m < L; ++m) h[m] = crd(m).peek();
    tok_t v = vi.peek();
    if (is_data(h[0]) || is_empty(h[0])) {
      bool outer_crds = true;
      for (int m = 1; m < L; ++m) outer_crds = outer_crds && is_data(h[m]);
      if (!outer_crds || is_stop_or_done(v)) fail_outer(h, v);
      fire(now, is_empty(h[0]) ? 1 : cycles_);
      crd(0).pop();
      vi.pop();
      if (!is_empty(h[0])) accumulate(h, v);
      return true;
    }
    if (h[0] != v)
      fail("misaligned streams: crd0_in holds {0}, val_in {1}", h[0], KIND_CRD, v, KIND_VAL);
    fire(now);
    if (is_done(h[0])) {
      for (int m = 1; m < L; ++m)
        if (!is_done(h[m]))
          fail("crd0_in ended (D) while " + port(m) + " holds {0}", h[m], KIND_CRD);
      pop_levels(L);
      Step s;
      std::fill(s.tok, s.tok + L + 1, DONE_TOK);
      std::fill(s.has, s.has + L + 1, true);
      drain_.assign(1, s);
      drain_pos_ = 0;
      return true;
    }
    // crd0_in holds S_k: the levels above hold S_{k-1}, S_{k-2}, ... up to a crd, if any
    std::uint32_t k = payload(h[0]);
    int m = 1;
    for (; m < L && !is_data(h[m]); ++m)
      if (!is_stop(h[m]) || payload(h[m]) + std::uint32_t(m) != k)
        fail("misaligned streams: crd0_in holds {0}, " + port(m) + " {1}", h[0], KIND_CRD, h[m],
             KIND_CRD);
    if (m < L) {
      // the fiber of crd h[m] closes; the stops below it end too if they are S_{m-1} .. S0
      crd(m).pop();
      if (k == std::uint32_t(m - 1)) pop_levels(m);
      return true;
    }
    pop_levels(L);
    if (k >= std::uint32_t(L)) start_drain(k);
    return true;
  }

 private:
  using Key = std::array<std::uint32_t, L>;  // crd_{L-1}, ..., crd0
  struct Step {
    tok_t tok[L + 1] = {};  // in output port order: crd_{L-1}, ..., crd0, val
    bool has[L + 1] = {};   // which outputs this step writes
  };

  Fifo& crd(int m) const { return *in_[std::size_t(L - 1 - m)]; }
  static std::string port(int m) { return "crd" + std::to_string(m) + "_in"; }

  // Pops crd0_in, val_in and crd_1_in .. crd_{n-1}_in.
  void pop_levels(int n) {
    in_[L]->pop();
    for (int m = 0; m < n; ++m) crd(m).pop();
  }

  // crd0_in holds a crd or N but a level above does not hold a crd, or val_in a stop.
  [[noreturn]] void fail_outer(const tok_t* h, tok_t v) const {
    std::string format = "crd0_in holds {0} with ";
    for (int m = 1; m < L; ++m) format += port(m) + " {" + std::to_string(m) + "}, ";
    format += "val_in {" + std::to_string(L) + "}";
    if constexpr (L == 2)
      fail(format, h[0], KIND_CRD, h[1], KIND_CRD, v, KIND_VAL);
    else
      fail(format, h[0], KIND_CRD, h[1], KIND_CRD, h[2], KIND_CRD, v, KIND_VAL);
  }

  void accumulate(const tok_t* h, tok_t v) {
    Key key;
    for (int m = 0; m < L; ++m) key[std::size_t(L - 1 - m)] = payload(h[m]);
    auto it = acc_.find(key);
    if (it != acc_.end()) {
      add_.add(it->second, v, pool());
    } else {
      acc_.emplace(key, add_.first(v, pool()));  // 0 + v, as in Python
    }
  }

  bool drain_step(cycle_t now) {
    const Step& s = drain_[drain_pos_];
    for (int o = 0; o <= L; ++o)
      if (s.has[o])
        if (Fifo* b = out_[o].blocked()) return wait_out(b);
    fire(now);
    for (int o = 0; o <= L; ++o)
      if (s.has[o]) out_[o].push(s.tok[o], now);
    if (s.has[L]) add_.pushed(s.tok[L], pool());
    ++drain_pos_;
    if (is_done(s.tok[0])) finish(now);
    return true;
  }

  // The output steps for the accumulated entries, closed by input stop S_k (k >= L).
  void start_drain(std::uint32_t k) {
    if (std::int64_t(acc_.size()) > max_entries_) max_entries_ = std::int64_t(acc_.size());
    drain_.clear();
    const Key* prev = nullptr;
    for (const auto& [key, val] : acc_) {
      int opens = L - 1;  // the highest level whose crd this entry writes
      if (prev) {
        int d = 0;
        while ((*prev)[std::size_t(d)] == key[std::size_t(d)]) ++d;
        opens = L - 1 - d;
        if (opens >= 1) {  // the fibers below level `opens` close
          Step sep;
          for (int q = 0; q < opens; ++q) set(sep, q, stop_tok(std::uint32_t(opens - 1 - q)));
          sep.tok[L] = stop_tok(std::uint32_t(opens - 1));
          sep.has[L] = true;
          drain_.push_back(sep);
        }
      }
      Step e;
      for (int q = 0; q <= opens; ++q) set(e, q, data_tok(key[std::size_t(L - 1 - q)]));
      e.tok[L] = add_.token(val);
      e.has[L] = true;
      drain_.push_back(e);
      prev = &key;
    }
    Step last;
    for (int q = 0; q < L; ++q) set(last, q, stop_tok(k - 1 - std::uint32_t(q)));
    last.tok[L] = stop_tok(k - 1);
    last.has[L] = true;
    drain_.push_back(last);
    drain_pos_ = 0;
    acc_.clear();
  }

  // Step `s` writes `t` on crd_q.
  static void set(Step& s, int q, tok_t t) {
    s.tok[L - 1 - q] = t;
    s.has[L - 1 - q] = true;
  }

  EntryAdder add_;
  std::int64_t max_entries_ = 0;  // the most entries held when a group closed
  std::map<Key, std::uint32_t> acc_;  // crds -> EntryAdder entry
  std::vector<Step> drain_;
  std::size_t drain_pos_ = 0;
};

using SpAcc2 = SpAccN<2>;
using SpAcc3 = SpAccN<3>;

}  // namespace samfuse

#endif  // SAMFUSE_COMPUTE_H
