// samfuse SystemC models: coordinate-stream transformers (dropper, hold).
// Behaviour: sim_models/python/_crd.py. Both take an outer crd stream with one crd per
// fiber of the inner stream, so the outer head tells whether an inner stop closes a fiber
// (outer head is a crd) or an empty parent (outer head is a stop).
#ifndef SAMFUSE_CRD_H
#define SAMFUSE_CRD_H

#include <string>

#include "samfuse_primitive.h"

namespace samfuse {

class OuterInner : public Primitive {
 public:
  SAMFUSE_PORTS("outer_in,inner_in", "outer,inner")
  OuterInner(const std::string& id, const char* op, bool outer_stops_lowered)
      : Primitive(id, op, 2, 2), lowered_(outer_stops_lowered) {}

 protected:
  enum { OI, II };

  Fifo* space_block() const {
    if (Fifo* b = out_[0].blocked()) return b;
    return out_[1].blocked();
  }

  // Inner S_k (k>0) meets outer S_{k-1}, or both hold D.
  bool end(cycle_t now, tok_t o, tok_t h) {
    bool ok = (is_done(o) && is_done(h)) ||
              (is_stop(o) && is_stop(h) && payload(o) + 1 == payload(h));
    if (!ok)
      fail("misaligned streams: outer_in holds {0}, inner_in holds {1}", o, KIND_CRD, h,
           KIND_CRD);
    if (Fifo* b = space_block()) return wait_out(b);
    fire(now);
    in_[OI]->pop();
    in_[II]->pop();
    out_[0].push(lowered_ ? o : h, now);
    out_[1].push(h, now);
    if (is_done(h)) finish(now);
    return true;
  }

 private:
  bool lowered_;
};

// Drops outer crds whose inner fiber is empty, merging the inner stops that remain.
class CrdDrop : public OuterInner {
 public:
  explicit CrdDrop(const std::string& id) : OuterInner(id, "crddrop", true) {}

  bool eval(cycle_t now) override {
    Fifo &oi = *in_[OI], &ii = *in_[II];
    OutPort &oo = out_[0], &io = out_[1];
    if (!ii.visible()) return wait_in(&ii);
    tok_t h = ii.peek();
    if (!is_stop_or_done(h)) {  // a crd (or N)
      if (has_pending_) {
        if (Fifo* b = io.blocked()) return wait_out(b);
        fire(now);
        io.push(pending_, now);
        has_pending_ = false;
      } else if (has_data_) {
        if (Fifo* b = io.blocked()) return wait_out(b);
        fire(now);
        io.push(ii.pop(), now);
      } else {
        if (!oi.visible()) return wait_in(&oi);
        if (Fifo* b = space_block()) return wait_out(b);
        fire(now);
        oo.push(oi.pop(), now);
        io.push(ii.pop(), now);
        has_data_ = true;
      }
      return true;
    }
    if (!oi.visible()) return wait_in(&oi);
    tok_t o = oi.peek();
    if (is_stop(h) && payload(h) == 0) {
      fire(now);
      ii.pop();
      if (has_data_) {
        pending_ = h;
        has_pending_ = true;
        has_data_ = false;
      } else {  // an empty fiber: drop its outer crd
        if (is_stop_or_done(o)) fail("inner S0 closes a fiber but outer_in holds {0}", o, KIND_CRD);
        oi.pop();
      }
      return true;
    }
    if (!is_stop_or_done(o)) {
      if (has_data_) fail("inner {0} closes the parent but outer_in holds {1}", h, KIND_CRD, o, KIND_CRD);
      fire(now);
      oi.pop();  // the last fiber was empty: drop its crd
      return true;
    }
    if (!end(now, o, h)) return false;
    has_pending_ = false;
    has_data_ = false;
    return true;
  }

 private:
  bool has_data_ = false;
  bool has_pending_ = false;  // an S0 held back: a later S_k may replace it
  tok_t pending_ = 0;
};

// Repeats each outer crd once per inner crd, turning the pair into a point stream.
class CrdHold : public OuterInner {
 public:
  explicit CrdHold(const std::string& id) : OuterInner(id, "crdhold", false) {}

  bool eval(cycle_t now) override {
    Fifo &oi = *in_[OI], &ii = *in_[II];
    if (!ii.visible()) return wait_in(&ii);
    if (!oi.visible()) return wait_in(&oi);
    tok_t h = ii.peek(), o = oi.peek();
    bool o_crd = !is_stop_or_done(o);
    if (!is_stop_or_done(h)) {
      if (!o_crd) fail("inner_in holds {0} but outer_in holds {1}", h, KIND_CRD, o, KIND_CRD);
      if (Fifo* b = space_block()) return wait_out(b);
      fire(now);
      out_[0].push(o, now);
      out_[1].push(ii.pop(), now);
      return true;
    }
    if (is_stop(h) && payload(h) == 0) {
      if (!o_crd) fail("inner S0 closes a fiber but outer_in holds {0}", o, KIND_CRD);
      if (Fifo* b = space_block()) return wait_out(b);
      fire(now);
      oi.pop();
      ii.pop();
      out_[0].push(h, now);
      out_[1].push(h, now);
      return true;
    }
    if (o_crd) {
      fire(now);
      oi.pop();  // the fiber closed by this S_k: its crd is done
      return true;
    }
    return end(now, o, h);
  }
};

}  // namespace samfuse

#endif  // SAMFUSE_CRD_H
