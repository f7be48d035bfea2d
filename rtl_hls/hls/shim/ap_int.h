// samfuse csim shim: a minimal, portable stand-in for Xilinx's ap_int.h.
//
// Written for samfuse (not derived from Xilinx sources) so that the generated HLS C++
// C-simulates with a plain g++. Only what samfuse's templates use is provided:
// ap_uint<N> / ap_int<N> for N <= 64, stored in a uint64_t masked to N bits, with
// range(hi, lo) and bit access, to_uint / to_int / to_uint64 and integer conversions.
// Under Vitis HLS the real ap_int.h is used instead (it is found first on the path).
#ifndef SAMFUSE_SHIM_AP_INT_H
#define SAMFUSE_SHIM_AP_INT_H

#include <cstdint>

namespace samfuse_shim {

template <int N>
struct Mask {
    static_assert(N >= 1 && N <= 64, "the samfuse shim supports ap_(u)int widths 1..64");
    static constexpr uint64_t value = N == 64 ? ~uint64_t(0) : ((uint64_t(1) << N) - 1);
};

// A writable view of bits [hi:lo] of a word (what ap_uint::range returns).
class RangeRef {
  public:
    RangeRef(uint64_t& word, uint64_t mask, int hi, int lo) : w_(word), wmask_(mask), hi_(hi), lo_(lo) {}
    uint64_t get() const { return (w_ >> lo_) & field(); }
    operator uint64_t() const { return get(); }
    unsigned to_uint() const { return static_cast<unsigned>(get()); }
    int to_int() const { return static_cast<int>(get()); }
    uint64_t to_uint64() const { return get(); }
    RangeRef& operator=(uint64_t v) {
        w_ = ((w_ & ~(field() << lo_)) | ((v & field()) << lo_)) & wmask_;
        return *this;
    }
    RangeRef& operator=(const RangeRef& o) { return *this = o.get(); }

  private:
    uint64_t field() const {
        int n = hi_ - lo_ + 1;
        return n >= 64 ? ~uint64_t(0) : ((uint64_t(1) << n) - 1);
    }
    uint64_t& w_;
    uint64_t wmask_;
    int hi_, lo_;
};

// The word, its width mask and bit access: what ap_uint and ap_int share.
template <int N>
class Bits {
  public:
    uint64_t to_uint64() const { return v_; }
    int length() const { return N; }

    RangeRef range(int hi, int lo) { return RangeRef(v_, M, hi, lo); }
    uint64_t range(int hi, int lo) const {
        return RangeRef(const_cast<uint64_t&>(v_), M, hi, lo).get();
    }
    RangeRef operator[](int i) { return range(i, i); }
    bool operator[](int i) const { return (v_ >> i) & 1; }

  protected:
    static constexpr uint64_t M = Mask<N>::value;
    explicit Bits(uint64_t v) : v_(v & M) {}
    uint64_t v_;
};

}  // namespace samfuse_shim

template <int N>
class ap_uint : public samfuse_shim::Bits<N> {
    using Base = samfuse_shim::Bits<N>;
    using Base::v_;

  public:
    ap_uint() : Base(0) {}
    ap_uint(uint64_t v) : Base(v) {}                   // NOLINT: implicit, like Xilinx's
    ap_uint(int64_t v) : Base(static_cast<uint64_t>(v)) {}
    ap_uint(unsigned v) : Base(v) {}
    ap_uint(int v) : Base(static_cast<uint64_t>(static_cast<int64_t>(v))) {}
    ap_uint(unsigned long long v) : Base(static_cast<uint64_t>(v)) {}
    ap_uint(long long v) : Base(static_cast<uint64_t>(v)) {}
    template <int K>
    ap_uint(const ap_uint<K>& o) : Base(o.to_uint64()) {}

    operator uint64_t() const { return v_; }
    unsigned to_uint() const { return static_cast<unsigned>(v_); }
    int to_int() const { return static_cast<int>(v_); }
};

template <int N>
class ap_int : public samfuse_shim::Bits<N> {
    using Base = samfuse_shim::Bits<N>;
    using Base::v_;

  public:
    ap_int() : Base(0) {}
    ap_int(int64_t v) : Base(static_cast<uint64_t>(v)) {}  // NOLINT: implicit, like Xilinx's
    ap_int(int v) : Base(static_cast<uint64_t>(static_cast<int64_t>(v))) {}
    ap_int(long long v) : Base(static_cast<uint64_t>(v)) {}
    ap_int(unsigned v) : Base(v) {}

    // sign-extended value
    operator int64_t() const { return to_int64(); }
    int64_t to_int64() const {
        if (N == 64) return static_cast<int64_t>(v_);
        uint64_t sign = uint64_t(1) << (N - 1);
        return static_cast<int64_t>((v_ ^ sign) - sign);
    }
    int to_int() const { return static_cast<int>(to_int64()); }
};

#endif  // SAMFUSE_SHIM_AP_INT_H
