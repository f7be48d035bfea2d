// broadcast: repeats the current value once per R (val_in, repsig -> val), with exactly the
// firing rules of repeat: the repeater loop of repeat.h on a value stream. It feeds a
// value computed once per outer coordinate (a hoisted reduction's result) into a deeper
// loop.
#ifndef SAMFUSE_BROADCAST_H
#define SAMFUSE_BROADCAST_H
#include "repeat.h"

template <int II = 1, int LAT = 1, int START = 0, class TV, class ValOut>
void samfuse_broadcast(hls::stream<TV>& val_in, hls::stream<samfuse::tok_t>& repsig, ValOut val) {
    samfuse::process_start<II, LAT, START>();
    samfuse::repeat_stream<II, LAT>(val_in, repsig, val);
}
#endif
