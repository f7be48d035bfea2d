// Block operators (docs/blocks.md): what alu and reduce compute inside a firing, and the
// elementwise helpers unary and the accumulators use. A scalar value is the 1-element
// case, so the scalar templates run the same code with the empty operator ScalarOp.
//
// BlockOp<OUT_LOOPS, ints<extents>, ints<strides of a>, ints<strides of b>> is
// ir.BlockOp.loops() as types: the loop nest is the output letters (row-major) then the
// contracted letters; operand k reads element sum_l digit_l * stride_k[l] (0 = broadcast).
// block_loop runs that nest once per firing for every operator; only its kernel differs.
#ifndef SAMFUSE_BLOCK_OP_H
#define SAMFUSE_BLOCK_OP_H
#include "samfuse_hls.h"

namespace samfuse {

template <int... V>
struct ints {
    enum { N = sizeof...(V) };
    static constexpr int v[sizeof...(V) + 1] = {V..., 0};  // +1: no zero-length array
    static constexpr int get(int l) { return l < N ? v[l] : 0; }
    // product of entries [lo, hi)
    static constexpr int prod(int lo, int hi) { return lo >= hi ? 1 : get(lo) * prod(lo + 1, hi); }
};
template <int... V>
constexpr int ints<V...>::v[sizeof...(V) + 1];

// elements an operand spans: 1 + sum_l (extent_l - 1) * stride_l
template <class EXT, class S>
constexpr int span(int l = 0) {
    return l >= EXT::N ? 1 : (EXT::get(l) - 1) * S::get(l) + span<EXT, S>(l + 1);
}

template <int OUT_LOOPS, class EXT, class SA, class SB = ints<> >
struct BlockOp {
    typedef EXT ext;
    typedef SA sa;
    typedef SB sb;
    enum {
        LOOPS = EXT::N,
        OUT = EXT::prod(0, OUT_LOOPS),         // output elements
        INNER = EXT::prod(OUT_LOOPS, EXT::N),  // contraction steps per output element
        CONTRACT = EXT::N > OUT_LOOPS,          // has contracted letters (even of extent 1)
        IN_A = span<EXT, SA>(),
        IN_B = span<EXT, SB>()
    };
};
// the scalar operator: no letters, one element in, one out
typedef BlockOp<0, ints<>, ints<>, ints<> > ScalarOp;

// The loop nest of one firing: out[o] = K.finish(fold over c of K.step(acc, x[.], y[.])).
template <class SPEC, class K>
void block_loop(const uint32_t* x, const uint32_t* y, uint32_t* out, const K& k) {
block_out:
    for (int o = 0; o < SPEC::OUT; o++) {
        typename K::acc_t acc = k.init();
    block_inner:
        for (int c = 0; c < SPEC::INNER; c++) {
            int idx = o * SPEC::INNER + c, ox = 0, oy = 0;
        block_digits:  // the loop indices of step (o, c), innermost loop first
            for (int l = SPEC::LOOPS - 1; l >= 0; l--) {
#pragma HLS unroll
                int d = idx % SPEC::ext::get(l);
                idx /= SPEC::ext::get(l);
                ox += d * SPEC::sa::get(l);
                oy += d * SPEC::sb::get(l);
            }
            acc = k.step(acc, x[ox], y[oy]);
        }
        out[o] = k.finish(acc);
    }
}

// Kernels. Elementwise: the scalar rule on one element pair (no contraction).
template <int OP, bool FLOAT>
struct ElemKernel {
    typedef uint32_t acc_t;
    acc_t init() const { return 0u; }
    acc_t step(acc_t, uint32_t a, uint32_t b) const { return binop<FLOAT>(OP, a, b); }
    uint32_t finish(acc_t acc) const { return acc; }
};
// Contraction and sum fold: exact binary32 products (or values) summed in a binary64
// accumulator from +0.0 in loop order, rounded once.
template <bool PRODUCT>
struct DotKernel {
    typedef double acc_t;
    acc_t init() const { return 0.0; }
    acc_t step(acc_t acc, uint32_t a, uint32_t b) const {
        return acc + (PRODUCT ? static_cast<double>(f32(a)) * static_cast<double>(f32(b))
                              : static_cast<double>(f32(a)));
    }
    uint32_t finish(acc_t acc) const { return bits32(static_cast<float>(acc)); }
};
// Max fold: from -inf by the scalar max rule in binary32.
struct MaxKernel {
    typedef uint32_t acc_t;
    acc_t init() const { return 0xFF800000u; }
    acc_t step(acc_t acc, uint32_t a, uint32_t) const { return fbin(OP_MAX, acc, a); }
    uint32_t finish(acc_t acc) const { return acc; }
};
// Pass-through (a reducer's fold without contraction steps).
struct CopyKernel {
    typedef uint32_t acc_t;
    acc_t init() const { return 0u; }
    acc_t step(acc_t, uint32_t a, uint32_t) const { return a; }
    uint32_t finish(acc_t acc) const { return acc; }
};

template <bool C, class A, class B>
struct pick {
    typedef A type;
};
template <class A, class B>
struct pick<false, A, B> {
    typedef B type;
};

// A token's elements into v[0..E), N as zeros.
template <class T>
void unpack(const T& t, uint32_t* v) {
unpack_elems:
    for (int k = 0; k < tok_io<T>::E; k++) {
#pragma HLS unroll
        v[k] = operand(t, k);
    }
}

// An alu firing on two data (or N) tokens: elementwise with broadcasts, or (a mul with
// contracted letters) a contraction. The result is the token of SPEC::OUT elements.
template <int OP, bool FLOAT, class SPEC, class TA, class TB>
typename tok_of<SPEC::OUT>::type block_binary(const TA& a, const TB& b) {
    static_assert(tok_io<TA>::E == SPEC::IN_A && tok_io<TB>::E == SPEC::IN_B,
                  "operand widths differ from the block operator's");
    static_assert(!SPEC::CONTRACT || (OP == OP_MUL && FLOAT),
                  "only a binary32 mul contracts (docs/blocks.md)");
    typedef typename pick<SPEC::CONTRACT, DotKernel<true>, ElemKernel<OP, FLOAT> >::type K;
    // registers: one element per lane of the datapath
    uint32_t x[SPEC::IN_A], y[SPEC::IN_B], out[SPEC::OUT];
#pragma HLS array_partition variable = x complete
#pragma HLS array_partition variable = y complete
#pragma HLS array_partition variable = out complete
    unpack(a, x);
    unpack(b, y);
    block_loop<SPEC>(x, y, out, K());
    return data_of<typename tok_of<SPEC::OUT>::type>(out);
}

// A reducer's fold of one data (or N) token over SPEC's contracted letters into
// out[SPEC::OUT]: sum (binary64, rounded once) or max; without contraction steps the
// elements pass unchanged (as the model folds them).
template <int OP, bool FLOAT, class SPEC, class T>
void block_fold(const T& t, uint32_t* out) {
    static_assert(tok_io<T>::E == SPEC::IN_A, "input width differs from the block operator's");
    static_assert(SPEC::INNER == 1 || FLOAT, "only binary32 blocks fold");
    typedef typename pick<OP == OP_ADD, DotKernel<false>, MaxKernel>::type Fold;
    typedef typename pick<SPEC::INNER == 1, CopyKernel, Fold>::type K;
    uint32_t x[SPEC::IN_A];
#pragma HLS array_partition variable = x complete
    unpack(t, x);
    block_loop<SPEC>(x, x, out, K());
}

// The scalar rule OP on every element pair, in place: acc[k] = acc[k] OP v[k] (a
// reducer's combine, an accumulator's sum).
template <int OP, bool FLOAT, int E>
void combine(uint32_t* acc, const uint32_t* v) {
combine_elems:
    for (int k = 0; k < E; k++) {
#pragma HLS unroll
        acc[k] = binop<FLOAT>(OP, acc[k], v[k]);
    }
}

// An accumulator entry's update: held + v elementwise, or 0 + v for an entry not yet
// held (so -0.0 becomes +0.0, as for scalars); N adds zeros.
template <bool FLOAT, int E, class T>
void accumulate(uint32_t* acc, bool held, const T& v) {
    static_assert(tok_io<T>::E == E, "accumulator and value widths differ");
    uint32_t x[E];
#pragma HLS array_partition variable = x complete
    unpack(v, x);
    if (!held) {
        for (int k = 0; k < E; k++) acc[k] = 0u;
    }
    combine<OP_ADD, FLOAT, E>(acc, x);
}

}  // namespace samfuse
#endif
