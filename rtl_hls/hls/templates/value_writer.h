// value_writer: appends values (binary32 bits or int32); stops are dropped; counts[0]
// reports how many values the stream had (more than cap: rerun with larger arrays).
#ifndef SAMFUSE_VALUE_WRITER_H
#define SAMFUSE_VALUE_WRITER_H
#include "samfuse_hls.h"

inline void samfuse_value_writer(hls::stream<samfuse::tok_t>& val, samfuse::word_t* vals,
                                 samfuse::word_t* counts, uint32_t cap) {
    using namespace samfuse;
    uint32_t n = 0;
value_writer_loop:
    while (true) {
#pragma HLS pipeline II = 1
        tok_t t = val.read();
        if (is_data(t)) {
            if (n < cap) vals[n] = payload(t);
            n++;
        } else if (is_done(t)) {
            break;
        } else {
            SAMFUSE_CHECK(is_stop(t), "value_writer: unexpected N on val");
        }
    }
    counts[0] = n;
}
#endif
