// SPDX-License-Identifier: Apache-2.0
// convolution of float types as im2col + GEMM: each block of output positions gathers its input
// windows into rows of [kernel taps x input features] (zeros where the window falls in padding
// or between dilated input elements), multiplies them by the kernel reshaped to [taps x input
// features, output features] through gemm.h and scatters the rows into the result. Any window
// (stride, padding, dilations, reversal), feature_group_count or batch_group_count is covered;
// integer results, tiny convolutions and kernels holding Inf or NaN (0 * Inf from padding would
// give NaN where the reference kernel skips the tap) are left to the reference kernel.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "interp/dense_operands.h"
#include "interp/element_traits.h"
#include "interp/gemm.h"
#include "interp/kernel_plans.h"
#include "interp/kernels.h"
#include "interp/scratch.h"
#include "support/parallel.h"

namespace nhlo {
namespace {

// Advances a row-major multi-index over `dims` by one (the last dimension fastest).
void NextIndex(const std::vector<int64_t>& dims, std::vector<int64_t>& index) {
  for (size_t d = dims.size(); d-- > 0;) {
    if (++index[d] < dims[d]) return;
    index[d] = 0;
  }
}

// Output positions per block: one GEMM column tile (gemm.cc's kTileN).
constexpr int64_t kBlockRows = 480;
// Below this many multiply-adds the reference kernel is as fast.
constexpr int64_t kMinWork = 4096;

// c (m x n) = a (m x k) * b (k x n), either stored transposed.
template <typename C>
void Gemm(int64_t m, int64_t n, int64_t k, const C* a, bool a_t, const C* b, bool b_t, C* c) {
  if constexpr (std::is_same_v<C, float>)
    GemmF32(1, m, n, k, a, a_t, b, b_t, c);
  else
    GemmF64(1, m, n, k, a, a_t, b, b_t, c);
}

// c (m x n, rows ldc apart) = a (m x k) * b^T, b stored as n x k.
template <typename C>
void GemmInto(int64_t m, int64_t n, int64_t k, const C* a, const C* b, C* c, int64_t ldc) {
  if constexpr (std::is_same_v<C, float>)
    GemmF32Into(m, n, k, a, false, b, true, c, ldc);
  else
    GemmF64Into(m, n, k, a, false, b, true, c, ldc);
}

// Output features per group up to which a group's GEMM runs position-major (see below).
constexpr int64_t kNarrowGroup = 32;

// Row-major index of `linear` within `dims`.
void Unravel(int64_t linear, const std::vector<int64_t>& dims, std::vector<int64_t>& index) {
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = linear % dims[d];
    linear /= dims[d];
  }
}

}  // namespace

// What im2col's shape decides, laid out at load (PlanConvolutionViaGemm): the sizes, every
// operand's row-major strides, each tap's kernel spatial index, offset in the kernel and
// distance from its window's first element, each group's offset in the input, how jobs share
// out groups and blocks, and whether the output stores positions in row-major order with the
// features innermost (the narrow-group GEMMs then write into it directly).
struct Im2colLayout {
  size_t spatial = 0;
  int64_t groups = 1, kernel_in = 0, per_group = 0, taps = 1, rows = 0, depth = 0, blocks = 0;
  int64_t group_runs = 1, run_length = 1, in_fs = 0, out_fs = 0, out_features = 0;
  std::vector<int64_t> tap_dims, out_sp_dims, ls, ks, os;
  std::vector<int64_t> tap_index, tap_offset, tap_delta, group_offset;
  bool dense_input = true;  // no lhs dilation: an interior window reads tap t at tap_delta[t]
  bool positions_in_order = false;
};

namespace {

// Im2colLayout's per-tap tables hold (spatial + 2) words a tap: laid out at load up to this many
// words; a bigger kernel (a crafted bundle's, as no model has one) has its layout made at the
// run, once its weights exist, rather than memory spent at load on a step that may never run.
constexpr int64_t kMaxLoadTapWords = int64_t{1} << 22;

std::shared_ptr<const Im2colLayout> LayOutIm2col(const ConvPlan& plan, const BufferRecord& lhs, const BufferRecord& rhs,
                                                 const BufferRecord& out);

}  // namespace

void PlanConvolutionViaGemm(const BufferRecord& lhs, const BufferRecord& rhs, const BufferRecord& out, ConvPlan& plan) {
  const ConvDimLabels& l = *plan.labels;
  const int64_t fgc = plan.fgc, bgc = plan.bgc;
  if ((fgc > 1 && bgc > 1) || !HasFloatCompute(out.type) || out.ElementCount() == 0) return;
  // rows (output positions) x out_features x depth (taps x kernel_in) multiply-adds, which is
  // rows x the kernel's element count; out_features > 0 as the output has elements.
  int64_t work = out.ElementCount() / rhs.dims[l.kernel_output_feature];
  if (!MulOverflows(work, rhs.ElementCount(), &work) && work < kMinWork) return;
  plan.fits |= 1 << static_cast<int>(ConvKernel::kViaGemm);
  if (plan.Fits(ConvKernel::kAsDot)) return;  // the dot runs it: im2col never does
  int64_t tap_words = static_cast<int64_t>(l.kernel_spatial.size()) + 2;
  for (int64_t s : l.kernel_spatial)
    if (MulOverflows(tap_words, rhs.dims[s], &tap_words)) return;
  if (tap_words <= kMaxLoadTapWords) plan.im2col = LayOutIm2col(plan, lhs, rhs, out);
}

namespace {

std::shared_ptr<const Im2colLayout> LayOutIm2col(const ConvPlan& plan, const BufferRecord& lhs, const BufferRecord& rhs,
                                                 const BufferRecord& out) {
  const ConvDimLabels& l = *plan.labels;
  const int64_t fgc = plan.fgc, bgc = plan.bgc;
  auto layout = std::make_shared<Im2colLayout>();
  Im2colLayout& L = *layout;
  const std::vector<WindowDim>& window = plan.window;
  const std::vector<int64_t>&ld = lhs.dims, &kd = rhs.dims, &od = out.dims;
  const size_t spatial = L.spatial = l.input_spatial.size();
  L.groups = fgc * bgc;
  L.kernel_in = kd[l.kernel_input_feature];
  L.per_group = kd[l.kernel_output_feature] / L.groups;
  const int64_t batch_group_size = ld[l.input_batch] / bgc;
  L.tap_dims.resize(spatial);
  L.out_sp_dims.resize(1 + spatial);
  for (size_t s = 0; s < spatial; ++s) L.taps *= L.tap_dims[s] = kd[l.kernel_spatial[s]];
  L.out_sp_dims[0] = od[l.output_batch];
  for (size_t s = 0; s < spatial; ++s) L.out_sp_dims[1 + s] = od[l.output_spatial[s]];
  L.rows = out.ElementCount() / (L.per_group * L.groups > 0 ? L.per_group * L.groups : 1);
  L.depth = L.taps * L.kernel_in;
  L.ls = RowMajorStrides(ld);
  L.ks = RowMajorStrides(kd);
  L.os = RowMajorStrides(od);
  // Each tap's kernel spatial index (for the input position) and offset (reversed if asked).
  L.tap_index.resize(static_cast<size_t>(L.taps) * spatial);
  L.tap_offset.resize(static_cast<size_t>(L.taps));
  std::vector<int64_t> idx(spatial);
  for (int64_t t = 0; t < L.taps; ++t) {
    Unravel(t, L.tap_dims, idx);
    int64_t off = 0;
    for (size_t s = 0; s < spatial; ++s) {
      L.tap_index[t * spatial + s] = idx[s];
      off += (window[s].reversal ? L.tap_dims[s] - 1 - idx[s] : idx[s]) * L.ks[l.kernel_spatial[s]];
    }
    L.tap_offset[t] = off;
  }
  L.blocks = (L.rows + kBlockRows - 1) / kBlockRows;
  L.in_fs = L.ls[l.input_feature];
  L.out_fs = L.os[l.output_feature];
  // Each group reads the same window positions at its own offset (its input features, or its
  // batches for batch groups), so a job gathers a block's windows once for a run of groups. Runs
  // of groups are split only when there are too few blocks to share out.
  L.group_offset.resize(static_cast<size_t>(L.groups));
  for (int64_t g = 0; g < L.groups; ++g)
    L.group_offset[g] =
        (bgc > 1 ? g * batch_group_size * L.ls[l.input_batch] : 0) + (fgc > 1 ? g * L.kernel_in * L.in_fs : 0);
  L.group_runs = L.blocks >= 8 ? 1 : std::min<int64_t>(L.groups, 8);
  L.run_length = (L.groups + L.group_runs - 1) / L.group_runs;
  // A window wholly inside the input (no lhs dilation) reads tap t at a fixed distance from its
  // first element: most rows skip the per-tap bounds checks.
  // A window that spans more than the input along a dimension is never interior, and its
  // distances need not fit 64 bits (a dilation of 2^59 times a stride of 16 does not): such a
  // convolution has no interior rows, and no distances are formed.
  L.tap_delta.assign(static_cast<size_t>(L.taps), 0);
  for (size_t s = 0; s < spatial; ++s) {
    int64_t reach = 0;
    L.dense_input = L.dense_input && window[s].base_dilation == 1 &&
                    !MulOverflows(L.tap_dims[s] - 1, window[s].window_dilation, &reach) &&
                    reach < ld[l.input_spatial[s]];
  }
  for (int64_t t = 0; t < L.taps && L.dense_input; ++t)
    for (size_t s = 0; s < spatial; ++s)
      L.tap_delta[t] += L.tap_index[t * spatial + s] * window[s].window_dilation * L.ls[l.input_spatial[s]];
  L.out_features = od[l.output_feature];
  // Narrow groups (at most kNarrowGroup output features each) are computed position-major when
  // the output stores positions in row-major order with the features innermost, as b01f does:
  // each GEMM then writes its rows into the output directly. Wider groups keep the transposed
  // product, whose long dimension suits the GEMM's packing better.
  bool in_order = L.out_fs == 1 && L.per_group <= kNarrowGroup;
  int64_t position_stride = L.out_features;  // what each dimension's stride must be, innermost first
  for (size_t s = spatial; s-- > 0 && in_order; position_stride *= od[l.output_spatial[s]])
    in_order = L.os[l.output_spatial[s]] == position_stride;
  L.positions_in_order = in_order && L.os[l.output_batch] == position_stride;
  return layout;
}

}  // namespace

Status ConvolutionViaGemm(const ConvPlan& plan, const Buf& lhs, const Buf& rhs, const Buf& out, bool& handled) {
  handled = false;
  // Laid out at load, but for a kernel of millions of taps (kMaxLoadTapWords).
  const std::shared_ptr<const Im2colLayout> layout =
      plan.im2col ? plan.im2col : LayOutIm2col(plan, *lhs.rec, *rhs.rec, *out.rec);
  const Im2colLayout& L = *layout;
  const ConvDimLabels& l = *plan.labels;
  const std::vector<WindowDim>& window = plan.window;
  return DispatchType(out.type(), [&](auto ot) -> Status {
    using C = typename decltype(ot)::Compute;
    if constexpr (!std::is_floating_point_v<C>) {
      return OkStatus();
    } else {
      const size_t spatial = L.spatial;
      const std::vector<int64_t>& ld = Dims(lhs);
      const std::vector<int64_t>&tap_dims = L.tap_dims, &out_sp_dims = L.out_sp_dims;
      const std::vector<int64_t>&ls = L.ls, &ks = L.ks, &os = L.os;
      const std::vector<int64_t>&tap_index = L.tap_index, &tap_offset = L.tap_offset;
      const std::vector<int64_t>&tap_delta = L.tap_delta, &group_offset = L.group_offset;
      const int64_t groups = L.groups, kernel_in = L.kernel_in, per_group = L.per_group, taps = L.taps;
      const int64_t rows = L.rows, depth = L.depth, blocks = L.blocks, run_length = L.run_length;
      const int64_t group_runs = L.group_runs, in_fs = L.in_fs, out_fs = L.out_fs, out_features = L.out_features;
      const bool dense_input = L.dense_input;

      ScratchVector<C> a, w;
      NHLO_TRY(ToComputeArray<C>(rhs, out.type(), ot, w));
      for (C v : w)
        if (!std::isfinite(v)) return OkStatus();
      // The input is read in place when it is already in the compute type.
      NHLO_ASSIGN_OR_RETURN(const C* in, ComputeElements<C>(lhs, out.type(), ot, a));
      handled = true;
      // The kernel of each group as [per_group, taps * kernel_in]: the GEMM computes the block's
      // result transposed, [per_group, rows] = kmat * cols^T, so that the many output positions
      // run along the GEMM's wide dimension.
      ScratchVector<C> kmat(static_cast<size_t>(groups * per_group * depth));
      for (int64_t g = 0; g < groups; ++g)
        for (int64_t fo = 0; fo < per_group; ++fo) {
          C* dst = kmat.data() + (g * per_group + fo) * depth;
          int64_t base = (g * per_group + fo) * ks[l.kernel_output_feature];
          for (int64_t t = 0; t < taps; ++t)
            for (int64_t fi = 0; fi < kernel_in; ++fi)
              dst[t * kernel_in + fi] = w[base + tap_offset[t] + fi * ks[l.kernel_input_feature]];
        }
      // The result written directly when it is of the compute type (f32, f64).
      C* out_typed = TypedOutput<C>(out);
      const bool rows_in_order = out_typed != nullptr && L.positions_in_order;
      ParallelFor(group_runs * blocks, 1, [&](int64_t begin, int64_t end) {
        ScratchVector<C> cols, res;
        std::vector<int64_t> o(1 + spatial), out_row(static_cast<size_t>(kBlockRows));
        for (int64_t job = begin; job < end; ++job) {
          const int64_t g0 = (job / blocks) * run_length, g1 = std::min(groups, g0 + run_length);
          const int64_t r0 = (job % blocks) * kBlockRows, n_rows = std::min(kBlockRows, rows - r0);
          if (g0 >= g1) continue;
          const int64_t group_cols = n_rows * depth;
          cols.resize(static_cast<size_t>((g1 - g0) * group_cols));
          if (!rows_in_order) res.resize(static_cast<size_t>(n_rows * per_group));
          // Copies kernel_in features from input offset `src` into every group's row of taps.
          auto gather = [&](int64_t src, int64_t at) {
            for (int64_t g = g0; g < g1; ++g) {
              C* dst = cols.data() + (g - g0) * group_cols + at;
              const C* from = in + src + group_offset[g];
              if (in_fs == 1 && kernel_in == 16) {
                // The common group widths copy with a fixed size: a few vector moves, no loop.
                std::memcpy(dst, from, 16 * sizeof(C));
              } else if (in_fs == 1 && kernel_in == 8) {
                std::memcpy(dst, from, 8 * sizeof(C));
              } else if (in_fs == 1 && kernel_in == 32) {
                std::memcpy(dst, from, 32 * sizeof(C));
              } else if (in_fs == 1 && kernel_in <= 64) {
                // A group's few channels: an inline copy (a memcpy call per tap had been a third
                // of a 4-group convolution's time).
                for (int64_t fi = 0; fi < kernel_in; ++fi) dst[fi] = from[fi];
              } else if (in_fs == 1) {
                std::memcpy(dst, from, static_cast<size_t>(kernel_in) * sizeof(C));
              } else {
                for (int64_t fi = 0; fi < kernel_in; ++fi) dst[fi] = from[fi * in_fs];
              }
            }
          };
          auto zeros = [&](int64_t at) {
            for (int64_t g = g0; g < g1; ++g) {
              C* dst = cols.data() + (g - g0) * group_cols + at;
              std::fill(dst, dst + kernel_in, C(0));
            }
          };
          // The output position of row r0, then of each next row by an odometer (a division per
          // dimension and row had cost more than the copies).
          Unravel(r0, out_sp_dims, o);
          for (int64_t r = 0; r < n_rows; ++r, NextIndex(out_sp_dims, o)) {
            // Where the row's first output feature goes, kept for every group's scatter below.
            int64_t out_base = o[0] * os[l.output_batch];
            for (size_t s = 0; s < spatial; ++s) out_base += o[1 + s] * os[l.output_spatial[s]];
            out_row[r] = out_base;
            const int64_t in_base = o[0] * ls[l.input_batch];
            bool interior = dense_input;
            int64_t corner = in_base;  // the window's first element, when interior
            for (size_t s = 0; s < spatial && interior; ++s) {
              const WindowDim& wd = window[s];
              const int64_t p = o[1 + s] * wd.stride - wd.pad_low;
              interior = p >= 0 && p + (tap_dims[s] - 1) * wd.window_dilation < ld[l.input_spatial[s]];
              // Only a position inside the input is a valid offset: far ones overflow 64 bits.
              if (interior) corner += p * ls[l.input_spatial[s]];
            }
            if (interior) {
              for (int64_t t = 0; t < taps; ++t) gather(corner + tap_delta[t], r * depth + t * kernel_in);
              continue;
            }
            for (int64_t t = 0; t < taps; ++t) {
              int64_t src = in_base;
              bool inside = true;
              for (size_t s = 0; s < spatial && inside; ++s) {
                const WindowDim& wd = window[s];
                int64_t p = o[1 + s] * wd.stride + tap_index[t * spatial + s] * wd.window_dilation - wd.pad_low;
                if (wd.base_dilation != 1) {  // only every base_dilation-th position holds an input
                  if (p < 0 || p % wd.base_dilation != 0) inside = false;
                  p /= wd.base_dilation;
                }
                if (p < 0 || p >= ld[l.input_spatial[s]]) inside = false;
                if (inside) src += p * ls[l.input_spatial[s]];
              }
              if (inside)
                gather(src, r * depth + t * kernel_in);
              else
                zeros(r * depth + t * kernel_in);
            }
          }
          for (int64_t g = g0; g < g1; ++g) {
            if (rows_in_order) {
              // [n_rows, per_group] = cols * kmat^T, written straight into the group's columns
              // of the block's output rows: no result buffer and no scatter.
              GemmInto<C>(n_rows, per_group, depth, cols.data() + (g - g0) * group_cols,
                          kmat.data() + g * per_group * depth, out_typed + out_row[0] + g * per_group, out_features);
              continue;
            }
            Gemm<C>(per_group, n_rows, depth, kmat.data() + g * per_group * depth, false,
                    cols.data() + (g - g0) * group_cols, true, res.data());
            const int64_t group_base = g * per_group * out_fs;
            if (!out_typed) {
              for (int64_t r = 0; r < n_rows; ++r)
                for (int64_t fo = 0; fo < per_group; ++fo)
                  ot.Store(out.data, out_row[r] + group_base + fo * out_fs, res[fo * n_rows + r]);
              continue;
            }
            // res is [per_group, n_rows]: transposed in tiles of kScatterRows rows, so each
            // feature's run of rows is read contiguously and the tile's output rows stay in L1
            // (reading one row's features at a stride of n_rows had been a fifth of a 4-group
            // convolution's time).
            constexpr int64_t kScatterRows = 16;
            for (int64_t r = 0; r < n_rows; r += kScatterRows) {
              const int64_t tile = std::min(kScatterRows, n_rows - r);
              C* dst[kScatterRows];
              for (int64_t t = 0; t < tile; ++t) dst[t] = out_typed + out_row[r + t] + group_base;
              for (int64_t fo = 0; fo < per_group; ++fo) {
                const C* src = res.data() + fo * n_rows + r;
                const int64_t at = fo * out_fs;
                for (int64_t t = 0; t < tile; ++t) dst[t][at] = src[t];
              }
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

// The two layouts where positions and features form a matrix without a copy: features before
// the spatial dimensions (bf01: one [features x positions] matrix per batch element), or after
// them (b01f: one [batch * positions x features] matrix). Both dim_labels must agree.
bool PointwiseFeaturesFirst(const ConvDimLabels& l, bool first) {
  const size_t spatial = l.input_spatial.size();
  const int64_t feature_at = first ? 1 : static_cast<int64_t>(spatial) + 1, first_spatial = first ? 2 : 1;
  // batch at 0, feature at `feature_at`, the spatial dimensions in order from `first_spatial`.
  auto laid_out = [&](int64_t batch, int64_t feature, const SpatialDims& sp) {
    if (batch != 0 || feature != feature_at) return false;
    for (size_t s = 0; s < spatial; ++s)
      if (sp[s] != first_spatial + static_cast<int64_t>(s)) return false;
    return true;
  };
  return laid_out(l.input_batch, l.input_feature, l.input_spatial) &&
         laid_out(l.output_batch, l.output_feature, l.output_spatial);
}

}  // namespace

void PlanConvolutionPointwise(const BufferRecord& lhs, const BufferRecord& rhs, const BufferRecord& out,
                              ConvPlan& plan) {
  const ConvDimLabels& l = *plan.labels;
  if (plan.fgc != 1 || plan.bgc != 1 || out.ElementCount() == 0 || !HasFloatCompute(out.type)) return;
  for (size_t s = 0; s < l.input_spatial.size(); ++s) {
    const WindowDim& w = plan.window[s];
    if (rhs.dims[l.kernel_spatial[s]] != 1 || w.stride != 1 || w.pad_low != 0 || w.pad_high != 0 ||
        w.base_dilation != 1 || out.dims[l.output_spatial[s]] != lhs.dims[l.input_spatial[s]])
      return;
  }
  plan.pointwise_features_first = PointwiseFeaturesFirst(l, true);
  if (plan.pointwise_features_first || PointwiseFeaturesFirst(l, false))
    plan.fits |= 1 << static_cast<int>(ConvKernel::kPointwise);
}

Status ConvolutionPointwise(const ConvPlan& plan, const Buf& lhs, const Buf& rhs, const Buf& out, bool& handled) {
  handled = false;
  const ConvDimLabels& l = *plan.labels;
  const std::vector<int64_t>&kd = Dims(rhs), &od = Dims(out);
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
        if (!std::isfinite(v)) return OkStatus();  // as im2col: the reference kernel's order keeps them
      NHLO_ASSIGN_OR_RETURN(const C* in, ComputeElements<C>(lhs, out.type(), ot, a));
      const auto* out_begin = reinterpret_cast<const uint8_t*>(out_typed);
      const auto* in_begin = reinterpret_cast<const uint8_t*>(in);
      const uint64_t out_bytes = out.rec->size, in_bytes = static_cast<uint64_t>(lhs.count()) * sizeof(C);
      if (out_begin < in_begin + in_bytes && in_begin < out_begin + out_bytes) return OkStatus();  // GEMM: no overlap
      handled = true;
      const int64_t batch = od[l.output_batch], in_features = kd[l.kernel_input_feature];
      const int64_t out_features = kd[l.kernel_output_feature];
      const int64_t positions = out.count() / (batch * out_features);
      // The kernel as [out x in] when its output feature comes first, else as [in x out].
      const bool kernel_out_first = l.kernel_output_feature < l.kernel_input_feature;
      if (plan.pointwise_features_first) {
        // out[b] (out x positions) = kernel (out x in) * in[b] (in x positions).
        for (int64_t b = 0; b < batch; ++b)
          Gemm<C>(out_features, positions, in_features, w.data(), !kernel_out_first, in + b * in_features * positions,
                  false, out_typed + b * out_features * positions);
      } else {
        // out (batch * positions x out) = in (batch * positions x in) * kernel (in x out).
        Gemm<C>(batch * positions, out_features, in_features, in, false, w.data(), kernel_out_first, out_typed);
      }
      return OkStatus();
    }
  });
}

Status PlanConvolutionAsDot(const BufferRecord& lhs, const BufferRecord& rhs, const BufferRecord& out, ConvPlan& plan) {
  const ConvDimLabels& l = *plan.labels;
  if (plan.fgc != 1 || plan.bgc != 1 || !IsFloat(out.type) || lhs.type != out.type || rhs.type != out.type)
    return OkStatus();
  for (size_t s = 0; s < l.input_spatial.size(); ++s) {
    const WindowDim& w = plan.window[s];
    if (out.dims[l.output_spatial[s]] != 1 || rhs.dims[l.kernel_spatial[s]] != lhs.dims[l.input_spatial[s]] ||
        w.pad_low != 0 || w.base_dilation != 1 || w.window_dilation != 1 || w.reversal)
      return OkStatus();
  }
  // out[b, o] = sum over the input feature and every spatial position of lhs * rhs: a dot
  // contracting those dimensions, whose [batch, feature] (or [feature, batch]) result is the
  // output's memory once its size-1 spatial dimensions are dropped.
  std::vector<int64_t> lhs_contracting = {l.input_feature}, rhs_contracting = {l.kernel_input_feature};
  for (size_t s = 0; s < l.input_spatial.size(); ++s) {
    lhs_contracting.push_back(l.input_spatial[s]);
    rhs_contracting.push_back(l.kernel_spatial[s]);
  }
  const bool batch_first = l.output_batch < l.output_feature;
  plan.as_dot_out = out;
  plan.as_dot_out.dims = batch_first ? std::vector<int64_t>{out.dims[l.output_batch], out.dims[l.output_feature]}
                                     : std::vector<int64_t>{out.dims[l.output_feature], out.dims[l.output_batch]};
  plan.as_dot_out.dim_kinds.clear();
  plan.as_dot_swapped = !batch_first;
  DotDimensionNumbers dims;
  dims.lhs_contracting = batch_first ? lhs_contracting : rhs_contracting;
  dims.rhs_contracting = batch_first ? rhs_contracting : lhs_contracting;
  NHLO_ASSIGN_OR_RETURN(plan.as_dot, PlanDot(dims, batch_first ? lhs : rhs, batch_first ? rhs : lhs, plan.as_dot_out));
  plan.fits |= 1 << static_cast<int>(ConvKernel::kAsDot);
  return OkStatus();
}

Status ConvolutionAsDot(const ConvPlan& plan, const Buf& lhs, const Buf& rhs, const Buf& out) {
  const Buf& a = plan.as_dot_swapped ? rhs : lhs;
  const Buf& b = plan.as_dot_swapped ? lhs : rhs;
  return RunDot(plan.as_dot, a, b, Buf{&plan.as_dot_out, out.data});
}

}  // namespace nhlo
