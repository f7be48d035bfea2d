// samfuse SystemC models: writers. They record the result; their consuming D ends the run.
// Behaviour: sim_models/python/_writers.py. A level writer records crds and, for every
// stop, the crd count and the stop's level, so the result decodes exactly against the
// parent level (sim_models.python.decode_levels does the decoding).
#ifndef SAMFUSE_WRITERS_H
#define SAMFUSE_WRITERS_H

#include <cstdint>
#include <string>
#include <vector>

#include "samfuse_primitive.h"

namespace samfuse {

class LevelWriter : public Primitive {
 public:
  static const char* inputs() { return "crd"; }
  static const char* outputs() { return ""; }
  explicit LevelWriter(const std::string& id) : Primitive(id, "level_writer", 1, 0) {}

  bool eval(cycle_t now) override {
    Fifo& inp = *in_[0];
    if (!inp.visible()) return wait_in(&inp);
    fire(now);
    tok_t tok = inp.pop();
    if (is_data(tok)) {
      crd.push_back(payload(tok));
    } else if (is_stop(tok)) {
      stop_pos.push_back(std::int64_t(crd.size()));
      stop_level.push_back(std::int64_t(payload(tok)));
    } else if (is_done(tok)) {
      finish(now);
    }  // N: nothing to record
    return true;
  }

  std::vector<std::uint32_t> crd;
  std::vector<std::int64_t> stop_pos, stop_level;
};

class ValueWriter : public Primitive {
 public:
  static const char* inputs() { return "val"; }
  static const char* outputs() { return ""; }
  explicit ValueWriter(const std::string& id) : Primitive(id, "value_writer", 1, 0) {}

  bool eval(cycle_t now) override {
    Fifo& inp = *in_[0];
    if (!inp.visible()) return wait_in(&inp);
    fire(now);
    tok_t tok = inp.pop();
    if (is_data(tok)) {
      vals.push_back(payload(tok));
    } else if (is_done(tok)) {
      finish(now);
    } else if (is_empty(tok)) {
      fail("unexpected token {0} on val", tok, KIND_VAL);
    }
    return true;
  }

  std::vector<std::uint32_t> vals;  // binary32 bits or int32
};

}  // namespace samfuse

#endif  // SAMFUSE_WRITERS_H
