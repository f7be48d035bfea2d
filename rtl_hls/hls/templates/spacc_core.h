// spacc_core.h: the sparse accumulator with N kept levels (docs/primitives.md, "spacc2",
// "spacc3"), shared by spacc2.h (N = 2) and spacc3.h (N = 3). Input streams nest
// [outer][crd_{N-1}]...[crd0]; crd_m_in (m > 0) holds one crd per level-(m-1) fiber of
// crd0_in. Values are summed by (crd_{N-1}, ..., crd0) into a dense accumulator of
// CAP_{N-1} x ... x CAP_0 entries over the outer fiber; when it ends (S_k, k >= N, on
// crd0_in) the entries are emitted in increasing crd order: crd0 and val always, crd_m
// when the entry opens a level-m fiber; between two entries whose highest differing level
// is d > 0, the level-(d-1) fiber closes with S_{d-1-m} on crd_m (m < d) and S_{d-1} on
// val; the last entry closes with S_{k-1-m} on crd_m and S_{k-1} on val. Block values are
// summed elementwise (as in spacc.h).
#ifndef SAMFUSE_SPACC_CORE_H
#define SAMFUSE_SPACC_CORE_H
#include "block_op.h"

namespace samfuse {

// The head registers of N crd input streams: constructed outermost first (crd_{N-1}_in,
// ..., crd0_in); t[m] / p[m] below are level m (0 = innermost).
template <int N>
struct CrdHeads {
    hls::stream<tok_t>& s;
    Head h;
    CrdHeads<N - 1> below;
    template <class... S>
    explicit CrdHeads(hls::stream<tok_t>& top, S&... rest) : s(top), h(), below(rest...) {}
    void peek(tok_t* t) {
        t[N - 1] = h.peek(s);
        below.peek(t);
    }
    void pop(const bool* p) {
        if (p[N - 1]) h.pop();
        below.pop(p);
    }
};
template <>
struct CrdHeads<0> {
    CrdHeads() {}
    void peek(tok_t*) {}
    void pop(const bool*) {}
};

// The writers of N crd output ports, outermost first; write(m, t) writes level m's port
// (m is a constant wherever the loops below are unrolled, so the choice folds away).
template <class W, class... R>
struct CrdWriters {
    W w;
    CrdWriters<R...> below;
    explicit CrdWriters(W top, R... rest) : w(top), below(rest...) {}
    void write(int m, const tok_t& t) {
        if (m == static_cast<int>(sizeof...(R)))
            w.write(t);
        else
            below.write(m, t);
    }
};
template <class W>
struct CrdWriters<W> {
    W w;
    explicit CrdWriters(W top) : w(top) {}
    void write(int, const tok_t& t) { w.write(t); }
};

// CAPS = ints<CAP_{N-1}, ..., CAP_0>: level m's crds are below CAPS::get(N-1-m) (the
// generator's bounds, docs/hls.md). One firing per loop iteration, as in spacc.h.
template <int N, class CAPS, bool FLOAT, int II, int LAT, class TV, class CrdIn, class CrdOut,
          class ValOut>
void spacc_levels(CrdIn& crd_in, hls::stream<TV>& val_in, CrdOut& crd, ValOut& val) {
    static_assert(CAPS::N == N, "one capacity per kept level");
    const int E = tok_io<TV>::E;
    const uint32_t SLOTS = CAPS::prod(0, N);
    static uint32_t acc[SLOTS][E];
#pragma HLS array_partition variable = acc complete dim = 2
    static bool valid[SLOTS];
    HeadOf<TV> hv;
    // drain registers: the slot looked at and its crds (at[m], level m), the crds of the
    // last entry emitted (last), whether one was (any), whether the separator before the
    // slot's entry is out (sep_sent), the closing stop's level (k)
    bool draining = false, any = false, sep_sent = false;
    uint32_t slot = 0, k = 0, at[N], last[N];
#pragma HLS array_partition variable = at complete
#pragma HLS array_partition variable = last complete
    AccEntries entries;  // for the on-chip buffer rule (csim)
spacc_levels_loop:
    while (true) {
        SAMFUSE_PIPELINE
        if (draining) {  // one accumulator slot (or one separator, or the end) per firing
            if (slot == SLOTS) {  // the group's closing step
            spacc_close:
                for (int m = N - 1; m >= 0; m--) {
#pragma HLS unroll
                    crd.write(m, stop_tok(k - 1 - m));
                }
                val.write(stop_tok(k - 1));
                draining = false;
                continue;
            }
            if (valid[slot]) {
                int d = N - 1;  // the highest level the entry opens a fiber of
                if (any) {
                    d = 0;
                spacc_differ:
                    for (int m = 1; m < N; m++) {
#pragma HLS unroll
                        if (at[m] != last[m]) d = m;
                    }
                }
                if (any && d > 0 && !sep_sent) {  // the level-(d-1) fiber closes first
                spacc_separate:
                    for (int m = N - 1; m >= 0; m--) {
#pragma HLS unroll
                        if (m < d) crd.write(m, stop_tok(d - 1 - m));
                    }
                    val.write(stop_tok(d - 1));
                    sep_sent = true;
                    continue;
                }
            spacc_entry:
                for (int m = N - 1; m >= 0; m--) {
#pragma HLS unroll
                    if (m <= d) crd.write(m, data_tok(at[m]));
                    last[m] = at[m];
                }
                val.write(data_of<TV>(acc[slot]));
                valid[slot] = false;
                any = true;
                sep_sent = false;
            }
            slot++;  // and at[] as an odometer, level 0 fastest
            at[0]++;
        spacc_carry:
            for (int m = 0; m + 1 < N; m++) {
#pragma HLS unroll
                if (at[m] == static_cast<uint32_t>(CAPS::get(N - 1 - m))) {
                    at[m] = 0;
                    at[m + 1]++;
                }
            }
            continue;
        }
        tok_t t[N];
#pragma HLS array_partition variable = t complete
        crd_in.peek(t);
        TV v = hv.peek(val_in);
        bool pop[N];
#pragma HLS array_partition variable = pop complete
        bool pop_val = false;
    spacc_no_pops:
        for (int m = 0; m < N; m++) {
#pragma HLS unroll
            pop[m] = false;
        }
        if (is_data(t[0]) || is_empty(t[0])) {  // an entry (N: nothing to add)
            SAMFUSE_CHECK(!is_stop_or_done(v), "crd0_in holds a crd but val_in does not");
            uint32_t s = 0;
        spacc_address:
            for (int m = N - 1; m >= 0; m--) {
#pragma HLS unroll
                uint32_t cap = static_cast<uint32_t>(CAPS::get(N - 1 - m));
                SAMFUSE_CHECK(m == 0 || is_data(t[m]), "crd0_in holds a crd but an outer crd_in does not");
                SAMFUSE_CHECK(m == 0 || payload(t[m]) < cap, "coordinate beyond the accumulator capacity");
                s = s * cap + (m == 0 ? 0u : payload(t[m]));
            }
            pop[0] = pop_val = true;
            if (is_data(t[0])) {
                SAMFUSE_CHECK(payload(t[0]) < static_cast<uint32_t>(CAPS::get(N - 1)),
                              "coordinate beyond the accumulator capacity");
                s += payload(t[0]);
                if (!valid[s]) entries.fill();
                accumulate<FLOAT, E>(acc[s], valid[s], v);
                valid[s] = true;
            }
        } else {
            SAMFUSE_CHECK(same_tok(t[0], v), "misaligned streams on crd0_in / val_in");
            if (is_done(t[0])) {
            spacc_done_in:
                for (int m = 1; m < N; m++) {
#pragma HLS unroll
                    SAMFUSE_CHECK(is_done(t[m]), "crd0_in ended (D) while an outer crd_in did not");
                }
                for (int m = N - 1; m >= 0; m--) crd.write(m, done_tok());
                val.write(done_tok());
                entries.done();
                break;
            }
            // S_k on crd0_in: levels 1..q-1 hold the stops that go with it (S_{k-m} on
            // level m), level q the first crd (q = N: none)
            uint32_t kin = payload(t[0]);
            int q = N;
        spacc_stops_in:
            for (int m = 1; m < N; m++) {
#pragma HLS unroll
                if (q == N && is_data(t[m])) q = m;
                SAMFUSE_CHECK(q <= m || (is_stop(t[m]) && payload(t[m]) + m == kin),
                              "misaligned streams on crd0_in / an outer crd_in");
            }
            if (q < N && kin > static_cast<uint32_t>(q - 1)) {
                pop[q] = true;  // the fiber of level q's crd closes (the stop stays)
            } else {  // the stop closes the level-(q-1) fiber: it leaves every stream
            spacc_pop_stops:
                for (int m = 0; m < N; m++) {
#pragma HLS unroll
                    pop[m] = m <= q;
                }
                pop_val = true;
                if (q == N && kin >= static_cast<uint32_t>(N)) {  // the group ends
                    entries.group_end();  // the drain empties the accumulator
                    draining = true;
                    k = kin;
                    slot = 0;
                    any = sep_sent = false;
                spacc_drain_start:
                    for (int m = 0; m < N; m++) {
#pragma HLS unroll
                        at[m] = 0;
                    }
                }
            }
        }
        crd_in.pop(pop);
        if (pop_val) hv.pop();
    }
}

}  // namespace samfuse
#endif
