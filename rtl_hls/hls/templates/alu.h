// alu: val = a OP b on aligned value streams; N counts as 0; stops and D must match.
#ifndef SAMFUSE_ALU_H
#define SAMFUSE_ALU_H
#include "samfuse_hls.h"

template <int OP, bool FLOAT, class ValOut>
void samfuse_alu(hls::stream<samfuse::tok_t>& a_in, hls::stream<samfuse::tok_t>& b_in,
                 ValOut val) {
    using namespace samfuse;
alu_loop:
    while (true) {
#pragma HLS pipeline II = 1
        tok_t a = a_in.read(), b = b_in.read();
        if (is_stop_or_done(a) || is_stop_or_done(b)) {
            SAMFUSE_CHECK(same_tok(a, b), "misaligned operands");
            val.write(a);
            if (is_done(a)) break;
        } else {
            uint32_t x = is_empty(a) ? 0u : payload(a), y = is_empty(b) ? 0u : payload(b);
            val.write(data_tok(binop<FLOAT>(OP, x, y)));
        }
    }
}
#endif
