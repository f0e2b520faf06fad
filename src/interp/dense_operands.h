// SPDX-License-Identifier: Apache-2.0
// Operand preparation shared by the dot and convolution kernels: a whole buffer converted to
// its compute type in one pass (an operand of another type is first converted to the result
// type, the evaluator's rule), and a dense permutation of its dimensions that copies rows when
// the innermost dimension stays innermost and transposes in cache-sized blocks otherwise.
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "interp/element_traits.h"
#include "interp/float_blocks.h"
#include "interp/kernels.h"

namespace nhlo {

/// The elements of `buf`, as the kernels computing in the result type `result` (traits `rt`,
/// compute type C) see them: dense, row-major, in buf's own dimension order.
template <typename C, typename ResultTraits, typename Alloc>
Status ToComputeArray(const Buf& buf, PrimitiveType result, ResultTraits rt, std::vector<C, Alloc>& dst) {
  int64_t count = buf.count();
  dst.resize(static_cast<size_t>(count));
  if (count == 0) return OkStatus();
  PrimitiveType t = buf.type();
  if (t != result) {
    // Mixed types: through the result type element by element (rare, so kept simple).
    int size = HostByteSize(t);
    for (int64_t i = 0; i < count; ++i) {
      uint8_t tmp[16] = {};
      ConvertElement(t, buf.data + i * size, result, tmp);
      dst[i] = rt.Load(tmp, 0);
    }
    return OkStatus();
  }
  if constexpr (std::is_same_v<C, float>) {
    if (t == PrimitiveType::kF32) {
      std::memcpy(dst.data(), buf.data, static_cast<size_t>(count) * sizeof(float));
      return OkStatus();
    }
    if (t == PrimitiveType::kBF16) {  // exact widening, by the elementwise kernels' block codec
      DecodeFloatBlock(t, buf.data, dst.data(), count);
      return OkStatus();
    }
  }
  if constexpr (std::is_same_v<C, double>) {
    if (t == PrimitiveType::kF64) {
      std::memcpy(dst.data(), buf.data, static_cast<size_t>(count) * sizeof(double));
      return OkStatus();
    }
  }
  if constexpr (std::is_same_v<ResultTraits, LowFloatTraits>) {
    // The other low floats through a decode table: 256 entries for the one-byte types (f8, and
    // f6/f4 stored one per byte), 65536 for f16 when the array is large enough to repay it.
    int size = HostByteSize(t);
    if (size == 1 || (size == 2 && count >= 65536)) {
      std::vector<float> table(size == 1 ? 256 : 65536);
      for (size_t code = 0; code < table.size(); ++code) {
        uint8_t bytes[2] = {static_cast<uint8_t>(code), static_cast<uint8_t>(code >> 8)};
        table[code] = rt.Load(bytes, 0);
      }
      for (int64_t i = 0; i < count; ++i) {
        uint16_t code = buf.data[i * size];
        if (size == 2) std::memcpy(&code, buf.data + 2 * i, 2);
        dst[i] = table[code];
      }
      return OkStatus();
    }
  }
  for (int64_t i = 0; i < count; ++i) dst[i] = rt.Load(buf.data, i);
  return OkStatus();
}

/// Stores `count` computed values into the result buffer (rounding once for the low floats).
template <typename C, typename ResultTraits>
void StoreComputeArray(const C* src, int64_t count, const Buf& out, ResultTraits rt) {
  if (count <= 0) return;  // an empty result's source may be a null vector.data() (fuzz-modules finding)
  if constexpr (std::is_same_v<C, float>) {
    if (out.type() == PrimitiveType::kF32) {
      std::memcpy(out.data, src, static_cast<size_t>(count) * sizeof(float));
      return;
    }
    if (out.type() == PrimitiveType::kBF16) {  // EncodeFromF32's rounding, as the elementwise kernels store
      EncodeFloatBlock(out.type(), src, out.data, count);
      return;
    }
  }
  if constexpr (std::is_same_v<C, double>) {
    if (out.type() == PrimitiveType::kF64) {
      std::memcpy(out.data, src, static_cast<size_t>(count) * sizeof(double));
      return;
    }
  }
  for (int64_t i = 0; i < count; ++i) rt.Store(out.data, i, src[i]);
}

/// dst = src (dense row-major with `dims`) with its dimensions reordered: dst's dimension i is
/// src's dimension order[i].
template <typename C>
void PermuteDims(const C* src, const std::vector<int64_t>& dims, const std::vector<int64_t>& order, C* dst) {
  std::vector<int64_t> strides = RowMajorStrides(dims);
  // Output dims with their source strides; size-1 dims dropped, runs that stay contiguous merged.
  std::vector<int64_t> od, ss;
  int64_t total = 1;
  for (int64_t d : order) {
    total *= dims[d];
    if (dims[d] == 1) continue;
    if (!od.empty() && ss.back() == strides[d] * dims[d]) {
      od.back() *= dims[d];
      ss.back() = strides[d];
    } else {
      od.push_back(dims[d]);
      ss.push_back(strides[d]);
    }
  }
  if (total == 0) return;
  if (od.empty() || (od.size() == 1 && ss[0] == 1)) {
    std::memcpy(dst, src, static_cast<size_t>(total) * sizeof(C));
    return;
  }
  size_t r = od.size();
  std::vector<int64_t> ds = RowMajorStrides(od);
  // p: the output dim that is contiguous in the source (there is one unless merged away).
  size_t p = r;
  for (size_t i = 0; i < r; ++i)
    if (ss[i] == 1) p = i;
  // The outer dims walked by an odometer: all but the innermost (and p).
  std::vector<size_t> outer;
  for (size_t i = 0; i + 1 < r; ++i)
    if (i != p) outer.push_back(i);
  std::vector<int64_t> idx(outer.size(), 0);
  int64_t inner = od[r - 1], inner_ss = ss[r - 1];
  for (;;) {
    int64_t sbase = 0, dbase = 0;
    for (size_t q = 0; q < outer.size(); ++q) sbase += idx[q] * ss[outer[q]], dbase += idx[q] * ds[outer[q]];
    if (p == r - 1 || p == r) {
      // Rows: innermost output dim read with stride inner_ss (1 when p is innermost).
      if (inner_ss == 1) {
        std::memcpy(dst + dbase, src + sbase, static_cast<size_t>(inner) * sizeof(C));
      } else {
        for (int64_t j = 0; j < inner; ++j) dst[dbase + j] = src[sbase + j * inner_ss];
      }
    } else {
      // A 2-D transpose between p (contiguous in src) and the innermost dim, in 32x32 blocks.
      constexpr int64_t kB = 32;
      int64_t rows = od[p], rs = ds[p];
      for (int64_t i0 = 0; i0 < rows; i0 += kB)
        for (int64_t j0 = 0; j0 < inner; j0 += kB) {
          int64_t i1 = i0 + kB < rows ? i0 + kB : rows, j1 = j0 + kB < inner ? j0 + kB : inner;
          for (int64_t j = j0; j < j1; ++j)
            for (int64_t i = i0; i < i1; ++i) dst[dbase + i * rs + j] = src[sbase + i + j * inner_ss];
        }
    }
    size_t q = outer.size();
    while (q > 0) {
      --q;
      if (++idx[q] < od[outer[q]]) break;
      idx[q] = 0;
      if (q == 0) return;
    }
    if (outer.empty()) return;
  }
}

/// `buf`'s bytes as C when they already are C (an f32 or f64 buffer of the result type, aligned):
/// read in place; else null.
template <typename C>
const C* InPlaceElements(const Buf& buf, PrimitiveType result) {
  bool typed = buf.type() == result && reinterpret_cast<uintptr_t>(buf.data) % alignof(C) == 0 &&
               (buf.type() == PrimitiveType::kF32 || buf.type() == PrimitiveType::kF64);
  return typed ? reinterpret_cast<const C*>(buf.data) : nullptr;
}

/// The elements of `buf` as C: in place (InPlaceElements), else converted into `storage`
/// (ToComputeArray).
template <typename C, typename ResultTraits, typename Alloc>
Result<const C*> ComputeElements(const Buf& buf, PrimitiveType result, ResultTraits rt,
                                 std::vector<C, Alloc>& storage) {
  if (const C* in_place = InPlaceElements<C>(buf, result)) return in_place;
  NHLO_TRY(ToComputeArray<C>(buf, result, rt, storage));
  return static_cast<const C*>(storage.data());
}

/// The elements of `buf` as std::complex<R> in `storage`, as the evaluator converts every
/// operand of a complex dot or convolution to the result type first: a complex operand of the
/// other width is converted, a real one becomes (value, 0).
template <typename R, typename Alloc>
Status ComplexElements(const Buf& buf, std::vector<std::complex<R>, Alloc>& storage) {
  using C = std::complex<R>;
  const int64_t count = buf.count();
  storage.resize(static_cast<size_t>(count));
  if (buf.type() == PrimitiveType::kC64) {
    for (int64_t i = 0; i < count; ++i) storage[i] = C(LoadComplex<float>(buf.data, i));
    return OkStatus();
  }
  if (buf.type() == PrimitiveType::kC128) {
    for (int64_t i = 0; i < count; ++i) storage[i] = C(LoadComplex<double>(buf.data, i));
    return OkStatus();
  }
  return DispatchType(buf.type(), [&](auto traits) -> Status {
    for (int64_t i = 0; i < count; ++i) storage[i] = C(static_cast<R>(traits.Load(buf.data, i)), R(0));
    return OkStatus();
  });
}

/// The result's bytes as C, for kernels that write it directly, when `out` is f32 or f64 of
/// compute type C and aligned; else null (the kernel stores through the result's traits).
template <typename C>
C* TypedOutput(const Buf& out) {
  return const_cast<C*>(InPlaceElements<C>(out, out.type()));
}

}  // namespace nhlo
