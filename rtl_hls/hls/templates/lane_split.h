// lane_split: one lane's share of a level (docs/primitives.md, docs/parallel.md). A crd
// is kept when crd mod LANES == LANE and LO <= crd < HI (N: LANE == 0 and LO == 0); a
// kept crd passes with its ref, the others are consumed without output. Stops and D pass
// on both outputs. One firing per input token, kept or not (LANES is a constant: a
// power of two is a mask, any other a constant divider).
#ifndef SAMFUSE_LANE_SPLIT_H
#define SAMFUSE_LANE_SPLIT_H
#include "samfuse_hls.h"

template <uint32_t LANES, uint32_t LANE, uint32_t LO, uint32_t HI,
          int II = 1, int LAT = 1, int START = 0, class CrdOut, class RefOut>
void samfuse_lane_split(hls::stream<samfuse::tok_t>& crd_in, hls::stream<samfuse::tok_t>& ref_in,
                        CrdOut crd, RefOut ref) {
    samfuse::process_start<II, LAT, START>();
    using namespace samfuse;
    SAMFUSE_CHECK(LANE < LANES, "lane is not below lanes");
lane_split_loop:
    while (true) {
        SAMFUSE_PIPELINE
        tok_t c = crd_in.read(), r = ref_in.read();
        if (is_stop_or_done(c) || is_stop_or_done(r)) {
            SAMFUSE_CHECK(same_tok(c, r), "misaligned streams on crd_in / ref_in");
            crd.write(c);
            ref.write(r);
            if (is_done(c)) break;
            continue;
        }
        bool keep = is_empty(c) ? LANE == 0 && LO == 0
                                : payload(c) % LANES == LANE && payload(c) >= LO && payload(c) < HI;
        if (keep) {
            crd.write(c);
            ref.write(r);
        }
    }
}
#endif
