// level_writer: appends crds and, for every stop, (crds so far, level), so the result is
// decoded against the parent level afterwards (sim_models.python.decode_levels). One loop,
// three ways to keep what it sees (a *sink*):
// * Recording (tops without memory): crds, stop positions and stop levels in ``cap``-entry
//   arrays; counts[0] / counts[1] report how many crds / stops the stream had (more than
//   cap means the arrays overflowed and the caller must rerun with larger ones).
// * the m_axi overload (tops with off-chip memory, docs/hls.md): crds to the level's crd
//   port, one seg word (crds so far) per stop to its seg port; counts as scalar outputs.
// * samfuse_dense_level_writer: a dense level stores nothing off-chip, so it only checks
//   that every fiber is full (crds 0..N-1, then a stop) and counts crds and stops.
#ifndef SAMFUSE_LEVEL_WRITER_H
#define SAMFUSE_LEVEL_WRITER_H
#include "samfuse_hls.h"

namespace samfuse {

// Reads one crd stream to D; returns the crd count n and stop count ns through the sink.
template <int II, int LAT, class SINK>
void level_writer_loop(hls::stream<tok_t>& crd, SINK& sink, uint32_t& n, uint32_t& ns) {
    n = 0;
    ns = 0;
level_writer_loop:
    while (true) {
        SAMFUSE_PIPELINE
        tok_t t = crd.read();
        if (is_data(t)) {
            sink.crd(n, payload(t));
            n++;
        } else if (is_stop(t)) {
            sink.stop(ns, n, payload(t));
            ns++;
        } else if (is_done(t)) {
            break;
        }  // N: nothing to record
    }
}

template <class W>
struct LevelArrays {
    W* crd_out;
    W* stop_pos;
    W* stop_lvl;  // null: stop levels are not stored (decode_levels does not need them)
    uint32_t cap;
    void crd(uint32_t n, uint32_t c) {
        if (n < cap) crd_out[n] = c;
    }
    void stop(uint32_t ns, uint32_t n, uint32_t level) {
        if (ns >= cap) return;
        stop_pos[ns] = n;
        if (stop_lvl) stop_lvl[ns] = level;
    }
};

template <uint32_t N>
struct DenseFibers {
    uint32_t at;  // crds seen in the current fiber
    void crd(uint32_t, uint32_t c) {
        SAMFUSE_CHECK(c == at && at < N, "dense output level: crds must be 0..N-1 in order");
        at++;
    }
    void stop(uint32_t, uint32_t, uint32_t) {
        SAMFUSE_CHECK(at == N, "dense output level: a fiber is not full (a dense level "
                               "stores nothing off-chip)");
        at = 0;
    }
};

}  // namespace samfuse

template <int II = 1, int LAT = 1, int START = 0>
void samfuse_level_writer(hls::stream<samfuse::tok_t>& crd, samfuse::word_t* crd_out,
                          samfuse::word_t* stop_pos, samfuse::word_t* stop_lvl,
                          samfuse::word_t* counts, uint32_t cap) {
    samfuse::process_start<II, LAT, START>();
    samfuse::LevelArrays<samfuse::word_t> sink = {crd_out, stop_pos, stop_lvl, cap};
    uint32_t n, ns;
    samfuse::level_writer_loop<II, LAT>(crd, sink, n, ns);
    counts[0] = n;
    counts[1] = ns;
}

template <int II = 1, int LAT = 1, int START = 0>
void samfuse_level_writer(hls::stream<samfuse::tok_t>& crd, uint32_t* crd_out,
                          uint32_t* seg_out, uint32_t* n_crd, uint32_t* n_seg, uint32_t cap) {
    samfuse::process_start<II, LAT, START>();
    samfuse::LevelArrays<uint32_t> sink = {crd_out, seg_out, 0, cap};
    samfuse::level_writer_loop<II, LAT>(crd, sink, *n_crd, *n_seg);
}

template <uint32_t N, int II = 1, int LAT = 1, int START = 0>
void samfuse_dense_level_writer(hls::stream<samfuse::tok_t>& crd, uint32_t* n_crd,
                                uint32_t* n_seg) {
    samfuse::process_start<II, LAT, START>();
    samfuse::DenseFibers<N> sink = {0};
    samfuse::level_writer_loop<II, LAT>(crd, sink, *n_crd, *n_seg);
}
#endif
