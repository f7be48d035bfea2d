// spacc: sparse vector accumulator. Sums the level-0 fibers of each level-1 fiber by crd
// into a dense accumulator of CAP entries (CAP bounds the coordinates: the generator uses
// the largest tensor dimension). S0 ends one partial vector; S_k (k>0) ends the group: the
// non-empty entries are emitted in crd order, then S_{k-1}. A block value (E elements)
// is summed elementwise; an entry's first value is 0 + v, as for scalars.
#ifndef SAMFUSE_SPACC_H
#define SAMFUSE_SPACC_H
#include "block_op.h"

template <uint32_t CAP, bool FLOAT, int II = 1, int LAT = 1, int START = 0,
          class TV, class CrdOut, class ValOut>
void samfuse_spacc(hls::stream<samfuse::tok_t>& crd_in, hls::stream<TV>& val_in, CrdOut crd,
                   ValOut val) {
    samfuse::process_start<II, LAT, START>();
    using namespace samfuse;
    const int E = tok_io<TV>::E;
    static uint32_t acc[CAP][E];
#pragma HLS array_partition variable = acc complete dim = 2
    static bool valid[CAP];
    bool draining = false;
    uint32_t k = 0, out_level = 0;
    AccEntries entries;  // for the on-chip buffer rule (csim)
spacc_loop:
    while (true) {
        SAMFUSE_PIPELINE
        if (draining) {  // one accumulator slot per firing, in crd order
            if (k == CAP) {
                crd.write(stop_tok(out_level));
                val.write(stop_tok(out_level));
                draining = false;
            } else {
                if (valid[k]) {
                    crd.write(data_tok(k));
                    val.write(data_of<TV>(acc[k]));
                    valid[k] = false;
                }
                k++;
            }
            continue;
        }
        tok_t c = crd_in.read();
        TV v = val_in.read();
        if (is_data(c)) {
            SAMFUSE_CHECK(!is_stop_or_done(v), "crd_in holds a crd while val_in holds a control token");
            uint32_t i = payload(c);
            SAMFUSE_CHECK(i < CAP, "coordinate beyond the accumulator capacity");
            if (!valid[i]) entries.fill();
            accumulate<FLOAT, E>(acc[i], valid[i], v);
            valid[i] = true;
        } else if (is_empty(c)) {
            continue;
        } else {
            SAMFUSE_CHECK(same_tok(c, v), "misaligned streams on crd_in / val_in");
            if (is_done(c)) {
                crd.write(done_tok());
                val.write(done_tok());
                entries.done();
                break;
            }
            if (payload(c) == 0) continue;
            entries.group_end();  // the drain empties the accumulator
            out_level = payload(c) - 1;
            draining = true;
            k = 0;
        }
    }
}
#endif
