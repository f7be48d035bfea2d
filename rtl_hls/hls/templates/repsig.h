// repsig: repeat-signal generator: R per crd (and per N), stops and D pass through.
#ifndef SAMFUSE_REPSIG_H
#define SAMFUSE_REPSIG_H
#include "samfuse_hls.h"

template <int II = 1, int LAT = 1, int START = 0, class SigOut>
void samfuse_repsig(hls::stream<samfuse::tok_t>& crd, SigOut repsig) {
    samfuse::process_start<II, LAT, START>();
    using namespace samfuse;
repsig_loop:
    while (true) {
        SAMFUSE_PIPELINE
        tok_t t = crd.read();
        if (is_data(t) || is_empty(t)) {
            repsig.write(repeat_tok());
        } else {
            repsig.write(t);
            if (is_done(t)) break;
        }
    }
}
#endif
