// spacc2: sparse matrix accumulator, the two-level spacc. Input streams nest
// [outer][crd1][crd0]; crd1_in holds one crd per level-0 fiber. Values are summed by
// (crd1, crd0) into a dense CAP1 x CAP0 accumulator over the outer fiber; when it ends
// (S_k, k>1, on crd0_in) the matrix is emitted row by row: a row's crd1 goes out with its
// first entry, rows are separated by S0 on crd0/val, and the last closes with S_{k-2} on
// crd1 and S_{k-1} on crd0/val. Block values are summed elementwise (as in spacc.h).
#ifndef SAMFUSE_SPACC2_H
#define SAMFUSE_SPACC2_H
#include "block_op.h"

template <uint32_t CAP1, uint32_t CAP0, bool FLOAT, int II = 1, class TV, class Crd1Out,
          class Crd0Out, class ValOut>
void samfuse_spacc2(hls::stream<samfuse::tok_t>& crd1_in, hls::stream<samfuse::tok_t>& crd0_in,
                    hls::stream<TV>& val_in, Crd1Out crd1, Crd0Out crd0, ValOut val) {
    using namespace samfuse;
    const int E = tok_io<TV>::E;
    static uint32_t acc[CAP1][CAP0][E];
#pragma HLS array_partition variable = acc complete dim = 3
    static bool valid[CAP1][CAP0];
    Head h1, h0;
    HeadOf<TV> hv;
    bool draining = false, first_row = true, row_open = false, sep_sent = false;
    uint32_t di = 0, dj = 0, k = 0;
#ifndef __SYNTHESIS__
    uint32_t held = 0, peak = 0;  // entries held; the most held when a matrix ends
#endif
spacc2_loop:
    while (true) {
#pragma HLS pipeline II = II
        if (draining) {  // one accumulator slot (or one separator) per firing
            if (di == CAP1) {
                crd1.write(stop_tok(k - 2));
                crd0.write(stop_tok(k - 1));
                val.write(stop_tok(k - 1));
                draining = false;
            } else if (dj == CAP0) {
                di++;
                dj = 0;
                row_open = false;
            } else if (!valid[di][dj]) {
                dj++;
            } else if (!row_open && !first_row && !sep_sent) {
                crd0.write(stop_tok(0));
                val.write(stop_tok(0));
                sep_sent = true;
            } else {
                if (!row_open) crd1.write(data_tok(di));
                crd0.write(data_tok(dj));
                val.write(data_of<TV>(acc[di][dj]));
                valid[di][dj] = false;
                row_open = true;
                first_row = false;
                sep_sent = false;
                dj++;
            }
            continue;
        }
        tok_t j = h0.peek(crd0_in);
        TV v = hv.peek(val_in);
        tok_t i = h1.peek(crd1_in);
        if (is_data(j) || is_empty(j)) {
            SAMFUSE_CHECK(is_data(i) && !is_stop_or_done(v), "crd0_in holds a crd but crd1_in or val_in does not");
            h0.pop();
            hv.pop();
            if (is_data(j)) {
                uint32_t r = payload(i), c = payload(j);
                SAMFUSE_CHECK(r < CAP1 && c < CAP0, "coordinate beyond the accumulator capacity");
#ifndef __SYNTHESIS__
                if (!valid[r][c]) held++;
#endif
                accumulate<FLOAT, E>(acc[r][c], valid[r][c], v);
                valid[r][c] = true;
            }
            continue;
        }
        SAMFUSE_CHECK(same_tok(j, v), "misaligned streams on crd0_in / val_in");
        if (is_done(j)) {
            SAMFUSE_CHECK(is_done(i), "crd0_in ended (D) while crd1_in did not");
            h0.pop();
            hv.pop();
            h1.pop();
            crd1.write(done_tok());
            crd0.write(done_tok());
            val.write(done_tok());
#ifndef __SYNTHESIS__
            acc_peaks().push_back(peak);
#endif
            break;
        }
        if (is_data(i)) {  // a level-0 fiber closes: its crd1 is done
            h1.pop();
            if (payload(j) == 0) {
                h0.pop();
                hv.pop();
            }
            continue;
        }
        SAMFUSE_CHECK(payload(j) > 0 && is_stop(i) && payload(i) + 1 == payload(j),
                      "misaligned streams on crd0_in / crd1_in");
        h0.pop();
        hv.pop();
        h1.pop();
        if (payload(j) >= 2) {
#ifndef __SYNTHESIS__
            if (held > peak) peak = held;
            held = 0;  // the drain empties the accumulator
#endif
            draining = true;
            k = payload(j);
            di = dj = 0;
            first_row = true;
            row_open = sep_sent = false;
        }
    }
}
#endif
