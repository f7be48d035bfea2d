// lane_combine2: the lane reduction of two levels (docs/primitives.md): lane_merge2's
// machine (lane_merge2.h) with the MERGE policy below — an outer crd both lanes hold (a row
// split across lanes) passes once, and its two inner fibers are merged like lane_combine
// merges one level, adding equal inner crds. Scalar values only.
#ifndef SAMFUSE_LANE_COMBINE2_H
#define SAMFUSE_LANE_COMBINE2_H
#include "lane_combine.h"
#include "lane_merge2.h"

namespace samfuse {

// One MERGE firing: the smaller inner crd (or an equal one, its values added) passes; when
// both inner heads are stops they are consumed (no output) and true is returned.
template <bool FLOAT>
struct LaneSumMerge {
    static const bool enabled = true;
    template <class Crd0Out, class ValOut>
    static bool step(Head& h0a, Head& hva, Head& h0b, Head& hvb, hls::stream<tok_t>& crd0_a,
                     hls::stream<tok_t>& val_a, hls::stream<tok_t>& crd0_b,
                     hls::stream<tok_t>& val_b, Crd0Out& crd0, ValOut& val,
                     uint32_t& closed_a, uint32_t& closed_b, const char* where) {
        tok_t a = h0a.peek(crd0_a), b = h0b.peek(crd0_b);
        if (is_stop(a) && is_stop(b)) {
            SAMFUSE_CHECK_AT(where, same_tok(hva.peek(val_a), a) && same_tok(hvb.peek(val_b), b),
                          "a val stream's stop does not match its crd0 stream's");
            if (payload(a) > 0) closed_a = payload(a);
            if (payload(b) > 0) closed_b = payload(b);
            h0a.pop();
            hva.pop();
            h0b.pop();
            hvb.pop();
            return true;
        }
        SAMFUSE_CHECK_AT(where, (is_data(a) || is_stop(a)) && (is_data(b) || is_stop(b)),
                      "a crd0 stream holds D or N inside a fiber");
        bool both = is_data(a) && is_data(b) && payload(a) == payload(b);
        bool take_a = both || (is_data(a) && (is_stop(b) || payload(a) < payload(b)));
        bool take_b = both || !take_a;
        tok_t va = take_a ? hva.peek(val_a) : tok_t(), vb = take_b ? hvb.peek(val_b) : tok_t();
        SAMFUSE_CHECK_AT(where, (!take_a || !is_stop_or_done(va)) && (!take_b || !is_stop_or_done(vb)),
                      "a val stream holds a control token where crd0 holds a crd");
        crd0.write(take_a ? a : b);
        val.write(both ? LaneSum<true, FLOAT>::of(va, vb) : take_a ? va : vb);
        if (take_a) {
            h0a.pop();
            hva.pop();
        }
        if (take_b) {
            h0b.pop();
            hvb.pop();
        }
        return false;
    }
};

}  // namespace samfuse

template <bool FLOAT, int II = 1, int LAT = 1, int START = 0,
          class Crd1Out, class Crd0Out, class ValOut>
void samfuse_lane_combine2(hls::stream<samfuse::tok_t>& crd1_a, hls::stream<samfuse::tok_t>& crd0_a,
                           hls::stream<samfuse::tok_t>& val_a, hls::stream<samfuse::tok_t>& crd1_b,
                           hls::stream<samfuse::tok_t>& crd0_b, hls::stream<samfuse::tok_t>& val_b,
                           Crd1Out crd1, Crd0Out crd0, ValOut val) {
    samfuse::process_start<II, LAT, START>();
    samfuse::lane_merge2_machine<samfuse::LaneSumMerge<FLOAT>, II, LAT>(crd1_a, crd0_a, val_a, crd1_b,
                                                                crd0_b, val_b, crd1, crd0, val,
                                                                __func__);
}
#endif
