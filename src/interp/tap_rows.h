// SPDX-License-Identifier: Apache-2.0
// The inner loops of the direct convolution kernels. The depthwise one (kernels_conv_depthwise.cc):
// one output row summed from a list of tap rows, out[x] = ((0 + s0[x] * w0) + s1[x] * w1) + ...,
// the taps in the order given, every product and sum rounded on its own in C (-ffp-contract=off:
// no FMA). Each vector lane is that scalar sum, so the baseline build (16-byte vectors) and the
// AVX2 and AVX-512 builds (tap_rows_isa.cc, x86-64 only) give the same bits. The weight
// gradient's lane sums and the grouped convolution's rows below follow the same rule.
#pragma once

#include <algorithm>
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

// `c` in every lane: one broadcast. (c + V{} would add +0, which the compiler must keep, as it
// turns -0 into +0; subtracting +0 changes no value, so c - V{} compiles to the broadcast alone.
// A loop setting each lane compiled to sixteen masked broadcasts.)
template <typename V, typename C>
inline V Splat(C c) {
  return c - V{};
}

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
    const V w = Splat<V>(weights[t]);
    for (int64_t u = 0; u < kFull; ++u) {
      V v;
      std::memcpy(&v, src + u * kLanes, sizeof v);
      acc[u] = acc[u] + v * w;
    }
    if constexpr (kHalf) {
      H v;
      std::memcpy(&v, src + kFull * kLanes, sizeof v);
      half = half + v * Splat<H>(weights[t]);
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

// The grouped convolution's inner loop (kernels_conv_grouped.cc): for output positions j in
// [0, positions) of one output row and one feature group, out[j * out_stride + f] for f in
// [0, per_group) is ((0 + x * w) + x * w) + ... over the group's taps in the order given and,
// within a tap, its input features ci in order, where x = in[first + j * pos_stride + tap.delta +
// ci * ci_stride] and w = weights[tap.weights + ci * per_group + f]: XLA's evaluator's order, a
// product and a sum rounded on their own (-ffp-contract=off). The features go in vectors, every
// lane its own scalar chain, so the bits are the same at every ISA level.
struct GroupTap {
  int64_t delta;    // input offset of the tap from a position's first element (may be negative)
  int64_t weights;  // offset of its [input feature x per_group] weights
};

template <typename C>
using GroupedRowsFn = void (*)(const C* in, int64_t first, int64_t pos_stride, int64_t ci_stride, int64_t positions,
                               const GroupTap* taps, int64_t n_taps, int64_t kernel_in, const C* weights,
                               int64_t per_group, C* out, int64_t out_stride);

// kP positions x kV vectors of kW bytes (features [0, kV * lanes) of the output from `out`), their
// sums in registers while every tap and input feature adds to them.
template <typename C, int kW, int kV, int kP>
inline void GroupedBlock(const C* in, int64_t first, int64_t pos_stride, int64_t ci_stride, const GroupTap* taps,
                         int64_t n_taps, int64_t kernel_in, const C* weights, int64_t per_group, C* out,
                         int64_t out_stride) {
  using V = TapVector<C, kW>;
  constexpr int64_t kLanes = kW / sizeof(C);
  V acc[kP][kV] = {};
  for (int64_t t = 0; t < n_taps; ++t) {
    const C* x = in + (first + taps[t].delta);  // position 0's input for this tap (in bounds)
    const C* w = weights + taps[t].weights;
    for (int64_t ci = 0; ci < kernel_in; ++ci, x += ci_stride, w += per_group) {
      V wv[kV];
      for (int64_t v = 0; v < kV; ++v) std::memcpy(&wv[v], w + v * kLanes, sizeof(V));
      for (int64_t p = 0; p < kP; ++p) {
        const V xb = Splat<V>(x[p * pos_stride]);
        for (int64_t v = 0; v < kV; ++v) acc[p][v] = acc[p][v] + xb * wv[v];
      }
    }
  }
  for (int64_t p = 0; p < kP; ++p)
    for (int64_t v = 0; v < kV; ++v) std::memcpy(out + p * out_stride + v * kLanes, &acc[p][v], sizeof(V));
}

// The positions in blocks of kP (about twelve accumulators), the rest one at a time.
template <typename C, int kW, int kV>
inline void GroupedPositions(const C* in, int64_t first, int64_t pos_stride, int64_t ci_stride, int64_t positions,
                             const GroupTap* taps, int64_t n_taps, int64_t kernel_in, const C* weights,
                             int64_t per_group, C* out, int64_t out_stride) {
  constexpr int kP = kV == 1 ? 12 : kV == 2 ? 6 : kV == 3 ? 4 : 3;
  int64_t j = 0;
  for (; j + kP <= positions; j += kP)
    GroupedBlock<C, kW, kV, kP>(in, first + j * pos_stride, pos_stride, ci_stride, taps, n_taps, kernel_in, weights,
                                per_group, out + j * out_stride, out_stride);
  for (; j < positions; ++j)
    GroupedBlock<C, kW, kV, 1>(in, first + j * pos_stride, pos_stride, ci_stride, taps, n_taps, kernel_in, weights,
                               per_group, out + j * out_stride, out_stride);
}

// The widest vector of at most kBytes that divides a group's features (16 bytes at least: the
// kernel takes only groups of a multiple of 16 bytes), the features in runs of up to four such
// vectors (lanes are independent, so the runs give the same bits as one pass).
template <typename C, int kW>
inline void GroupedWidth(const C* in, int64_t first, int64_t pos_stride, int64_t ci_stride, int64_t positions,
                         const GroupTap* taps, int64_t n_taps, int64_t kernel_in, const C* weights, int64_t per_group,
                         C* out, int64_t out_stride) {
  constexpr int64_t kLanes = kW / sizeof(C);
  for (int64_t f = 0; f < per_group; f += 4 * kLanes) {
    const C* w = weights + f;
    C* o = out + f;
    switch (std::min<int64_t>(4, (per_group - f) / kLanes)) {
      case 1:
        GroupedPositions<C, kW, 1>(in, first, pos_stride, ci_stride, positions, taps, n_taps, kernel_in, w, per_group,
                                   o, out_stride);
        break;
      case 2:
        GroupedPositions<C, kW, 2>(in, first, pos_stride, ci_stride, positions, taps, n_taps, kernel_in, w, per_group,
                                   o, out_stride);
        break;
      case 3:
        GroupedPositions<C, kW, 3>(in, first, pos_stride, ci_stride, positions, taps, n_taps, kernel_in, w, per_group,
                                   o, out_stride);
        break;
      case 4:
        GroupedPositions<C, kW, 4>(in, first, pos_stride, ci_stride, positions, taps, n_taps, kernel_in, w, per_group,
                                   o, out_stride);
        break;
    }
  }
}

template <typename C, int kBytes>
inline void GroupedRows(const C* in, int64_t first, int64_t pos_stride, int64_t ci_stride, int64_t positions,
                        const GroupTap* taps, int64_t n_taps, int64_t kernel_in, const C* weights, int64_t per_group,
                        C* out, int64_t out_stride) {
  const int64_t bytes = per_group * static_cast<int64_t>(sizeof(C));
  if constexpr (kBytes >= 64) {
    if (bytes % 64 == 0)
      return GroupedWidth<C, 64>(in, first, pos_stride, ci_stride, positions, taps, n_taps, kernel_in, weights,
                                 per_group, out, out_stride);
  }
  if constexpr (kBytes >= 32) {
    if (bytes % 32 == 0)
      return GroupedWidth<C, 32>(in, first, pos_stride, ci_stride, positions, taps, n_taps, kernel_in, weights,
                                 per_group, out, out_stride);
  }
  GroupedWidth<C, 16>(in, first, pos_stride, ci_stride, positions, taps, n_taps, kernel_in, weights, per_group, out,
                      out_stride);
}

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
  GroupedRowsFn<float> grouped_f32;
  GroupedRowsFn<double> grouped_f64;

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
  GroupedRowsFn<C> Grouped() const {
    if constexpr (sizeof(C) == sizeof(float))
      return grouped_f32;
    else
      return grouped_f64;
  }
  template <typename C>
  int64_t Granule() const {
    return GranuleOf(static_cast<int64_t>(sizeof(C)));
  }
  int64_t GranuleOf(int64_t element_bytes) const { return vector_bytes / 2 / element_bytes; }
};
const TapRowsKernel& ActiveTapRows();

}  // namespace nhlo
