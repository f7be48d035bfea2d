// Shared helpers of the coordinate joiners (intersect, union): both look at the four heads
// (crd and ref of a side travel together) and advance by sorted merge. Stops must align and
// D must arrive together on both sides.
#ifndef SAMFUSE_JOIN_CORE_H
#define SAMFUSE_JOIN_CORE_H
#include "samfuse_hls.h"

namespace samfuse {

struct JoinSide {
    Head crd, ref;
    void pop() {
        crd.pop();
        ref.pop();
    }
};

// Both crd heads are control tokens: aligned stops or D pass to all three outputs.
// Returns true when D was passed (the joiner is finished).
template <class CrdOut, class AOut, class BOut>
bool join_control(tok_t a, tok_t b, JoinSide& sa, JoinSide& sb, CrdOut& crd, AOut& ref_a,
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
