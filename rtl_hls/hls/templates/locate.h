// locate: a coordinate stream addresses a dense level of SIZE coordinates:
// ref = ref_in*SIZE + crd_in on aligned streams; N on either side gives N; stops and D
// must match and pass through (docs/primitives.md).
#ifndef SAMFUSE_LOCATE_H
#define SAMFUSE_LOCATE_H
#include "samfuse_hls.h"

template <uint32_t SIZE, int II = 1, int LAT = 1, int START = 0, class RefOut>
void samfuse_locate(hls::stream<samfuse::tok_t>& crd_in, hls::stream<samfuse::tok_t>& ref_in,
                    RefOut ref) {
    samfuse::process_start<II, LAT, START>();
    using namespace samfuse;
locate_loop:
    while (true) {
        SAMFUSE_PIPELINE
        tok_t c = crd_in.read(), r = ref_in.read();
        if (is_stop_or_done(c) || is_stop_or_done(r)) {
            SAMFUSE_CHECK(same_tok(c, r), "misaligned streams");
            ref.write(c);
            if (is_done(c)) break;
        } else if (is_empty(c) || is_empty(r)) {
            ref.write(make_tok(TAG_EMPTY, 0));
        } else {
            SAMFUSE_CHECK(payload(c) < SIZE, "coordinate outside the dense level");
            ref.write(data_tok(payload(r) * SIZE + payload(c)));
        }
    }
}
#endif
