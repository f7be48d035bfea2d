// alu: val = a OP b on aligned value streams; N counts as 0; stops and D must match.
// samfuse_alu<OP, FLOAT, SPEC[, II]> computes on blocks by the block operator SPEC
// (block_op.h), one firing per II cycles (ir.block_cycles); samfuse_alu<OP, FLOAT> is
// its scalar case (an overload, so checks name the primitive either way).
#ifndef SAMFUSE_ALU_H
#define SAMFUSE_ALU_H
#include "block_op.h"

template <int OP, bool FLOAT, class SPEC, int II = 1, int LAT = 1, int START = 0,
          class TA, class TB, class ValOut>
void samfuse_alu(hls::stream<TA>& a_in, hls::stream<TB>& b_in, ValOut val) {
    samfuse::process_start<II, LAT, START>();
    using namespace samfuse;
alu_loop:
    while (true) {
        SAMFUSE_PIPELINE
        TA a = a_in.read();
        TB b = b_in.read();
        if (is_stop_or_done(a) || is_stop_or_done(b)) {
            SAMFUSE_CHECK(same_tok(a, b), "misaligned operands");
            val.write(a);
            if (is_done(a)) break;
        } else {
            val.write(block_binary<OP, FLOAT, SPEC>(a, b));
        }
    }
}

template <int OP, bool FLOAT, int II = 1, int LAT = 1, int START = 0, class ValOut>
void samfuse_alu(hls::stream<samfuse::tok_t>& a_in, hls::stream<samfuse::tok_t>& b_in,
                 ValOut val) {
    samfuse_alu<OP, FLOAT, samfuse::ScalarOp, II, LAT, START>(a_in, b_in, val);
}
#endif
