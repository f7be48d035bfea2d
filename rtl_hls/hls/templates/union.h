// union: emits every crd of either side, with N as the ref of the side that lacks it; an N
// crd on an input contributes nothing. union_val (union_val.h) runs the same loop with values
// on side a's second stream (N there is a missing value, read as 0 downstream).
#ifndef SAMFUSE_UNION_H
#define SAMFUSE_UNION_H
#include "join_core.h"

namespace samfuse {
// The unioner loop shared by union and union_val: `side_a` is side a's second stream (ref_a
// or val_a), passed to `out_a` word for word.
template <class RA, class CrdOut, class AOut, class BOut>
void union_streams(hls::stream<tok_t>& crd_a, hls::stream<RA>& side_a,
                   hls::stream<tok_t>& crd_b, hls::stream<tok_t>& ref_b, CrdOut& crd,
                   AOut& out_a, BOut& out_b) {
    JoinSide<RA> sa;
    JoinSide<> sb;
union_loop:
    while (true) {
#pragma HLS pipeline II = 1
        tok_t a = sa.crd.peek(crd_a);
        RA ra = sa.ref.peek(side_a);
        tok_t b = sb.crd.peek(crd_b), rb = sb.ref.peek(ref_b);
        bool ad = is_data(a), bd = is_data(b);
        if (is_empty(a) || is_empty(b)) {
            if (is_empty(a)) sa.pop();
            if (is_empty(b)) sb.pop();
        } else if (ad && (!bd || payload(a) < payload(b))) {
            SAMFUSE_CHECK(!is_done(b), "crd_b ended (D) while crd_a holds a crd");
            crd.write(a);
            out_a.write(ra);
            out_b.write(empty_tok());
            sa.pop();
        } else if (bd && (!ad || payload(b) < payload(a))) {
            SAMFUSE_CHECK(!is_done(a), "crd_a ended (D) while crd_b holds a crd");
            crd.write(b);
            out_a.write(empty_tok());
            out_b.write(rb);
            sb.pop();
        } else if (ad) {  // equal coordinates
            crd.write(a);
            out_a.write(ra);
            out_b.write(rb);
            sa.pop();
            sb.pop();
        } else if (join_control(a, b, sa, sb, crd, out_a, out_b)) {
            break;
        }
    }
}
}  // namespace samfuse

template <class CrdOut, class AOut, class BOut>
void samfuse_union(hls::stream<samfuse::tok_t>& crd_a, hls::stream<samfuse::tok_t>& ref_a,
                   hls::stream<samfuse::tok_t>& crd_b, hls::stream<samfuse::tok_t>& ref_b,
                   CrdOut crd, AOut out_a, BOut out_b) {
    samfuse::union_streams(crd_a, ref_a, crd_b, ref_b, crd, out_a, out_b);
}
#endif
