// samfuse SystemC models: one clocked SC_MODULE per catalogue primitive (ir/_catalogue.py),
// contract FIFOs and the graph/top modules. Include this header only.
#ifndef SAMFUSE_H
#define SAMFUSE_H

#include "samfuse_token.h"
#include "samfuse_block.h"
#include "samfuse_fifo.h"
#include "samfuse_memory.h"
#include "samfuse_primitive.h"
#include "samfuse_scan.h"
#include "samfuse_join.h"
#include "samfuse_locate.h"
#include "samfuse_compute.h"
#include "samfuse_crd.h"
#include "samfuse_lanes.h"
#include "samfuse_writers.h"
#include "samfuse_net.h"

#endif  // SAMFUSE_H
