// reduce: removes the innermost level by sum or max (OP is OP_ADD or OP_MAX). outer holds
// one ref per level-0 fiber: a ref under an inner stop means a fiber closes (emit the
// accumulator), S_{k-1} under S_k means the parent closes (emit S_{k-1}).
// samfuse_reduce<OP, FLOAT, SPEC[, II]> first folds each value over SPEC's contracted
// letters (block_op.h), then combines it with the accumulator elementwise;
// samfuse_reduce<OP, FLOAT> is the scalar case (an overload).
#ifndef SAMFUSE_REDUCE_H
#define SAMFUSE_REDUCE_H
#include "block_op.h"

template <int OP, bool FLOAT, class SPEC, int II = 1, int LAT = 1, int START = 0,
          class TV, class ValOut>
void samfuse_reduce(hls::stream<TV>& val_in, hls::stream<samfuse::tok_t>& outer,
                          ValOut val) {
    samfuse::process_start<II, LAT, START>();
    using namespace samfuse;
    typedef typename tok_of<SPEC::OUT>::type TO;
    // identity: 0 for sum; -inf (binary32) or INT32_MIN for max
    const uint32_t identity = OP == OP_ADD ? 0u : (FLOAT ? 0xFF800000u : 0x80000000u);
    uint32_t acc[SPEC::OUT], y[SPEC::OUT];
#pragma HLS array_partition variable = acc complete
#pragma HLS array_partition variable = y complete
    for (int k = 0; k < SPEC::OUT; k++) acc[k] = identity;
    HeadOf<TV> in;
    Head out_h;
reduce_loop:
    while (true) {
        SAMFUSE_PIPELINE
        TV t = in.peek(val_in);
        if (is_data(t) || is_empty(t)) {
            in.pop();
            block_fold<OP, FLOAT, SPEC>(t, y);
            combine<OP, FLOAT, SPEC::OUT>(acc, y);
            continue;
        }
        tok_t o = out_h.peek(outer);
        if (is_data(o) || is_empty(o)) {  // a level-0 fiber closes
            SAMFUSE_CHECK(is_stop(t), "val_in holds D while outer holds a ref");
            out_h.pop();
            val.write(data_of<TO>(acc));
            for (int k = 0; k < SPEC::OUT; k++) acc[k] = identity;
            if (payload(t) == 0) in.pop();
        } else {
            SAMFUSE_CHECK((is_stop(t) && is_stop(o) && payload(o) + 1 == payload(t)) ||
                              (is_done(t) && is_done(o)),
                          "misaligned streams on val_in / outer");
            in.pop();
            out_h.pop();
            val.write(o);
            if (is_done(o)) break;
        }
    }
}

template <int OP, bool FLOAT, int II = 1, int LAT = 1, int START = 0, class ValOut>
void samfuse_reduce(hls::stream<samfuse::tok_t>& val_in, hls::stream<samfuse::tok_t>& outer,
                    ValOut val) {
    samfuse_reduce<OP, FLOAT, samfuse::ScalarOp, II, LAT, START>(val_in, outer, val);
}
#endif
