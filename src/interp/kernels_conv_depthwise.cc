// SPDX-License-Identifier: Apache-2.0
// Depthwise convolution of float types, computed directly: feature_group_count groups of one
// input feature each (the kernel's input-feature dimension is 1), any channel multiplier, two
// spatial dimensions, any window (stride, padding, lhs and rhs dilation, reversal) and any
// dim_labels layout. im2col + GEMM (kernels_conv_gemm.cc) spends a GEMM call on every
// 480-position block of every channel with a depth of 9 here, about 0.1 GFLOP/s.
//
// The row path, for a channel whose weights are all finite: the channel's input plane is copied
// once into padded rows (zeros in the padding and between lhs-dilated elements, one row per x
// phase of the stride), so every tap of an output row reads one contiguous row, and the output
// row is summed by SumTapRows (tap_rows.h) in the widest vectors the CPU has. A zero tap leaves
// the sum as it was (see row_from_padded_plane), so the bits are the reference's.
//
// The residue path, for a channel with an infinite or NaN weight (0 * inf is NaN, so padding
// taps must be skipped) or a window whose padded plane would be huge: one output row at a time,
// the taps in bounds listed for it, blocks of 16 columns summed in registers. With lhs dilation
// or a stride, the columns are taken by residue (x = r, r + period, ...), for which each tap
// reads evenly spaced input columns or none.
//
// The bits are the reference kernel's (kernels_gather_conv.cc), which are XLA's evaluator's:
// each output element starts at zero and adds x * w for its in-bounds taps in row-major tap
// order, a multiply and an add rounded separately in the compute type (float for f32, bf16 and
// f16; double for f64), taps that fall into padding or between dilated input elements skipped;
// the result is rounded to the output type once. Channels (batch x output feature planes) run
// in parallel; each element's sum is the same for every thread count.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>

#include "interp/dense_operands.h"
#include "interp/element_traits.h"
#include "interp/gemm.h"
#include "interp/kernels.h"
#include "interp/scratch.h"
#include "interp/tap_rows.h"
#include "support/parallel.h"
#if defined(NHLO_SPAN_X86)
#include "interp/tap_rows_isa.h"
#endif

namespace nhlo {
namespace {

// Output columns of one row in blocks of this many: the block's sums stay in registers while
// every tap adds its products (one store per element instead of one per tap).
constexpr int64_t kBlock = 16;
// A window of at least this many taps (and 16 times the output positions) is summed directly,
// tap row by tap row, rather than gathered into an im2col matrix as deep as the window. At 1024,
// mobilenet_v2's 28x28 and 14x14 depthwise weight gradients fell to the reference kernel when
// their gradients held a NaN (the GEMM path refuses non-finite kernels): 10% of its run.
constexpr int64_t kLargeWindowTaps = 128;

// One kernel column for the output columns x = residue + period * m (m = 0, 1, ...) of a row:
// the input column it reads is first + m * step, in bounds for m in [m_begin, m_end).
struct ColumnTap {
  int64_t kx;     // the kernel column (before reversal)
  int64_t first;  // may be negative: only in-bounds m are read
  int64_t m_begin, m_end;
};

// 16 bytes of C: an SSE register, which the baseline x86-64 build always has. Lane-wise vector
// arithmetic is the scalar arithmetic of each lane (contraction is off), so the sums are the
// same bits as the scalar loop's.
template <typename C>
using Lanes [[gnu::vector_size(16)]] = C;

// acc[0..kBlock) += src[0..kBlock) * weight, in vector registers, src contiguous.
template <typename C>
inline void AddProducts(Lanes<C>* acc, const C* src, C weight) {
  constexpr int64_t kLanes = 16 / sizeof(C);
  Lanes<C> w;
  for (int64_t j = 0; j < kLanes; ++j) w[j] = weight;
  for (int64_t v = 0; v < kBlock / kLanes; ++v) {
    Lanes<C> x;
    std::memcpy(&x, src + v * kLanes, sizeof x);
    acc[v] = acc[v] + x * w;
  }
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

// The row path's layout of one input plane. Output columns x = r + period * m of residue r
// (period > 1 only with lhs dilation) are summed as rows over m: each tap kx that lands on an
// input column for residue r reads input column first + m * step, so the plane's rows are kept
// zero-padded at both ends and split into `step` phases (entry j of phase h is padded column
// h + step * j), and every tap of a residue reads one contiguous run of a phase.
struct RowLayout {
  struct Residue {
    int64_t count = 0;                              // its output columns
    int64_t width = 0;                              // count rounded up to the tap-row kernel's granule
    std::vector<std::pair<int64_t, int64_t>> taps;  // (kernel column, offset in a padded row)
  };
  int64_t period = 1, step = 1;
  int64_t pad = 0;       // zero columns before input column 0
  int64_t row_len = 0;   // entries per phase
  int64_t elements = 0;  // in_h * step * row_len
  std::vector<Residue> residues;
};

// The layout, or nullopt where the padded plane would be far larger than the data (a window
// dilation or padding in the millions): that convolution keeps the residue path.
std::optional<RowLayout> PlanRows(const WindowDim& wx, const WindowDim& wy, int64_t in_h, int64_t in_w, int64_t out_h,
                                  int64_t out_w, int64_t k_w, int64_t granule) {
  constexpr int64_t kLimit = int64_t{1} << 30;
  for (const WindowDim* w : {&wx, &wy})
    if (std::abs(w->pad_low) > kLimit || std::abs(w->pad_high) > kLimit || w->stride > kLimit ||
        w->window_dilation > kLimit || w->base_dilation > kLimit)
      return std::nullopt;
  RowLayout layout;
  layout.period = wx.base_dilation / std::gcd(wx.stride, wx.base_dilation);
  layout.step = layout.period * wx.stride / wx.base_dilation;
  // First pass: each residue's taps as (kernel column, first input column), and the input
  // columns they reach over the rounded width.
  int64_t lowest = 0, highest = in_w - 1;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> firsts(static_cast<size_t>(layout.period));
  layout.residues.resize(static_cast<size_t>(layout.period));
  for (int64_t r = 0; r < layout.period; ++r) {
    RowLayout::Residue& residue = layout.residues[r];
    residue.count = r < out_w ? (out_w - r + layout.period - 1) / layout.period : 0;
    residue.width = (residue.count + granule - 1) / granule * granule;
    for (int64_t kx = 0; kx < k_w && residue.count > 0; ++kx) {
      const int64_t q0 = r * wx.stride + kx * wx.window_dilation - wx.pad_low;
      if ((q0 % wx.base_dilation + wx.base_dilation) % wx.base_dilation != 0) continue;
      const int64_t first = FloorDiv(q0, wx.base_dilation);
      const int64_t last = first + (residue.count - 1) * layout.step;
      if (last < 0 || first >= in_w) continue;  // never on an input column: only zero terms
      firsts[r].emplace_back(kx, first);
      lowest = std::min(lowest, first);
      highest = std::max(highest, first + (residue.width - 1) * layout.step);
    }
  }
  layout.pad = -lowest;
  const int64_t padded_len = highest - lowest + 1;
  layout.row_len = (padded_len + layout.step - 1) / layout.step;
  layout.elements = in_h * layout.step * layout.row_len;
  if (layout.elements > 16 * (in_h * in_w + out_h * out_w) + 4096) return std::nullopt;
  for (int64_t r = 0; r < layout.period; ++r)
    for (const auto& [kx, first] : firsts[r]) {
      const int64_t padded_column = first + layout.pad;
      layout.residues[r].taps.emplace_back(
          kx, (padded_column % layout.step) * layout.row_len + padded_column / layout.step);
    }
  return layout;
}

// Fills `rows` (layout.elements) from one input plane.
template <typename C>
void FillRows(const RowLayout& layout, const C* in_plane, int64_t in_h, int64_t in_w, int64_t in_y, int64_t in_x,
              C* rows) {
  for (int64_t p = 0; p < in_h; ++p) {
    const C* src = in_plane + p * in_y;
    for (int64_t h = 0; h < layout.step; ++h) {
      // Entry j is input column h + step * j - pad.
      C* dst = rows + (p * layout.step + h) * layout.row_len;
      const int64_t begin = std::clamp<int64_t>(CeilDiv(layout.pad - h, layout.step), 0, layout.row_len);
      const int64_t end = std::clamp<int64_t>(CeilDiv(layout.pad + in_w - h, layout.step), begin, layout.row_len);
      std::fill(dst, dst + begin, C(0));
      const int64_t column = h + layout.step * begin - layout.pad;  // in [0, in_w) when begin < end
      if (begin == end) {
      } else if (layout.step == 1 && in_x == 1) {
        std::memcpy(dst + begin, src + column, static_cast<size_t>(end - begin) * sizeof(C));
      } else {
        for (int64_t j = begin; j < end; ++j) dst[j] = src[(column + (j - begin) * layout.step) * in_x];
      }
      std::fill(dst + end, dst + layout.row_len, C(0));
    }
  }
}

}  // namespace

const TapRowsKernel& ActiveTapRows() {
  static constexpr TapRowsKernel kBaseline = {SumTapRows<float, 16>, SumTapRows<double, 16>, 16};
#if defined(NHLO_SPAN_X86)
  static const TapRowsKernel kAvx2 = {tap_rows_Avx2::SumF32, tap_rows_Avx2::SumF64, tap_rows_Avx2::VectorBytes()};
  static const TapRowsKernel kAvx512 = {tap_rows_Avx512::SumF32, tap_rows_Avx512::SumF64,
                                        tap_rows_Avx512::VectorBytes()};
  switch (ActiveGemmIsa()) {
    case GemmIsa::kAvx512: return kAvx512;
    case GemmIsa::kAvx2: return kAvx2;
    case GemmIsa::kBaseline: return kBaseline;
  }
#endif
  return kBaseline;
}

Status ConvolutionDepthwise(const ConvDimLabels& l, const std::vector<WindowDim>& window, int64_t fgc, int64_t bgc,
                            const Buf& lhs, const Buf& rhs, const Buf& out, bool& handled) {
  handled = false;
  const std::vector<int64_t>&ld = Dims(lhs), &kd = Dims(rhs), &od = Dims(out);
  if (bgc != 1 || fgc < 2 || l.input_spatial.size() != 2 || kd[l.kernel_input_feature] != 1 || out.count() == 0)
    return OkStatus();
  return DispatchType(out.type(), [&](auto ot) -> Status {
    using C = typename decltype(ot)::Compute;
    if constexpr (!std::is_floating_point_v<C>) {
      return OkStatus();
    } else {
      ScratchVector<C> a, w;
      NHLO_TRY(ToComputeArray<C>(rhs, out.type(), ot, w));
      NHLO_ASSIGN_OR_RETURN(const C* in, ComputeElements<C>(lhs, out.type(), ot, a));
      handled = true;
      std::vector<int64_t> ls = RowMajorStrides(ld), ks = RowMajorStrides(kd), os = RowMajorStrides(od);
      const int64_t per_group = kd[l.kernel_output_feature] / fgc;
      const int64_t batches = od[l.output_batch], features = od[l.output_feature];
      const int64_t out_h = od[l.output_spatial[0]], out_w = od[l.output_spatial[1]];
      const int64_t in_h = ld[l.input_spatial[0]], in_w = ld[l.input_spatial[1]];
      const int64_t k_h = kd[l.kernel_spatial[0]], k_w = kd[l.kernel_spatial[1]];
      const WindowDim &wy = window[0], &wx = window[1];
      const int64_t in_x = ls[l.input_spatial[1]], in_y = ls[l.input_spatial[0]];
      const int64_t out_x = os[l.output_spatial[1]], out_y = os[l.output_spatial[0]];
      const TapRowsKernel& tap_rows = ActiveTapRows();
      const std::optional<RowLayout> layout = PlanRows(wx, wy, in_h, in_w, out_h, out_w, k_w, tap_rows.Granule<C>());
      // Columns x = r + period * m of one residue r read input columns in steps of `step`, and a
      // tap reads one for all of them or for none (x * stride + k * dilation - pad must be a
      // multiple of the lhs dilation, which depends only on x mod period).
      const int64_t period = wx.base_dilation / std::gcd(wx.stride, wx.base_dilation);
      const int64_t step = period * wx.stride / wx.base_dilation;
      C* out_typed = TypedOutput<C>(out);
      // Per residue: the kernel columns that read an input column for it, in order, and the
      // columns m where all of them do (the interior, summed in blocks).
      std::vector<std::vector<ColumnTap>> column_taps(static_cast<size_t>(period));
      std::vector<std::pair<int64_t, int64_t>> interior(static_cast<size_t>(period));
      for (int64_t r = 0; r < period; ++r) {
        const int64_t count = r < out_w ? (out_w - r + period - 1) / period : 0;
        int64_t inner_begin = 0, inner_end = count;
        for (int64_t kx = 0; kx < k_w; ++kx) {
          int64_t q0 = r * wx.stride + kx * wx.window_dilation - wx.pad_low;
          if ((q0 % wx.base_dilation + wx.base_dilation) % wx.base_dilation != 0) continue;
          const int64_t first = FloorDiv(q0, wx.base_dilation);  // first + m * step in [0, in_w):
          const int64_t m_begin = std::clamp<int64_t>(CeilDiv(-first, step), 0, count);
          const int64_t m_end = std::clamp<int64_t>(CeilDiv(in_w - first, step), m_begin, count);
          if (m_begin == m_end) continue;
          column_taps[r].push_back({kx, first * in_x, m_begin, m_end});
          inner_begin = std::max(inner_begin, m_begin);
          inner_end = std::min(inner_end, m_end);
        }
        interior[r] = {inner_begin, std::max(inner_end, inner_begin)};
      }
      const int64_t src_step = step * in_x;
      ParallelFor(batches * features, ChunkFor(out_h * out_w * k_h * k_w), [&](int64_t begin, int64_t end) {
        std::vector<C> row(static_cast<size_t>(out_w));
        std::vector<std::pair<const C*, int64_t>> rows;  // the input rows in bounds, kernel row (reversed)
        std::vector<C> weights(static_cast<size_t>(k_h * k_w));
        // The row path's padded plane, the input plane it holds (planes of one input feature
        // follow each other when the channel multiplier is above 1), each row's taps and sums.
        ScratchVector<C> plane_rows;
        const C* filled_from = nullptr;
        std::vector<const C*> tap_sources;
        std::vector<C> tap_weights, sums;
        if (layout) {
          plane_rows.resize(static_cast<size_t>(layout->elements));
          tap_sources.resize(static_cast<size_t>(k_h * k_w));
          tap_weights.resize(static_cast<size_t>(k_h * k_w));
          int64_t widest = 0;
          for (const RowLayout::Residue& residue : layout->residues) widest = std::max(widest, residue.width);
          sums.resize(static_cast<size_t>(widest));
        }
        // Output row y from the padded plane, residue by residue. A tap on a padding column adds
        // x * w = +-0 to a sum that is never -0 (it starts at +0, and a rounded sum is -0 only
        // when both terms are), which leaves the sum as it was, as the reference's skipping the
        // tap does, when w is finite.
        auto row_from_padded_plane = [&](int64_t y) {
          for (int64_t r = 0; r < layout->period; ++r) {
            const RowLayout::Residue& residue = layout->residues[r];
            if (residue.count == 0) continue;
            int64_t taps = 0;
            for (int64_t ky = 0; ky < k_h; ++ky) {
              int64_t p = y * wy.stride + ky * wy.window_dilation - wy.pad_low;
              if (p < 0) continue;
              if (wy.base_dilation != 1) {
                if (p % wy.base_dilation != 0) continue;
                p /= wy.base_dilation;
              }
              if (p >= in_h) continue;
              const C* in_row = plane_rows.data() + p * layout->step * layout->row_len;
              for (const auto& [kx, offset] : residue.taps) {
                tap_sources[taps] = in_row + offset;
                tap_weights[taps++] = weights[ky * k_w + kx];
              }
            }
            C* dst = layout->period == 1 && residue.width == out_w ? row.data() : sums.data();
            tap_rows.For<C>()(tap_sources.data(), tap_weights.data(), taps, dst, residue.width);
            if (dst == row.data()) continue;
            for (int64_t m = 0; m < residue.count; ++m) row[r + m * layout->period] = sums[m];
          }
        };
        // Output row y by residue, reading the input plane in place.
        auto row_by_residue = [&](const C* in_plane, int64_t y) {
          rows.clear();
          for (int64_t ky = 0; ky < k_h; ++ky) {
            int64_t p = y * wy.stride + ky * wy.window_dilation - wy.pad_low;
            if (p < 0 || p % wy.base_dilation != 0 || p / wy.base_dilation >= in_h) continue;
            rows.emplace_back(in_plane + (p / wy.base_dilation) * in_y, ky * k_w);
          }
          for (int64_t r = 0; r < period && r < out_w; ++r) {
            const int64_t count = (out_w - r + period - 1) / period;
            const std::vector<ColumnTap>& cols = column_taps[r];
            // Edges: each element adds the taps in bounds for it, in the reference's order.
            auto edge = [&](int64_t m_from, int64_t m_to) {
              for (int64_t m = m_from; m < m_to; ++m) {
                C acc = C(0);
                for (const auto& [in_row, tap_row] : rows)
                  for (const ColumnTap& c : cols)
                    if (m >= c.m_begin && m < c.m_end)
                      acc = acc + in_row[c.first + m * src_step] * weights[tap_row + c.kx];
                row[r + m * period] = acc;
              }
            };
            // The interior in blocks, every tap in bounds: the same sums, kept in registers.
            auto block = [&](int64_t m) {
              if (src_step == 1) {
                Lanes<C> acc[kBlock * sizeof(C) / 16] = {};
                for (const auto& [in_row, tap_row] : rows)
                  for (const ColumnTap& c : cols) AddProducts<C>(acc, in_row + (c.first + m), weights[tap_row + c.kx]);
                C sums[kBlock];
                std::memcpy(sums, acc, sizeof sums);
                for (int64_t i = 0; i < kBlock; ++i) row[r + (m + i) * period] = sums[i];
                return;
              }
              C acc[kBlock] = {};
              for (const auto& [in_row, tap_row] : rows)
                for (const ColumnTap& c : cols) {
                  const C* src = in_row + (c.first + m * src_step);
                  const C weight = weights[tap_row + c.kx];
                  for (int64_t i = 0; i < kBlock; ++i) acc[i] = acc[i] + src[i * src_step] * weight;
                }
              for (int64_t i = 0; i < kBlock; ++i) row[r + (m + i) * period] = acc[i];
            };
            const auto [inner_begin, inner_end] = interior[r];
            edge(0, inner_begin);
            int64_t m = inner_begin;
            for (; m + kBlock <= inner_end; m += kBlock) block(m);
            // The interior's last columns: a block ending at its end (recomputing some columns,
            // to the same bits) when it is that wide, else the bounds-checked loop.
            if (m < inner_end && inner_end - inner_begin >= kBlock) {
              block(inner_end - kBlock);
              m = inner_end;
            }
            edge(m, count);
          }
        };
        for (int64_t plane = begin; plane < end; ++plane) {
          const int64_t b = plane / features, o = plane % features;
          const C* in_plane = in + b * ls[l.input_batch] + (o / per_group) * ls[l.input_feature];
          const C* k_plane = w.data() + o * ks[l.kernel_output_feature];
          bool finite = true;
          for (int64_t ky = 0; ky < k_h; ++ky)  // this channel's kernel, by (unreversed) tap
            for (int64_t kx = 0; kx < k_w; ++kx) {
              const int64_t kyy = wy.reversal ? k_h - 1 - ky : ky, kxx = wx.reversal ? k_w - 1 - kx : kx;
              const C weight = k_plane[kyy * ks[l.kernel_spatial[0]] + kxx * ks[l.kernel_spatial[1]]];
              weights[ky * k_w + kx] = weight;
              finite = finite && std::isfinite(weight);
            }
          const bool by_rows = layout && finite;
          if (by_rows && filled_from != in_plane) {
            FillRows(*layout, in_plane, in_h, in_w, in_y, in_x, plane_rows.data());
            filled_from = in_plane;
          }
          const int64_t out_plane = b * os[l.output_batch] + o * os[l.output_feature];
          for (int64_t y = 0; y < out_h; ++y) {
            if (by_rows)
              row_from_padded_plane(y);
            else
              row_by_residue(in_plane, y);
            const int64_t base = out_plane + y * out_y;
            if (out_typed && out_x == 1) {
              std::memcpy(out_typed + base, row.data(), static_cast<size_t>(out_w) * sizeof(C));
            } else if (out_typed) {
              for (int64_t x = 0; x < out_w; ++x) out_typed[base + x * out_x] = row[x];
            } else {
              for (int64_t x = 0; x < out_w; ++x) ot.Store(out.data, base + x * out_x, row[x]);
            }
          }
        }
      });
      return OkStatus();
    }
  });
}
}  // namespace nhlo

namespace nhlo {
namespace {

// sum over k in [0, n) of a[k * a_step] * b[k * b_step]: four lanes over k = 4j + lane, then
// ((lane0 + lane1) + (lane2 + lane3)), then the last n % 4 terms in order. A fixed order on
// every machine and thread count.
template <typename C>
C DotLanes(const C* a, int64_t a_step, const C* b, int64_t b_step, int64_t n) {
  C l0 = 0, l1 = 0, l2 = 0, l3 = 0;
  int64_t k = 0;
  if (a_step == 1 && b_step == 1) {
    for (; k + 4 <= n; k += 4) {
      l0 = l0 + a[k] * b[k];
      l1 = l1 + a[k + 1] * b[k + 1];
      l2 = l2 + a[k + 2] * b[k + 2];
      l3 = l3 + a[k + 3] * b[k + 3];
    }
  } else {
    for (; k + 4 <= n; k += 4) {
      l0 = l0 + a[k * a_step] * b[k * b_step];
      l1 = l1 + a[(k + 1) * a_step] * b[(k + 1) * b_step];
      l2 = l2 + a[(k + 2) * a_step] * b[(k + 2) * b_step];
      l3 = l3 + a[(k + 3) * a_step] * b[(k + 3) * b_step];
    }
  }
  C sum = (l0 + l1) + (l2 + l3);
  for (; k < n; ++k) sum = sum + a[k * a_step] * b[k * b_step];
  return sum;
}

}  // namespace

Status ConvolutionLargeWindow(const ConvDimLabels& l, const std::vector<WindowDim>& window, int64_t fgc, int64_t bgc,
                              const Buf& lhs, const Buf& rhs, const Buf& out, bool& handled) {
  handled = false;
  const std::vector<int64_t>&ld = Dims(lhs), &kd = Dims(rhs), &od = Dims(out);
  if (fgc != 1 || l.input_spatial.size() != 2 || out.count() == 0) return OkStatus();
  const WindowDim &wy = window[0], &wx = window[1];
  const int64_t k_h = kd[l.kernel_spatial[0]], k_w = kd[l.kernel_spatial[1]];
  const int64_t out_h = od[l.output_spatial[0]], out_w = od[l.output_spatial[1]];
  // A weight gradient: a window of thousands of taps, a handful of output positions.
  if (k_h * k_w < kLargeWindowTaps || out_h * out_w * 16 > k_h * k_w || wy.base_dilation != 1 || wx.base_dilation != 1)
    return OkStatus();
  return DispatchType(out.type(), [&](auto ot) -> Status {
    using C = typename decltype(ot)::Compute;
    if constexpr (!std::is_floating_point_v<C>) {
      return OkStatus();
    } else {
      ScratchVector<C> a, w;
      NHLO_ASSIGN_OR_RETURN(const C* in, ComputeElements<C>(lhs, out.type(), ot, a));
      NHLO_ASSIGN_OR_RETURN(const C* kernel, ComputeElements<C>(rhs, out.type(), ot, w));
      handled = true;
      std::vector<int64_t> ls = RowMajorStrides(ld), ks = RowMajorStrides(kd), os = RowMajorStrides(od);
      const int64_t out_features = od[l.output_feature], batches = od[l.output_batch];
      const int64_t kernel_in = kd[l.kernel_input_feature], per_batch_group = out_features / bgc;
      const int64_t batch_group_size = ld[l.input_batch] / bgc;
      const int64_t in_h = ld[l.input_spatial[0]], in_w = ld[l.input_spatial[1]];
      const int64_t lx = ls[l.input_spatial[1]], kx_stride = ks[l.kernel_spatial[1]];
      // Output features in blocks that share each input row: for every (input feature, kernel
      // row) the input row is read once for the whole block and every output position. Each
      // output element still adds its terms input feature by input feature, kernel row by row.
      constexpr int64_t kFeatureBlock = 8;
      const int64_t feature_blocks = (out_features + kFeatureBlock - 1) / kFeatureBlock;
      // The kernel columns kx whose input column is in bounds for output column ox.
      std::vector<std::pair<int64_t, int64_t>> kx_range(static_cast<size_t>(out_w));
      for (int64_t ox = 0; ox < out_w; ++ox) {
        const int64_t q0 = ox * wx.stride - wx.pad_low;
        int64_t kx_begin = 0, kx_end = k_w;
        while (kx_begin < k_w && q0 + kx_begin * wx.window_dilation < 0) ++kx_begin;
        while (kx_end > kx_begin && q0 + (kx_end - 1) * wx.window_dilation >= in_w) --kx_end;
        kx_range[ox] = {kx_begin, kx_end};
      }
      ParallelFor(batches * feature_blocks, 1, [&](int64_t begin, int64_t end) {
        ScratchVector<C> acc;
        for (int64_t job = begin; job < end; ++job) {
          const int64_t b = job / feature_blocks, f0 = (job % feature_blocks) * kFeatureBlock;
          const int64_t f1 = std::min(out_features, f0 + kFeatureBlock);
          acc.assign(static_cast<size_t>((f1 - f0) * out_h * out_w), C(0));
          for (int64_t i = 0; i < kernel_in; ++i)
            for (int64_t ky = 0; ky < k_h; ++ky) {
              const int64_t kyy = wy.reversal ? k_h - 1 - ky : ky;
              for (int64_t oy = 0; oy < out_h; ++oy) {
                const int64_t p = oy * wy.stride + ky * wy.window_dilation - wy.pad_low;
                if (p < 0 || p >= in_h) continue;
                for (int64_t f = f0; f < f1; ++f) {
                  const int64_t in_batch = b + (f / per_batch_group) * batch_group_size;
                  const C* in_row =
                      in + in_batch * ls[l.input_batch] + i * ls[l.input_feature] + p * ls[l.input_spatial[0]];
                  const C* k_row = kernel + f * ks[l.kernel_output_feature] + i * ks[l.kernel_input_feature] +
                                   kyy * ks[l.kernel_spatial[0]];
                  C* out_row = acc.data() + ((f - f0) * out_h + oy) * out_w;
                  for (int64_t ox = 0; ox < out_w; ++ox) {
                    const auto [kx_begin, kx_end] = kx_range[ox];
                    if (kx_begin == kx_end) continue;
                    const C* x = in_row + (ox * wx.stride - wx.pad_low + kx_begin * wx.window_dilation) * lx;
                    const C* wk = wx.reversal ? k_row + (k_w - 1 - kx_begin) * kx_stride : k_row + kx_begin * kx_stride;
                    out_row[ox] = out_row[ox] + DotLanes<C>(x, wx.window_dilation * lx, wk,
                                                            wx.reversal ? -kx_stride : kx_stride, kx_end - kx_begin);
                  }
                }
              }
            }
          for (int64_t f = f0; f < f1; ++f)
            for (int64_t oy = 0; oy < out_h; ++oy)
              for (int64_t ox = 0; ox < out_w; ++ox)
                ot.Store(out.data,
                         b * os[l.output_batch] + f * os[l.output_feature] + oy * os[l.output_spatial[0]] +
                             ox * os[l.output_spatial[1]],
                         acc[((f - f0) * out_h + oy) * out_w + ox]);
        }
      });
      return OkStatus();
    }
  });
}

}  // namespace nhlo
