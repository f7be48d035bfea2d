// root: emits the root reference stream 0, D.
#ifndef SAMFUSE_ROOT_H
#define SAMFUSE_ROOT_H
#include "samfuse_hls.h"

template <int II = 1, int LAT = 1, int START = 0, class RefOut>
void samfuse_root(RefOut ref) {
    samfuse::process_start<II, LAT, START>();
    using namespace samfuse;
root_loop:
    for (int i = 0; i < 2; i++) {
        SAMFUSE_PIPELINE
        ref.write(i == 0 ? data_tok(0) : done_tok());
    }
}
#endif
