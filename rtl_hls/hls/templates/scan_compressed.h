// scan_compressed: compressed level scanner, ref -> (crd, ref) of the fiber
// crd[seg[ref] .. seg[ref+1]); refs are positions into the level. W is the stored word:
// samfuse::word_t, or uint32_t behind an m_axi port (docs/hls.md, "Off-chip tensors").
#ifndef SAMFUSE_SCAN_COMPRESSED_H
#define SAMFUSE_SCAN_COMPRESSED_H
#include "scan_core.h"

namespace samfuse {
template <class W>
struct CompressedLevel {
    const W* seg;
    const W* crd;
    void fiber(uint32_t r, uint32_t& p, uint32_t& e, uint32_t& base) const {
        p = u32(seg[r]);
        e = u32(seg[r + 1]);
        base = 0;
    }
    uint32_t crd_at(uint32_t p, uint32_t) const { return u32(crd[p]); }
};
}  // namespace samfuse

template <int II = 1, int LAT = 1, int START = 0, class CrdOut, class RefOut, class W>
void samfuse_scan_compressed(hls::stream<samfuse::tok_t>& ref_in, CrdOut crd, RefOut ref,
                             const W* seg, const W* crd_arr) {
    samfuse::process_start<II, LAT, START>();
    samfuse::CompressedLevel<W> lv = {seg, crd_arr};
    samfuse::scan_level<II, LAT>(ref_in, crd, ref, lv);
}
#endif
