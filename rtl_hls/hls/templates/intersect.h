// intersect: emits a crd present on both sides with both refs; N matches nothing; the
// smaller side is skipped one crd per firing. intersect_val (intersect_val.h) runs the same
// loop with values on side a's second stream.
#ifndef SAMFUSE_INTERSECT_H
#define SAMFUSE_INTERSECT_H
#include "join_core.h"

namespace samfuse {
// One intersecter firing on heads that are not both control tokens (join_streams).
struct IntersectRule {
    static constexpr const char* where = "intersect";
    template <class RA, class CrdOut, class AOut, class BOut>
    static void step(tok_t a, RA ra, tok_t b, tok_t rb, JoinSide<RA>& sa, JoinSide<>& sb,
                     CrdOut& crd, AOut& out_a, BOut& out_b) {
        bool ad = is_data(a), bd = is_data(b);
        if (ad && bd) {
            if (payload(a) == payload(b)) {
                crd.write(a);
                out_a.write(ra);
                out_b.write(rb);
                sa.pop();
                sb.pop();
            } else if (payload(a) < payload(b)) {
                sa.pop();
            } else {
                sb.pop();
            }
        } else if (ad || is_empty(a)) {
            SAMFUSE_CHECK_AT(where, !is_done(b), "crd_b ended (D) while crd_a holds a crd");
            sa.pop();
            if (is_empty(b)) sb.pop();
        } else {  // b is a crd or N (join_streams: not both heads control tokens)
            SAMFUSE_CHECK_AT(where, !is_done(a), "crd_a ended (D) while crd_b holds a crd");
            sb.pop();
        }
    }
};

// The intersecter loop shared by intersect and intersect_val.
template <int II, int LAT, class RA, class CrdOut, class AOut, class BOut>
void intersect_streams(hls::stream<tok_t>& crd_a, hls::stream<RA>& side_a,
                       hls::stream<tok_t>& crd_b, hls::stream<tok_t>& ref_b, CrdOut& crd,
                       AOut& out_a, BOut& out_b) {
    join_streams<IntersectRule, II, LAT>(crd_a, side_a, crd_b, ref_b, crd, out_a, out_b);
}
}  // namespace samfuse

template <int II = 1, int LAT = 1, int START = 0, class CrdOut, class AOut, class BOut>
void samfuse_intersect(hls::stream<samfuse::tok_t>& crd_a, hls::stream<samfuse::tok_t>& ref_a,
                       hls::stream<samfuse::tok_t>& crd_b, hls::stream<samfuse::tok_t>& ref_b,
                       CrdOut crd, AOut out_a, BOut out_b) {
    samfuse::process_start<II, LAT, START>();
    samfuse::intersect_streams<II, LAT>(crd_a, ref_a, crd_b, ref_b, crd, out_a, out_b);
}
#endif
