// SPDX-License-Identifier: Apache-2.0
// Convolutions of narrow feature groups (feature_group_count >= 2, each group's output features a
// multiple of 16 bytes of the compute type and at most 256: 4 to 64 f32 features), two spatial
// dimensions, any stride, padding, window dilation and reversal, no lhs dilation, with the
// output's features innermost (b01f and the like): each group's output features of a position
// are a few vectors, and every (tap, input feature) adds one broadcast input times one weight
// vector to them (GroupedRows, tap_rows.h). im2col + GEMM (kernels_conv_gemm.cc) spent most of a
// 4-group convolution's time copying windows and packing them for a GEMM only 16 columns wide.
//
// The bits are the reference kernel's (kernels_gather_conv.cc), which are XLA's evaluator's: each
// output element starts at zero and adds x * w over its in-bounds taps in row-major window order
// and, within a tap, over the group's input features in order, each product and sum rounded in
// the compute type (float for f32, bf16 and f16; double for f64), taps that fall into padding
// skipped. A kernel holding Inf or NaN is left to the next kernel, as im2col does. Output rows run
// in parallel; each element's sum is the same for every thread count and ISA level.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "interp/dense_operands.h"
#include "interp/element_traits.h"
#include "interp/kernels.h"
#include "interp/scratch.h"
#include "interp/tap_rows.h"
#include "support/checked_math.h"
#include "support/parallel.h"

namespace nhlo {
namespace {

// Output features of a group, in bytes of the compute type, up to which the direct kernel runs:
// 3x3 convolutions of 8x56x56 and 8x28x28 positions ran 1.35x (64 f32 features a group) to 2.6x
// (4 features) faster than im2col + GEMM, and even at 128 features (whose packed GEMM blocks
// suit them).
constexpr int64_t kMaxGroupBytes = 256;
// Output rows go to threads in chunks of at least this many multiply-adds.
constexpr int64_t kChunkWork = int64_t{1} << 20;

}  // namespace

bool ConvolutionGroupedFits(const ConvPlan& plan, const BufferRecord& rhs, const BufferRecord& out) {
  const ConvDimLabels& l = *plan.labels;
  if (plan.fgc < 2 || plan.bgc != 1 || l.input_spatial.size() != 2 || out.ElementCount() == 0 ||
      !HasFloatCompute(out.type))
    return false;
  // The output's features innermost: the last dimension (the record's layout is row-major).
  if (l.output_feature != static_cast<int64_t>(out.dims.size()) - 1) return false;
  for (const WindowDim& w : plan.window)
    if (w.base_dilation != 1) return false;
  const int64_t group_bytes = rhs.dims[l.kernel_output_feature] / plan.fgc * ComputeByteSize(out.type);
  return group_bytes % 16 == 0 && group_bytes <= kMaxGroupBytes;
}

Status ConvolutionGrouped(const ConvPlan& plan, const Buf& lhs, const Buf& rhs, const Buf& out, bool& handled) {
  handled = false;
  const ConvDimLabels& l = *plan.labels;
  const std::vector<int64_t>&ld = Dims(lhs), &kd = Dims(rhs), &od = Dims(out);
  return DispatchType(out.type(), [&](auto ot) -> Status {
    using C = typename decltype(ot)::Compute;
    if constexpr (!std::is_floating_point_v<C>) {
      return OkStatus();
    } else {
      C* out_typed = TypedOutput<C>(out);
      if (!out_typed) return OkStatus();
      ScratchVector<C> a, w;
      NHLO_TRY(ToComputeArray<C>(rhs, out.type(), ot, w));
      for (C v : w)
        if (!std::isfinite(v)) return OkStatus();  // 0 * Inf on padding: the reference skips those taps
      const std::vector<int64_t> ls = RowMajorStrides(ld), ks = RowMajorStrides(kd), os = RowMajorStrides(od);
      // Input offsets are formed as (x * stride - pad + k * dilation) * stride_of_x for every output
      // column and tap, in or out of bounds. A bundle's window need not match its shapes, so one
      // whose offsets could leave 62 bits is left to the kernels after this one.
      for (size_t s = 0; s < 2; ++s) {
        const WindowDim& wd = plan.window[s];
        const __int128 extent = static_cast<__int128>(std::max<int64_t>(od[l.output_spatial[s]] - 1, 0)) * wd.stride +
                                static_cast<__int128>(kd[l.kernel_spatial[s]] - 1) * wd.window_dilation +
                                (wd.pad_low < 0 ? -static_cast<__int128>(wd.pad_low) : wd.pad_low);
        if (extent * std::max<int64_t>(ls[l.input_spatial[s]], 1) >= (static_cast<__int128>(1) << 62))
          return OkStatus();
      }
      NHLO_ASSIGN_OR_RETURN(const C* in, ComputeElements<C>(lhs, out.type(), ot, a));
      handled = true;
      const int64_t groups = plan.fgc, kernel_in = kd[l.kernel_input_feature];
      const int64_t per_group = kd[l.kernel_output_feature] / groups;
      const int64_t k_h = kd[l.kernel_spatial[0]], k_w = kd[l.kernel_spatial[1]], taps = k_h * k_w;
      const int64_t in_h = ld[l.input_spatial[0]], in_w = ld[l.input_spatial[1]];
      const int64_t out_h = od[l.output_spatial[0]], out_w = od[l.output_spatial[1]];
      const WindowDim &wy = plan.window[0], &wx = plan.window[1];
      const int64_t ly = ls[l.input_spatial[0]], lx = ls[l.input_spatial[1]], lf = ls[l.input_feature];
      // The weights as [group][tap in window order][input feature][output feature of the group]:
      // a tap's weights for one input feature are one contiguous run of per_group.
      const int64_t tap_weights = kernel_in * per_group;
      ScratchVector<C> packed(static_cast<size_t>(groups * taps * tap_weights));
      for (int64_t g = 0; g < groups; ++g)
        for (int64_t ky = 0; ky < k_h; ++ky)
          for (int64_t kx = 0; kx < k_w; ++kx) {
            const int64_t ry = wy.reversal ? k_h - 1 - ky : ky, rx = wx.reversal ? k_w - 1 - kx : kx;
            C* dst = packed.data() + (g * taps + ky * k_w + kx) * tap_weights;
            for (int64_t ci = 0; ci < kernel_in; ++ci)
              for (int64_t f = 0; f < per_group; ++f)
                dst[ci * per_group + f] =
                    w[(g * per_group + f) * ks[l.kernel_output_feature] + ci * ks[l.kernel_input_feature] +
                      ry * ks[l.kernel_spatial[0]] + rx * ks[l.kernel_spatial[1]]];
          }
      // The output columns whose window lies inside the input's width: x * stride - pad >= 0 and
      // x * stride - pad + (k_w - 1) * dilation < in_w. The others are summed one at a time over
      // their taps in bounds.
      // In 128 bits: a bundle's padding may be anything the plan's 64-bit range check lets through.
      const __int128 reach = static_cast<__int128>(k_w - 1) * wx.window_dilation;
      const __int128 lo = wx.pad_low <= 0 ? 0 : (static_cast<__int128>(wx.pad_low) + wx.stride - 1) / wx.stride;
      const __int128 last = static_cast<__int128>(in_w) - 1 - reach + wx.pad_low;
      const __int128 hi = last >= 0 ? last / wx.stride + 1 : 0;
      const int64_t x_lo = static_cast<int64_t>(std::min<__int128>(lo, out_w));
      const int64_t x_hi = static_cast<int64_t>(std::clamp<__int128>(hi, x_lo, out_w));
      const GroupedRowsFn<C> grouped = ActiveTapRows().Grouped<C>();
      int64_t row_work = 0;  // multiply-adds of one output row: its columns times the kernel's elements
      if (MulOverflows(out_w, per_group * groups * taps * kernel_in, &row_work)) row_work = INT64_MAX;
      ParallelFor(od[l.output_batch] * out_h, ChunkFor(row_work, kChunkWork), [&](int64_t begin, int64_t end) {
        std::vector<GroupTap> row_taps, edge_taps;
        std::vector<int64_t> row_kx;  // each row tap's kernel column
        row_taps.reserve(static_cast<size_t>(taps));
        edge_taps.reserve(static_cast<size_t>(taps));
        row_kx.reserve(static_cast<size_t>(taps));
        for (int64_t row = begin; row < end; ++row) {
          const int64_t b = row / out_h, y = row % out_h;
          // The taps whose input row is in bounds, in window order; a tap's delta is relative to
          // the input position (y * stride - pad, x * stride - pad) of the output column.
          row_taps.clear();
          row_kx.clear();
          const int64_t top = y * wy.stride - wy.pad_low;
          for (int64_t ky = 0; ky < k_h; ++ky) {
            const int64_t p = top + ky * wy.window_dilation;
            if (p < 0 || p >= in_h) continue;
            for (int64_t kx = 0; kx < k_w; ++kx) {
              row_taps.push_back({p * ly + kx * wx.window_dilation * lx, (ky * k_w + kx) * tap_weights});
              row_kx.push_back(kx);
            }
          }
          const int64_t n_taps = static_cast<int64_t>(row_taps.size());
          C* out_row = out_typed + b * os[l.output_batch] + y * os[l.output_spatial[0]];
          const int64_t out_x = os[l.output_spatial[1]];
          const C* in_b = in + b * ls[l.input_batch];
          // An edge column: the row's taps whose input column is in bounds, found once for every group.
          auto edge = [&](int64_t x) {
            const int64_t left = x * wx.stride - wx.pad_low;
            edge_taps.clear();
            for (int64_t t = 0; t < n_taps; ++t) {
              const int64_t column = left + row_kx[t] * wx.window_dilation;
              if (column >= 0 && column < in_w) edge_taps.push_back(row_taps[t]);
            }
            for (int64_t g = 0; g < groups; ++g)
              grouped(in_b + g * kernel_in * lf, left * lx, 0, lf, 1, edge_taps.data(),
                      static_cast<int64_t>(edge_taps.size()), kernel_in, packed.data() + g * taps * tap_weights,
                      per_group, out_row + x * out_x + g * per_group, 0);
          };
          for (int64_t x = 0; x < x_lo; ++x) edge(x);
          if (x_hi > x_lo)
            for (int64_t g = 0; g < groups; ++g)
              grouped(in_b + g * kernel_in * lf, (x_lo * wx.stride - wx.pad_low) * lx, wx.stride * lx, lf, x_hi - x_lo,
                      row_taps.data(), n_taps, kernel_in, packed.data() + g * taps * tap_weights, per_group,
                      out_row + x_lo * out_x + g * per_group, out_x);
          for (int64_t x = x_hi; x < out_w; ++x) edge(x);
        }
      });
      return OkStatus();
    }
  });
}

}  // namespace nhlo
