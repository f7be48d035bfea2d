// Shared level-scanner state machine (docs/primitives.md, "scan_compressed/scan_dense").
// States: IDLE (waiting for a reference), IN_FIBER (emitting), END (the fiber is done; the
// next input decides between S0 and a merged S_{k+1}). A LEVEL supplies fiber bounds and
// coordinates: compressed from seg/crd arrays, dense from its size.
#ifndef SAMFUSE_SCAN_CORE_H
#define SAMFUSE_SCAN_CORE_H
#include "samfuse_hls.h"

namespace samfuse {

template <int II, int LAT, class LEVEL, class CrdOut, class RefOut>
void scan_level(hls::stream<tok_t>& ref_in, CrdOut crd, RefOut ref, const LEVEL& lv) {
    enum { IDLE, IN_FIBER, END };
    int state = IDLE;
    uint32_t p = 0, e = 0, base = 0;
    Head in;
scan_loop:
    while (true) {
        SAMFUSE_PIPELINE
        if (state == IN_FIBER) {
            crd.write(data_tok(lv.crd_at(p, base)));
            ref.write(data_tok(p));
            p++;
            if (p == e) state = END;
            continue;
        }
        tok_t t = in.peek(ref_in);
        if (state == IDLE) {
            in.pop();
            if (is_data(t)) {
                lv.fiber(payload(t), p, e, base);
                if (p == e) {  // empty fiber: only its stop will be emitted
                    state = END;
                    continue;
                }
                crd.write(data_tok(lv.crd_at(p, base)));
                ref.write(data_tok(p));
                p++;
                state = p < e ? IN_FIBER : END;
            } else if (is_stop(t)) {
                crd.write(stop_tok(payload(t) + 1));
                ref.write(stop_tok(payload(t) + 1));
            } else if (is_empty(t)) {
                crd.write(empty_tok());
                ref.write(empty_tok());
                state = END;
            } else {
                crd.write(done_tok());
                ref.write(done_tok());
                break;
            }
        } else {  // END
            tok_t s = stop_tok(0);
            if (is_stop(t)) {
                in.pop();
                s = stop_tok(payload(t) + 1);
            }
            crd.write(s);
            ref.write(s);
            state = IDLE;
        }
    }
}

}  // namespace samfuse
#endif
