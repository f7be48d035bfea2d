// union: emits every crd of either side, with N as the ref of the side that lacks it; an N
// crd on an input contributes nothing. union_val (union_val.h) runs the same loop with values
// on side a's second stream (N there is a missing value, read as 0 downstream).
#ifndef SAMFUSE_UNION_H
#define SAMFUSE_UNION_H
#include "join_core.h"

namespace samfuse {
// One unioner firing on heads that are not both control tokens (join_streams).
struct UnionRule {
    static constexpr const char* where = "union";
    template <class RA, class CrdOut, class AOut, class BOut>
    static void step(tok_t a, RA ra, tok_t b, tok_t rb, JoinSide<RA>& sa, JoinSide<>& sb,
                     CrdOut& crd, AOut& out_a, BOut& out_b) {
        bool ad = is_data(a), bd = is_data(b);
        if (is_empty(a) || is_empty(b)) {
            if (is_empty(a)) sa.pop();
            if (is_empty(b)) sb.pop();
        } else if (ad && (!bd || payload(a) < payload(b))) {
            SAMFUSE_CHECK_AT(where, !is_done(b), "crd_b ended (D) while crd_a holds a crd");
            crd.write(a);
            out_a.write(ra);
            out_b.write(empty_tok());
            sa.pop();
        } else if (bd && (!ad || payload(b) < payload(a))) {
            SAMFUSE_CHECK_AT(where, !is_done(a), "crd_a ended (D) while crd_b holds a crd");
            crd.write(b);
            out_a.write(empty_tok());
            out_b.write(rb);
            sb.pop();
        } else {  // equal coordinates (join_streams: not both heads control tokens)
            crd.write(a);
            out_a.write(ra);
            out_b.write(rb);
            sa.pop();
            sb.pop();
        }
    }
};

// The unioner loop shared by union and union_val.
template <int II, int LAT, class RA, class CrdOut, class AOut, class BOut>
void union_streams(hls::stream<tok_t>& crd_a, hls::stream<RA>& side_a,
                   hls::stream<tok_t>& crd_b, hls::stream<tok_t>& ref_b, CrdOut& crd,
                   AOut& out_a, BOut& out_b) {
    join_streams<UnionRule, II, LAT>(crd_a, side_a, crd_b, ref_b, crd, out_a, out_b);
}
}  // namespace samfuse

template <int II = 1, int LAT = 1, int START = 0, class CrdOut, class AOut, class BOut>
void samfuse_union(hls::stream<samfuse::tok_t>& crd_a, hls::stream<samfuse::tok_t>& ref_a,
                   hls::stream<samfuse::tok_t>& crd_b, hls::stream<samfuse::tok_t>& ref_b,
                   CrdOut crd, AOut out_a, BOut out_b) {
    samfuse::process_start<II, LAT, START>();
    samfuse::union_streams<II, LAT>(crd_a, ref_a, crd_b, ref_b, crd, out_a, out_b);
}
#endif
