// array: value array, val = vals[ref]; N loads 0; stops and D pass through. W is the
// stored word: samfuse::word_t, or uint32_t behind an m_axi port. E is the elements per
// value (docs/blocks.md): value p is words [p*E, p*E + E), N loads the zero block.
#ifndef SAMFUSE_ARRAY_H
#define SAMFUSE_ARRAY_H
#include "samfuse_hls.h"

template <int E = 1, int II = 1, int LAT = 1, int START = 0, class ValOut, class W>
void samfuse_array(hls::stream<samfuse::tok_t>& ref, ValOut val, const W* vals) {
    samfuse::process_start<II, LAT, START>();
    using namespace samfuse;
    typedef typename tok_of<E>::type TV;
    uint32_t v[E];
#pragma HLS array_partition variable = v complete
array_loop:
    while (true) {
        SAMFUSE_PIPELINE
        tok_t t = ref.read();
        if (is_data(t) || is_empty(t)) {
            // 0 is the zero of both binary32 and int32
            for (int k = 0; k < E; k++) v[k] = is_data(t) ? u32(vals[payload(t) * E + k]) : 0u;
            val.write(data_of<TV>(v));
        } else {
            val.write(t);
            if (is_done(t)) break;
        }
    }
}
#endif
