// samfuse SystemC models: the locator (a coordinate stream addresses a dense level).
// Behaviour and timing: docs/primitives.md "locate"; sim_models/python/_locate.py.
#ifndef SAMFUSE_LOCATE_H
#define SAMFUSE_LOCATE_H

#include <cstdint>
#include <string>

#include "samfuse_primitive.h"

namespace samfuse {

// ref = ref_in * size + crd_in on aligned streams; N on either side gives N; stops pass.
class Locate : public Primitive {
 public:
  SAMFUSE_PORTS("crd_in,ref_in", "ref")
  Locate(const std::string& id, std::uint64_t size, std::uint64_t nfib)
      : Primitive(id, "locate", 2, 1), size_(size), nfib_(nfib) {}

  bool eval(cycle_t now) override {
    Fifo &c_in = *in_[0], &r_in = *in_[1];
    if (!c_in.visible()) return wait_in(&c_in);
    if (!r_in.visible()) return wait_in(&r_in);
    if (Fifo* blk = out_[0].blocked()) return wait_out(blk);
    tok_t c = c_in.peek(), r = r_in.peek(), res;
    if (is_data(c) && is_data(r)) {
      if (payload(c) >= size_)
        fail("coordinate " + std::to_string(payload(c)) +
             " is outside the dense level of size " + std::to_string(size_));
      if (payload(r) >= nfib_)
        fail("reference " + std::to_string(payload(r)) + " is outside the level's " +
             std::to_string(nfib_) + " fibers");
      res = data_tok(std::uint32_t(std::uint64_t(payload(r)) * size_ + payload(c)));
    } else if ((is_data(c) || is_empty(c)) && (is_data(r) || is_empty(r))) {
      res = EMPTY_TOK;
    } else if (is_stop_or_done(c) && c == r) {
      res = c;
    } else {
      fail("misaligned streams: crd_in holds {0} while ref_in holds {1}", c, KIND_CRD, r,
           KIND_CRD);
    }
    fire(now);
    c_in.pop();
    r_in.pop();
    pass(0, res, now);
    return true;
  }

 private:
  std::uint64_t size_, nfib_;
};

}  // namespace samfuse

#endif  // SAMFUSE_LOCATE_H
