// position_split: one lane's windows of a level's position space (docs/primitives.md,
// docs/parallel.md). pos_in carries the key operand's position beside each (crd, ref)
// pair; the pair is kept when the position lies in one of the windows WIN = lo0, hi0,
// lo1, hi1, ... (lo <= pos < hi; a comparator pair each), the others are consumed
// without output. Stops and D pass on both outputs. One firing per input triple, kept or
// not: lane_split's loop (lane_filter), reading pos_in beside the pair.
#ifndef SAMFUSE_POSITION_SPLIT_H
#define SAMFUSE_POSITION_SPLIT_H
#include "lane_split.h"

namespace samfuse {

// A position split's windows lo0, hi0, lo1, hi1, ... as one type (a constant table): the
// template's own parameter is then no pack, so the timing shell's arguments trail its
// parameters as in every template.
template <uint32_t... WIN>
struct Windows {
    static_assert(sizeof...(WIN) >= 2 && sizeof...(WIN) % 2 == 0, "windows come as lo, hi pairs");
    static const unsigned size = sizeof...(WIN);
    static uint32_t at(unsigned k) {
        static const uint32_t win[] = {WIN...};
        return win[k];
    }
};

// position_split's decision: the key position read beside the pair.
template <class WIN>
struct PositionWindows {
    hls::stream<tok_t>& pos_in;
    tok_t p;
    void read() { p = pos_in.read(); }
    bool control() const { return is_stop_or_done(p); }
    void check_aligned(const tok_t& c, const tok_t& r) const {
        SAMFUSE_CHECK_AT("samfuse_position_split", same_tok(c, r) && same_tok(r, p),
                         "misaligned streams on crd_in / ref_in / pos_in");
    }
    bool keeps(const tok_t&) const {
        SAMFUSE_CHECK_AT("samfuse_position_split", is_data(p),
                         "pos_in holds N: a position split needs the key's position");
        bool keep = false;
    position_split_windows:
        for (unsigned k = 0; k < WIN::size; k += 2) {
#pragma HLS unroll
            keep = keep || (payload(p) >= WIN::at(k) && payload(p) < WIN::at(k + 1));
        }
        return keep;
    }
};

}  // namespace samfuse

template <class WIN, int II = 1, int LAT = 1, int START = 0, class CrdOut, class RefOut>
void samfuse_position_split(hls::stream<samfuse::tok_t>& crd_in,
                            hls::stream<samfuse::tok_t>& ref_in,
                            hls::stream<samfuse::tok_t>& pos_in, CrdOut crd, RefOut ref) {
    samfuse::process_start<II, LAT, START>();
    samfuse::lane_filter<II, LAT>(crd_in, ref_in, samfuse::PositionWindows<WIN>{pos_in, {}}, crd, ref);
}
#endif
