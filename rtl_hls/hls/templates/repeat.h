// repeat: repeats the current ref once per R; a repsig stop ends its fiber. ref_in holds
// one ref per repsig fiber, so its head tells whether a repsig stop closes a fiber (a ref:
// pop it) or an empty parent (a stop). A stop S_k (k>0) that closed a fiber also stands for
// the S_{k-1} that follows on ref_in, which is then skipped. The token word does not care
// what the payload means, so broadcast (broadcast.h) runs the same loop on values.
#ifndef SAMFUSE_REPEAT_H
#define SAMFUSE_REPEAT_H
#include "samfuse_hls.h"

namespace samfuse {
// The repeater loop shared by repeat (refs) and broadcast (values): `in` is the repeated
// stream (ref_in or val_in: a scalar word or a block), `out` its repeated copy.
template <int II, int LAT, class T, class Out>
void repeat_stream(hls::stream<T>& in, hls::stream<tok_t>& repsig, Out& out) {
    HeadOf<T> r_h;
    int skip = -1;
repeat_loop:
    while (true) {
        SAMFUSE_PIPELINE
        T r = r_h.peek(in);
        if (skip >= 0) {
            SAMFUSE_CHECK(is_stop(r) && payload(r) == static_cast<uint32_t>(skip),
                          "expected the merged stop on the repeated input");
            r_h.pop();
            skip = -1;
            continue;
        }
        tok_t s = repsig.read();
        if (is_data(s)) {
            SAMFUSE_CHECK(is_data(r) || is_empty(r),
                          "repeat signal R but the repeated input holds a control token");
            out.write(r);
        } else if (is_stop(s)) {
            r_h.pop();
            out.write(s);
            if (is_stop(r)) {
                SAMFUSE_CHECK(payload(r) + 1 == payload(s),
                              "repsig stop against a repeated-input stop");
            } else if (payload(s) > 0) {
                skip = payload(s) - 1;
            }
        } else {
            SAMFUSE_CHECK(is_done(s) && is_done(r), "repsig D but the repeated input is not done");
            r_h.pop();
            out.write(done_tok());
            break;
        }
    }
}
}  // namespace samfuse

template <int II = 1, int LAT = 1, int START = 0, class RefOut>
void samfuse_repeat(hls::stream<samfuse::tok_t>& ref_in, hls::stream<samfuse::tok_t>& repsig,
                    RefOut ref) {
    samfuse::process_start<II, LAT, START>();
    samfuse::repeat_stream<II, LAT>(ref_in, repsig, ref);
}
#endif
