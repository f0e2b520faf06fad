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

/// For each row r in [0, rows): sums `taps` source rows into out[r * dst_pitch, + width), tap t
/// reading sources[t] + r * src_pitch. width is a multiple of the kernel's granule and every
/// source row is readable that far. Rows are written in order, so a width past dst_pitch spills
/// into the next row's start before that row overwrites it (one flat run: rows = 1).
template <typename C>
using TapRowsFn = void (*)(const C* const* sources, const C* weights, int64_t taps, C* out, int64_t width, int64_t rows,
                           int64_t src_pitch, int64_t dst_pitch);

template <typename C, int kBytes>
using TapVector [[gnu::vector_size(kBytes)]] = C;

// kFull vectors and, with kHalf, a half vector after them, from column x: their sums stay in
// registers while every tap adds to them.
template <typename C, int kBytes, int kFull, bool kHalf>
inline void SumTapBlock(const C* const* sources, int64_t offset, const C* weights, int64_t taps, C* out, int64_t x) {
  using V = TapVector<C, kBytes>;
  using H = TapVector<C, kBytes / 2>;
  constexpr int64_t kLanes = kBytes / sizeof(C);
  V acc[kFull > 0 ? kFull : 1] = {};
  H half = {};
  for (int64_t t = 0; t < taps; ++t) {
    const C* src = sources[t] + offset + x;
    const V w = V{} + weights[t];
    for (int64_t u = 0; u < kFull; ++u) {
      V v;
      std::memcpy(&v, src + u * kLanes, sizeof v);
      acc[u] = acc[u] + v * w;
    }
    if constexpr (kHalf) {
      H v;
      std::memcpy(&v, src + kFull * kLanes, sizeof v);
      half = half + v * (H{} + weights[t]);
    }
  }
  for (int64_t u = 0; u < kFull; ++u) std::memcpy(out + x + u * kLanes, &acc[u], sizeof(V));
  if constexpr (kHalf) std::memcpy(out + x + kFull * kLanes, &half, sizeof half);
}

// Columns in blocks of four vectors, then the rest (under four vectors, a whole number of half
// vectors: width is a multiple of the granule) in one more pass over the taps: a 56-wide row is
// 3.5 vectors of AVX-512, a 7-wide row of mobilenet's half of one, with no column summed twice.
template <typename C, int kBytes>
inline void SumTapRow(const C* const* sources, int64_t offset, const C* weights, int64_t taps, C* out, int64_t x,
                      int64_t width) {
  constexpr int64_t kLanes = kBytes / sizeof(C);
  for (; x + kLanes * 4 <= width; x += kLanes * 4)
    SumTapBlock<C, kBytes, 4, false>(sources, offset, weights, taps, out, x);
  switch ((width - x) / (kLanes / 2)) {
    case 0: return;
    case 1: return SumTapBlock<C, kBytes, 0, true>(sources, offset, weights, taps, out, x);
    case 2: return SumTapBlock<C, kBytes, 1, false>(sources, offset, weights, taps, out, x);
    case 3: return SumTapBlock<C, kBytes, 1, true>(sources, offset, weights, taps, out, x);
    case 4: return SumTapBlock<C, kBytes, 2, false>(sources, offset, weights, taps, out, x);
    case 5: return SumTapBlock<C, kBytes, 2, true>(sources, offset, weights, taps, out, x);
    case 6: return SumTapBlock<C, kBytes, 3, false>(sources, offset, weights, taps, out, x);
    case 7: return SumTapBlock<C, kBytes, 3, true>(sources, offset, weights, taps, out, x);
  }
}

template <typename C, int kBytes>
inline void SumTapRows(const C* const* sources, const C* weights, int64_t taps, C* out, int64_t width, int64_t rows,
                       int64_t src_pitch, int64_t dst_pitch) {
  for (int64_t r = 0; r < rows; ++r)
    SumTapRow<C, kBytes>(sources, r * src_pitch, weights, taps, out + r * dst_pitch, 0, width);
}

// The weight-gradient kernel's inner products (ConvolutionLargeWindow): each output element keeps
// kDotLanes partial sums, and a run of n terms a[k * a_step] * b[k * b_step] adds term k to lane
// k % kDotLanes. The kernel folds the lanes in halves at the end (lane i + lane i + 8, then + 4,
// + 2, + 1). Every lane is a scalar chain in a fixed order, so each build (four SSE2 vectors, two
// AVX2 or one AVX-512 register) gives the same bits on every machine and thread count.
inline constexpr int64_t kDotLanes = 16;

template <typename C>
inline void DotLanesAdd(const C* a, int64_t a_step, const C* b, int64_t b_step, int64_t n, C* lanes) {
  C lane[kDotLanes];
  for (int64_t l = 0; l < kDotLanes; ++l) lane[l] = lanes[l];
  int64_t k = 0;
  if (a_step == 1 && b_step == 1) {
    for (; k + kDotLanes <= n; k += kDotLanes)
      for (int64_t l = 0; l < kDotLanes; ++l) lane[l] = lane[l] + a[k + l] * b[k + l];
  } else if (a_step == 2 && b_step == 1) {  // a window dilated by 2 (rhs_dilate): every other input
    for (; k + kDotLanes <= n; k += kDotLanes)
      for (int64_t l = 0; l < kDotLanes; ++l) lane[l] = lane[l] + a[2 * (k + l)] * b[k + l];
  } else {
    for (; k + kDotLanes <= n; k += kDotLanes)
      for (int64_t l = 0; l < kDotLanes; ++l) lane[l] = lane[l] + a[(k + l) * a_step] * b[(k + l) * b_step];
  }
  for (int64_t l = 0; k + l < n; ++l) lane[l] = lane[l] + a[(k + l) * a_step] * b[(k + l) * b_step];
  for (int64_t l = 0; l < kDotLanes; ++l) lanes[l] = lane[l];
}

// The lanes' sum: folded in halves, a fixed tree.
template <typename C>
inline C FoldLanes(const C* lanes) {
  C lane[kDotLanes];
  for (int64_t l = 0; l < kDotLanes; ++l) lane[l] = lanes[l];
  for (int64_t half = kDotLanes / 2; half >= 1; half /= 2)
    for (int64_t l = 0; l < half; ++l) lane[l] = lane[l] + lane[l + half];
  return lane[0];
}

template <typename C>
using DotLanesFn = void (*)(const C* a, int64_t a_step, const C* b, int64_t b_step, int64_t n, C* lanes);

/// The widest builds of SumTapRows and DotLanesAdd this CPU runs (the GEMM's ISA level, gemm.h)
/// and its granule: the element count a row's width must be rounded up to.
struct TapRowsKernel {
  TapRowsFn<float> f32;
  TapRowsFn<double> f64;
  // A memcpy whose whole aligned vectors bypass the caches (non-temporal stores).
  void (*stream_copy)(void* dst, const void* src, int64_t bytes);
  int64_t vector_bytes;
  DotLanesFn<float> dot_f32;
  DotLanesFn<double> dot_f64;

  template <typename C>
  TapRowsFn<C> For() const {
    if constexpr (sizeof(C) == sizeof(float))
      return f32;
    else
      return f64;
  }
  template <typename C>
  DotLanesFn<C> Dot() const {
    if constexpr (sizeof(C) == sizeof(float))
      return dot_f32;
    else
      return dot_f64;
  }
  template <typename C>
  int64_t Granule() const {
    return vector_bytes / 2 / static_cast<int64_t>(sizeof(C));
  }
};
const TapRowsKernel& ActiveTapRows();

}  // namespace nhlo
