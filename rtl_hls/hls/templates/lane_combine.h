// lane_combine: the lane reduction of one level (docs/primitives.md). lane_merge, except
// that a crd both lanes hold in a fiber (each lane's partial) passes once with the sum of
// the two values (N counts as zero; FLOAT: binary32, else int32): lane_merge's loop with
// COMBINE. Scalar values only.
#ifndef SAMFUSE_LANE_COMBINE_H
#define SAMFUSE_LANE_COMBINE_H
#include "lane_merge.h"

template <bool FLOAT, int II = 1, int LAT = 1, int START = 0, class CrdOut, class ValOut>
void samfuse_lane_combine(hls::stream<samfuse::tok_t>& crd_a, hls::stream<samfuse::tok_t>& val_a,
                          hls::stream<samfuse::tok_t>& crd_b, hls::stream<samfuse::tok_t>& val_b,
                          CrdOut crd, ValOut val) {
    samfuse::process_start<II, LAT, START>();
    samfuse::lane_merge_loop<II, LAT, true, FLOAT>(crd_a, val_a, crd_b, val_b, crd, val, __func__);
}
#endif
