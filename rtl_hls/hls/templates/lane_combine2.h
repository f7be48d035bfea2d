// lane_combine2: the lane reduction of two levels (docs/primitives.md): lane_merge2's
// machine (lane_merge2.h) with COMBINE — an outer crd both lanes hold (a row split across
// lanes) passes once, and its two inner fibers are merged with lane_combine's firing,
// adding equal inner crds (FLOAT: binary32, else int32). Scalar values only.
#ifndef SAMFUSE_LANE_COMBINE2_H
#define SAMFUSE_LANE_COMBINE2_H
#include "lane_merge2.h"

template <bool FLOAT, int II = 1, int LAT = 1, int START = 0,
          class Crd1Out, class Crd0Out, class ValOut>
void samfuse_lane_combine2(hls::stream<samfuse::tok_t>& crd1_a, hls::stream<samfuse::tok_t>& crd0_a,
                           hls::stream<samfuse::tok_t>& val_a, hls::stream<samfuse::tok_t>& crd1_b,
                           hls::stream<samfuse::tok_t>& crd0_b, hls::stream<samfuse::tok_t>& val_b,
                           Crd1Out crd1, Crd0Out crd0, ValOut val) {
    samfuse::process_start<II, LAT, START>();
    samfuse::lane_merge2_machine<true, FLOAT, II, LAT>(crd1_a, crd0_a, val_a, crd1_b, crd0_b, val_b,
                                                       crd1, crd0, val, __func__);
}
#endif
