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

}  // namespace samfuse
#endif
