// crdhold: repeats each outer crd once per inner crd, turning the pair into a point stream.
#ifndef SAMFUSE_CRDHOLD_H
#define SAMFUSE_CRDHOLD_H
#include "samfuse_hls.h"

template <int II = 1, int LAT = 1, int START = 0, class OuterOut, class InnerOut>
void samfuse_crdhold(hls::stream<samfuse::tok_t>& outer_in, hls::stream<samfuse::tok_t>& inner_in,
                     OuterOut outer, InnerOut inner) {
    samfuse::process_start<II, LAT, START>();
    using namespace samfuse;
    Head oh, ih;
crdhold_loop:
    while (true) {
        SAMFUSE_PIPELINE
        tok_t h = ih.peek(inner_in), o = oh.peek(outer_in);
        bool o_crd = !is_stop_or_done(o);
        if (!is_stop_or_done(h)) {
            SAMFUSE_CHECK(o_crd, "inner_in holds a crd but outer_in holds a control token");
            outer.write(o);
            inner.write(h);
            ih.pop();
        } else if (is_stop(h) && payload(h) == 0) {
            SAMFUSE_CHECK(o_crd, "inner S0 closes a fiber but outer_in holds a control token");
            oh.pop();
            ih.pop();
            outer.write(h);
            inner.write(h);
        } else if (o_crd) {  // the fiber closed by this S_k: its crd is done
            oh.pop();
        } else {
            SAMFUSE_CHECK((is_done(o) && is_done(h)) ||
                              (is_stop(o) && is_stop(h) && payload(o) + 1 == payload(h)),
                          "misaligned streams on outer_in / inner_in");
            oh.pop();
            ih.pop();
            outer.write(h);
            inner.write(h);
            if (is_done(h)) break;
        }
    }
}
#endif
