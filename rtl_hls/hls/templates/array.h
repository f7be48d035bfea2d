// array: value array, val = vals[ref]; N loads 0; stops and D pass through. W is the
// stored word: samfuse::word_t, or uint32_t behind an m_axi port.
#ifndef SAMFUSE_ARRAY_H
#define SAMFUSE_ARRAY_H
#include "samfuse_hls.h"

template <class ValOut, class W>
void samfuse_array(hls::stream<samfuse::tok_t>& ref, ValOut val, const W* vals) {
    using namespace samfuse;
array_loop:
    while (true) {
#pragma HLS pipeline II = 1
        tok_t t = ref.read();
        if (is_data(t)) {
            val.write(data_tok(u32(vals[payload(t)])));
        } else if (is_empty(t)) {
            val.write(data_tok(0));  // 0 is the zero of both binary32 and int32
        } else {
            val.write(t);
            if (is_done(t)) break;
        }
    }
}
#endif
