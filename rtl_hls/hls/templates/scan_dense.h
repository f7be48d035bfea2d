// scan_dense: dense level scanner of SIZE coordinates: crds 0..SIZE-1, refs in_ref*SIZE + crd.
#ifndef SAMFUSE_SCAN_DENSE_H
#define SAMFUSE_SCAN_DENSE_H
#include "scan_core.h"

namespace samfuse {
template <uint32_t SIZE>
struct DenseLevel {
    void fiber(uint32_t r, uint32_t& p, uint32_t& e, uint32_t& base) const {
        base = r * SIZE;
        p = base;
        e = base + SIZE;
    }
    uint32_t crd_at(uint32_t p, uint32_t base) const { return p - base; }
};
}  // namespace samfuse

template <uint32_t SIZE, int II = 1, int LAT = 1, int START = 0, class CrdOut, class RefOut>
void samfuse_scan_dense(hls::stream<samfuse::tok_t>& ref_in, CrdOut crd, RefOut ref) {
    samfuse::process_start<II, LAT, START>();
    samfuse::DenseLevel<SIZE> lv;
    samfuse::scan_level<II, LAT>(ref_in, crd, ref, lv);
}
#endif
