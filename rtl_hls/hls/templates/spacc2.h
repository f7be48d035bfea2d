// spacc2: sparse matrix accumulator, the two-level spacc. Input streams nest
// [outer][crd1][crd0]; crd1_in holds one crd per level-0 fiber. Values are summed by
// (crd1, crd0) into a dense CAP1 x CAP0 accumulator over the outer fiber; when it ends
// (S_k, k>1, on crd0_in) the matrix is emitted row by row: a row's crd1 goes out with its
// first entry, rows are separated by S0 on crd0/val, and the last closes with S_{k-2} on
// crd1 and S_{k-1} on crd0/val. Block values are summed elementwise (as in spacc.h).
// The loop is spacc_core.h's, shared with spacc3.
#ifndef SAMFUSE_SPACC2_H
#define SAMFUSE_SPACC2_H
#include "spacc_core.h"

template <uint32_t CAP1, uint32_t CAP0, bool FLOAT, int II = 1, int LAT = 1, int START = 0,
          class TV, class Crd1Out, class Crd0Out, class ValOut>
void samfuse_spacc2(hls::stream<samfuse::tok_t>& crd1_in, hls::stream<samfuse::tok_t>& crd0_in,
                    hls::stream<TV>& val_in, Crd1Out crd1, Crd0Out crd0, ValOut val) {
    samfuse::process_start<II, LAT, START>();
    using namespace samfuse;
    CrdHeads<2> crd_in(crd1_in, crd0_in);
    CrdWriters<Crd1Out, Crd0Out> crd(crd1, crd0);
    spacc_levels<2, ints<CAP1, CAP0>, FLOAT, II, LAT>(crd_in, val_in, crd, val);
}
#endif
