// crddrop: drops outer crds whose inner fiber is empty, merging the inner stops that remain.
// outer_in holds one crd per inner fiber. An inner S0 after data is held back (pending): a
// following S_k replaces it, a following crd releases it.
#ifndef SAMFUSE_CRDDROP_H
#define SAMFUSE_CRDDROP_H
#include "samfuse_hls.h"

template <int II = 1, int LAT = 1, int START = 0, class OuterOut, class InnerOut>
void samfuse_crddrop(hls::stream<samfuse::tok_t>& outer_in, hls::stream<samfuse::tok_t>& inner_in,
                     OuterOut outer, InnerOut inner) {
    samfuse::process_start<II, LAT, START>();
    using namespace samfuse;
    Head oh, ih;
    bool has_data = false, pending = false;
crddrop_loop:
    while (true) {
        SAMFUSE_PIPELINE
        tok_t h = ih.peek(inner_in);
        if (!is_stop_or_done(h)) {  // a crd (or N)
            if (pending) {
                inner.write(stop_tok(0));
                pending = false;
            } else if (has_data) {
                ih.pop();
                inner.write(h);
            } else {  // first crd of a fiber: its outer crd survives
                outer.write(oh.peek(outer_in));
                oh.pop();
                inner.write(h);
                ih.pop();
                has_data = true;
            }
            continue;
        }
        tok_t o = oh.peek(outer_in);
        if (is_stop(h) && payload(h) == 0) {
            ih.pop();
            if (has_data) {
                pending = true;
                has_data = false;
            } else {  // an empty fiber: drop its outer crd
                SAMFUSE_CHECK(!is_stop_or_done(o), "inner S0 closes a fiber but outer_in holds a control token");
                oh.pop();
            }
            continue;
        }
        if (!is_stop_or_done(o)) {  // the last fiber was empty: drop its crd
            SAMFUSE_CHECK(!has_data, "inner stop closes the parent but outer_in holds a crd");
            oh.pop();
            continue;
        }
        SAMFUSE_CHECK((is_done(o) && is_done(h)) ||
                          (is_stop(o) && is_stop(h) && payload(o) + 1 == payload(h)),
                      "misaligned streams on outer_in / inner_in");
        oh.pop();
        ih.pop();
        outer.write(o);
        inner.write(h);
        if (is_done(h)) break;
        pending = false;
        has_data = false;
    }
}
#endif
