// level_writer: appends crds and, for every stop, (crds so far, level), so the result is
// decoded against the parent level afterwards (sim_models.python.decode_levels). Arrays hold
// ``cap`` entries; counts[0] / counts[1] report how many crds / stops the stream had (more
// than cap means the arrays overflowed and the caller must rerun with larger ones).
#ifndef SAMFUSE_LEVEL_WRITER_H
#define SAMFUSE_LEVEL_WRITER_H
#include "samfuse_hls.h"

inline void samfuse_level_writer(hls::stream<samfuse::tok_t>& crd, samfuse::word_t* crd_out,
                                 samfuse::word_t* stop_pos, samfuse::word_t* stop_lvl,
                                 samfuse::word_t* counts, uint32_t cap) {
    using namespace samfuse;
    uint32_t n = 0, ns = 0;
level_writer_loop:
    while (true) {
#pragma HLS pipeline II = 1
        tok_t t = crd.read();
        if (is_data(t)) {
            if (n < cap) crd_out[n] = payload(t);
            n++;
        } else if (is_stop(t)) {
            if (ns < cap) {
                stop_pos[ns] = n;
                stop_lvl[ns] = payload(t);
            }
            ns++;
        } else if (is_done(t)) {
            break;
        }  // N: nothing to record
    }
    counts[0] = n;
    counts[1] = ns;
}
#endif
