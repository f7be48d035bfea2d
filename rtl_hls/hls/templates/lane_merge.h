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

// The taken lane's crd `c` and its value pass to the outputs; `where` names the caller in
// an error (the value head must be data where the crd head is).
template <class TV, class CrdOut, class ValOut>
void lane_take(tok_t c, Head& hc, HeadOf<TV>& hv, hls::stream<TV>& val_in, CrdOut& crd,
               ValOut& val, const char* where, const char* what) {
    TV v = hv.peek(val_in);
    SAMFUSE_CHECK_AT(where, !is_stop_or_done(v), what);
    crd.write(c);
    val.write(v);
    hc.pop();
    hv.pop();
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
        if (COMBINE && is_data(a) && is_data(b) && payload(a) == payload(b)) {
            TV va = hva.peek(val_a), vb = hvb.peek(val_b);
            SAMFUSE_CHECK_AT(where, !is_stop_or_done(va) && !is_stop_or_done(vb),
                             "a val stream holds a control token where its crd stream holds a crd");
            crd.write(a);
            val.write(LaneSum<COMBINE, FLOAT>::of(va, vb));
            ha.pop();
            hb.pop();
            hva.pop();
            hvb.pop();
            continue;
        }
        int side = lane_pick(a, b, where);
        if (side == 0) {
            lane_take(a, ha, hva, val_a, crd, val, where,
                      "val_a holds a control token where crd_a holds a crd");
        } else if (side == 1) {
            lane_take(b, hb, hvb, val_b, crd, val, where,
                      "val_b holds a control token where crd_b holds a crd");
        } else {
            TV va = hva.peek(val_a), vb = hvb.peek(val_b);
            SAMFUSE_CHECK_AT(where, same_tok(va, a) && same_tok(vb, a),
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

}  // namespace samfuse

template <int II = 1, int LAT = 1, int START = 0, class TV, class CrdOut, class ValOut>
void samfuse_lane_merge(hls::stream<samfuse::tok_t>& crd_a, hls::stream<TV>& val_a,
                        hls::stream<samfuse::tok_t>& crd_b, hls::stream<TV>& val_b, CrdOut crd,
                        ValOut val) {
    samfuse::process_start<II, LAT, START>();
    samfuse::lane_merge_loop<II, LAT, false, true>(crd_a, val_a, crd_b, val_b, crd, val, __func__);
}
#endif
