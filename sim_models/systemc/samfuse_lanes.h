// samfuse SystemC models: parallel lanes (docs/parallel.md) — one lane's share of a level
// (lane_split by coordinate, position_split by position) and the ordered merge of two lanes'
// outputs at one level (lane_merge) or two (lane_merge2), or their lane reductions that add
// a coordinate both lanes hold (lane_combine, lane_combine2). Behaviour and timing: docs/primitives.md; sim_models/python/_lanes.py.
// Every lane keeps every stop, so the lanes' streams have the same fibers; within a fiber
// their coordinates are disjoint, so a merge restores coordinate order by comparing heads.
// Heads and output space are checked in the Python actor's order, so a stall is charged
// to (and a deadlock report names) the same FIFO.
#ifndef SAMFUSE_LANES_H
#define SAMFUSE_LANES_H

#include <cstdint>
#include <initializer_list>
#include <string>

#include "samfuse_primitive.h"

namespace samfuse {

// The sum of two lanes' partial values (N counts as zero), in the graph's dtype.
inline tok_t combine_values(bool fp, tok_t a, tok_t b) {
  return data_tok(binary_op(OP_ADD, fp, is_empty(a) ? 0u : payload(a), is_empty(b) ? 0u : payload(b)));
}

// Merge helpers shared by the lane merges. `combines` (the catalogue's flag: lane_combine,
// lane_combine2) makes a merge a lane reduction: a crd both lanes hold passes once with the
// sum of the two values (fp: binary32, else int32).
class LanePrimitive : public Primitive {
 protected:
  LanePrimitive(const std::string& id, const char* op, int n_in, int n_out,
                bool combines = false, bool fp = false)
      : Primitive(id, op, n_in, n_out), combines_(combines), fp_(fp) {}
  enum Pick { PICK_A, PICK_B, PICK_CONTROL, PICK_BOTH };

  // The first of `fifos` whose head is not visible, or nullptr.
  static Fifo* missing(std::initializer_list<Fifo*> fifos) {
    for (Fifo* f : fifos)
      if (!f->visible()) return f;
    return nullptr;
  }

  // The lane whose head crd comes next, or PICK_CONTROL when both hold the same stop or D;
  // any other pair is a malformed pair of lanes.
  Pick pick(tok_t a, tok_t b, const char* name_a, const char* name_b) const {
    bool a_crd = is_data(a), b_crd = is_data(b);
    if (a_crd && b_crd) {
      if (a == b)
        fail("both lanes hold coordinate {0}: lanes must partition the coordinates", a,
             KIND_CRD);
      return a < b ? PICK_A : PICK_B;
    }
    if (a_crd && is_stop(b)) return PICK_A;
    if (b_crd && is_stop(a)) return PICK_B;
    if (is_stop_or_done(a) && a == b) return PICK_CONTROL;
    fail(std::string("misaligned lanes: ") + name_a + " holds {0} while " + name_b +
             " holds {1}",
         a, KIND_CRD, b, KIND_CRD);
  }

  // pick(), and PICK_BOTH for a crd both lanes hold when the merge combines.
  Pick order(tok_t a, tok_t b, const char* name_a, const char* name_b) const {
    if (combines_ && is_data(a) && a == b) return PICK_BOTH;
    return pick(a, b, name_a, name_b);
  }

  // One firing of a one-level ordered merge of lanes (ca, va) and (cb, vb) onto (oc, ov)
  // whose crd heads a, b are visible: the head of `side` passes with its value (PICK_BOTH:
  // the values added), or (PICK_CONTROL) their aligned stop or D passes once.
  bool merge_firing(cycle_t now, Fifo& ca, Fifo& va, Fifo& cb, Fifo& vb, OutPort& oc,
                    OutPort& ov, tok_t a, tok_t b, Pick side) {
    const bool take_a = side != PICK_B, take_b = side != PICK_A;
    if (take_a && !va.visible()) return wait_in(&va);
    if (take_b && !vb.visible()) return wait_in(&vb);
    tok_t tok = side == PICK_B ? b : a, val;
    if (side == PICK_CONTROL) {
      check_stop(va.peek(), KIND_VAL, a, "val_a");
      check_stop(vb.peek(), KIND_VAL, a, "val_b");
      val = a;
    } else {
      if (take_a) check_value(va.peek(), tok, "val_a");
      if (take_b) check_value(vb.peek(), tok, "val_b");
      val = side == PICK_BOTH ? combine_values(fp_, va.peek(), vb.peek())
                              : (take_a ? va : vb).peek();
    }
    if (Fifo* f = oc.blocked()) return wait_out(f);
    if (Fifo* f = ov.blocked()) return wait_out(f);
    fire(now);
    if (take_a) {
      ca.pop();
      va.pop();
    }
    if (take_b) {
      cb.pop();
      vb.pop();
    }
    oc.push(tok, now);
    ov.push(val, now);
    if (is_done(tok)) finish(now);
    return true;
  }

  // `tok` (of kind `kind`, on `name`) must be the control token `want` its crds hold.
  void check_stop(tok_t tok, char kind, tok_t want, const std::string& name) const {
    if (tok != want)
      fail(name + " holds {0} where its coordinates hold {1}", tok, kind, want, KIND_CRD);
  }

  // A value aligned with crd `crd` must not be a stop or D.
  void check_value(tok_t val, tok_t crd, const std::string& name) const {
    if (is_stop_or_done(val))
      fail(name + " holds {0} where its coordinates hold {1}", val, KIND_VAL, crd, KIND_CRD);
  }

  const bool combines_;
  const bool fp_;
};

// A lane's filter of a (crd, ref) stream (lane_split, position_split): each firing needs
// the head of every input (crd_in, ref_in, then what the decision reads) and pops them
// all; the pair passes when keeps() says so, stops and D always (the heads must then be
// the same control token). One firing per input tuple, kept or not; a dropped pair needs
// no output space.
class Split : public LanePrimitive {
 public:
  bool eval(cycle_t now) override {
    tok_t heads[3];
    const std::size_t n = in_.size();
    for (std::size_t k = 0; k < n; ++k) {
      if (!in_[k]->visible()) return wait_in(in_[k]);
      heads[k] = in_[k]->peek();
    }
    bool control = false, same = true;
    for (std::size_t k = 0; k < n; ++k) {
      control = control || is_stop_or_done(heads[k]);
      same = same && heads[k] == heads[0];
    }
    if (control && (!same || !is_stop_or_done(heads[0]))) misaligned(heads);
    bool keep = control || keeps(heads);
    if (keep) {
      if (Fifo* b = out_[0].blocked()) return wait_out(b);
      if (Fifo* b = out_[1].blocked()) return wait_out(b);
    }
    fire(now);
    for (std::size_t k = 0; k < n; ++k) in_[k]->pop();
    if (keep) {
      out_[0].push(heads[0], now);
      out_[1].push(heads[1], now);
    }
    if (is_done(heads[0])) finish(now);
    return true;
  }

 protected:
  using LanePrimitive::LanePrimitive;
  // Whether the data pair at these heads (one per input) is kept.
  virtual bool keeps(const tok_t* heads) const = 0;
  // Fails with the primitive's message: the heads hold a control token but not all the same.
  virtual void misaligned(const tok_t* heads) const = 0;
};

// Keeps a coordinate when crd mod lanes == lane and lo <= crd < hi (an N crd when lane == 0
// and lo == 0). (lane < lanes and lo <= hi are checked when the graph loads.)
class LaneSplit : public Split {
 public:
  SAMFUSE_PORTS("crd_in,ref_in", "crd,ref")
  LaneSplit(const std::string& id, long long lanes, long long lane, long long lo, long long hi)
      : Split(id, "lane_split", 2, 2), lanes_(lanes), lane_(lane), lo_(lo), hi_(hi) {}

  std::string describe_state() const override {
    return "lane " + std::to_string(lane_) + "/" + std::to_string(lanes_) + " [" +
           std::to_string(lo_) + ", " + std::to_string(hi_) + ")";
  }

 private:
  bool keeps(const tok_t* heads) const override {
    if (is_empty(heads[0])) return lane_ == 0 && lo_ == 0;
    long long crd = payload(heads[0]);
    return crd % lanes_ == lane_ && lo_ <= crd && crd < hi_;
  }

  void misaligned(const tok_t* heads) const override {
    fail("misaligned streams: crd_in holds {0} while ref_in holds {1}", heads[0], KIND_CRD,
         heads[1], KIND_CRD);
  }

  long long lanes_, lane_, lo_, hi_;
};

// Ordered merge of two lanes' (crd, val) streams of one level; combining (lane_combine, the
// subclass) also the lane reduction, adding the values of a crd both lanes hold.
class LaneMerge : public LanePrimitive {
 public:
  SAMFUSE_PORTS("crd_a,val_a,crd_b,val_b", "crd,val")
  explicit LaneMerge(const std::string& id) : LaneMerge(id, "lane_merge", false, false) {}

  bool eval(cycle_t now) override {
    Fifo &ca = *in_[0], &cb = *in_[2];
    if (Fifo* f = missing({&ca, &cb})) return wait_in(f);
    tok_t a = ca.peek(), b = cb.peek();
    return merge_firing(now, ca, *in_[1], cb, *in_[3], out_[0], out_[1], a, b,
                        order(a, b, "crd_a", "crd_b"));
  }

 protected:
  LaneMerge(const std::string& id, const char* op, bool combines, bool fp)
      : LanePrimitive(id, op, 4, 2, combines, fp) {}
};

// Ordered merge of two lanes' (outer crd, inner crd, val) streams: the smaller outer crd,
// then its inner fiber copied from that lane. The stop closing a copied inner fiber is
// written once the next outer step shows which it is (S0 before another outer crd, S_{k+1}
// when the outer fiber ends with S_k). Combining (lane_combine2, the subclass), an outer
// crd both lanes hold is written once and its two inner fibers are merged (MERGE), adding
// equal inner crds, and a fiber's closing stop is popped by the next outer step's firing
// (one firing per output token), not by one of its own (docs/timing.md).
class LaneMerge2 : public LanePrimitive {
 public:
  SAMFUSE_PORTS("crd1_a,crd0_a,val_a,crd1_b,crd0_b,val_b", "crd1,crd0,val")
  explicit LaneMerge2(const std::string& id) : LaneMerge2(id, "lane_merge2", false, false) {}

  bool eval(cycle_t now) override {
    return merging_ ? merge(now) : copying_ >= 0 ? copy(now) : pick_step(now);
  }

  std::string describe_state() const override {
    if (merging_) return "merging both lanes' fibers";
    return copying_ >= 0 ? std::string("copying lane ") + kSide[copying_] : "picking";
  }

 protected:
  LaneMerge2(const std::string& id, const char* op, bool combines, bool fp)
      : LanePrimitive(id, op, 6, 3, combines, fp) {}

 private:
  enum { C1, C0, V, PER_LANE };  // input port = lane * PER_LANE + one of these
  enum { O1, O0, OV };
  static constexpr const char* kSide[2] = {"a", "b"};

  Fifo& in(int lane, int which) const { return *in_[std::size_t(lane * PER_LANE + which)]; }

  // COPY_x: one inner crd and its value; the inner stop ends the copy (no space needed).
  bool copy(cycle_t now) {
    const int s = copying_;
    Fifo &c0 = in(s, C0), &v = in(s, V);
    if (Fifo* f = missing({&c0, &v})) return wait_in(f);
    tok_t c = c0.peek(), val = v.peek();
    const std::string side = kSide[s];
    if (is_stop(c)) {
      check_stop(val, KIND_VAL, c, "val_" + side);
      pending_ = true;
      copying_ = -1;
      if (combines_) {  // the next pick (S0) or the outer fiber's end (S1 and up) pops it
        held_[s] = payload(c) == 0;
        return eval(now);
      }
      fire(now);
      c0.pop();
      v.pop();
      if (payload(c) > 0) closed_[s] = int(payload(c));
      return true;
    }
    if (is_done(c) || is_empty(c)) fail("crd0_" + side + " holds {0} inside a fiber", c, KIND_CRD);
    check_value(val, c, "val_" + side);
    if (Fifo* f = out_[O0].blocked()) return wait_out(f);
    if (Fifo* f = out_[OV].blocked()) return wait_out(f);
    fire(now);
    c0.pop();
    v.pop();
    out_[O0].push(c, now);
    out_[OV].push(val, now);
    return true;
  }

  // MERGE (combining): one firing of the merge of both lanes' inner fibers; when both hold
  // their closing stop they fold into the next pick.
  bool merge(cycle_t now) {
    Fifo &a0 = in(0, C0), &av = in(0, V), &b0 = in(1, C0), &bv = in(1, V);
    if (Fifo* f = missing({&a0, &b0})) return wait_in(f);
    tok_t a = a0.peek(), b = b0.peek();
    if (is_stop(a) && is_stop(b)) {  // both fibers closed
      if (Fifo* f = missing({&av, &bv})) return wait_in(f);
      check_stop(av.peek(), KIND_VAL, a, "val_a");
      check_stop(bv.peek(), KIND_VAL, b, "val_b");
      pending_ = true;  // folded: the next pick or the outer fiber's end pops them
      merging_ = false;
      held_[0] = payload(a) == 0;
      held_[1] = payload(b) == 0;
      return eval(now);
    }
    Pick side = order(a, b, "crd0_a", "crd0_b");
    if (side == PICK_CONTROL) fail("crd0_a and crd0_b hold {0} inside a fiber", a, KIND_CRD);
    return merge_firing(now, a0, av, b0, bv, out_[O0], out_[OV], a, b, side);
  }

  bool pick_step(cycle_t now) {
    Fifo &a1 = in(0, C1), &b1 = in(1, C1);
    if (Fifo* f = missing({&a1, &b1})) return wait_in(f);
    tok_t a = a1.peek(), b = b1.peek();
    Pick side = order(a, b, "crd1_a", "crd1_b");
    if (side != PICK_CONTROL) return pass_outer(now, side);
    return end_fiber(now, a);
  }

  // PICK: write the smaller (or the shared) outer crd and the owed S0 of the last fiber.
  bool pass_outer(cycle_t now, Pick side) {
    if (Fifo* f = out_[O1].blocked()) return wait_out(f);
    if (pending_) {
      if (Fifo* f = out_[O0].blocked()) return wait_out(f);
      if (Fifo* f = out_[OV].blocked()) return wait_out(f);
    }
    fire(now);
    pop_held();
    tok_t outer = side == PICK_B ? in(1, C1).pop() : in(0, C1).pop();
    if (side == PICK_BOTH) in(1, C1).pop();
    out_[O1].push(outer, now);
    if (pending_) {
      out_[O0].push(stop_tok(0), now);
      out_[OV].push(stop_tok(0), now);
    }
    pending_ = false;
    merging_ = side == PICK_BOTH;
    copying_ = side == PICK_A ? 0 : side == PICK_B ? 1 : -1;
    return true;
  }

  // Both lanes end the outer fiber (S_k) or the stream (D): every lane that did not close
  // its inner stream in a copy still holds the lone closing stop on crd0 and val.
  bool end_fiber(cycle_t now, tok_t outer) {
    const bool done = is_done(outer);
    const tok_t inner = done ? DONE_TOK : stop_tok(payload(outer) + 1);
    Fifo* need[4];
    std::string names[4];
    int n = 0;
    for (int s = 0; s < 2; ++s) {
      if (done || closed_[s] < 0) {
        names[n] = std::string("crd0_") + kSide[s];
        need[n++] = &in(s, C0);
        names[n] = std::string("val_") + kSide[s];
        need[n++] = &in(s, V);
      } else if (std::uint32_t(closed_[s]) != payload(inner)) {
        fail(std::string("lane ") + kSide[s] + "'s inner stream closed its fiber with S" +
                 std::to_string(closed_[s]) + " but the outer stream ends it with {0}",
             outer, KIND_CRD);
      }
    }
    for (int i = 0; i < n; ++i)
      if (!need[i]->visible()) return wait_in(need[i]);
    for (int i = 0; i < n; ++i)
      check_stop(need[i]->peek(), i % 2 ? KIND_VAL : KIND_CRD, inner, names[i]);
    for (OutPort& o : out_)
      if (Fifo* f = o.blocked()) return wait_out(f);
    fire(now);
    in(0, C1).pop();
    in(1, C1).pop();
    for (int i = 0; i < n; ++i) need[i]->pop();
    out_[O1].push(outer, now);
    out_[O0].push(inner, now);
    out_[OV].push(inner, now);
    pending_ = false;
    closed_[0] = closed_[1] = -1;
    if (done) finish(now);
    return true;
  }

  // the closing S0s held at the heads (combines_), popped by the pick that follows
  void pop_held() {
    for (int s = 0; s < 2; ++s)
      if (held_[s]) {
        in(s, C0).pop();
        in(s, V).pop();
        held_[s] = false;
      }
  }

  int copying_ = -1;      // the lane whose inner fiber is being copied (-1: PICK or MERGE)
  bool merging_ = false;  // combining: both lanes' inner fibers are being merged
  bool pending_ = false;  // a copied inner fiber's closing stop is not written yet
  int closed_[2] = {-1, -1};  // per lane, the level of the inner stop that closed it, or -1
  bool held_[2] = {false, false};  // combining: a lane's closing S0 waits at its heads
};

// Keeps a (crd, ref) pair when the key position beside it (pos_in) lies in one of its
// windows; stops and D pass.
class PositionSplit : public Split {
 public:
  SAMFUSE_PORTS("crd_in,ref_in,pos_in", "crd,ref")
  // windows: lo, hi pairs, ascending and disjoint (ir.position_windows checked them)
  PositionSplit(const std::string& id, std::vector<long long> windows)
      : Split(id, "position_split", 3, 2), windows_(std::move(windows)) {}

  std::string describe_state() const override {
    std::string out = "windows";
    for (std::size_t k = 0; k + 1 < windows_.size(); k += 2)
      out += std::string(k ? ", " : " ") + "[" + std::to_string(windows_[k]) + ", " +
             std::to_string(windows_[k + 1]) + ")";
    return out;
  }

 private:
  bool keeps(const tok_t* heads) const override {
    tok_t p = heads[2];
    if (!is_data(p))
      fail("pos_in holds {0}: a position split needs the key operand's position in every "
           "entry", p, KIND_CRD);
    for (std::size_t k = 0; k + 1 < windows_.size(); k += 2)
      if (windows_[k] <= (long long)payload(p) && (long long)payload(p) < windows_[k + 1])
        return true;
    return false;
  }

  void misaligned(const tok_t* heads) const override {
    fail("misaligned streams: crd_in holds {0}, ref_in {1} and pos_in {2}", heads[0],
         KIND_CRD, heads[1], KIND_CRD, heads[2], KIND_CRD);
  }

  std::vector<long long> windows_;
};


// Lane reduction of one level: lane_merge that combines (the catalogue's flag).
class LaneCombine : public LaneMerge {
 public:
  LaneCombine(const std::string& id, bool fp) : LaneMerge(id, "lane_combine", true, fp) {}
};

// Lane reduction of two levels: lane_merge2 that combines (the catalogue's flag).
class LaneCombine2 : public LaneMerge2 {
 public:
  LaneCombine2(const std::string& id, bool fp) : LaneMerge2(id, "lane_combine2", true, fp) {}
};

}  // namespace samfuse

#endif  // SAMFUSE_LANES_H
