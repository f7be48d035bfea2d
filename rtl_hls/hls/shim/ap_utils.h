// samfuse csim shim: a minimal stand-in for Xilinx's ap_utils.h.
//
// Written for samfuse (not derived from Xilinx sources). ap_wait() marks a clock boundary
// in synthesis (UG1399, "pragma HLS protocol") and has no effect in simulation, so here it
// does nothing. Under Vitis HLS the real ap_utils.h is used instead.
#ifndef SAMFUSE_SHIM_AP_UTILS_H
#define SAMFUSE_SHIM_AP_UTILS_H

inline void ap_wait() {}

#endif
