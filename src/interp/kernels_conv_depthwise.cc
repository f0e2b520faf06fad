// SPDX-License-Identifier: Apache-2.0
// Depthwise convolution of float types, computed directly: feature_group_count groups of one
// input feature each (the kernel's input-feature dimension is 1), any channel multiplier, two
// spatial dimensions, any window (stride, padding, lhs and rhs dilation, reversal) and any
// dim_labels layout. im2col + GEMM (kernels_conv_gemm.cc) spends a GEMM call on every
// 480-position block of every channel with a depth of 9 here, about 0.1 GFLOP/s.
//
// The plane path, for a channel whose weights are all finite: the channel's input plane is
// copied once into a zero-padded plane split into stride phases (PlaneLayout), so that each class
// of outputs that share their taps (one class without lhs dilation, period_y x period_x with it:
// an input gradient's sub-pixel convolutions) is one flat run of sums, every tap one contiguous
// read, summed by SumTapRows (tap_rows.h) in the widest vectors the CPU has. A tap on a padding
// zero leaves a sum as it was (see plane_from_padded), so the bits are the reference's. An
// output past the caches leaves through streaming stores (the widest the CPU has). Without lhs
// dilation there is one class, and its rows are summed straight into the output rows.
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
#include <memory>
#include <numeric>
#include <optional>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

// Outputs of at least this many bytes (beyond a core's share of the caches) are streamed out.
constexpr int64_t kStreamBytes = int64_t{32} << 20;
// Channels go to threads in chunks of at least this many multiply-adds: each chunk sets up its own
// padded plane, sums and staged plane (zeroed: 40 KB for a 56x56 plane), which at ChunkFor's
// default of 2^16 (two such planes a chunk) took a fifth of the kernel's time. A plane's sums do
// not depend on the chunking.
constexpr int64_t kChunkWork = int64_t{1} << 20;
// Rows of a streamed plane summed between two streaming copies.
constexpr int64_t kStreamRows = 8;

// A memcpy with non-temporal stores where the CPU has them (SSE2, every x86-64): the
// destination's cache lines are written whole without being read first. The bytes are a
// memcpy's; StreamFence orders them before the kernel returns. The AVX2 and AVX-512 builds have
// wider ones (tap_rows_isa.cc).
void StreamCopyBaseline(void* dst, const void* src, int64_t n) {
  auto* out = static_cast<unsigned char*>(dst);
  const auto* in = static_cast<const unsigned char*>(src);
  size_t bytes = static_cast<size_t>(n);
#if defined(__SSE2__)
  const size_t head = std::min(bytes, (64 - reinterpret_cast<uintptr_t>(out) % 64) % 64);
  std::memcpy(out, in, head);
  out += head, in += head, bytes -= head;
  for (; bytes >= 64; out += 64, in += 64, bytes -= 64)
    for (int v = 0; v < 4; ++v) {
      __m128i lanes;
      std::memcpy(&lanes, in + 16 * v, sizeof lanes);
      _mm_stream_si128(reinterpret_cast<__m128i*>(out + 16 * v), lanes);
    }
#endif
  std::memcpy(out, in, bytes);
}

void StreamFence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

// The row path's layout of one input plane. Along each spatial axis, the outputs o = r + period *
// n of one residue r read, through any tap k that lands on an input element at all, the input
// elements first(k) + n * step (period > 1 only with lhs dilation, step > 1 only with a stride).
// The plane is kept zero-padded at both ends of both axes and split into step_y x step_x phases,
// phase-major: padded (row, column) = (hy + step_y * py, hx + step_x * j) sits at ((hy * step_x +
// hx) * y.len + py) * x.len + j. So tap (ky, kx) reads element base + i * x.len + m for output
// (ry + period_y * i, rx + period_x * m): every output class (ry, rx) is one flat run of
// count_y * x.len sums, of which the first count_x of each x.len are outputs (the rest fall
// between rows and are dropped), summed by SumTapRows in the widest vectors the CPU has.
struct PlaneAxis {
  struct Residue {
    int64_t count = 0;                              // outputs of this residue along the axis
    std::vector<std::pair<int64_t, int64_t>> taps;  // (kernel index, first padded input index)
  };
  int64_t period = 1, step = 1;
  int64_t pad = 0;  // zero entries before input index 0
  int64_t len = 0;  // entries per phase
  std::vector<Residue> residues;
};

struct PlaneLayout {
  struct Group {  // one output class (ry, rx)
    int64_t ry = 0, rx = 0;
    std::vector<std::pair<int64_t, int64_t>> taps;  // (weight index ky * k_w + kx, offset in the plane)
    int64_t width = 0;                              // count_y * x.len rounded up to the kernel's granule
  };
  PlaneAxis y, x;
  // Without lhs dilation there is one class, and its rows can be summed straight into the output
  // rows, each row_width (the output row rounded up to the granule) wide, spilling into the next
  // row (the columns past the output row are sums no output keeps).
  bool by_rows = false;
  int64_t row_width = 0;
  int64_t plane = 0;          // the padded plane's elements
  int64_t elements = 0;       // and the zeros after it that the last rows' dropped sums read
  int64_t sums_stride = 0;    // elements per class in the sums of one class row (ry): every group's
                              // width, and count_y * x.len + count_x for a class left all zeros
  std::vector<Group> groups;  // by ry, then rx
};

// One axis of the layout; false when its padding or dilation is far past the data.
bool PlanAxis(const WindowDim& w, int64_t in, int64_t out, int64_t k, PlaneAxis& axis) {
  constexpr int64_t kLimit = int64_t{1} << 30;
  if (std::abs(w.pad_low) > kLimit || std::abs(w.pad_high) > kLimit || w.stride > kLimit ||
      w.window_dilation > kLimit || w.base_dilation > kLimit)
    return false;
  axis.period = w.base_dilation / std::gcd(w.stride, w.base_dilation);
  axis.step = axis.period * w.stride / w.base_dilation;
  axis.residues.resize(static_cast<size_t>(axis.period));
  int64_t lowest = 0, highest = in - 1;
  for (int64_t r = 0; r < axis.period; ++r) {
    PlaneAxis::Residue& residue = axis.residues[r];
    residue.count = r < out ? (out - r + axis.period - 1) / axis.period : 0;
    for (int64_t t = 0; t < k && residue.count > 0; ++t) {
      const int64_t q0 = r * w.stride + t * w.window_dilation - w.pad_low;
      if ((q0 % w.base_dilation + w.base_dilation) % w.base_dilation != 0) continue;
      const int64_t first = FloorDiv(q0, w.base_dilation);
      const int64_t last = first + (residue.count - 1) * axis.step;
      if (last < 0 || first >= in) continue;  // never on an input element: only zero terms
      residue.taps.emplace_back(t, first);
      lowest = std::min(lowest, first);
      highest = std::max(highest, last);
    }
  }
  axis.pad = -lowest;
  axis.len = (highest - lowest + 1 + axis.step - 1) / axis.step;
  for (PlaneAxis::Residue& residue : axis.residues)
    for (auto& tap : residue.taps) tap.second += axis.pad;
  return true;
}

// The layout, or nullopt where the padded plane would be far larger than the data (a window
// dilation or padding in the millions): that convolution keeps the residue path.
std::optional<PlaneLayout> PlanPlane(const WindowDim& wy, const WindowDim& wx, int64_t in_h, int64_t in_w,
                                     int64_t out_h, int64_t out_w, int64_t k_h, int64_t k_w, int64_t granule) {
  PlaneLayout layout;
  if (!PlanAxis(wy, in_h, out_h, k_h, layout.y) || !PlanAxis(wx, in_w, out_w, k_w, layout.x)) return std::nullopt;
  const int64_t rows = layout.y.step * layout.y.len, row_len = layout.x.step * layout.x.len;
  if (rows > (int64_t{1} << 31) || row_len > (int64_t{1} << 31) ||
      rows * row_len > 16 * (in_h * in_w + out_h * out_w) + 4096)
    return std::nullopt;
  layout.plane = layout.elements = rows * row_len;
  const PlaneAxis &y = layout.y, &x = layout.x;
  for (int64_t ry = 0; ry < y.period; ++ry)
    for (int64_t rx = 0; rx < x.period; ++rx) {
      const PlaneAxis::Residue &res_y = y.residues[ry], &res_x = x.residues[rx];
      if (res_y.count == 0 || res_x.count == 0) continue;
      PlaneLayout::Group group;
      group.ry = ry;
      group.rx = rx;
      int64_t top = 0;
      for (const auto& [ky, row] : res_y.taps)
        for (const auto& [kx, column] : res_x.taps) {
          const int64_t phase = (row % y.step) * x.step + column % x.step;
          const int64_t offset = (phase * y.len + row / y.step) * x.len + column / x.step;
          group.taps.emplace_back(ky * k_w + kx, offset);
          top = std::max(top, offset);
        }
      // A class with no tap is all zeros, and its row length need not cover its columns.
      if (!group.taps.empty()) group.width = (res_y.count * x.len + granule - 1) / granule * granule;
      layout.elements = std::max(layout.elements, top + group.width);
      if (y.period == 1 && x.period == 1 && !group.taps.empty()) {
        layout.by_rows = true;
        layout.row_width = (res_x.count + granule - 1) / granule * granule;
        layout.elements = std::max(layout.elements, top + (res_y.count - 1) * x.len + layout.row_width);
      }
      layout.sums_stride = std::max({layout.sums_stride, group.width, res_y.count * x.len + res_x.count});
      layout.groups.push_back(std::move(group));
    }
  return layout;
}

// Fills the padded plane (layout.plane elements) from one input plane. The entries of a column
// phase that hold input columns are the same in every row, so they are found once per phase.
template <typename C>
void FillPlane(const PlaneLayout& layout, const C* in_plane, int64_t in_h, int64_t in_w, int64_t in_y, int64_t in_x,
               C* plane) {
  const PlaneAxis &y = layout.y, &x = layout.x;
  for (int64_t hx = 0; hx < x.step; ++hx) {
    // Entry j is input column hx + step * j - pad: in [0, in_w) for j in [begin, end).
    const int64_t begin = std::clamp<int64_t>(CeilDiv(x.pad - hx, x.step), 0, x.len);
    const int64_t end = std::clamp<int64_t>(CeilDiv(x.pad + in_w - hx, x.step), begin, x.len);
    const int64_t column = hx + x.step * begin - x.pad;
    const bool contiguous = x.step == 1 && in_x == 1;
    for (int64_t hy = 0; hy < y.step; ++hy) {
      C* dst = plane + (hy * x.step + hx) * y.len * x.len;
      int64_t p = hy - y.pad;  // the input row of padded row hy + step * py
      for (int64_t py = 0; py < y.len; ++py, p += y.step, dst += x.len) {
        if (p < 0 || p >= in_h || begin == end) {
          std::fill(dst, dst + x.len, C(0));
          continue;
        }
        const C* src = in_plane + p * in_y + column * in_x;
        std::fill(dst, dst + begin, C(0));
        if (contiguous) {
          std::memcpy(dst + begin, src, static_cast<size_t>(end - begin) * sizeof(C));
        } else {
          for (int64_t j = begin; j < end; ++j) dst[j] = src[(j - begin) * x.step * in_x];
        }
        std::fill(dst + end, dst + x.len, C(0));
      }
    }
  }
}

}  // namespace

const TapRowsKernel& ActiveTapRows() {
  static constexpr TapRowsKernel kBaseline = {
      SumTapRows<float, 16>, SumTapRows<double, 16>, StreamCopyBaseline,     16,
      DotLanesAdd<float>,    DotLanesAdd<double>,    GroupedRows<float, 16>, GroupedRows<double, 16>};
#if defined(NHLO_SPAN_X86)
  static const TapRowsKernel kAvx2 = {tap_rows_Avx2::SumF32,        tap_rows_Avx2::SumF64,    tap_rows_Avx2::StreamCopy,
                                      tap_rows_Avx2::VectorBytes(), tap_rows_Avx2::DotF32,    tap_rows_Avx2::DotF64,
                                      tap_rows_Avx2::GroupedF32,    tap_rows_Avx2::GroupedF64};
  static const TapRowsKernel kAvx512 = {
      tap_rows_Avx512::SumF32, tap_rows_Avx512::SumF64, tap_rows_Avx512::StreamCopy, tap_rows_Avx512::VectorBytes(),
      tap_rows_Avx512::DotF32, tap_rows_Avx512::DotF64, tap_rows_Avx512::GroupedF32, tap_rows_Avx512::GroupedF64};
  switch (ActiveGemmIsa()) {
    case GemmIsa::kAvx512: return kAvx512;
    case GemmIsa::kAvx2: return kAvx2;
    case GemmIsa::kBaseline: return kBaseline;
  }
#endif
  return kBaseline;
}

// What a depthwise convolution's shape decides: the row path's padded-plane layout for one
// granule (null where the plane would be huge) and the residue path's column taps. Built at load
// for the granule of the ISA the process runs (PlanConvolutionDepthwise); a run at another one (a
// test switching the ISA level) builds its own.
struct DepthwiseLayout {
  int64_t granule = 0;
  std::optional<PlaneLayout> plane;
  // Columns x = r + period * m of one residue r read input columns in steps of `step`, and a tap
  // reads one for all of them or for none (x * stride + k * dilation - pad must be a multiple of
  // the lhs dilation, which depends only on x mod period).
  int64_t period = 1, step = 1;
  // Per residue below the output width: the kernel columns that read an input column for it, in
  // order, and the columns m where all of them do (the interior, summed in blocks).
  std::vector<std::vector<ColumnTap>> column_taps;
  std::vector<std::pair<int64_t, int64_t>> interior;
};

namespace {

std::shared_ptr<const DepthwiseLayout> BuildDepthwiseLayout(const ConvPlan& plan, const std::vector<int64_t>& ld,
                                                            const std::vector<int64_t>& kd,
                                                            const std::vector<int64_t>& od, int64_t granule) {
  const ConvDimLabels& l = *plan.labels;
  const WindowDim &wy = plan.window[0], &wx = plan.window[1];
  const int64_t out_h = od[l.output_spatial[0]], out_w = od[l.output_spatial[1]];
  const int64_t in_h = ld[l.input_spatial[0]], in_w = ld[l.input_spatial[1]];
  const int64_t k_h = kd[l.kernel_spatial[0]], k_w = kd[l.kernel_spatial[1]];
  const int64_t in_x = RowMajorStrides(ld)[l.input_spatial[1]];
  auto layout = std::make_shared<DepthwiseLayout>();
  layout->granule = granule;
  layout->plane = PlanPlane(wy, wx, in_h, in_w, out_h, out_w, k_h, k_w, granule);
  const int64_t period = layout->period = wx.base_dilation / std::gcd(wx.stride, wx.base_dilation);
  const int64_t step = layout->step = period * wx.stride / wx.base_dilation;
  // Residues from out_w on have no columns (and a bundle's lhs dilation may be far larger).
  const int64_t residues = std::min(period, out_w);
  layout->column_taps.resize(static_cast<size_t>(residues));
  layout->interior.resize(static_cast<size_t>(residues));
  for (int64_t r = 0; r < residues; ++r) {
    const int64_t count = (out_w - r + period - 1) / period;
    int64_t inner_begin = 0, inner_end = count;
    for (int64_t kx = 0; kx < k_w; ++kx) {
      int64_t q0 = r * wx.stride + kx * wx.window_dilation - wx.pad_low;
      if ((q0 % wx.base_dilation + wx.base_dilation) % wx.base_dilation != 0) continue;
      const int64_t first = FloorDiv(q0, wx.base_dilation);  // first + m * step in [0, in_w):
      const int64_t m_begin = std::clamp<int64_t>(CeilDiv(-first, step), 0, count);
      const int64_t m_end = std::clamp<int64_t>(CeilDiv(in_w - first, step), m_begin, count);
      if (m_begin == m_end) continue;
      layout->column_taps[r].push_back({kx, first * in_x, m_begin, m_end});
      inner_begin = std::max(inner_begin, m_begin);
      inner_end = std::min(inner_end, m_end);
    }
    layout->interior[r] = {inner_begin, std::max(inner_end, inner_begin)};
  }
  return layout;
}

}  // namespace

void PlanConvolutionDepthwise(const BufferRecord& lhs, const BufferRecord& rhs, const BufferRecord& out,
                              ConvPlan& plan) {
  const ConvDimLabels& l = *plan.labels;
  if (plan.bgc != 1 || plan.fgc < 2 || l.input_spatial.size() != 2 || rhs.dims[l.kernel_input_feature] != 1 ||
      out.ElementCount() == 0 || !HasFloatCompute(out.type))
    return;
  plan.fits |= 1 << static_cast<int>(ConvKernel::kDepthwise);
  plan.depthwise =
      BuildDepthwiseLayout(plan, lhs.dims, rhs.dims, out.dims, ActiveTapRows().GranuleOf(ComputeByteSize(out.type)));
}

Status ConvolutionDepthwise(const ConvPlan& plan, const Buf& lhs, const Buf& rhs, const Buf& out, bool& handled) {
  handled = false;
  const ConvDimLabels& l = *plan.labels;
  const std::vector<WindowDim>& window = plan.window;
  const int64_t fgc = plan.fgc;
  const std::vector<int64_t>&ld = Dims(lhs), &kd = Dims(rhs), &od = Dims(out);
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
      // The layout planned at load, unless this run's ISA level has another granule.
      std::shared_ptr<const DepthwiseLayout> planned = plan.depthwise;
      if (!planned || planned->granule != tap_rows.Granule<C>())
        planned = BuildDepthwiseLayout(plan, ld, kd, od, tap_rows.Granule<C>());
      const PlaneLayout* layout = planned->plane ? &*planned->plane : nullptr;
      const int64_t period = planned->period, step = planned->step;
      const std::vector<std::vector<ColumnTap>>& column_taps = planned->column_taps;
      const std::vector<std::pair<int64_t, int64_t>>& interior = planned->interior;
      C* out_typed = TypedOutput<C>(out);
      const int64_t src_step = step * in_x;
      // An output far larger than the caches is written with streaming stores, plane by plane:
      // no cache line is read before it is overwritten, which halves its memory traffic.
      const bool stream = layout && out_typed && out_x == 1 && out_y == out_w &&
                          out.count() * static_cast<int64_t>(sizeof(C)) >= kStreamBytes;
      ParallelFor(batches * features, ChunkFor(out_h * out_w * k_h * k_w, kChunkWork), [&](int64_t begin, int64_t end) {
        std::vector<C> row(static_cast<size_t>(out_w));
        std::vector<std::pair<const C*, int64_t>> rows;  // the input rows in bounds, kernel row (reversed)
        std::vector<C> weights(static_cast<size_t>(k_h * k_w));
        // The row path's padded plane, the input plane it holds (planes of one input feature
        // follow each other when the channel multiplier is above 1), a class's taps and sums.
        ScratchVector<C> plane_rows;
        const C* filled_from = nullptr;
        std::vector<const C*> tap_sources;
        std::vector<C> tap_weights;
        ScratchVector<C> sums, staged;
        if (stream) staged.resize(static_cast<size_t>(out_h * out_w + layout->row_width));
        if (layout) {
          plane_rows.resize(static_cast<size_t>(layout->elements));  // zeros past the plane stay zero
          tap_sources.resize(static_cast<size_t>(k_h * k_w));
          tap_weights.resize(static_cast<size_t>(k_h * k_w));
          sums.resize(static_cast<size_t>(std::max(layout->sums_stride * layout->x.period, layout->row_width)));
        }
        // The output plane from the padded plane, class by class. A tap on a padding entry adds
        // x * w = +-0 to a sum that is never -0 (it starts at +0, and a rounded sum is -0 only
        // when both terms are), which leaves the sum as it was, as the reference's skipping the
        // tap does, when w is finite.
        // The classes of one ry are summed side by side, so each output row is then written
        // once, in order, its columns interleaved from them (lhs dilation).
        // `target` is out_typed, or the staged plane (out_plane 0) that is then streamed out.
        auto plane_from_padded = [&](C* target, int64_t out_plane, bool may_spill) {
          const PlaneAxis &ya = layout->y, &xa = layout->x;
          const int64_t stride = layout->sums_stride;
          if (layout->by_rows && target && out_x == 1 && out_y == out_w) {
            // Rows straight into the output while a row's spill (row_width past its start) stays
            // inside the plane; the rest through `sums`, unless the target has room past the plane
            // for the spill (the staged plane). A spill past the plane would write into the next
            // plane, which another thread may already have written, or past the output's end.
            const PlaneLayout::Group& g = layout->groups.front();
            const int64_t taps = static_cast<int64_t>(g.taps.size()), rows = ya.residues[0].count;
            for (int64_t t = 0; t < taps; ++t) {
              tap_sources[t] = plane_rows.data() + g.taps[t].second;
              tap_weights[t] = weights[g.taps[t].first];
            }
            // Row r ends its writes at r * out_w + row_width, within rows * out_w while r is below
            // rows - ceil(row_width / out_w) + 1.
            const int64_t past = (layout->row_width + out_w - 1) / out_w - 1;
            const int64_t direct = may_spill ? rows : std::max<int64_t>(rows - past, 0);
            if (direct > 0)
              tap_rows.For<C>()(tap_sources.data(), tap_weights.data(), taps, target + out_plane, layout->row_width,
                                direct, xa.len, out_w);
            for (int64_t t = 0; t < taps; ++t) tap_sources[t] += direct * xa.len;
            for (int64_t r = direct; r < rows; ++r) {
              tap_rows.For<C>()(tap_sources.data(), tap_weights.data(), taps, sums.data(), layout->row_width, 1, 0, 0);
              std::memcpy(target + out_plane + r * out_w, sums.data(), static_cast<size_t>(out_w) * sizeof(C));
              for (int64_t t = 0; t < taps; ++t) tap_sources[t] += xa.len;
            }
            return;
          }
          auto group = layout->groups.begin();
          for (int64_t ry = 0; ry < ya.period; ++ry) {
            const int64_t count_y = ya.residues[ry].count;
            if (count_y == 0) continue;
            for (int64_t rx = 0; rx < xa.period; ++rx) {
              C* dst = sums.data() + rx * stride;
              if (xa.residues[rx].count == 0) continue;
              int64_t taps = 0;
              for (const auto& [weight, offset] : group->taps) {
                tap_sources[taps] = plane_rows.data() + offset;
                tap_weights[taps++] = weights[weight];
              }
              if (taps > 0)
                tap_rows.For<C>()(tap_sources.data(), tap_weights.data(), taps, dst, group->width, 1, 0, 0);
              else
                std::fill(dst, dst + stride, C(0));
              ++group;
            }
            for (int64_t i = 0; i < count_y; ++i) {
              const int64_t base = out_plane + (ry + ya.period * i) * out_y;
              const C* src = sums.data() + i * xa.len;
              if (xa.period == 1 && target && out_x == 1) {
                std::memcpy(target + base, src, static_cast<size_t>(out_w) * sizeof(C));
              } else if (xa.period == 2 && target && out_x == 1) {
                const C *even = src, *odd = src + stride;
                for (int64_t m = 0; m < out_w / 2; ++m) {
                  target[base + 2 * m] = even[m];
                  target[base + 2 * m + 1] = odd[m];
                }
                if (out_w % 2) target[base + out_w - 1] = even[out_w / 2];
              } else {
                for (int64_t x = 0; x < out_w; ++x) {
                  const C value = src[(x % xa.period) * stride + x / xa.period];
                  if (target)
                    target[base + x * out_x] = value;
                  else
                    ot.Store(out.data, base + x * out_x, value);
                }
              }
            }
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
        // The streamed plane without lhs dilation: its rows summed into the staged plane a few at a
        // time, each few streamed out as soon as they are final (a row's spill only reaches the
        // next row, summed later) and a share of the next input plane asked for, so that the
        // memory traffic both ways overlaps the sums instead of waiting before and after them.
        auto stream_by_rows = [&](int64_t out_plane, const C* next_in) {
          const PlaneLayout::Group& g = layout->groups.front();
          const int64_t taps = static_cast<int64_t>(g.taps.size()), rows = layout->y.residues[0].count;
          for (int64_t t = 0; t < taps; ++t) {
            tap_sources[t] = plane_rows.data() + g.taps[t].second;
            tap_weights[t] = weights[g.taps[t].first];
          }
          const int64_t lines = next_in ? (in_h * in_w * static_cast<int64_t>(sizeof(C)) + 63) / 64 : 0;
          int64_t asked = 0;
          for (int64_t r0 = 0; r0 < rows; r0 += kStreamRows) {
            const int64_t n = std::min(kStreamRows, rows - r0);
            C* staged_rows = staged.data() + r0 * out_w;
            tap_rows.For<C>()(tap_sources.data(), tap_weights.data(), taps, staged_rows, layout->row_width, n,
                              layout->x.len, out_w);
            for (int64_t t = 0; t < taps; ++t) tap_sources[t] += n * layout->x.len;
            tap_rows.stream_copy(out_typed + out_plane + r0 * out_w, staged_rows,
                                 n * out_w * static_cast<int64_t>(sizeof(C)));
            for (const int64_t until = lines * (r0 + n) / rows; asked < until; ++asked)
              __builtin_prefetch(reinterpret_cast<const char*>(next_in) + asked * 64);
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
          const int64_t out_plane = b * os[l.output_batch] + o * os[l.output_feature];
          if (layout && finite) {
            // The next channel's input plane, asked for while this one is summed: each plane is
            // one short sequential read, too short for the hardware to run ahead of.
            const C* next_in = nullptr;
            if (plane + 1 < end && in_x == 1 && in_y == in_w) {
              const int64_t next_b = (plane + 1) / features, next_o = (plane + 1) % features;
              next_in = in + next_b * ls[l.input_batch] + (next_o / per_group) * ls[l.input_feature];
            }
            if (filled_from != in_plane) {
              FillPlane(*layout, in_plane, in_h, in_w, in_y, in_x, plane_rows.data());
              filled_from = in_plane;
              if (next_in && !(stream && layout->by_rows))
                for (int64_t e = 0; e < in_h * in_w; e += 64 / static_cast<int64_t>(sizeof(C)))
                  __builtin_prefetch(next_in + e);
            }
            if (stream && layout->by_rows) {
              stream_by_rows(out_plane, next_in);
            } else if (stream) {
              plane_from_padded(staged.data(), 0, true);
              tap_rows.stream_copy(out_typed + out_plane, staged.data(),
                                   out_h * out_w * static_cast<int64_t>(sizeof(C)));
            } else {
              plane_from_padded(out_typed, out_plane, false);
            }
            continue;
          }
          for (int64_t y = 0; y < out_h; ++y) {
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
        if (stream) StreamFence();  // this thread's streaming stores before the join
      });
      return OkStatus();
    }
  });
}
}  // namespace nhlo

namespace nhlo {

bool ConvolutionLargeWindowFits(const ConvPlan& plan, const BufferRecord& rhs, const BufferRecord& out) {
  const ConvDimLabels& l = *plan.labels;
  if (plan.fgc != 1 || l.input_spatial.size() != 2 || out.ElementCount() == 0 || !HasFloatCompute(out.type))
    return false;
  const int64_t k_h = rhs.dims[l.kernel_spatial[0]], k_w = rhs.dims[l.kernel_spatial[1]];
  const int64_t out_h = out.dims[l.output_spatial[0]], out_w = out.dims[l.output_spatial[1]];
  // A weight gradient: a window of thousands of taps, a handful of output positions. (The
  // products are of sizes from records the reader checked, each below 2^62 bytes in all.)
  return k_h * k_w >= kLargeWindowTaps && out_h * out_w * 16 <= k_h * k_w && plan.window[0].base_dilation == 1 &&
         plan.window[1].base_dilation == 1;
}

Status ConvolutionLargeWindow(const ConvPlan& plan, const Buf& lhs, const Buf& rhs, const Buf& out, bool& handled) {
  handled = false;
  const ConvDimLabels& l = *plan.labels;
  const int64_t bgc = plan.bgc;
  const std::vector<int64_t>&ld = Dims(lhs), &kd = Dims(rhs), &od = Dims(out);
  const WindowDim &wy = plan.window[0], &wx = plan.window[1];
  const int64_t k_h = kd[l.kernel_spatial[0]], k_w = kd[l.kernel_spatial[1]];
  const int64_t out_h = od[l.output_spatial[0]], out_w = od[l.output_spatial[1]];
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
      // Features of different batch groups read different inputs, so a block stays within one
      // group: sharing nothing, a block of them only multiplies the streams read at once (a
      // depthwise weight gradient, one feature per group, ran 1.4x slower in blocks of 8).
      int64_t feature_block = 8;
      while (per_batch_group % feature_block != 0) feature_block /= 2;
      const int64_t feature_blocks = (out_features + feature_block - 1) / feature_block;
      // The kernel columns kx whose input column is in bounds for output column ox.
      std::vector<std::pair<int64_t, int64_t>> kx_range(static_cast<size_t>(out_w));
      for (int64_t ox = 0; ox < out_w; ++ox) {
        const int64_t q0 = ox * wx.stride - wx.pad_low;
        int64_t kx_begin = 0, kx_end = k_w;
        while (kx_begin < k_w && q0 + kx_begin * wx.window_dilation < 0) ++kx_begin;
        while (kx_end > kx_begin && q0 + (kx_end - 1) * wx.window_dilation >= in_w) --kx_end;
        kx_range[ox] = {kx_begin, kx_end};
      }
      const DotLanesFn<C> dot = ActiveTapRows().Dot<C>();
      ParallelFor(batches * feature_blocks, 1, [&](int64_t begin, int64_t end) {
        ScratchVector<C> acc;
        for (int64_t job = begin; job < end; ++job) {
          const int64_t b = job / feature_blocks, f0 = (job % feature_blocks) * feature_block;
          const int64_t f1 = std::min(out_features, f0 + feature_block);
          acc.assign(static_cast<size_t>((f1 - f0) * out_h * out_w * kDotLanes), C(0));
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
                  C* out_row = acc.data() + ((f - f0) * out_h + oy) * out_w * kDotLanes;
                  for (int64_t ox = 0; ox < out_w; ++ox) {
                    const auto [kx_begin, kx_end] = kx_range[ox];
                    if (kx_begin == kx_end) continue;
                    const C* x = in_row + (ox * wx.stride - wx.pad_low + kx_begin * wx.window_dilation) * lx;
                    const C* wk = wx.reversal ? k_row + (k_w - 1 - kx_begin) * kx_stride : k_row + kx_begin * kx_stride;
                    dot(x, wx.window_dilation * lx, wk, wx.reversal ? -kx_stride : kx_stride, kx_end - kx_begin,
                        out_row + ox * kDotLanes);
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
                         FoldLanes(acc.data() + (((f - f0) * out_h + oy) * out_w + ox) * kDotLanes));
        }
      });
      return OkStatus();
    }
  });
}

}  // namespace nhlo
