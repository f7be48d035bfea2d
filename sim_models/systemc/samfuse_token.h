// samfuse SystemC models: the token word and the value semantics.
//
// A token is the hardware word of DESIGN.md: a 2-bit tag above a 32-bit payload.
// Tag 0 = data (crd/ref unsigned, values as binary32 bits or int32), 1 = stop (payload =
// level), 2 = empty (N), 3 = done (D). Repeat-signal streams use tag 0 for R.
// A block value (docs/blocks.md) is a data token with BLOCK_FLAG above the tag and a
// handle into the net's BlockPool as payload (samfuse_block.h): the whole block moves as
// one 64-bit word, and only the FIFOs (reference counts) and the value primitives look
// behind the handle.
// Values follow sim_models/python/_values.py exactly: float32 ops are computed in
// binary64 and rounded once; int32 ops wrap, divide truncating toward zero, x / 0 = 0.
#ifndef SAMFUSE_TOKEN_H
#define SAMFUSE_TOKEN_H

#include <cmath>
#include <limits>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace samfuse {

using tok_t = std::uint64_t;
using cycle_t = std::int64_t;

enum Tag : std::uint32_t { TAG_DATA = 0, TAG_STOP = 1, TAG_EMPTY = 2, TAG_DONE = 3 };

constexpr tok_t EMPTY_TOK = tok_t(TAG_EMPTY) << 32;
constexpr tok_t DONE_TOK = tok_t(TAG_DONE) << 32;
constexpr tok_t REPEAT_TOK = 0;  // tag 0 on a repsig stream
constexpr tok_t BLOCK_FLAG = tok_t(1) << 34;  // a data token whose payload is a block handle

constexpr tok_t data_tok(std::uint32_t payload) { return payload; }
constexpr tok_t block_tok(std::uint32_t handle) { return BLOCK_FLAG | handle; }
constexpr tok_t stop_tok(std::uint32_t level) { return (tok_t(TAG_STOP) << 32) | level; }
constexpr std::uint32_t tag_of(tok_t t) { return std::uint32_t(t >> 32) & 3u; }
constexpr std::uint32_t payload(tok_t t) { return std::uint32_t(t); }
constexpr bool is_data(tok_t t) { return ((t >> 32) & 3u) == TAG_DATA; }
constexpr bool is_block(tok_t t) { return (t & BLOCK_FLAG) != 0; }
constexpr bool is_stop(tok_t t) { return (t >> 32) == TAG_STOP; }
constexpr bool is_empty(tok_t t) { return t == EMPTY_TOK; }
constexpr bool is_done(tok_t t) { return t == DONE_TOK; }
constexpr bool is_stop_or_done(tok_t t) { return is_stop(t) || is_done(t); }

// How a token is printed in an error message (the Python side renders it with repr):
// 'c' = crd/ref int, 'v' = value (float32 or int32 by graph dtype), 'r' = repeat signal.
enum TokenKind : char { KIND_CRD = 'c', KIND_VAL = 'v', KIND_REPSIG = 'r' };

// A broken stream rule. `format` names up to four tokens as {0} … {3}; the Python side
// renders them exactly as the reference model's messages do (repr of the token).
struct StreamError : std::runtime_error {
  static constexpr int kToks = 4;  // token slots (spacc3 names its four heads)
  std::string node;
  cycle_t cycle;
  tok_t toks[kToks];
  char kinds[kToks];
  StreamError(const std::string& node_, cycle_t cycle_, const std::string& format,
              tok_t a = 0, char ka = 0, tok_t b = 0, char kb = 0, tok_t c = 0, char kc = 0,
              tok_t d = 0, char kd = 0)
      : std::runtime_error(format), node(node_), cycle(cycle_), toks{a, b, c, d},
        kinds{ka, kb, kc, kd} {}
  // the words of a block token (handles are reused)
  std::vector<std::uint32_t> block_words[kToks];
  tok_t tok(int i) const { return toks[i]; }
  const std::vector<std::uint32_t>& block(int i) const { return block_words[i]; }
  // The kinds as a string (one character per slot), ' ' for an unused slot.
  std::string kind_str() const {
    std::string s;
    for (char k : kinds) s += k ? k : ' ';
    return s;
  }
};

// ---- value semantics -------------------------------------------------------------------

enum BinOp : int { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_MIN };
enum UnOp : int { UN_RELU, UN_EXP, UN_NEG, UN_RSQRT, UN_ADD_C, UN_MUL_C, UN_DIV_C };

inline float f32_of(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline std::uint32_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// binary64 -> binary32, round to nearest even; overflow gives +-inf as in IEEE.
inline std::uint32_t round_f32(double x) { return bits_of(static_cast<float>(x)); }

inline std::uint32_t wrap_i32(std::int64_t x) { return std::uint32_t(std::uint64_t(x)); }

inline std::int32_t i32_of(std::uint32_t bits) { return std::int32_t(bits); }

inline std::int64_t trunc_div(std::int64_t a, std::int64_t b) {
  if (b == 0) return 0;
  std::int64_t q = (a < 0 ? -a : a) / (b < 0 ? -b : b);
  return ((a >= 0) == (b >= 0)) ? q : -q;
}

// Division as _values._fdiv: 0/0 and NaN/0 are the canonical quiet NaN (0x7fc00000 once
// rounded), not the FPU's default NaN (negative on x86) or the dividend's payload.
inline double fdiv(double x, double y) {
  if (y == 0.0 && (x == 0.0 || x != x)) return std::numeric_limits<double>::quiet_NaN();
  return x / y;
}

// 1/sqrt(x) as _values._frsqrt: +-inf at +-0, the canonical quiet NaN below 0 and for NaN.
inline double frsqrt(double x) {
  if (x > 0.0) return 1.0 / std::sqrt(x);
  if (x == 0.0) return std::copysign(std::numeric_limits<double>::infinity(), x);
  return std::numeric_limits<double>::quiet_NaN();
}

// One binary operation on payloads; `fp` selects float32 (else int32) semantics.
inline std::uint32_t binary_op(int op, bool fp, std::uint32_t a, std::uint32_t b) {
  if (fp) {
    float x = f32_of(a), y = f32_of(b);
    switch (op) {
      case OP_ADD: return round_f32(double(x) + double(y));
      case OP_SUB: return round_f32(double(x) - double(y));
      case OP_MUL: return round_f32(double(x) * double(y));
      case OP_DIV: return round_f32(fdiv(double(x), double(y)));
      case OP_MAX: return x >= y ? a : b;
      default: return x <= y ? a : b;
    }
  }
  std::int64_t x = i32_of(a), y = i32_of(b);
  switch (op) {
    case OP_ADD: return wrap_i32(x + y);
    case OP_SUB: return wrap_i32(x - y);
    case OP_MUL: return wrap_i32(x * y);
    case OP_DIV: return wrap_i32(trunc_div(x, y));
    case OP_MAX: return x >= y ? a : b;
    default: return x <= y ? a : b;
  }
}

// Parameters of a unary op: the float32 constant, and for int32 graphs the int32 constant
// (ir.int_constant) both modulo 2^32 (add/mul wrap) and signed (div truncates).
struct UnaryConst {
  std::uint32_t f32 = 0;
  std::uint32_t imod = 0;
  std::int64_t idiv = 0;
};

inline std::uint32_t unary_op(int op, bool fp, const UnaryConst& c, std::uint32_t a) {
  if (fp) {
    float x = f32_of(a);
    double cd = double(f32_of(c.f32));
    switch (op) {
      case UN_RELU: return x > 0.0f ? a : bits_of(0.0f);
      case UN_EXP: return round_f32(std::exp(double(x)));
      case UN_NEG: return bits_of(-x);
      case UN_RSQRT: return round_f32(frsqrt(double(x)));
      case UN_ADD_C: return round_f32(double(x) + cd);
      case UN_MUL_C: return round_f32(double(x) * cd);
      default: return round_f32(fdiv(double(x), cd));
    }
  }
  std::int32_t x = i32_of(a);
  switch (op) {
    case UN_RELU: return x > 0 ? a : 0u;
    case UN_EXP: return x < 22 ? wrap_i32(std::int64_t(std::exp(double(x)))) : 0x7FFFFFFFu;
    case UN_NEG: return wrap_i32(-std::int64_t(x));
    case UN_RSQRT: return x <= 0 ? 0u : wrap_i32(std::int64_t(1.0 / std::sqrt(double(x))));
    case UN_ADD_C: return a + c.imod;
    case UN_MUL_C: return a * c.imod;
    default: return wrap_i32(trunc_div(x, c.idiv));
  }
}

}  // namespace samfuse

#endif  // SAMFUSE_TOKEN_H
