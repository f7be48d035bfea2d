// samfuse SystemC models: block values (docs/blocks.md).
//
// BlockPool: a block token carries a handle (samfuse_token.h, BLOCK_FLAG); the pool maps
// it to the block's E binary32 words. Handles are reference counted: a FIFO push takes a
// reference, a pop drops it at the end of the cycle (so the reader and any primitive that
// passes the token on in the same cycle still see the words); a block a primitive creates
// starts with one reference that is also dropped at the end of the cycle unless the
// creator keeps it (an accumulator's entries, an array's stored values). A freed handle is
// reused for the next block of the same size, so memory stays at the live blocks.
//
// BlockOp: the loop nest of ir.BlockOp.loops(), unrolled once into per-operand element
// offsets (ir.BlockOp.index_maps()): entry [o * inner + c] is the element an operand
// meets at output element o and contraction step c. Every value primitive computes a
// firing through it, bit for bit as sim_models/python/_blocks.py.
#ifndef SAMFUSE_BLOCK_H
#define SAMFUSE_BLOCK_H

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "samfuse_token.h"

namespace samfuse {

class BlockPool {
 public:
  // A new block of `elems` words (uninitialised) with one reference, the creator's.
  std::uint32_t alloc(int elems) {
    SizeClass& sc = classes_[elems];
    std::uint32_t h;
    if (!sc.free.empty()) {
      h = sc.free.back();
      sc.free.pop_back();
    } else {
      if (sc.used == kChunk) {  // the last chunk is full (or there is none yet)
        sc.chunks.emplace_back(new std::uint32_t[std::size_t(kChunk) * std::size_t(elems)]);
        sc.used = 0;
      }
      if (ptr_.size() >= (std::uint64_t(1) << 32))
        throw std::runtime_error("block pool: more than 2^32 live blocks");
      h = std::uint32_t(ptr_.size());
      ptr_.push_back(sc.chunks.back().get() + std::size_t(sc.used++) * std::size_t(elems));
      elems_.push_back(elems);
      refs_.push_back(0);
    }
    refs_[h] = 1;
    if (++live_ > peak_) peak_ = live_;
    return h;
  }
  // A new block that lives as long as the pool (an array's stored values, the zero block).
  std::uint32_t pinned(const std::uint32_t* words, int elems) {
    std::uint32_t h = alloc(elems);
    std::copy(words, words + elems, ptr_[h]);
    return h;
  }
  std::uint32_t* data(std::uint32_t h) const { return ptr_[h]; }
  int elems(std::uint32_t h) const { return elems_[h]; }
  void ref(std::uint32_t h) { ++refs_[h]; }
  void unref(std::uint32_t h) {
    if (--refs_[h] == 0) {
      classes_[elems_[h]].free.push_back(h);
      --live_;
    }
  }
  // Drop a reference at the end of this cycle (commit).
  void unref_later(std::uint32_t h) { later_.push_back(h); }
  void commit() {
    for (std::uint32_t h : later_) unref(h);
    later_.clear();
  }
  std::int64_t live() const { return live_; }
  std::int64_t peak() const { return peak_; }
  std::int64_t handles() const { return std::int64_t(ptr_.size()); }

 private:
  static constexpr int kChunk = 256;  // blocks per allocation
  struct SizeClass {
    std::vector<std::unique_ptr<std::uint32_t[]>> chunks;
    int used = kChunk;  // blocks taken from the last chunk
    std::vector<std::uint32_t> free;
  };
  std::map<int, SizeClass> classes_;
  std::vector<std::uint32_t*> ptr_;  // handle -> words (chunks never move)
  std::vector<int> elems_;
  std::vector<std::int32_t> refs_;
  std::vector<std::uint32_t> later_;
  std::int64_t live_ = 0, peak_ = 0;
};

// One block operator: `n_ops` operands, output elements `out`, contraction steps `inner`.
class BlockOp {
 public:
  // spec = [n_loops, n_out_loops, n_ops, extents..., strides of operand 0..., of 1...]
  // (ir.BlockOp.loops(), flattened by cosim/backends/_systemc_child.py)
  BlockOp(const std::int64_t* spec, std::size_t n) {
    if (n < 3) throw std::invalid_argument("block op: spec too short");
    int loops = int(spec[0]), n_out = int(spec[1]), ops = int(spec[2]);
    if (n != std::size_t(3 + loops * (1 + ops)))
      throw std::invalid_argument("block op: spec has " + std::to_string(n) + " entries");
    const std::int64_t* ext = spec + 3;
    out = inner = 1;
    for (int l = 0; l < loops; ++l) (l < n_out ? out : inner) *= int(ext[l]);
    for (int k = 0; k < ops; ++k) {
      const std::int64_t* stride = ext + loops * (1 + k);
      int elems = 1;
      for (int l = 0; l < loops; ++l)
        if (stride[l]) elems = std::max<int>(elems, int(stride[l] * ext[l]));
      in_elems.push_back(elems);
      // odometer over the loops, row-major (the last loop fastest)
      std::vector<int> idx(std::size_t(loops), 0), map;
      map.reserve(std::size_t(out * inner));
      std::int64_t off = 0;
      for (int i = 0; i < out * inner; ++i) {
        map.push_back(int(off));
        for (int l = loops - 1; l >= 0; --l) {
          off += stride[l];
          if (++idx[std::size_t(l)] < ext[l]) break;
          off -= stride[l] * ext[l];
          idx[std::size_t(l)] = 0;
        }
      }
      maps.push_back(std::move(map));
    }
  }

  int out = 1, inner = 1;
  std::vector<int> in_elems;            // elements of each operand
  std::vector<std::vector<int>> maps;   // per operand: element at [o * inner + c]
};

// binary32 words of one value operand: a block's words, a scalar's one word, or zeros
// for N (docs/blocks.md: N reads as the zero block wherever a value operator consumes it).
class Operand {
 public:
  explicit Operand(int elems = 1) : zeros_(std::size_t(elems > 0 ? elems : 1), 0u) {}
  const std::uint32_t* words(tok_t t, const BlockPool& pool) {
    if (is_block(t)) return pool.data(payload(t));
    if (is_empty(t)) return zeros_.data();
    scalar_ = payload(t);
    return &scalar_;
  }

 private:
  std::vector<std::uint32_t> zeros_;
  std::uint32_t scalar_ = 0;
};

// A firing's result: a block token (E > 1) or a scalar word (E = 1, no 1-element block).
class Result {
 public:
  explicit Result(int elems = 1) : elems_(elems), one_(0) {}
  // Where to write the elements; call token() after writing them.
  std::uint32_t* begin(BlockPool& pool) {
    if (elems_ == 1) return &one_;
    h_ = pool.alloc(elems_);
    pool.unref_later(h_);  // the FIFO pushes keep it alive
    return pool.data(h_);
  }
  tok_t token() const { return elems_ == 1 ? data_tok(one_) : block_tok(h_); }
  int elems() const { return elems_; }

 private:
  int elems_;
  std::uint32_t one_, h_ = 0;
};

// ---- what a firing computes (sim_models/python/_blocks.py) ------------------------------

// Elementwise (inner == 1) or a mul contraction: binary64 sum of exact products from +0.0
// in loop order, rounded once.
inline void block_binary(const BlockOp& b, int op, const std::uint32_t* x,
                         const std::uint32_t* y, std::uint32_t* r) {
  const int* ia = b.maps[0].data();
  const int* ib = b.maps[1].data();
  if (b.inner == 1) {
    for (int o = 0; o < b.out; ++o) r[o] = binary_op(op, true, x[ia[o]], y[ib[o]]);
    return;
  }
  for (int o = 0, i = 0; o < b.out; ++o) {
    double acc = 0.0;
    for (int c = 0; c < b.inner; ++c, ++i) acc += double(f32_of(x[ia[i]])) * double(f32_of(y[ib[i]]));
    r[o] = round_f32(acc);
  }
}

// A reducer's fold over the contracted letters: sum in binary64 from +0.0 rounded once,
// max by the scalar rule from -inf; without contracted letters, the elements as they are.
inline void block_fold(const BlockOp& b, bool is_max, const std::uint32_t* x, std::uint32_t* y) {
  const int* ix = b.maps[0].data();
  if (b.inner == 1) {
    for (int o = 0; o < b.out; ++o) y[o] = x[ix[o]];
    return;
  }
  for (int o = 0, i = 0; o < b.out; ++o) {
    if (is_max) {
      std::uint32_t acc = 0xFF800000u;
      for (int c = 0; c < b.inner; ++c, ++i) acc = binary_op(OP_MAX, true, acc, x[ix[i]]);
      y[o] = acc;
    } else {
      double acc = 0.0;
      for (int c = 0; c < b.inner; ++c, ++i) acc += double(f32_of(x[ix[i]]));
      y[o] = round_f32(acc);
    }
  }
}

}  // namespace samfuse

#endif  // SAMFUSE_BLOCK_H
