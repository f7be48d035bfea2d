// value_writer: appends values (binary32 bits or int32; a block's E elements as E words,
// element 0 first); stops are dropped. Reports how many words the stream had (more than
// cap: rerun with larger arrays): counts[0] in tops without memory, a scalar output next
// to the m_axi vals port in tops with off-chip memory.
#ifndef SAMFUSE_VALUE_WRITER_H
#define SAMFUSE_VALUE_WRITER_H
#include "samfuse_hls.h"

namespace samfuse {
template <int II, int LAT, class TV, class W>
uint32_t value_writer_loop(hls::stream<TV>& val, W* vals, uint32_t cap) {
    uint32_t n = 0;
value_writer_loop:
    while (true) {
        SAMFUSE_PIPELINE
        TV t = val.read();
        if (is_data(t)) {
            for (int k = 0; k < tok_io<TV>::E; k++) {
                if (n < cap) vals[n] = tok_io<TV>::get(t, k);
                n++;
            }
        } else if (is_done(t)) {
            break;
        } else {
            SAMFUSE_CHECK(is_stop(t), "value_writer: unexpected N on val");
        }
    }
    return n;
}
}  // namespace samfuse

template <int II = 1, int LAT = 1, int START = 0, class TV>
void samfuse_value_writer(hls::stream<TV>& val, samfuse::word_t* vals, samfuse::word_t* counts,
                          uint32_t cap) {
    samfuse::process_start<II, LAT, START>();
    counts[0] = samfuse::value_writer_loop<II, LAT>(val, vals, cap);
}

template <int II = 1, int LAT = 1, int START = 0, class TV>
void samfuse_value_writer(hls::stream<TV>& val, uint32_t* vals, uint32_t* n_vals, uint32_t cap) {
    samfuse::process_start<II, LAT, START>();
    *n_vals = samfuse::value_writer_loop<II, LAT>(val, vals, cap);
}
#endif
