// unary: elementwise unary op; FCONST is the binary32 constant (bits), ICONST int(const).
// A block applies it to every element (N as the zero block); II is the firing interval
// of a block operator (ir.block_cycles).
#ifndef SAMFUSE_UNARY_H
#define SAMFUSE_UNARY_H
#include "samfuse_hls.h"

template <int OP, bool FLOAT, uint32_t FCONST, int64_t ICONST,
          int II = 1, int LAT = 1, int START = 0, class TV, class ValOut>
void samfuse_unary(hls::stream<TV>& a_in, ValOut val) {
    samfuse::process_start<II, LAT, START>();
    using namespace samfuse;
    const int E = tok_io<TV>::E;
    uint32_t y[E];
#pragma HLS array_partition variable = y complete
unary_loop:
    while (true) {
        SAMFUSE_PIPELINE
        TV a = a_in.read();
        if (is_data(a) || is_empty(a)) {
            for (int k = 0; k < E; k++) {
                uint32_t x = operand(a, k);
                y[k] = FLOAT ? fun(OP, x, FCONST) : iun(OP, x, ICONST);
            }
            val.write(data_of<TV>(y));
        } else {
            val.write(a);
            if (is_done(a)) break;
        }
    }
}
#endif
