// samfuse SystemC models: coordinate joiners (intersecter, unioner, and their _val forms).
// Behaviour: sim_models/python/_join.py. Every firing needs all four heads (crd and ref
// of a side travel together) and advances by sorted merge; stops must align and D must
// arrive together.
//
// intersect_val / union_val are the same joiners with side a's second stream carrying
// values (port val_a) instead of references (ref_a): an accumulator's drained rows meeting
// an operand. The join core never looks at that stream's payload, it moves whole words, so
// a value (float32 bits, -0.0 and NaN payloads included, or int32) passes unchanged and a
// missing one is the N word. Only the port name, given by the SideA policy, differs.
#ifndef SAMFUSE_JOIN_H
#define SAMFUSE_JOIN_H

#include <string>

#include "samfuse_primitive.h"

namespace samfuse {

// Side a's second stream: references (intersect, union) ...
struct RefSideA {
  SAMFUSE_PORTS("crd_a,ref_a,crd_b,ref_b", "crd,ref_a,ref_b")
};

// ... or values (intersect_val, union_val).
struct ValSideA {
  SAMFUSE_PORTS("crd_a,val_a,crd_b,ref_b", "crd,val_a,ref_b")
};

class Joiner : public Primitive {
 public:
  using Primitive::Primitive;

 protected:
  enum { CA, RA, CB, RB };

  // The first input whose head is not visible, or nullptr.
  Fifo* missing_head() const {
    for (Fifo* f : in_)
      if (!f->visible()) return f;
    return nullptr;
  }

  bool emit(cycle_t now, tok_t crd, tok_t ra, tok_t rb, bool pop_a, bool pop_b) {
    for (const OutPort& o : out_)
      if (Fifo* b = o.blocked()) return wait_out(b);
    fire(now);
    pop(pop_a, pop_b);
    out_[0].push(crd, now);
    out_[1].push(ra, now);
    out_[2].push(rb, now);
    return true;
  }

  bool skip(cycle_t now, bool pop_a, bool pop_b) {
    fire(now);
    pop(pop_a, pop_b);
    return true;
  }

  // Both heads are control tokens: aligned stops or D pass through.
  bool control(cycle_t now, tok_t a, tok_t b) {
    if ((is_stop(a) && a == b) || (is_done(a) && is_done(b))) {
      bool fired = emit(now, a, a, a, true, true);
      if (fired && is_done(a)) finish(now);
      return fired;
    }
    fail("misaligned streams: crd_a holds {0} while crd_b holds {1}", a, KIND_CRD, b,
         KIND_CRD);
  }

 private:
  void pop(bool pop_a, bool pop_b) {
    if (pop_a) {
      in_[CA]->pop();
      in_[RA]->pop();
    }
    if (pop_b) {
      in_[CB]->pop();
      in_[RB]->pop();
    }
  }
};

// Emits a crd present on both sides; N matches nothing.
template <class SideA>
class IntersectOf : public Joiner {
 public:
  SAMFUSE_PORTS(SideA::inputs(), SideA::outputs())
  IntersectOf(const std::string& id, const char* op) : Joiner(id, op, 4, 3) {}

  bool eval(cycle_t now) override {
    if (Fifo* f = missing_head()) return wait_in(f);
    tok_t a = in_[CA]->peek(), b = in_[CB]->peek();
    bool a_data = is_data(a), b_data = is_data(b);
    if (a_data && b_data) {
      if (a == b) return emit(now, a, in_[RA]->peek(), in_[RB]->peek(), true, true);
      return skip(now, a < b, b < a);
    }
    if (a_data || is_empty(a)) {
      if (is_done(b)) fail("crd_b ended (D) while crd_a holds {0}", a, KIND_CRD);
      return skip(now, true, is_empty(b));
    }
    if (b_data || is_empty(b)) {
      if (is_done(a)) fail("crd_a ended (D) while crd_b holds {0}", b, KIND_CRD);
      return skip(now, false, true);
    }
    return control(now, a, b);
  }
};

// Emits every crd of either side, with N as the ref (value) of the side that lacks it.
template <class SideA>
class UnionOf : public Joiner {
 public:
  SAMFUSE_PORTS(SideA::inputs(), SideA::outputs())
  UnionOf(const std::string& id, const char* op) : Joiner(id, op, 4, 3) {}

  bool eval(cycle_t now) override {
    if (Fifo* f = missing_head()) return wait_in(f);
    tok_t a = in_[CA]->peek(), b = in_[CB]->peek();
    bool a_data = is_data(a), b_data = is_data(b);
    if (is_empty(a) || is_empty(b)) return skip(now, is_empty(a), is_empty(b));
    if (a_data && (!b_data || a < b)) {
      if (is_done(b)) fail("crd_b ended (D) while crd_a holds {0}", a, KIND_CRD);
      return emit(now, a, in_[RA]->peek(), EMPTY_TOK, true, false);
    }
    if (b_data && (!a_data || b < a)) {
      if (is_done(a)) fail("crd_a ended (D) while crd_b holds {0}", b, KIND_CRD);
      return emit(now, b, EMPTY_TOK, in_[RB]->peek(), false, true);
    }
    if (a_data) return emit(now, a, in_[RA]->peek(), in_[RB]->peek(), true, true);
    return control(now, a, b);
  }
};

// The catalogue's four joiners (classes, not aliases, so each has its own one-argument
// constructor for the Python side).
class Intersect : public IntersectOf<RefSideA> {
 public:
  explicit Intersect(const std::string& id) : IntersectOf(id, "intersect") {}
};

class Union : public UnionOf<RefSideA> {
 public:
  explicit Union(const std::string& id) : UnionOf(id, "union") {}
};

class IntersectVal : public IntersectOf<ValSideA> {
 public:
  explicit IntersectVal(const std::string& id) : IntersectOf(id, "intersect_val") {}
};

class UnionVal : public UnionOf<ValSideA> {
 public:
  explicit UnionVal(const std::string& id) : UnionOf(id, "union_val") {}
};

}  // namespace samfuse

#endif  // SAMFUSE_JOIN_H
