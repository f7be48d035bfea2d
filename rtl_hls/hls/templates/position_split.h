// position_split: one lane's window of a level's position space (docs/primitives.md,
// docs/parallel.md). pos_in carries the key operand's position beside each (crd, ref)
// pair; the pair is kept when LO <= pos < HI, the others are consumed without output.
// Stops and D pass on both outputs. One firing per input triple, kept or not.
#ifndef SAMFUSE_POSITION_SPLIT_H
#define SAMFUSE_POSITION_SPLIT_H
#include "samfuse_hls.h"

template <uint32_t LO, uint32_t HI, int II = 1, int LAT = 1, int START = 0,
          class CrdOut, class RefOut>
void samfuse_position_split(hls::stream<samfuse::tok_t>& crd_in,
                            hls::stream<samfuse::tok_t>& ref_in,
                            hls::stream<samfuse::tok_t>& pos_in, CrdOut crd, RefOut ref) {
    samfuse::process_start<II, LAT, START>();
    using namespace samfuse;
position_split_loop:
    while (true) {
        SAMFUSE_PIPELINE
        tok_t c = crd_in.read(), r = ref_in.read(), p = pos_in.read();
        if (is_stop_or_done(c) || is_stop_or_done(r) || is_stop_or_done(p)) {
            SAMFUSE_CHECK(same_tok(c, r) && same_tok(r, p),
                          "misaligned streams on crd_in / ref_in / pos_in");
            crd.write(c);
            ref.write(r);
            if (is_done(c)) break;
            continue;
        }
        SAMFUSE_CHECK(is_data(p), "pos_in holds N: a position split needs the key's position");
        if (payload(p) >= LO && payload(p) < HI) {
            crd.write(c);
            ref.write(r);
        }
    }
}
#endif
