// unary: elementwise unary op; FCONST is the binary32 constant (bits), ICONST int(const).
#ifndef SAMFUSE_UNARY_H
#define SAMFUSE_UNARY_H
#include "samfuse_hls.h"

template <int OP, bool FLOAT, uint32_t FCONST, int64_t ICONST, class ValOut>
void samfuse_unary(hls::stream<samfuse::tok_t>& a_in, ValOut val) {
    using namespace samfuse;
unary_loop:
    while (true) {
#pragma HLS pipeline II = 1
        tok_t a = a_in.read();
        if (is_data(a) || is_empty(a)) {
            uint32_t x = is_empty(a) ? 0u : payload(a);
            val.write(data_tok(FLOAT ? fun(OP, x, FCONST) : iun(OP, x, ICONST)));
        } else {
            val.write(a);
            if (is_done(a)) break;
        }
    }
}
#endif
