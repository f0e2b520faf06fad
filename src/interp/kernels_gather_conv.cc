// SPDX-License-Identifier: Apache-2.0
// gather and convolution, written as XLA's HloEvaluator defines them (shared/reference
// HLO_SEMANTICS.md): plain index arithmetic per output element, computing in the result's
// compute domain. Reference kernels: clear rather than fast. PlanGather checks a gather once, at
// load, into strides over the result's index (RunGather copies rows with them). PlanConvolution checks a
// convolution once, at load, and finds the fast kernels its shape fits (kernel_plans.h);
// RunConvolution runs the first that takes the values, this reference loop when none does.
#include <algorithm>
#include <cstring>

#include "interp/dense_operands.h"
#include "interp/element_traits.h"
#include "interp/kernel_plans.h"
#include "interp/kernels.h"
#include "interp/scratch.h"
#include "support/parallel.h"
#include "types/hlo_attrs.h"

namespace nhlo {
namespace {

// A gather's checks against its records; window_dims gets the operand dimensions the offset
// indices walk, in order.
Status CheckGather(const GatherDimensionNumbers& dims, const BufferRecord& operand, const BufferRecord& indices,
                   const BufferRecord& out, std::vector<int64_t>& window_dims) {
  const DimIndexList* offset_dims = &dims.offset_dims;
  const DimIndexList* collapsed = &dims.collapsed_slice_dims;
  const DimIndexList* start_index_map = &dims.start_index_map;
  const DimIndexList* slice_sizes = &dims.slice_sizes;
  const DimIndexList operand_batching = dims.operand_batching_dims;
  const DimIndexList indices_batching = dims.start_indices_batching_dims;
  if (!IsInteger(indices.type) || operand.type != out.type || slice_sizes->size() != operand.dims.size())
    return Status::Error("bundle 'gather' does not match its operands");
  int64_t ivd = dims.index_vector_dim;
  const std::vector<int64_t>& idims = indices.dims;
  if (ivd < 0 || ivd > static_cast<int64_t>(idims.size()))
    return Status::Error("gather index_vector_dim is out of range");
  int64_t index_len = ivd == static_cast<int64_t>(idims.size()) ? 1 : idims[ivd];
  if (static_cast<int64_t>(start_index_map->size()) != index_len)
    return Status::Error("gather start_index_map does not match the index vector");
  for (int64_t d : *start_index_map)
    if (d < 0 || d >= static_cast<int64_t>(operand.dims.size()))
      return Status::Error("gather start_index_map is out of range");
  // Batching dimensions (StableHLO's gather): operand dimension operand_batching[i] is indexed
  // by the batch index of indices dimension indices_batching[i], like a collapsed dimension
  // whose start comes from the position in the batch instead of the index vector.
  if (operand_batching.size() != indices_batching.size())
    return Status::Error("gather has " + std::to_string(operand_batching.size()) + " operand batching dimensions and " +
                         std::to_string(indices_batching.size()) + " start indices batching dimensions");
  for (size_t i = 0; i < operand_batching.size(); ++i) {
    int64_t od = operand_batching[i], id = indices_batching[i];
    if (od < 0 || od >= static_cast<int64_t>(operand.dims.size()) || id < 0 ||
        id >= static_cast<int64_t>(idims.size()) || id == ivd || operand.dims[od] != idims[id] ||
        (*slice_sizes)[od] > 1 || Contains(*collapsed, od))
      return Status::Error("gather batching dimensions do not match the operand and the indices");
  }
  // Operand dimensions the offset indices walk, in order.
  window_dims.clear();
  for (size_t d = 0; d < operand.dims.size(); ++d)
    if (!Contains(*collapsed, static_cast<int64_t>(d)) && !Contains(operand_batching, static_cast<int64_t>(d)))
      window_dims.push_back(static_cast<int64_t>(d));
  if (window_dims.size() != offset_dims->size() ||
      out.dims.size() != offset_dims->size() + idims.size() - (ivd < static_cast<int64_t>(idims.size()) ? 1 : 0))
    return Status::Error("gather result rank does not match its dimension numbers");
  for (size_t k = 0; k < window_dims.size(); ++k)
    if ((*offset_dims)[k] < 0 || (*offset_dims)[k] >= static_cast<int64_t>(out.dims.size()) ||
        out.dims[(*offset_dims)[k]] != (*slice_sizes)[window_dims[k]])
      return Status::Error("gather offset dimensions do not match the slice sizes");
  for (size_t d = 0; d < operand.dims.size(); ++d)
    if ((*slice_sizes)[d] < 0 || (*slice_sizes)[d] > operand.dims[d])
      return Status::Error("gather slice size is larger than the operand");
  // Batch dimensions of the result: the index dimensions other than index_vector_dim, in order.
  for (size_t d = 0, bi = 0; d < out.dims.size(); ++d) {
    if (Contains(*offset_dims, static_cast<int64_t>(d))) continue;
    if (static_cast<int64_t>(bi) == ivd) ++bi;
    if (bi >= idims.size() || out.dims[d] != idims[bi++])
      return Status::Error("gather result batch dimensions do not match the indices");
  }
  // A collapsed dimension with slice size 0 (the verifier allows 0 or 1, as XLA does) gives every
  // result element an empty slice to read from: there is no value to gather.
  if (out.ElementCount() > 0)
    for (int64_t d : *collapsed)
      if (d >= 0 && d < static_cast<int64_t>(operand.dims.size()) && (*slice_sizes)[d] == 0)
        return Status::Error("gather collapses dimension " + std::to_string(d) +
                             " with slice size 0, so its result elements have nothing to read");
  return OkStatus();
}

}  // namespace

namespace {

// The plan of a gather that passed CheckGather (window_dims is what it found).
Result<GatherPlan> PlanCheckedGather(const GatherDimensionNumbers& dims, const BufferRecord& operand,
                                     const BufferRecord& indices, const BufferRecord& out,
                                     const std::vector<int64_t>& window_dims) {
  const size_t rank = operand.dims.size(), out_rank = out.dims.size(), index_rank = indices.dims.size();
  std::vector<bool> started(rank, false);
  for (int64_t d : dims.start_index_map) {
    if (started[d]) return Status::Error("gather start_index_map repeats an operand dimension");
    started[d] = true;
  }
  for (int64_t d : dims.operand_batching_dims)
    if (started[d]) return Status::Error("gather start_index_map names a batching dimension");
  const std::vector<int64_t> op_strides = RowMajorStrides(operand.dims), idx_strides = RowMajorStrides(indices.dims);
  const int64_t ivd = dims.index_vector_dim;
  GatherPlan plan;
  plan.out_dims = out.dims;
  plan.src_stride.assign(out_rank, 0);
  plan.index_stride.assign(out_rank, 0);
  std::vector<bool> offset(out_rank, false);
  for (size_t k = 0; k < window_dims.size(); ++k) {
    plan.src_stride[dims.offset_dims[k]] += op_strides[window_dims[k]];
    offset[dims.offset_dims[k]] = true;
  }
  // The result's batch dimensions, in order, are the index dimensions other than index_vector_dim.
  std::vector<int64_t> out_of_index(index_rank, -1);
  for (size_t d = 0, bi = 0; d < out_rank; ++d) {
    if (offset[d]) continue;
    if (static_cast<int64_t>(bi) == ivd) ++bi;
    plan.index_stride[d] = idx_strides[bi];
    out_of_index[bi++] = static_cast<int64_t>(d);
  }
  for (size_t i = 0; i < dims.operand_batching_dims.size(); ++i)
    plan.src_stride[out_of_index[dims.start_indices_batching_dims[i]]] += op_strides[dims.operand_batching_dims[i]];
  plan.index_vector_stride = ivd < static_cast<int64_t>(index_rank) ? idx_strides[ivd] : 0;
  for (int64_t od : dims.start_index_map) {
    plan.start_stride.push_back(op_strides[od]);
    plan.start_limit.push_back(operand.dims[od] - dims.slice_sizes[od]);
  }
  plan.element_bytes = HostByteSize(out.type);
  if (out_rank == 0) {  // one row of one element
    plan.out_dims = {1};
    plan.src_stride = plan.index_stride = {0};
  }
  return plan;
}

}  // namespace

Result<GatherPlan> PlanGather(const Step& step, const BufferRecord& operand, const BufferRecord& indices,
                              const BufferRecord& out) {
  const GatherDimensionNumbers& dims = DimsOf<GatherDimensionNumbers>(step);
  std::vector<int64_t> window_dims;
  NHLO_TRY(CheckGather(dims, operand, indices, out, window_dims));
  return PlanCheckedGather(dims, operand, indices, out, window_dims);
}

namespace {

struct Bytes16 {  // a c128 element
  uint8_t bytes[16];
};

inline int64_t LoadGatherIndex(PrimitiveType t, const uint8_t* p) {
  if (t == PrimitiveType::kS32) {
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  if (t == PrimitiveType::kS64) {
    int64_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  return LoadIndex(t, p);
}

// One row of the result (its last dimension, n elements of U) from the operand.
template <typename U>
void GatherRow(const GatherPlan& plan, const Buf& operand, const Buf& indices, int64_t src, int64_t index_pos, U* dst,
               int64_t n) {
  const U* from = reinterpret_cast<const U*>(operand.data);
  const int64_t isize = HostByteSize(indices.type());
  const size_t entries = plan.start_stride.size();
  auto start_of = [&](int64_t pos) {
    int64_t at = 0;
    for (size_t k = 0; k < entries; ++k) {
      const int64_t v = LoadGatherIndex(indices.type(), indices.data + (pos + k * plan.index_vector_stride) * isize);
      at += std::clamp<int64_t>(v, 0, plan.start_limit[k]) * plan.start_stride[k];  // XLA clamps
    }
    return at;
  };
  const int64_t src_step = plan.src_stride.back(), index_step = plan.index_stride.back();
  if (index_step == 0) {  // an offset dimension: one start for the whole row
    const U* row = from + src + start_of(index_pos);
    for (int64_t j = 0; j < n; ++j) dst[j] = row[j * src_step];
    return;
  }
  if (entries == 1 && (indices.type() == PrimitiveType::kS32 || indices.type() == PrimitiveType::kS64)) {
    // One start per element from s32 or s64 indices (an embedding lookup, a take): a tight loop.
    const int64_t limit = plan.start_limit[0], stride = plan.start_stride[0];
    auto take = [&](auto index_type) {
      using I = decltype(index_type);
      const I* idx = reinterpret_cast<const I*>(indices.data) + index_pos;
      for (int64_t j = 0; j < n; ++j)
        dst[j] = from[src + j * src_step + std::clamp<int64_t>(idx[j * index_step], 0, limit) * stride];
    };
    if (indices.type() == PrimitiveType::kS32)
      take(int32_t{});
    else
      take(int64_t{});
    return;
  }
  for (int64_t j = 0; j < n; ++j) dst[j] = from[src + j * src_step + start_of(index_pos + j * index_step)];
}

}  // namespace

void RunGather(const GatherPlan& plan, const Buf& operand, const Buf& indices, const Buf& out) {
  const int64_t total = out.count();
  if (total <= 0) return;
  const int64_t n = plan.out_dims.back();
  ParallelFor(total / n, std::max<int64_t>(1, 65536 / n), [&](int64_t begin, int64_t end) {
    int64_t r = begin;
    ForEachRow(plan.out_dims, plan.src_stride, plan.index_stride, 1, begin, end, [&](int64_t src, int64_t pos) {
      uint8_t* dst = out.data + r++ * n * plan.element_bytes;
      switch (plan.element_bytes) {
        case 1: GatherRow(plan, operand, indices, src, pos, reinterpret_cast<uint8_t*>(dst), n); break;
        case 2: GatherRow(plan, operand, indices, src, pos, reinterpret_cast<uint16_t*>(dst), n); break;
        case 4: GatherRow(plan, operand, indices, src, pos, reinterpret_cast<uint32_t*>(dst), n); break;
        case 8: GatherRow(plan, operand, indices, src, pos, reinterpret_cast<uint64_t*>(dst), n); break;
        default: GatherRow(plan, operand, indices, src, pos, reinterpret_cast<Bytes16*>(dst), n); break;
      }
    });
  });
}

Status KernelGather(const Step& b, const Buf& operand, const Buf& indices, const Buf& out) {
  const GatherDimensionNumbers& dims = DimsOf<GatherDimensionNumbers>(b);
  std::vector<int64_t> window_dims;
  NHLO_TRY(CheckGather(dims, *operand.rec, *indices.rec, *out.rec, window_dims));
  if (Result<GatherPlan> plan = PlanCheckedGather(dims, *operand.rec, *indices.rec, *out.rec, window_dims); plan.ok()) {
    RunGather(*plan, operand, indices, out);
    return OkStatus();
  }
  // A start_index_map that repeats a dimension or names a batching one: a later start
  // overrides an earlier one, element by element as the evaluator does.
  const DimIndexList* offset_dims = &dims.offset_dims;
  const DimIndexList* start_index_map = &dims.start_index_map;
  const DimIndexList* slice_sizes = &dims.slice_sizes;
  const DimIndexList operand_batching = dims.operand_batching_dims;
  const DimIndexList indices_batching = dims.start_indices_batching_dims;
  const int64_t ivd = dims.index_vector_dim;
  const std::vector<int64_t>& idims = Dims(indices);
  const int64_t index_len = ivd == static_cast<int64_t>(idims.size()) ? 1 : idims[ivd];
  std::vector<int64_t> op_strides = RowMajorStrides(Dims(operand));
  std::vector<int64_t> idx_strides = RowMajorStrides(idims);
  int size = HostByteSize(out.type()), isize = HostByteSize(indices.type());
  std::vector<int64_t> batch(idims.size()), start(operand.rank());
  ForEachIndex(Dims(out), [&](int64_t linear, const std::vector<int64_t>& o) {
    // Batch indices: the output dims that are not offset dims, in order, mapped to the index
    // dims other than index_vector_dim.
    size_t bi = 0;
    for (size_t d = 0; d < o.size(); ++d) {
      if (Contains(*offset_dims, static_cast<int64_t>(d))) continue;
      if (static_cast<int64_t>(bi) == ivd) ++bi;
      batch[bi++] = o[d];
    }
    std::fill(start.begin(), start.end(), 0);
    for (int64_t k = 0; k < index_len; ++k) {
      int64_t pos = 0;
      for (size_t d = 0; d < idims.size(); ++d) pos += (static_cast<int64_t>(d) == ivd ? k : batch[d]) * idx_strides[d];
      int64_t od = (*start_index_map)[k];
      int64_t v = LoadIndex(indices.type(), indices.data + pos * isize);
      start[od] = std::clamp<int64_t>(v, 0, Dims(operand)[od] - (*slice_sizes)[od]);  // XLA clamps
    }
    // In range: the batch index runs over idims[id], which equals the operand dimension.
    for (size_t i = 0; i < operand_batching.size(); ++i) start[operand_batching[i]] = batch[indices_batching[i]];
    int64_t src = 0;
    for (size_t d = 0; d < operand.rank(); ++d) src += start[d] * op_strides[d];
    for (size_t k = 0; k < window_dims.size(); ++k) src += o[(*offset_dims)[k]] * op_strides[window_dims[k]];
    std::memcpy(out.data + linear * size, operand.data + src * size, size);
  });
  return OkStatus();
}

Result<ConvPlan> PlanConvolution(const ConvolutionDimensionNumbers& dims, const BufferRecord& lhs,
                                 const BufferRecord& rhs, const BufferRecord& out) {
  if (!dims.dim_labels) return Status::Error("bundle 'convolution' has no dim_labels");
  const ConvDimLabels& l = *dims.dim_labels;
  if (l.has_unknown || l.input_rank != lhs.dims.size() || l.kernel_rank != rhs.dims.size() ||
      l.output_rank != out.dims.size())
    return Status::Error("convolution dim_labels do not match the operands");
  ConvPlan plan;
  plan.labels = &l;
  size_t spatial = l.input_spatial.size();
  plan.window.assign(dims.window.begin(), dims.window.end());
  if (plan.window.empty()) plan.window.assign(spatial, WindowDim{});
  if (plan.window.size() != spatial)
    return Status::Error("convolution window rank does not match its spatial dimensions");
  const std::vector<WindowDim>& window = plan.window;
  const int64_t fgc = plan.fgc = dims.feature_group_count;
  const int64_t bgc = plan.bgc = dims.batch_group_count;
  const std::vector<int64_t>&ld = lhs.dims, &kd = rhs.dims, &od = out.dims;
  int64_t in_features = ld[l.input_feature], kernel_in = kd[l.kernel_input_feature],
          out_features = kd[l.kernel_output_feature];
  // batch_group_count B: the input batch is B groups of N/B, output feature f reads group
  // f / (O/B), and the output batch is N/B (XLA's evaluator).
  int64_t grouped_in = 0;
  if (fgc < 1 || bgc < 1 || MulOverflows(kernel_in, fgc, &grouped_in) || in_features != grouped_in ||
      out_features % fgc != 0 || out_features % bgc != 0 || ld[l.input_batch] % bgc != 0 ||
      od[l.output_feature] != out_features || od[l.output_batch] != ld[l.input_batch] / bgc)
    return Status::Error("convolution feature or batch sizes do not match");
  for (size_t s = 0; s < spatial; ++s)
    if (window[s].size != kd[l.kernel_spatial[s]] || window[s].stride < 1 || window[s].base_dilation < 1 ||
        window[s].window_dilation < 1)
      return Status::Error("convolution window does not match the kernel");
  // Every kernel forms o * stride + k * window_dilation - pad_low for every output position o and
  // tap k; a bundle file may carry any window, so the extremes are checked in 128 bits first.
  for (size_t s = 0; s < spatial; ++s) {
    const WindowDim& w = window[s];
    __int128 far = static_cast<__int128>(std::max<int64_t>(od[l.output_spatial[s]] - 1, 0)) * w.stride +
                   static_cast<__int128>(std::max<int64_t>(w.size - 1, 0)) * w.window_dilation - w.pad_low;
    __int128 near = -static_cast<__int128>(w.pad_low);
    if (far > INT64_MAX || near > INT64_MAX || near < INT64_MIN)
      return Status::Error("convolution window positions overflow 64 bits (padding " + std::to_string(w.pad_low) + ")");
  }
  auto fit = [&](ConvKernel k, bool fits) { plan.fits |= static_cast<uint8_t>(fits) << static_cast<int>(k); };
  PlanConvolutionDepthwise(lhs, rhs, out, plan);
  NHLO_TRY(PlanConvolutionAsDot(lhs, rhs, out, plan));
  fit(ConvKernel::kLargeWindow, ConvolutionLargeWindowFits(plan, rhs, out));
  PlanConvolutionPointwise(lhs, rhs, out, plan);
  fit(ConvKernel::kGrouped, ConvolutionGroupedFits(plan, rhs, out));
  PlanConvolutionViaGemm(lhs, rhs, out, plan);
  return plan;
}

Status KernelConvolution(const Step& b, const Buf& lhs, const Buf& rhs, const Buf& out) {
  NHLO_ASSIGN_OR_RETURN(ConvPlan plan,
                        PlanConvolution(DimsOf<ConvolutionDimensionNumbers>(b), *lhs.rec, *rhs.rec, *out.rec));
  return RunConvolution(plan, lhs, rhs, out);
}

Status RunConvolution(const ConvPlan& plan, const Buf& lhs, const Buf& rhs, const Buf& out) {
  // The fast kernels the plan found fitting, in ConvKernel order; the first that takes the
  // values computes the result.
  for (int k = 0; k < kConvKernelCount; ++k) {
    const auto kernel = static_cast<ConvKernel>(k);
    if (!plan.Fits(kernel)) continue;
    bool handled = false;
    switch (kernel) {
      case ConvKernel::kDepthwise: NHLO_TRY(ConvolutionDepthwise(plan, lhs, rhs, out, handled)); break;
      case ConvKernel::kAsDot: return ConvolutionAsDot(plan, lhs, rhs, out);
      case ConvKernel::kLargeWindow: NHLO_TRY(ConvolutionLargeWindow(plan, lhs, rhs, out, handled)); break;
      case ConvKernel::kPointwise: NHLO_TRY(ConvolutionPointwise(plan, lhs, rhs, out, handled)); break;
      case ConvKernel::kGrouped: NHLO_TRY(ConvolutionGrouped(plan, lhs, rhs, out, handled)); break;
      case ConvKernel::kViaGemm: NHLO_TRY(ConvolutionViaGemm(plan, lhs, rhs, out, handled)); break;
    }
    if (handled) return OkStatus();
  }
  const ConvDimLabels& l = *plan.labels;
  const std::vector<WindowDim>& window = plan.window;
  const size_t spatial = l.input_spatial.size();
  const int64_t fgc = plan.fgc, bgc = plan.bgc;
  const std::vector<int64_t>&ld = Dims(lhs), &kd = Dims(rhs), &od = Dims(out);
  const int64_t kernel_in = kd[l.kernel_input_feature], out_features = kd[l.kernel_output_feature];
  std::vector<int64_t> ls = RowMajorStrides(ld), ks = RowMajorStrides(kd);
  int64_t per_group_out = out_features / fgc, per_batch_group_out = out_features / bgc;
  int64_t batch_group_size = ld[l.input_batch] / bgc;
  // Integer results are clamped to the result type's range, not wrapped (unlike dot).
  int bits = BitWidth(out.type());
  auto convolve = [&](auto ot) -> Status {
    using C = typename decltype(ot)::Compute;
    // Operands are converted to the result type first, as for dot (read in place when they are
    // already f32 or f64 of the result type).
    ScratchVector<C> a_storage, k_storage;
    const C *a = nullptr, *k = nullptr;
    if constexpr (IsComplexCompute<C>::value) {
      NHLO_TRY(ComplexElements<typename C::value_type>(lhs, a_storage));
      NHLO_TRY(ComplexElements<typename C::value_type>(rhs, k_storage));
      a = a_storage.data(), k = k_storage.data();
    } else {
      NHLO_ASSIGN_OR_RETURN(a, ComputeElements<C>(lhs, out.type(), ot, a_storage));
      NHLO_ASSIGN_OR_RETURN(k, ComputeElements<C>(rhs, out.type(), ot, k_storage));
    }
    std::vector<int64_t> kernel_spatial_dims(spatial);
    for (size_t s = 0; s < spatial; ++s) kernel_spatial_dims[s] = kd[l.kernel_spatial[s]];
    ForEachIndex(od, [&](int64_t linear, const std::vector<int64_t>& o) {
      int64_t batch = o[l.output_batch], feature = o[l.output_feature];
      int64_t group = feature / per_group_out;
      int64_t in_batch = batch + (feature / per_batch_group_out) * batch_group_size;
      C acc = C(0);
      ForEachIndex(kernel_spatial_dims, [&](int64_t, const std::vector<int64_t>& kw) {
        int64_t lhs_base = in_batch * ls[l.input_batch];
        int64_t rhs_base = feature * ks[l.kernel_output_feature];
        for (size_t s = 0; s < spatial; ++s) {
          int64_t p = o[l.output_spatial[s]] * window[s].stride + kw[s] * window[s].window_dilation - window[s].pad_low;
          if (p < 0 || p % window[s].base_dilation != 0) return;
          p /= window[s].base_dilation;
          if (p >= ld[l.input_spatial[s]]) return;
          int64_t kpos = window[s].reversal ? kd[l.kernel_spatial[s]] - 1 - kw[s] : kw[s];
          lhs_base += p * ls[l.input_spatial[s]];
          rhs_base += kpos * ks[l.kernel_spatial[s]];
        }
        for (int64_t f = 0; f < kernel_in; ++f) {
          C x = a[lhs_base + (group * kernel_in + f) * ls[l.input_feature]];
          C w = k[rhs_base + f * ks[l.kernel_input_feature]];
          if constexpr (std::is_floating_point_v<C> || IsComplexCompute<C>::value)
            acc += x * w;
          else
            acc = C(static_cast<std::make_unsigned_t<C>>(acc) +
                    static_cast<std::make_unsigned_t<C>>(x) * static_cast<std::make_unsigned_t<C>>(w));
        }
      });
      if constexpr (std::is_integral_v<C>) {
        if (out.type() != PrimitiveType::kPred && bits < 64) {
          if constexpr (std::is_signed_v<C>) {
            C lo = -(C(1) << (bits - 1)), hi = (C(1) << (bits - 1)) - 1;
            acc = acc < lo ? lo : acc > hi ? hi : acc;
          } else {
            C hi = (C(1) << bits) - 1;
            acc = acc > hi ? hi : acc;
          }
        }
      }
      ot.Store(out.data, linear, acc);
    });
    return OkStatus();
  };
  // Complex convolutions run this loop too: each output element sums x * w over its taps in
  // std::complex, as the evaluator's does.
  if (out.type() == PrimitiveType::kC64) return convolve(ComplexTraits<float>{});
  if (out.type() == PrimitiveType::kC128) return convolve(ComplexTraits<double>{});
  return DispatchType(out.type(), convolve);
}

}  // namespace nhlo
