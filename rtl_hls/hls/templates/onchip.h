// On-chip buffers (docs/hls.md, "On-chip buffers"): a process whose array is buffered
// copies it from its m_axi port into a local array by one pipelined loop (a burst) before
// its main loop, then reads the local copy. Only tops with buffers include this header.
#ifndef SAMFUSE_ONCHIP_H
#define SAMFUSE_ONCHIP_H
#include "samfuse_hls.h"

namespace samfuse {

// Copy the array's `len` words (at most N, the buffer's capacity for the tensor's shape)
// into `buf`; the words past `len` are never read.
template <unsigned N>
void fill_onchip(uint32_t (&buf)[N], const uint32_t* src, uint32_t len) {
    SAMFUSE_CHECK(len <= N, "on-chip buffer: the array is longer than its capacity");
onchip_fill:
    for (uint32_t i = 0; i < len; i++) {
#pragma HLS pipeline
#pragma HLS loop_tripcount max = N
        buf[i] = src[i];
    }
}

}  // namespace samfuse
#endif
