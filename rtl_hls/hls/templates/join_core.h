// Shared helpers of the coordinate joiners (intersect, union, intersect_val, union_val): all
// look at the four heads (crd and ref of a side travel together) and advance by sorted merge.
// Stops must align and D must arrive together on both sides. Side a's second stream holds
// refs, or values in the _val joiners: the joiners move it as whole words, never reading
// the payload, so a value (float32 bits, -0.0 and NaN payloads included, or int32) passes
// unchanged, and the N written for a missing side is the N word of any stream kind.
#ifndef SAMFUSE_JOIN_CORE_H
#define SAMFUSE_JOIN_CORE_H
#include "samfuse_hls.h"

namespace samfuse {

template <class R = tok_t>
struct JoinSide {
    Head crd;
    HeadOf<R> ref;  // side a's ref or value stream (a scalar word or a block), side b's refs
    void pop() {
        crd.pop();
        ref.pop();
    }
};

// Both crd heads are control tokens: aligned stops or D pass to all three outputs.
// Returns true when D was passed (the joiner is finished).
template <class RA, class CrdOut, class AOut, class BOut>
bool join_control(tok_t a, tok_t b, JoinSide<RA>& sa, JoinSide<>& sb, CrdOut& crd, AOut& ref_a,
                  BOut& ref_b) {
    SAMFUSE_CHECK(is_stop_or_done(a) && same_tok(a, b), "misaligned streams on crd_a / crd_b");
    crd.write(a);
    ref_a.write(a);
    ref_b.write(a);
    sa.pop();
    sb.pop();
    return is_done(a);
}

// The joiner loop of intersect, union and their _val forms: every cycle it reads the four
// heads; aligned control tokens pass (join_control, D ends the loop), anything else is the
// `Rule::step` of the joiner. `side_a` is side a's second stream (ref_a or val_a), passed
// to `out_a` word for word.
template <class Rule, int II, int LAT, class RA, class CrdOut, class AOut, class BOut>
void join_streams(hls::stream<tok_t>& crd_a, hls::stream<RA>& side_a, hls::stream<tok_t>& crd_b,
                  hls::stream<tok_t>& ref_b, CrdOut& crd, AOut& out_a, BOut& out_b) {
    JoinSide<RA> sa;
    JoinSide<> sb;
join_loop:
    while (true) {
        SAMFUSE_PIPELINE
        tok_t a = sa.crd.peek(crd_a);
        RA ra = sa.ref.peek(side_a);
        tok_t b = sb.crd.peek(crd_b), rb = sb.ref.peek(ref_b);
        if (!is_stop_or_done(a) || !is_stop_or_done(b)) {
            Rule::step(a, ra, b, rb, sa, sb, crd, out_a, out_b);
        } else if (join_control(a, b, sa, sb, crd, out_a, out_b)) {
            break;
        }
    }
}

}  // namespace samfuse
#endif
