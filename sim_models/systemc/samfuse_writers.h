// samfuse SystemC models: writers. They record the result; their consuming D ends the run.
// Behaviour: sim_models/python/_writers.py. A level writer records crds and, for every
// stop, the crd count and the stop's level, so the result decodes exactly against the
// parent level (sim_models.python.decode_levels does the decoding). With a memory system
// they append words to write-combining ports (crd then seg; vals) and wait for a write
// slot when a firing would issue a line write beyond the K outstanding ones.
#ifndef SAMFUSE_WRITERS_H
#define SAMFUSE_WRITERS_H

#include <cstdint>
#include <string>
#include <vector>

#include "samfuse_primitive.h"

namespace samfuse {

class LevelWriter : public Primitive {
 public:
  SAMFUSE_PORTS("crd", "")
  explicit LevelWriter(const std::string& id) : Primitive(id, "level_writer", 1, 0) {}

  bool eval(cycle_t now) override {
    Fifo& inp = *in_[0];
    if (!inp.visible()) return wait_in(&inp);
    tok_t tok = inp.peek();
    MemWritePort *wc = write_port(0), *ws = write_port(1);
    if (wc || ws) {  // a write it issues needs a free slot (K unacknowledged writes)
      bool done = is_done(tok);
      if (wc && ((is_data(tok) && wc->append_writes()) || (done && wc->flush_writes())) &&
          !wc->slot_free(now))
        return wait_mem();
      if (ws && ((is_stop(tok) && ws->append_writes()) || (done && ws->flush_writes())) &&
          !ws->slot_free(now))
        return wait_mem();
    }
    fire(now);
    inp.pop();
    if (is_data(tok)) {
      crd.push_back(payload(tok));
      if (wc) wc->append();
    } else if (is_stop(tok)) {
      stop_pos.push_back(std::int64_t(crd.size()));
      stop_level.push_back(std::int64_t(payload(tok)));
      if (ws) ws->append();
    } else if (is_done(tok)) {
      if (wc) wc->flush();  // crd before seg
      if (ws) ws->flush();
      finish(now);
    }  // N: nothing to record
    return true;
  }

  std::vector<std::uint32_t> crd;
  std::vector<std::int64_t> stop_pos, stop_level;
};

class ValueWriter : public Primitive {
 public:
  SAMFUSE_PORTS("val", "")
  explicit ValueWriter(const std::string& id) : Primitive(id, "value_writer", 1, 0) {}

  bool eval(cycle_t now) override {
    Fifo& inp = *in_[0];
    if (!inp.visible()) return wait_in(&inp);
    tok_t tok = inp.peek();
    int words = is_block(tok) ? pool().elems(payload(tok)) : 1;
    if (MemWritePort* w = write_port(0)) {  // stops write nothing; D flushes
      if (!is_stop(tok) && !w->slot_free_for(words, is_done(tok), now)) return wait_mem();
    }
    fire(now);
    inp.pop();
    if (is_block(tok)) {  // its words (the handle is dropped at the end of the cycle)
      const std::uint32_t* w = pool().data(payload(tok));
      vals.insert(vals.end(), w, w + words);
    } else if (is_data(tok)) {
      vals.push_back(payload(tok));
    }
    if (is_data(tok)) {
      if (MemWritePort* w = write_port(0))
        for (int k = 0; k < words; ++k) w->append();
    } else if (is_done(tok)) {
      if (MemWritePort* w = write_port(0)) w->flush();
      finish(now);
    } else if (is_empty(tok)) {
      fail("unexpected token {0} on val", tok, KIND_VAL);
    }
    return true;
  }

  std::vector<std::uint32_t> vals;  // binary32 bits or int32; a block's words in order
};

}  // namespace samfuse

#endif  // SAMFUSE_WRITERS_H
