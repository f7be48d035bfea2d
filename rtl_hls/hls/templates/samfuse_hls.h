// samfuse HLS common definitions: the token words, output-port writers (edges, forks,
// discards), per-edge trace recording for C-simulation, and value semantics.
//
// Scalar token word (docs/streams.md): tag in bits [33:32], payload in [31:0].
//   tag 0 data (crd/ref unsigned, val = binary32 bits or int32; R on repsig streams)
//   tag 1 stop (payload = level), tag 2 empty N, tag 3 done D.
// Block token (docs/blocks.md): block_tok<E>, E binary32 elements below the same 2-bit
// tag (element k in bits [32k, 32k+32) once Vitis packs the struct); a control token
// keeps its tag with the level of S_k in element 0. A 1-element value is the scalar word.
// Value semantics (sim_models/python/_values.py): float32 ops in double, rounded once to
// float; int32 wraps, division truncates toward zero and x / 0 = 0.
#ifndef SAMFUSE_HLS_H
#define SAMFUSE_HLS_H

#include <ap_int.h>
#include <ap_utils.h>
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

// A value token of E elements: the scalar word for E = 1, else a block (members in
// the order Vitis packs them, first member least significant: elements, then the tag).
template <int E>
struct block_tok {
    uint32_t e[E];
    ap_uint<2> tag;
};
template <int E>
struct tok_of {
    typedef block_tok<E> type;
};
template <>
struct tok_of<1> {
    typedef tok_t type;
};

// Element access shared by scalar words and blocks: tok_io<T>::E elements, element k, a
// control token of T. Templates written against it serve both kinds of value stream.
template <class T>
struct tok_io;
template <>
struct tok_io<tok_t> {
    enum { E = 1 };
    static unsigned tag(const tok_t& t) { return static_cast<unsigned>(t.range(33, 32)); }
    static uint32_t get(const tok_t& t, int) { return static_cast<uint32_t>(t.range(31, 0)); }
    static tok_t make(unsigned tag, const uint32_t* v) {
        tok_t t = 0;
        t.range(31, 0) = v[0];
        t.range(33, 32) = tag;
        return t;
    }
};
template <int N>
struct tok_io<block_tok<N> > {
    enum { E = N };
    static unsigned tag(const block_tok<N>& t) { return static_cast<unsigned>(t.tag); }
    static uint32_t get(const block_tok<N>& t, int k) { return t.e[k]; }
    static block_tok<N> make(unsigned tag, const uint32_t* v) {
        block_tok<N> t;
        for (int k = 0; k < N; k++) t.e[k] = v[k];
        t.tag = tag;
        return t;
    }
};

template <class T>
inline unsigned tag_of(const T& t) { return tok_io<T>::tag(t); }
// the payload of a scalar word; of a block, element 0 (the level of a stop)
template <class T>
inline uint32_t payload(const T& t) { return tok_io<T>::get(t, 0); }
template <class T>
inline bool is_data(const T& t) { return tag_of(t) == TAG_DATA; }
template <class T>
inline bool is_stop(const T& t) { return tag_of(t) == TAG_STOP; }
template <class T>
inline bool is_empty(const T& t) { return tag_of(t) == TAG_EMPTY; }
template <class T>
inline bool is_done(const T& t) { return tag_of(t) == TAG_DONE; }
template <class T>
inline bool is_stop_or_done(const T& t) { return is_stop(t) || is_done(t); }
// element k of a value, N reading as 0 (the zero of binary32 and int32)
template <class T>
inline uint32_t operand(const T& t, int k) { return is_empty(t) ? 0u : tok_io<T>::get(t, k); }

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
// Two control tokens of any streams are the same stop (level) or both N or both D.
template <class A, class B>
inline bool same_tok(const A& a, const B& b) {
    return tag_of(a) == tag_of(b) && payload(a) == payload(b);
}
// The data token of T holding elements v[0..E).
template <class T>
inline T data_of(const uint32_t* v) { return tok_io<T>::make(TAG_DATA, v); }

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
// A token's words in the log: a scalar word as is; a block as its tag word (tag << 32 |
// element 0) followed by its E elements, so a block edge logs 1 + E words per token.
inline void trace_words(int edge, const uint64_t* w, int n) {
    if (!trace_enabled()) return;
    std::vector<std::vector<uint64_t> >& log = trace_log();
    if (edge >= static_cast<int>(log.size())) log.resize(edge + 1);
    log[edge].insert(log[edge].end(), w, w + n);
}
inline void trace_token(int edge, const tok_t& t) {
    uint64_t w = t.to_uint64();
    trace_words(edge, &w, 1);
}
template <int E>
inline void trace_token(int edge, const block_tok<E>& t) {
    uint64_t w[E + 1];
    w[0] = (static_cast<uint64_t>(tag_of(t)) << 32) | t.e[0];
    for (int k = 0; k < E; k++) w[k + 1] = t.e[k];
    trace_words(edge, w, E + 1);
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
// A csim check naming `where` (a primitive's __func__, or the primitive a helper runs for).
#define SAMFUSE_CHECK_AT(where, cond, what) \
    do {                                     \
        if (!(cond)) ::samfuse::fail(where, what); \
    } while (0)
#else
#define SAMFUSE_CHECK_AT(where, cond, what) \
    do {                                     \
    } while (0)
#endif
#define SAMFUSE_CHECK(cond, what) SAMFUSE_CHECK_AT(__func__, cond, what)

// ---- timing shell (docs/hls.md, "Timing knobs") ----------------------------------------
// Every process template takes `int II = 1, int LAT = 1, int START = 0`: its node's ii,
// latency and startup as ir.elaborate gives them (codegen's _timing_args appends them to
// the call). The process opens with samfuse::process_start<II, LAT, START>() and marks its
// firing loop with SAMFUSE_PIPELINE; no template knows more about timing than that.
#define SAMFUSE_PRAGMA(x) _Pragma(#x)
// The firing loop: initiation interval II, and an iteration latency (pipeline depth) of at
// least LAT cycles (Vitis pads a shorter schedule with dummy cycles; min=1 constrains
// nothing, so the default process is scheduled as Vitis chooses).
#define SAMFUSE_PIPELINE \
    SAMFUSE_PRAGMA(HLS pipeline II = II) SAMFUSE_PRAGMA(HLS latency min = LAT)

#ifndef __SYNTHESIS__
// Each process's (II, LAT, START) in call (topological) order, as its template was
// instantiated; the testbench writes them to OUT_DIR/timing.txt.
inline std::vector<std::vector<int> >& process_timings() {
    static std::vector<std::vector<int> > log;
    return log;
}
#endif

// A process's start-up: START clock cycles before its firing loop, one ap_wait() clock
// boundary per iteration of a counted loop (UG1399, "pragma HLS protocol": ap_wait() is a
// clock operation and has no effect in C-simulation).
template <int II, int LAT, int START>
inline void process_start() {
#pragma HLS inline
    static_assert(II >= 1 && LAT >= 1 && START >= 0, "timing knobs out of range");
#ifndef __SYNTHESIS__
    int knobs[3] = {II, LAT, START};
    process_timings().push_back(std::vector<int>(knobs, knobs + 3));
#endif
startup_wait:
    for (int c = 0; c < START; c++) {
#pragma HLS pipeline off
    startup_cycle: {
#pragma HLS protocol fixed
            ap_wait();
        }
    }
}

// One sparse accumulator's entry count for acc_peaks() (csim only): entries held (a slot
// filled), the most held when a group ends (the drain empties the accumulator), pushed at D.
struct AccEntries {
#ifndef __SYNTHESIS__
    uint32_t held = 0, peak = 0;
    void fill() { held++; }
    void group_end() {
        if (held > peak) peak = held;
        held = 0;
    }
    void done() const { acc_peaks().push_back(peak); }
#else
    void fill() {}
    void group_end() {}
    void done() const {}
#endif
};

// A token for a stream of T: the token itself, or a control token of another stream kind
// (a crd stream's stop passed to a block value stream, the N a joiner writes). Data
// changes stream kind only where a template builds it (data_of).
template <class T, class U>
struct Retag {
    static T run(const U& u) {
        SAMFUSE_CHECK(!is_data(u), "a data token written to a value stream of another width");
        uint32_t v[tok_io<T>::E] = {0};
        v[0] = payload(u);
        return tok_io<T>::make(tag_of(u), v);
    }
};
template <class T>
struct Retag<T, T> {
    static T run(const T& t) { return t; }
};

// ---- output-port writers ---------------------------------------------------------------
// A primitive writes each output port through a writer: one graph edge (Edge, or
// EdgeOf<block_tok<E> > for a block value stream), several edges fed by the same port
// (Fork, nested for more than two), or none (Discard).
template <class T>
struct EdgeOf {
    hls::stream<T>& s;
    int id;  // index of the edge in the design's trace table
    EdgeOf(hls::stream<T>& stream, int edge_id) : s(stream), id(edge_id) {}
    template <class U>
    void write(const U& u) {
        T t = Retag<T, U>::run(u);
        s.write(t);
#ifndef __SYNTHESIS__
        trace_token(id, t);
#endif
    }
};
typedef EdgeOf<tok_t> Edge;
template <class T>
inline EdgeOf<T> edge(hls::stream<T>& s, int id) { return EdgeOf<T>(s, id); }

template <class A, class B>
struct Fork {
    A a;
    B b;
    Fork(A first, B rest) : a(first), b(rest) {}
    template <class U>
    void write(const U& t) {
        a.write(t);
        b.write(t);
    }
};

template <class A, class B>
inline Fork<A, B> fork(A a, B b) { return Fork<A, B>(a, b); }

struct Discard {
    template <class U>
    void write(const U&) {}
};

// A registered input head: lets a primitive look at a token before deciding to consume it
// (hls::stream has no peek). The token is read once and held until pop().
template <class T>
struct HeadOf {
    T v;
    bool valid;
    HeadOf() : v(), valid(false) {}
    T peek(hls::stream<T>& s) {
        if (!valid) {
            v = s.read();
            valid = true;
        }
        return v;
    }
    void pop() { valid = false; }
};
typedef HeadOf<tok_t> Head;

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
