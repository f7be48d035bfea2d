// scan_compressed: compressed level scanner, ref -> (crd, ref) of the fiber
// crd[seg[ref] .. seg[ref+1]); refs are positions into the level.
#ifndef SAMFUSE_SCAN_COMPRESSED_H
#define SAMFUSE_SCAN_COMPRESSED_H
#include "scan_core.h"

namespace samfuse {
struct CompressedLevel {
    const word_t* seg;
    const word_t* crd;
    void fiber(uint32_t r, uint32_t& p, uint32_t& e, uint32_t& base) const {
        p = seg[r].to_uint();
        e = seg[r + 1].to_uint();
        base = 0;
    }
    uint32_t crd_at(uint32_t p, uint32_t) const { return crd[p].to_uint(); }
};
}  // namespace samfuse

template <class CrdOut, class RefOut>
void samfuse_scan_compressed(hls::stream<samfuse::tok_t>& ref_in, CrdOut crd, RefOut ref,
                             const samfuse::word_t* seg, const samfuse::word_t* crd_arr) {
    samfuse::CompressedLevel lv = {seg, crd_arr};
    samfuse::scan_level(ref_in, crd, ref, lv);
}
#endif
