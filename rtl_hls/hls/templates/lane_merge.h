// lane_merge: ordered merge of two lanes' (crd, val) streams of one level
// (docs/primitives.md). The lanes' fibers are aligned (equal stops) and their crds
// disjoint within a fiber: the smaller head crd passes with its value; aligned stops or D
// pass once, with the values' matching stops. Each val head is read only when its side
// is taken (or a stop passes), as the Python model looks at it.
#ifndef SAMFUSE_LANE_MERGE_H
#define SAMFUSE_LANE_MERGE_H
#include "samfuse_hls.h"

namespace samfuse {

// The lane whose head crd comes next: 0 (a), 1 (b), or -1 when both hold the same stop or
// D. Any other pair (equal crds, unequal stops, N, a crd against D) is a malformed pair.
inline int lane_pick(const tok_t& a, const tok_t& b, const char* where) {
    bool ad = is_data(a), bd = is_data(b);
    if (ad && bd) {
        SAMFUSE_CHECK_AT(where, payload(a) != payload(b),
                           "both lanes hold the same coordinate: lanes must partition the coordinates");
        return payload(a) < payload(b) ? 0 : 1;
    }
    if (ad && is_stop(b)) return 0;
    if (bd && is_stop(a)) return 1;
    SAMFUSE_CHECK_AT(where, is_stop_or_done(a) && same_tok(a, b), "misaligned lanes");
    return -1;
}

// The value of a crd both lanes hold: the sum of their partials (lane_combine; scalar
// values, FLOAT: binary32, else int32). lane_merge never meets one.
template <bool COMBINE, bool FLOAT>
struct LaneSum {
    template <class TV>
    static TV of(const TV& a, const TV&) { return a; }
};
template <bool FLOAT>
struct LaneSum<true, FLOAT> {
    static tok_t of(const tok_t& a, const tok_t& b) {
        return data_tok(binop<FLOAT>(OP_ADD, operand(a, 0), operand(b, 0)));
    }
};

// lane_pick, and 2 for a crd both lanes hold when the merge combines (a lane reduction).
template <bool COMBINE>
int lane_order(const tok_t& a, const tok_t& b, const char* where) {
    if (COMBINE && is_data(a) && is_data(b) && payload(a) == payload(b)) return 2;
    return lane_pick(a, b, where);
}

// One firing of a one-level merge whose crd heads are `a` and `b`: the head of `side`
// (lane_order's) passes with its value (2: the values added), or (-1) their aligned stop
// or D passes once. Each val head is read only when its side is taken or a stop passes.
// True when D passed.
template <bool COMBINE, bool FLOAT, class TV, class CrdOut, class ValOut>
bool lane_merge_firing(int side, const tok_t& a, const tok_t& b, Head& ha, HeadOf<TV>& hva,
                       hls::stream<TV>& val_a, Head& hb, HeadOf<TV>& hvb,
                       hls::stream<TV>& val_b, CrdOut& crd, ValOut& val, const char* where) {
    const bool take_a = side != 1, take_b = side != 0;
    TV va = take_a ? hva.peek(val_a) : TV(), vb = take_b ? hvb.peek(val_b) : TV();
    if (side < 0) {
        SAMFUSE_CHECK_AT(where, same_tok(va, a) && same_tok(vb, a),
                         "a val stream's stop does not match its crd stream's");
        crd.write(a);
        val.write(a);
    } else {
        SAMFUSE_CHECK_AT(where, (!take_a || !is_stop_or_done(va)) && (!take_b || !is_stop_or_done(vb)),
                         "a val stream holds a control token where its crd stream holds a crd");
        crd.write(side == 1 ? b : a);
        val.write(side == 2 ? LaneSum<COMBINE, FLOAT>::of(va, vb) : take_a ? va : vb);
    }
    if (take_a) {
        ha.pop();
        hva.pop();
    }
    if (take_b) {
        hb.pop();
        hvb.pop();
    }
    return side < 0 && is_done(a);
}

// The loop of lane_merge and (COMBINE) lane_combine; `where` names the caller in errors.
template <int II, int LAT, bool COMBINE, bool FLOAT, class TV, class CrdOut, class ValOut>
void lane_merge_loop(hls::stream<tok_t>& crd_a, hls::stream<TV>& val_a,
                     hls::stream<tok_t>& crd_b, hls::stream<TV>& val_b, CrdOut& crd,
                     ValOut& val, const char* where) {
    Head ha, hb;
    HeadOf<TV> hva, hvb;
lane_merge_loop:
    while (true) {
        SAMFUSE_PIPELINE
        tok_t a = ha.peek(crd_a), b = hb.peek(crd_b);
        if (lane_merge_firing<COMBINE, FLOAT>(lane_order<COMBINE>(a, b, where), a, b, ha, hva,
                                              val_a, hb, hvb, val_b, crd, val, where))
            break;
    }
}

}  // namespace samfuse

template <int II = 1, int LAT = 1, int START = 0, class TV, class CrdOut, class ValOut>
void samfuse_lane_merge(hls::stream<samfuse::tok_t>& crd_a, hls::stream<TV>& val_a,
                        hls::stream<samfuse::tok_t>& crd_b, hls::stream<TV>& val_b, CrdOut crd,
                        ValOut val) {
    samfuse::process_start<II, LAT, START>();
    samfuse::lane_merge_loop<II, LAT, false, true>(crd_a, val_a, crd_b, val_b, crd, val, __func__);
}
#endif
