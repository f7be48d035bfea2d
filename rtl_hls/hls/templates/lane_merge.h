// lane_merge: ordered merge of two lanes' (crd, val) streams of one level
// (docs/primitives.md). The lanes' fibers are aligned (equal stops) and their crds
// disjoint within a fiber: the smaller head crd passes with its value; aligned stops or D
// pass once, with the values' matching stops. Each val head is read only when its side
// is taken (or a stop passes), as the Python model looks at it.
#ifndef SAMFUSE_LANE_MERGE_H
#define SAMFUSE_LANE_MERGE_H
#include "samfuse_hls.h"

// A check inside a helper that names the primitive calling it (``where``: its __func__).
#ifndef __SYNTHESIS__
#define SAMFUSE_LANE_CHECK(where, cond, what) \
    do {                                         \
        if (!(cond)) ::samfuse::fail(where, what); \
    } while (0)
#else
#define SAMFUSE_LANE_CHECK(where, cond, what) \
    do {                                         \
    } while (0)
#endif

namespace samfuse {

// The lane whose head crd comes next: 0 (a), 1 (b), or -1 when both hold the same stop or
// D. Any other pair (equal crds, unequal stops, N, a crd against D) is a malformed pair.
inline int lane_pick(const tok_t& a, const tok_t& b, const char* where) {
    bool ad = is_data(a), bd = is_data(b);
    if (ad && bd) {
        SAMFUSE_LANE_CHECK(where, payload(a) != payload(b),
                           "both lanes hold the same coordinate: lanes must partition the coordinates");
        return payload(a) < payload(b) ? 0 : 1;
    }
    if (ad && is_stop(b)) return 0;
    if (bd && is_stop(a)) return 1;
    SAMFUSE_LANE_CHECK(where, is_stop_or_done(a) && same_tok(a, b), "misaligned lanes");
    return -1;
}

}  // namespace samfuse

template <class TV, class CrdOut, class ValOut>
void samfuse_lane_merge(hls::stream<samfuse::tok_t>& crd_a, hls::stream<TV>& val_a,
                        hls::stream<samfuse::tok_t>& crd_b, hls::stream<TV>& val_b, CrdOut crd,
                        ValOut val) {
    using namespace samfuse;
    Head ha, hb;
    HeadOf<TV> hva, hvb;
lane_merge_loop:
    while (true) {
#pragma HLS pipeline II = 1
        tok_t a = ha.peek(crd_a), b = hb.peek(crd_b);
        int side = lane_pick(a, b, __func__);
        if (side == 0) {
            TV v = hva.peek(val_a);
            SAMFUSE_CHECK(!is_stop_or_done(v), "val_a holds a control token where crd_a holds a crd");
            crd.write(a);
            val.write(v);
            ha.pop();
            hva.pop();
        } else if (side == 1) {
            TV v = hvb.peek(val_b);
            SAMFUSE_CHECK(!is_stop_or_done(v), "val_b holds a control token where crd_b holds a crd");
            crd.write(b);
            val.write(v);
            hb.pop();
            hvb.pop();
        } else {
            TV va = hva.peek(val_a), vb = hvb.peek(val_b);
            SAMFUSE_CHECK(same_tok(va, a) && same_tok(vb, a),
                          "a val stream's stop does not match its crd stream's");
            crd.write(a);
            val.write(a);
            ha.pop();
            hb.pop();
            hva.pop();
            hvb.pop();
            if (is_done(a)) break;
        }
    }
}
#endif
