// lane_split: one lane's share of a level (docs/primitives.md, docs/parallel.md). A crd
// is kept when crd mod LANES == LANE and LO <= crd < HI (N: LANE == 0 and LO == 0); a
// kept crd passes with its ref, the others are consumed without output. Stops and D pass
// on both outputs. One firing per input token, kept or not (LANES is a constant: a
// power of two is a mask, any other a constant divider). The loop, lane_filter, is
// shared with position_split.
#ifndef SAMFUSE_LANE_SPLIT_H
#define SAMFUSE_LANE_SPLIT_H
#include "samfuse_hls.h"

namespace samfuse {

// The loop of a lane's filter of a (crd, ref) stream (lane_split, position_split): each
// iteration reads crd_in, ref_in and, through `heads`, whatever else the decision reads;
// stops and D pass on both outputs (every head the same control token), a data pair when
// heads.keeps(c) says so, the others are consumed without output.
template <int II, int LAT, class Heads, class CrdOut, class RefOut>
void lane_filter(hls::stream<tok_t>& crd_in, hls::stream<tok_t>& ref_in, Heads heads,
                 CrdOut& crd, RefOut& ref) {
lane_filter_loop:
    while (true) {
        SAMFUSE_PIPELINE
        tok_t c = crd_in.read(), r = ref_in.read();
        heads.read();
        if (is_stop_or_done(c) || is_stop_or_done(r) || heads.control()) {
            heads.check_aligned(c, r);
            crd.write(c);
            ref.write(r);
            if (is_done(c)) break;
            continue;
        }
        if (heads.keeps(c)) {
            crd.write(c);
            ref.write(r);
        }
    }
}

// lane_split's decision: the crd alone.
template <uint32_t LANES, uint32_t LANE, uint32_t LO, uint32_t HI>
struct LaneShare {
    void read() {}
    bool control() const { return false; }
    void check_aligned(const tok_t& c, const tok_t& r) const {
        SAMFUSE_CHECK_AT("samfuse_lane_split", same_tok(c, r),
                         "misaligned streams on crd_in / ref_in");
    }
    bool keeps(const tok_t& c) const {
        return is_empty(c) ? LANE == 0 && LO == 0
                           : payload(c) % LANES == LANE && payload(c) >= LO && payload(c) < HI;
    }
};

}  // namespace samfuse

template <uint32_t LANES, uint32_t LANE, uint32_t LO, uint32_t HI, int II = 1, int LAT = 1, int START = 0,
          class CrdOut, class RefOut>
void samfuse_lane_split(hls::stream<samfuse::tok_t>& crd_in, hls::stream<samfuse::tok_t>& ref_in,
                        CrdOut crd, RefOut ref) {
    SAMFUSE_CHECK(LANE < LANES, "lane is not below lanes");
    samfuse::process_start<II, LAT, START>();
    samfuse::lane_filter<II, LAT>(crd_in, ref_in, samfuse::LaneShare<LANES, LANE, LO, HI>(), crd, ref);
}
#endif
