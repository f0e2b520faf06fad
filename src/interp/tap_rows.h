// SPDX-License-Identifier: Apache-2.0
// The inner loop of the direct depthwise convolution (kernels_conv_depthwise.cc): one output row
// summed from a list of tap rows, out[x] = ((0 + s0[x] * w0) + s1[x] * w1) + ..., the taps in the
// order given, every product and sum rounded on its own in C (-ffp-contract=off: no FMA). Each
// vector lane is that scalar sum, so the baseline build (16-byte vectors) and the AVX2 and
// AVX-512 builds (tap_rows_isa.cc, x86-64 only) give the same bits.
#pragma once

#include <cstdint>
#include <cstring>

namespace nhlo {

/// Sums `taps` rows into out[0, width): width is a multiple of the kernel's granule, and every
/// source row is readable that far.
template <typename C>
using TapRowsFn = void (*)(const C* const* sources, const C* weights, int64_t taps, C* out, int64_t width);

template <typename C, int kBytes>
using TapVector [[gnu::vector_size(kBytes)]] = C;

// Columns in blocks of four vectors (the sums stay in registers while every tap adds to them),
// then single vectors, then a half vector: short rows (mobilenet's 7- and 14-wide planes) waste
// at most a half vector each.
template <typename C, int kBytes>
inline void SumTapRows(const C* const* sources, const C* weights, int64_t taps, C* out, int64_t width) {
  using V = TapVector<C, kBytes>;
  using H = TapVector<C, kBytes / 2>;
  constexpr int64_t kLanes = kBytes / sizeof(C);
  constexpr int64_t kUnroll = 4;
  int64_t x = 0;
  for (; x + kLanes * kUnroll <= width; x += kLanes * kUnroll) {
    V acc[kUnroll] = {};
    for (int64_t t = 0; t < taps; ++t) {
      const C* src = sources[t] + x;
      const V w = V{} + weights[t];
      for (int64_t u = 0; u < kUnroll; ++u) {
        V v;
        std::memcpy(&v, src + u * kLanes, sizeof v);
        acc[u] = acc[u] + v * w;
      }
    }
    std::memcpy(out + x, acc, sizeof acc);
  }
  for (; x + kLanes <= width; x += kLanes) {
    V acc = {};
    for (int64_t t = 0; t < taps; ++t) {
      V v;
      std::memcpy(&v, sources[t] + x, sizeof v);
      acc = acc + v * (V{} + weights[t]);
    }
    std::memcpy(out + x, &acc, sizeof acc);
  }
  for (; x < width; x += kLanes / 2) {
    H acc = {};
    for (int64_t t = 0; t < taps; ++t) {
      H v;
      std::memcpy(&v, sources[t] + x, sizeof v);
      acc = acc + v * (H{} + weights[t]);
    }
    std::memcpy(out + x, &acc, sizeof acc);
  }
}

/// The widest build of SumTapRows this CPU runs (the GEMM's ISA level, gemm.h) and its granule:
/// the element count a row's width must be rounded up to.
struct TapRowsKernel {
  TapRowsFn<float> f32;
  TapRowsFn<double> f64;
  int64_t vector_bytes;

  template <typename C>
  TapRowsFn<C> For() const {
    if constexpr (sizeof(C) == sizeof(float))
      return f32;
    else
      return f64;
  }
  template <typename C>
  int64_t Granule() const {
    return vector_bytes / 2 / static_cast<int64_t>(sizeof(C));
  }
};
const TapRowsKernel& ActiveTapRows();

}  // namespace nhlo
