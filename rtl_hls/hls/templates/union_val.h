// union_val: union (union.h) with values instead of references on side a's second stream
// (val_a: an accumulator's drained rows meeting an operand); the same loop, see
// docs/primitives.md.
#ifndef SAMFUSE_UNION_VAL_H
#define SAMFUSE_UNION_VAL_H
#include "union.h"
#include "join_core.h"  // the joiner loop (join_streams)

template <int II = 1, int LAT = 1, int START = 0, class TV, class CrdOut, class AOut, class BOut>
void samfuse_union_val(hls::stream<samfuse::tok_t>& crd_a, hls::stream<TV>& val_a,
                       hls::stream<samfuse::tok_t>& crd_b, hls::stream<samfuse::tok_t>& ref_b,
                       CrdOut crd, AOut out_a, BOut out_b) {
    samfuse::process_start<II, LAT, START>();
    samfuse::union_streams<II, LAT>(crd_a, val_a, crd_b, ref_b, crd, out_a, out_b);
}
#endif
