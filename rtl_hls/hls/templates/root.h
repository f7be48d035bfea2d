// root: emits the root reference stream 0, D.
#ifndef SAMFUSE_ROOT_H
#define SAMFUSE_ROOT_H
#include "samfuse_hls.h"

template <class RefOut>
void samfuse_root(RefOut ref) {
    using namespace samfuse;
root_loop:
    for (int i = 0; i < 2; i++) {
#pragma HLS pipeline II = 1
        ref.write(i == 0 ? data_tok(0) : done_tok());
    }
}
#endif
