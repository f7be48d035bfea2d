// spacc3: sparse order-3 accumulator, spacc2 with one more kept level. Input streams nest
// [outer][crd2][crd1][crd0]; crd2_in holds one crd per level-1 fiber of crd0_in, crd1_in
// one per level-0 fiber. Values are summed by (crd2, crd1, crd0) into a dense
// CAP2 x CAP1 x CAP0 accumulator over the outer fiber; when it ends (S_k, k>2, on crd0_in)
// the entries are emitted in increasing (crd2, crd1, crd0): crd2 / crd1 go out with the
// first entry of their fiber; entries of the same crd2 and different crd1 are separated by
// S0 on crd0/val, of different crd2 by S0 on crd1 and S1 on crd0/val; the last closes with
// S_{k-3}, S_{k-2}, S_{k-1}, S_{k-1}. Block values are summed elementwise (as in spacc.h).
// The loop is spacc_core.h's, shared with spacc2.
#ifndef SAMFUSE_SPACC3_H
#define SAMFUSE_SPACC3_H
#include "spacc_core.h"

template <uint32_t CAP2, uint32_t CAP1, uint32_t CAP0, bool FLOAT,
          int II = 1, int LAT = 1, int START = 0,
          class TV, class Crd2Out, class Crd1Out, class Crd0Out, class ValOut>
void samfuse_spacc3(hls::stream<samfuse::tok_t>& crd2_in, hls::stream<samfuse::tok_t>& crd1_in,
                    hls::stream<samfuse::tok_t>& crd0_in, hls::stream<TV>& val_in,
                    Crd2Out crd2, Crd1Out crd1, Crd0Out crd0, ValOut val) {
    samfuse::process_start<II, LAT, START>();
    using namespace samfuse;
    CrdHeads<3> crd_in(crd2_in, crd1_in, crd0_in);
    CrdWriters<Crd2Out, Crd1Out, Crd0Out> crd(crd2, crd1, crd0);
    spacc_levels<3, ints<CAP2, CAP1, CAP0>, FLOAT, II, LAT>(crd_in, val_in, crd, val);
}
#endif
