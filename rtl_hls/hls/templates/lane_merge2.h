// lane_merge2: ordered merge of two lanes' output at two levels (docs/primitives.md).
// Outer crds (crd1) are disjoint within a fiber, each followed on crd0/val by its inner
// fiber from the same lane. PICK passes the smaller outer crd and switches to COPY of that
// lane's inner fiber; the stop closing a copied fiber is owed (pending) until the next
// outer step shows which it is: S0 before another outer crd, S_{k+1} when the outer
// fibers end with S_k. closed_x remembers the level (> 0) of the inner stop that closed
// lane x's inner stream for this outer fiber; a lane without one still holds its lone
// closing stop, consumed when the outer stop passes.
#ifndef SAMFUSE_LANE_MERGE2_H
#define SAMFUSE_LANE_MERGE2_H
#include "lane_merge.h"

namespace samfuse {

enum { LM2_PICK = 0, LM2_COPY_A = 1, LM2_COPY_B = 2, LM2_MERGE = 3 };

// One COPY firing on one lane: an inner crd and its value pass; the inner stop that ends
// the fiber is consumed (needs no space) and leaves pending set. Returns true at the stop.
template <class TV, class Crd0Out, class ValOut>
bool lane_copy(Head& hc, HeadOf<TV>& hv, hls::stream<tok_t>& crd0_in, hls::stream<TV>& val_in,
               Crd0Out& crd0, ValOut& val, uint32_t& closed, const char* where) {
    tok_t c = hc.peek(crd0_in);
    TV v = hv.peek(val_in);
    hc.pop();
    hv.pop();
    if (is_stop(c)) {
        SAMFUSE_CHECK_AT(where, same_tok(v, c), "a val stream's stop does not match its crd0 stream's");
        if (payload(c) > 0) closed = payload(c);
        return true;
    }
    SAMFUSE_CHECK_AT(where, is_data(c), "a crd0 stream holds D or N inside a fiber");
    SAMFUSE_CHECK_AT(where, !is_stop_or_done(v), "a val stream holds a control token where crd0 holds a crd");
    crd0.write(c);
    val.write(v);
    return false;
}

// The lone closing stop of a lane's inner stream (crd0 and val heads must equal ``want``),
// when the outer fibers end and the lane did not close its inner stream in a copy.
template <class TV>
void lane_close(Head& hc, HeadOf<TV>& hv, hls::stream<tok_t>& crd0_in, hls::stream<TV>& val_in,
                const tok_t& want, const char* where) {
    tok_t c = hc.peek(crd0_in);
    TV v = hv.peek(val_in);
    SAMFUSE_CHECK_AT(where, same_tok(c, want) && same_tok(v, want),
                  "a lane's inner stream does not close its outer fiber with the stop below it");
    hc.pop();
    hv.pop();
}

// The PICK / COPY_a / COPY_b machine of both two-level lane merges; with COMBINE (a lane
// reduction, lane_combine2), an outer crd both lanes hold passes once and MERGE merges its
// two inner fibers one firing at a time (lane_merge_firing, lane_combine's firing) until
// both hold their closing stop, which is then owed like a copied fiber's.
template <bool COMBINE, bool FLOAT, int II, int LAT, class TV, class Crd1Out, class Crd0Out,
          class ValOut>
void lane_merge2_machine(hls::stream<tok_t>& crd1_a, hls::stream<tok_t>& crd0_a,
                         hls::stream<TV>& val_a, hls::stream<tok_t>& crd1_b,
                         hls::stream<tok_t>& crd0_b, hls::stream<TV>& val_b, Crd1Out& crd1,
                         Crd0Out& crd0, ValOut& val, const char* where) {
    Head h1a, h0a, h1b, h0b;
    HeadOf<TV> hva, hvb;
    ap_uint<2> mode = LM2_PICK;
    bool pending = false;
    uint32_t closed_a = 0, closed_b = 0;  // 0: not closed (a closing inner stop is > 0)
lane_merge2_loop:
    while (true) {
        SAMFUSE_PIPELINE
        if (mode == LM2_COPY_A) {
            if (lane_copy(h0a, hva, crd0_a, val_a, crd0, val, closed_a, where)) {
                mode = LM2_PICK;
                pending = true;
            }
            continue;
        }
        if (mode == LM2_COPY_B) {
            if (lane_copy(h0b, hvb, crd0_b, val_b, crd0, val, closed_b, where)) {
                mode = LM2_PICK;
                pending = true;
            }
            continue;
        }
        if (COMBINE && mode == LM2_MERGE) {
            tok_t a = h0a.peek(crd0_a), b = h0b.peek(crd0_b);
            if (is_stop(a) && is_stop(b)) {  // both fibers closed: their closing stop is owed
                SAMFUSE_CHECK_AT(where, same_tok(hva.peek(val_a), a) && same_tok(hvb.peek(val_b), b),
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
            int side = lane_order<COMBINE>(a, b, where);
            SAMFUSE_CHECK_AT(where, side >= 0, "a crd0 stream holds D inside a fiber");
            lane_merge_firing<COMBINE, FLOAT>(side, a, b, h0a, hva, val_a, h0b, hvb, val_b, crd0,
                                              val, where);
            continue;
        }
        tok_t a = h1a.peek(crd1_a), b = h1b.peek(crd1_b);
        int side = lane_order<COMBINE>(a, b, where);
        if (side >= 0) {
            crd1.write(side == 1 ? b : a);
            if (pending) {
                crd0.write(stop_tok(0));
                val.write(stop_tok(0));
            }
            if (side != 1) h1a.pop();
            if (side != 0) h1b.pop();
            mode = side == 0 ? LM2_COPY_A : side == 1 ? LM2_COPY_B : LM2_MERGE;
            pending = false;
            continue;
        }
        // both lanes end the outer fiber (S_k) or the stream (D)
        bool done = is_done(a);
        tok_t inner = done ? done_tok() : stop_tok(payload(a) + 1);
        SAMFUSE_CHECK_AT(where, done || closed_a == 0 || closed_a == payload(a) + 1,
                      "lane a's inner stream closed its fiber at another level than the outer stop");
        SAMFUSE_CHECK_AT(where, done || closed_b == 0 || closed_b == payload(a) + 1,
                      "lane b's inner stream closed its fiber at another level than the outer stop");
        if (done || closed_a == 0) lane_close(h0a, hva, crd0_a, val_a, inner, where);
        if (done || closed_b == 0) lane_close(h0b, hvb, crd0_b, val_b, inner, where);
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

}  // namespace samfuse

template <int II = 1, int LAT = 1, int START = 0,
          class TV, class Crd1Out, class Crd0Out, class ValOut>
void samfuse_lane_merge2(hls::stream<samfuse::tok_t>& crd1_a, hls::stream<samfuse::tok_t>& crd0_a,
                         hls::stream<TV>& val_a, hls::stream<samfuse::tok_t>& crd1_b,
                         hls::stream<samfuse::tok_t>& crd0_b, hls::stream<TV>& val_b,
                         Crd1Out crd1, Crd0Out crd0, ValOut val) {
    samfuse::process_start<II, LAT, START>();
    samfuse::lane_merge2_machine<false, true, II, LAT>(crd1_a, crd0_a, val_a, crd1_b, crd0_b, val_b,
                                                       crd1, crd0, val, __func__);
}
#endif
