// lane_combine: the lane reduction of one level (docs/primitives.md). lane_merge, except
// that a crd both lanes hold in a fiber (each lane's partial) passes once with the sum of
// the two values (N counts as zero; FLOAT: binary32, else int32). Scalar values only.
#ifndef SAMFUSE_LANE_COMBINE_H
#define SAMFUSE_LANE_COMBINE_H
#include "lane_merge.h"

namespace samfuse {

// The sum of two lanes' partial values.
template <bool FLOAT>
inline tok_t lane_sum(const tok_t& a, const tok_t& b) {
    return data_tok(binop<FLOAT>(OP_ADD, operand(a, 0), operand(b, 0)));
}

}  // namespace samfuse

template <bool FLOAT, int II = 1, int LAT = 1, int START = 0, class CrdOut, class ValOut>
void samfuse_lane_combine(hls::stream<samfuse::tok_t>& crd_a, hls::stream<samfuse::tok_t>& val_a,
                          hls::stream<samfuse::tok_t>& crd_b, hls::stream<samfuse::tok_t>& val_b,
                          CrdOut crd, ValOut val) {
    samfuse::process_start<II, LAT, START>();
    using namespace samfuse;
    Head ha, hb, hva, hvb;
lane_combine_loop:
    while (true) {
        SAMFUSE_PIPELINE
        tok_t a = ha.peek(crd_a), b = hb.peek(crd_b);
        if (is_data(a) && is_data(b) && payload(a) == payload(b)) {
            tok_t va = hva.peek(val_a), vb = hvb.peek(val_b);
            SAMFUSE_CHECK(!is_stop_or_done(va) && !is_stop_or_done(vb),
                          "a val stream holds a control token where its crd stream holds a crd");
            crd.write(a);
            val.write(lane_sum<FLOAT>(va, vb));
            ha.pop();
            hb.pop();
            hva.pop();
            hvb.pop();
            continue;
        }
        int side = lane_pick(a, b, __func__);
        if (side == 0) {
            lane_take(a, ha, hva, val_a, crd, val, __func__,
                      "val_a holds a control token where crd_a holds a crd");
        } else if (side == 1) {
            lane_take(b, hb, hvb, val_b, crd, val, __func__,
                      "val_b holds a control token where crd_b holds a crd");
        } else {
            tok_t va = hva.peek(val_a), vb = hvb.peek(val_b);
            SAMFUSE_CHECK(same_tok(va, a) && same_tok(vb, a),
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
#endif
