// lane_combine2: the lane reduction of two levels (docs/primitives.md). lane_merge2, plus
// MERGE: an outer crd both lanes hold (a row split across lanes) passes once, and its two
// inner fibers are merged like lane_combine merges one level, adding equal inner crds.
// When both inner fibers have closed, the closing stop is owed (pending) as after a COPY.
// Scalar values only.
#ifndef SAMFUSE_LANE_COMBINE2_H
#define SAMFUSE_LANE_COMBINE2_H
#include "lane_combine.h"
#include "lane_merge2.h"

namespace samfuse {
enum { LC2_MERGE = 3 };
}  // namespace samfuse

template <bool FLOAT, class Crd1Out, class Crd0Out, class ValOut>
void samfuse_lane_combine2(hls::stream<samfuse::tok_t>& crd1_a, hls::stream<samfuse::tok_t>& crd0_a,
                           hls::stream<samfuse::tok_t>& val_a, hls::stream<samfuse::tok_t>& crd1_b,
                           hls::stream<samfuse::tok_t>& crd0_b, hls::stream<samfuse::tok_t>& val_b,
                           Crd1Out crd1, Crd0Out crd0, ValOut val) {
    using namespace samfuse;
    Head h1a, h0a, h1b, h0b, hva, hvb;
    ap_uint<2> mode = LM2_PICK;
    bool pending = false;
    uint32_t closed_a = 0, closed_b = 0;  // 0: not closed (a closing inner stop is > 0)
lane_combine2_loop:
    while (true) {
#pragma HLS pipeline II = 1
        if (mode == LM2_COPY_A) {
            if (lane_copy(h0a, hva, crd0_a, val_a, crd0, val, closed_a, __func__)) {
                mode = LM2_PICK;
                pending = true;
            }
            continue;
        }
        if (mode == LM2_COPY_B) {
            if (lane_copy(h0b, hvb, crd0_b, val_b, crd0, val, closed_b, __func__)) {
                mode = LM2_PICK;
                pending = true;
            }
            continue;
        }
        if (mode == LC2_MERGE) {
            tok_t a = h0a.peek(crd0_a), b = h0b.peek(crd0_b);
            if (is_stop(a) && is_stop(b)) {  // both inner fibers closed
                SAMFUSE_CHECK(same_tok(hva.peek(val_a), a) && same_tok(hvb.peek(val_b), b),
                              "a val stream's stop does not match its crd0 stream's");
                if (payload(a) > 0) closed_a = payload(a);
                if (payload(b) > 0) closed_b = payload(b);
                h0a.pop();
                hva.pop();
                h0b.pop();
                hvb.pop();
                mode = LM2_PICK;
                pending = true;
                continue;
            }
            SAMFUSE_CHECK((is_data(a) || is_stop(a)) && (is_data(b) || is_stop(b)),
                          "a crd0 stream holds D or N inside a fiber");
            bool both = is_data(a) && is_data(b) && payload(a) == payload(b);
            bool take_a = both || (is_data(a) && (is_stop(b) || payload(a) < payload(b)));
            bool take_b = both || !take_a;
            tok_t va = take_a ? hva.peek(val_a) : tok_t(), vb = take_b ? hvb.peek(val_b) : tok_t();
            SAMFUSE_CHECK((!take_a || !is_stop_or_done(va)) && (!take_b || !is_stop_or_done(vb)),
                          "a val stream holds a control token where crd0 holds a crd");
            crd0.write(take_a ? a : b);
            val.write(both ? lane_sum<FLOAT>(va, vb) : take_a ? va : vb);
            if (take_a) {
                h0a.pop();
                hva.pop();
            }
            if (take_b) {
                h0b.pop();
                hvb.pop();
            }
            continue;
        }
        tok_t a = h1a.peek(crd1_a), b = h1b.peek(crd1_b);
        bool same = is_data(a) && is_data(b) && payload(a) == payload(b);
        int side = same ? 2 : lane_pick(a, b, __func__);
        if (side >= 0) {
            crd1.write(side == 1 ? b : a);
            if (pending) {
                crd0.write(stop_tok(0));
                val.write(stop_tok(0));
            }
            if (side != 1) h1a.pop();
            if (side != 0) h1b.pop();
            mode = side == 0 ? LM2_COPY_A : side == 1 ? LM2_COPY_B : LC2_MERGE;
            pending = false;
            continue;
        }
        // both lanes end the outer fiber (S_k) or the stream (D)
        bool done = is_done(a);
        tok_t inner = done ? done_tok() : stop_tok(payload(a) + 1);
        SAMFUSE_CHECK(done || closed_a == 0 || closed_a == payload(a) + 1,
                      "lane a's inner stream closed its fiber at another level than the outer stop");
        SAMFUSE_CHECK(done || closed_b == 0 || closed_b == payload(a) + 1,
                      "lane b's inner stream closed its fiber at another level than the outer stop");
        if (done || closed_a == 0) lane_close(h0a, hva, crd0_a, val_a, inner, __func__);
        if (done || closed_b == 0) lane_close(h0b, hvb, crd0_b, val_b, inner, __func__);
        h1a.pop();
        h1b.pop();
        crd1.write(a);
        crd0.write(inner);
        val.write(inner);
        pending = false;
        closed_a = closed_b = 0;
        if (done) break;
    }
}
#endif
