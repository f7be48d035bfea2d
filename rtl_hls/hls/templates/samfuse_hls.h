// samfuse HLS common definitions: the 34-bit token word, output-port writers (edges,
// forks, discards), per-edge trace recording for C-simulation, and value semantics.
//
// Token word (docs/streams.md): tag in bits [33:32], payload in [31:0].
//   tag 0 data (crd/ref unsigned, val = binary32 bits or int32; R on repsig streams)
//   tag 1 stop (payload = level), tag 2 empty N, tag 3 done D.
// Value semantics (sim_models/python/_values.py): float32 ops in double, rounded once to
// float; int32 wraps, division truncates toward zero and x / 0 = 0.
#ifndef SAMFUSE_HLS_H
#define SAMFUSE_HLS_H

#include <ap_int.h>
#include <hls_stream.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#ifndef __SYNTHESIS__
#include <cstdio>
#include <cstdlib>
#include <vector>
#endif

namespace samfuse {

typedef ap_uint<34> tok_t;
typedef ap_uint<32> word_t;

enum { TAG_DATA = 0, TAG_STOP = 1, TAG_EMPTY = 2, TAG_DONE = 3 };

inline unsigned tag_of(const tok_t& t) { return static_cast<unsigned>(t.range(33, 32)); }
inline uint32_t payload(const tok_t& t) { return static_cast<uint32_t>(t.range(31, 0)); }
inline bool is_data(const tok_t& t) { return tag_of(t) == TAG_DATA; }
inline bool is_stop(const tok_t& t) { return tag_of(t) == TAG_STOP; }
inline bool is_empty(const tok_t& t) { return tag_of(t) == TAG_EMPTY; }
inline bool is_done(const tok_t& t) { return tag_of(t) == TAG_DONE; }
inline bool is_stop_or_done(const tok_t& t) { return is_stop(t) || is_done(t); }

// A stored word as uint32_t: arrays are ap_uint<32> (recording tops) or uint32_t (tops with
// off-chip m_axi ports, a standard C type so Vitis can widen their bursts).
inline uint32_t u32(const word_t& w) { return static_cast<uint32_t>(w.to_uint()); }
inline uint32_t u32(uint32_t w) { return w; }

inline tok_t make_tok(unsigned tag, uint32_t p) {
    tok_t t = 0;
    t.range(31, 0) = p;
    t.range(33, 32) = tag;
    return t;
}
inline tok_t data_tok(uint32_t p) { return make_tok(TAG_DATA, p); }
inline tok_t stop_tok(uint32_t level) { return make_tok(TAG_STOP, level); }
inline tok_t empty_tok() { return make_tok(TAG_EMPTY, 0); }
inline tok_t done_tok() { return make_tok(TAG_DONE, 0); }
inline tok_t repeat_tok() { return make_tok(TAG_DATA, 0); }
inline bool same_tok(const tok_t& a, const tok_t& b) { return a.to_uint64() == b.to_uint64(); }

// ---- C-simulation checks and traces (compiled out under synthesis) ---------------------
#ifndef __SYNTHESIS__
// One write log per graph edge, filled by Edge::write; the testbench prints it.
inline std::vector<std::vector<uint64_t> >& trace_log() {
    static std::vector<std::vector<uint64_t> > log;
    return log;
}
inline bool& trace_enabled() {
    static bool on = false;
    return on;
}
inline void trace_token(int edge, const tok_t& t) {
    if (!trace_enabled()) return;
    std::vector<std::vector<uint64_t> >& log = trace_log();
    if (edge >= static_cast<int>(log.size())) log.resize(edge + 1);
    log[edge].push_back(t.to_uint64());
}
// Each sparse accumulator's peak entry count (the most entries held when a group ends, for
// the on-chip buffer rule), pushed at its D in call (topological) order; the testbench
// writes them to OUT_DIR/acc_peaks.txt.
inline std::vector<uint32_t>& acc_peaks() {
    static std::vector<uint32_t> peaks;
    return peaks;
}
inline void fail(const char* where, const char* what) {
    std::fprintf(stderr, "samfuse csim: %s: %s\n", where, what);
    std::exit(3);
}
#define SAMFUSE_CHECK(cond, what) \
    do {                            \
        if (!(cond)) ::samfuse::fail(__func__, what); \
    } while (0)
#else
#define SAMFUSE_CHECK(cond, what) \
    do {                            \
    } while (0)
#endif

// ---- output-port writers ---------------------------------------------------------------
// A primitive writes each output port through a writer: one graph edge (Edge), several
// edges fed by the same port (Fork, nested for more than two), or none (Discard).
struct Edge {
    hls::stream<tok_t>& s;
    int id;  // index of the edge in the design's trace table
    Edge(hls::stream<tok_t>& stream, int edge_id) : s(stream), id(edge_id) {}
    void write(const tok_t& t) {
        s.write(t);
#ifndef __SYNTHESIS__
        trace_token(id, t);
#endif
    }
};

template <class A, class B>
struct Fork {
    A a;
    B b;
    Fork(A first, B rest) : a(first), b(rest) {}
    void write(const tok_t& t) {
        a.write(t);
        b.write(t);
    }
};

template <class A, class B>
inline Fork<A, B> fork(A a, B b) { return Fork<A, B>(a, b); }

struct Discard {
    void write(const tok_t&) {}
};

// A registered input head: lets a primitive look at a token before deciding to consume it
// (hls::stream has no peek). The token is read once and held until pop().
struct Head {
    tok_t v;
    bool valid;
    Head() : v(0), valid(false) {}
    tok_t peek(hls::stream<tok_t>& s) {
        if (!valid) {
            v = s.read();
            valid = true;
        }
        return v;
    }
    void pop() { valid = false; }
};

// ---- value semantics ---------------------------------------------------------------------
enum BinOp { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_MIN };
enum UnOp { UOP_RELU, UOP_EXP, UOP_NEG, UOP_RSQRT, UOP_ADD_CONST, UOP_MUL_CONST, UOP_DIV_CONST };

inline float f32(uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}
inline uint32_t bits32(float f) {
    uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
}
inline int32_t i32(uint32_t bits) { return static_cast<int32_t>(bits); }
inline uint32_t wrap32(int64_t v) { return static_cast<uint32_t>(static_cast<uint64_t>(v)); }

// float32: computed in double, rounded once; max/min compare like the Python model
// (a >= b ? a : b), so NaN and signed zeros resolve the same way.
inline uint32_t fbin(int op, uint32_t a_bits, uint32_t b_bits) {
    double a = f32(a_bits), b = f32(b_bits);
    switch (op) {
        case OP_ADD: return bits32(static_cast<float>(a + b));
        case OP_SUB: return bits32(static_cast<float>(a - b));
        case OP_MUL: return bits32(static_cast<float>(a * b));
        case OP_DIV: return bits32(static_cast<float>(a / b));  // IEEE: x/0 = ±inf, 0/0 = nan
        case OP_MAX: return a >= b ? a_bits : b_bits;
        default: return a <= b ? a_bits : b_bits;
    }
}

inline int64_t idiv(int64_t a, int64_t b) {
    if (b == 0) return 0;
    return a / b;  // C++ truncates toward zero; int64 avoids INT32_MIN / -1 overflow
}

inline uint32_t ibin(int op, uint32_t a_bits, uint32_t b_bits) {
    int64_t a = i32(a_bits), b = i32(b_bits);
    switch (op) {
        case OP_ADD: return wrap32(a + b);
        case OP_SUB: return wrap32(a - b);
        case OP_MUL: return wrap32(a * b);
        case OP_DIV: return wrap32(idiv(a, b));
        case OP_MAX: return a >= b ? a_bits : b_bits;
        default: return a <= b ? a_bits : b_bits;
    }
}

template <bool FLOAT>
inline uint32_t binop(int op, uint32_t a, uint32_t b) {
    return FLOAT ? fbin(op, a, b) : ibin(op, a, b);
}

// ``fconst``: the binary32 constant's bits; ``iconst``: int(const) (truncated), as int64.
inline uint32_t fun(int op, uint32_t x_bits, uint32_t fconst) {
    double x = f32(x_bits), c = f32(fconst);
    switch (op) {
        case UOP_RELU: return x > 0.0 ? x_bits : bits32(0.0f);
        case UOP_EXP: return bits32(static_cast<float>(std::exp(x)));
        case UOP_NEG: return x_bits ^ 0x80000000u;
        case UOP_RSQRT:
            if (x > 0.0) return bits32(static_cast<float>(1.0 / std::sqrt(x)));
            if (x == 0.0) return bits32(std::signbit(x) ? -INFINITY : INFINITY);
            return bits32(NAN);
        case UOP_ADD_CONST: return bits32(static_cast<float>(x + c));
        case UOP_MUL_CONST: return bits32(static_cast<float>(x * c));
        default: return bits32(static_cast<float>(x / c));
    }
}

inline uint32_t iun(int op, uint32_t x_bits, int64_t iconst) {
    int64_t x = i32(x_bits);
    switch (op) {
        case UOP_RELU: return x > 0 ? x_bits : 0u;
        case UOP_EXP:
            if (x >= 22) return 0x7FFFFFFFu;
            return wrap32(static_cast<int64_t>(std::exp(static_cast<double>(x))));
        case UOP_NEG: return wrap32(-x);
        case UOP_RSQRT:
            return x <= 0 ? 0u : wrap32(static_cast<int64_t>(1.0 / std::sqrt(static_cast<double>(x))));
        case UOP_ADD_CONST: return wrap32(x + iconst);
        case UOP_MUL_CONST: return wrap32(static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(iconst)));
        default: return wrap32(idiv(x, iconst));
    }
}

}  // namespace samfuse

#endif  // SAMFUSE_HLS_H
