// SPDX-License-Identifier: Apache-2.0
// scatter(inputs..., indices, updates...): the result starts as the inputs, and each update
// element, in row-major order over the updates, is combined with the result element it lands
// on by the to_apply computation (or the scalar op load recognised in it). An update whose
// window does not fit in the operand is skipped, as XLA's evaluator does.
//
// CheckScatter holds every check on the records. A one-input scatter of static shape is also
// planned at load (PlanScatter): strides over the update's index give each update element's
// result offset and the position of its index vector, so the run reads the starts, clamps
// nothing (an out-of-range window is skipped) and combines; a row of the update's last
// dimension, when that is a window dimension, shares one index vector. Variadic scatters, and
// those whose scatter_dims_to_operand_dims repeat a dimension or name a batching one (a later
// start overrides an earlier one there), walk every index as the evaluator does.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "interp/kernel_plans.h"
#include "interp/native_callees.h"

namespace nhlo {
namespace {

// The checks of a scatter on its records (inputs, indices, updates and results, one of each
// per input); operand_window gets the operand dimensions the update window covers, in order.
Status CheckScatter(const ScatterDimensionNumbers& dims, const std::vector<const BufferRecord*>& in,
                    const BufferRecord& indices, const std::vector<const BufferRecord*>& upd,
                    const std::vector<const BufferRecord*>& out, std::vector<int64_t>& operand_window) {
  const DimIndexList window_dims = dims.update_window_dims;
  const DimIndexList inserted = dims.inserted_window_dims;
  const DimIndexList to_operand = dims.scatter_dims_to_operand_dims;
  // Batching dimensions (StableHLO's scatter): input dimension input_batching[i] is indexed by
  // the update's position along indices dimension indices_batching[i].
  const DimIndexList input_batching = dims.input_batching_dims;
  const DimIndexList indices_batching = dims.scatter_indices_batching_dims;
  const std::vector<int64_t>& shape = in[0]->dims;
  const std::vector<int64_t>& udims = upd[0]->dims;
  const std::vector<int64_t>& idims = indices.dims;
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i]->dims != shape || out[i]->dims != shape || upd[i]->dims != udims || in[i]->type != out[i]->type ||
        upd[i]->type != in[i]->type)
      return Status::Error("scatter inputs, updates and results do not match");
  if (!IsInteger(indices.type)) return Status::Error("scatter indices must be integers");
  const int64_t ivd = dims.index_vector_dim;
  if (ivd < 0 || ivd > static_cast<int64_t>(idims.size()))
    return Status::Error("scatter index_vector_dim is out of range");
  const int64_t index_len = ivd == static_cast<int64_t>(idims.size()) ? 1 : idims[ivd];
  if (static_cast<int64_t>(to_operand.size()) != index_len)
    return Status::Error("scatter_dims_to_operand_dims does not match the index vector");
  if (input_batching.size() != indices_batching.size())
    return Status::Error("scatter has " + std::to_string(input_batching.size()) + " input batching dimensions and " +
                         std::to_string(indices_batching.size()) + " scatter indices batching dimensions");
  for (size_t i = 0; i < input_batching.size(); ++i) {
    const int64_t od = input_batching[i], id = indices_batching[i];
    if (od < 0 || od >= static_cast<int64_t>(shape.size()) || id < 0 || id >= static_cast<int64_t>(idims.size()) ||
        id == ivd || shape[od] != idims[id] || Contains(inserted, od))
      return Status::Error("scatter batching dimensions do not match the operand and the indices");
  }
  operand_window.clear();
  for (size_t d = 0; d < shape.size(); ++d)
    if (!Contains(inserted, static_cast<int64_t>(d)) && !Contains(input_batching, static_cast<int64_t>(d)))
      operand_window.push_back(static_cast<int64_t>(d));
  if (operand_window.size() != window_dims.size())
    return Status::Error("scatter window dimensions do not match the operand");
  std::vector<bool> is_window(udims.size(), false);
  for (int64_t d : window_dims) {
    if (d < 0 || d >= static_cast<int64_t>(udims.size()))
      return Status::Error("scatter update_window_dims is out of range");
    is_window[d] = true;
  }
  for (int64_t d : to_operand)
    if (d < 0 || d >= static_cast<int64_t>(shape.size()))
      return Status::Error("scatter_dims_to_operand_dims is out of range");
  // The updates' scatter dimensions (those not in update_window_dims) are the indices' dimensions
  // other than index_vector_dim, in order and size. A bundle file may claim any shapes, and the
  // run reads indices at those positions (a fuzz-bundle finding read past them).
  for (size_t d = 0, bi = 0; d < udims.size(); ++d) {
    if (is_window[d]) continue;
    if (static_cast<int64_t>(bi) == ivd) ++bi;
    if (bi >= idims.size() || udims[d] != idims[bi])
      return Status::Error("scatter update dimension " + std::to_string(d) + " does not match its indices");
    ++bi;
  }
  return OkStatus();
}

// The plan of a one-input scatter that passed CheckScatter.
Result<ScatterPlan> PlanCheckedScatter(const ScatterDimensionNumbers& dims, const BufferRecord& in,
                                       const BufferRecord& indices, const BufferRecord& upd,
                                       const std::vector<int64_t>& operand_window) {
  const DimIndexList window_dims = dims.update_window_dims;
  const DimIndexList to_operand = dims.scatter_dims_to_operand_dims;
  const DimIndexList input_batching = dims.input_batching_dims;
  const DimIndexList indices_batching = dims.scatter_indices_batching_dims;
  const std::vector<int64_t>& shape = in.dims;
  const std::vector<int64_t>& udims = upd.dims;
  const std::vector<int64_t>& idims = indices.dims;
  const int64_t ivd = dims.index_vector_dim;
  std::vector<bool> starts_from_index(shape.size(), false);
  for (size_t i = 0; i < input_batching.size(); ++i)
    if (Contains(input_batching.subspan(i + 1), input_batching[i]))
      return Status::Error("scatter input_batching_dims repeats a dimension: the general path");
  for (int64_t d : to_operand) {
    if (starts_from_index[d] || Contains(input_batching, d))
      return Status::Error("scatter_dims_to_operand_dims repeats a dimension: the general path");
    starts_from_index[d] = true;
  }
  const std::vector<int64_t> strides = RowMajorStrides(shape), istrides = RowMajorStrides(idims);
  std::vector<int64_t> window_size(shape.size(), 1);
  for (size_t k = 0; k < operand_window.size(); ++k) window_size[operand_window[k]] = udims[window_dims[k]];
  ScatterPlan plan;
  plan.element_bytes = HostByteSize(in.type);
  plan.bytes = static_cast<int64_t>(in.size);
  plan.update_dims = udims;
  plan.dst_stride.assign(udims.size(), 0);
  plan.index_stride.assign(udims.size(), 0);
  // Summed, as the general walk sums each window entry's offset (a repeated entry included).
  for (size_t k = 0; k < operand_window.size(); ++k) plan.dst_stride[window_dims[k]] += strides[operand_window[k]];
  for (size_t d = 0, bi = 0; d < udims.size(); ++d) {
    if (Contains(window_dims, static_cast<int64_t>(d))) continue;
    if (static_cast<int64_t>(bi) == ivd) ++bi;
    plan.index_stride[d] = istrides[bi];
    for (size_t i = 0; i < indices_batching.size(); ++i)
      if (indices_batching[i] == static_cast<int64_t>(bi)) plan.dst_stride[d] += strides[input_batching[i]];
    ++bi;
  }
  plan.index_vector_stride = ivd < static_cast<int64_t>(idims.size()) ? istrides[ivd] : 0;
  // A dimension whose start is always 0 (neither indexed nor batching) and whose window is
  // wider than the operand skips every update; so does an indexed one with no valid start.
  for (size_t d = 0; d < shape.size(); ++d)
    if (window_size[d] > shape[d] && !Contains(input_batching, static_cast<int64_t>(d))) plan.skips_all = true;
  for (int64_t d : to_operand) {
    plan.start_stride.push_back(strides[d]);
    plan.start_limit.push_back(shape[d] - window_size[d]);
  }
  plan.row_window = !udims.empty() && Contains(window_dims, static_cast<int64_t>(udims.size()) - 1);
  return plan;
}

// The walk of a scatter that passed CheckScatter.
Result<ScatterWalkPlan> WalkOfChecked(const ScatterDimensionNumbers& dims, const BufferRecord& in,
                                      const BufferRecord& indices, const BufferRecord& upd,
                                      const std::vector<int64_t>& operand_window) {
  const DimIndexList window_dims = dims.update_window_dims;
  const std::vector<int64_t>& shape = in.dims;
  const std::vector<int64_t>& udims = upd.dims;
  const std::vector<int64_t>& idims = indices.dims;
  const int64_t ivd = dims.index_vector_dim;
  ScatterWalkPlan plan;
  plan.operand_window = operand_window;
  plan.index_len = ivd == static_cast<int64_t>(idims.size()) ? 1 : idims[ivd];
  plan.is_window.assign(udims.size(), false);
  for (int64_t d : window_dims) plan.is_window[d] = true;
  plan.strides = RowMajorStrides(shape);
  plan.istrides = RowMajorStrides(idims);
  plan.window_size.assign(shape.size(), 1);
  for (size_t k = 0; k < operand_window.size(); ++k) plan.window_size[operand_window[k]] = udims[window_dims[k]];
  return plan;
}

}  // namespace

Result<ScatterPlan> PlanScatter(const Step& step, const std::vector<const BufferRecord*>& ops,
                                const BufferRecord& out) {
  if (ops.size() != 3) return Status::Error("only a one-input scatter is planned at load");
  const ScatterDimensionNumbers& dims = DimsOf<ScatterDimensionNumbers>(step);
  std::vector<int64_t> operand_window;
  NHLO_TRY(CheckScatter(dims, {ops[0]}, *ops[1], {ops[2]}, {&out}, operand_window));
  return PlanCheckedScatter(dims, *ops[0], *ops[1], *ops[2], operand_window);
}

Status RunPlannedScatter(const ScatterPlan& plan, const CalleePattern& pattern, const Buf& in, const Buf& indices,
                         const Buf& upd, const Buf& out, const CalleeCall& call) {
  if (out.data != in.data) std::memmove(out.data, in.data, static_cast<size_t>(plan.bytes));
  int64_t count = 1;
  for (int64_t d : plan.update_dims) count *= d;
  if (plan.skips_all || count == 0) return OkStatus();
  const size_t inner = plan.row_window ? 1 : 0;
  const int64_t row_length = plan.row_window ? plan.update_dims.back() : 1;
  const int64_t row_stride = plan.row_window ? plan.dst_stride.back() : 0;
  const size_t element_size = static_cast<size_t>(plan.element_bytes);
  const int index_size = HostByteSize(indices.type());
  const PrimitiveType type = out.type();
  const bool native = pattern.op != ScalarOp::kNone;
  const ScalarApplyFn apply = native ? ScalarApplyFor(pattern, type) : nullptr;  // resolved once, not per element
  std::string cur(element_size, '\0'), val(element_size, '\0');
  const uint8_t* args[2] = {reinterpret_cast<const uint8_t*>(cur.data()), reinterpret_cast<const uint8_t*>(val.data())};
  Status failure;
  int64_t first = 0;  // the row's first update element
  ForEachRow(plan.update_dims, plan.dst_stride, plan.index_stride, inner, 0, count / row_length,
             [&](int64_t dst, int64_t index_pos) {
               const int64_t row_first = first;
               first += row_length;
               if (!failure.ok()) return;
               for (size_t k = 0; k < plan.start_stride.size(); ++k) {
                 const int64_t start = LoadIndex(
                     indices.type(),
                     indices.data + (index_pos + static_cast<int64_t>(k) * plan.index_vector_stride) * index_size);
                 if (start < 0 || start > plan.start_limit[k]) return;  // the window does not fit: skipped
                 dst += start * plan.start_stride[k];
               }
               for (int64_t i = 0; i < row_length; ++i) {
                 uint8_t* at = out.data + static_cast<size_t>(dst + i * row_stride) * element_size;
                 const uint8_t* x = upd.data + static_cast<size_t>(row_first + i) * element_size;
                 if (apply) {
                   apply(at, x);
                   continue;
                 }
                 if (native && ApplyScalarOp(pattern, type, at, x)) continue;
                 std::memcpy(cur.data(), at, element_size);
                 std::memcpy(val.data(), x, element_size);
                 Result<const uint8_t* const*> results = call(args);
                 if (!results.ok()) {
                   failure = results.status();
                   return;
                 }
                 std::memmove(at, (*results)[0], element_size);
               }
             });
  return failure;
}

Status KernelScatter(const Step& s, const std::vector<Buf>& in, const Buf& indices, const std::vector<Buf>& upd,
                     const std::vector<Buf>& out, const CalleeCall& call) {
  const size_t n = in.size();
  const ScatterDimensionNumbers& dims = DimsOf<ScatterDimensionNumbers>(s);
  std::vector<int64_t> operand_window;
  NHLO_TRY(CheckScatter(dims, RecordsOf(in), *indices.rec, RecordsOf(upd), RecordsOf(out), operand_window));
  if (n == 1)
    if (Result<ScatterPlan> plan = PlanCheckedScatter(dims, *in[0].rec, *indices.rec, *upd[0].rec, operand_window);
        plan.ok())
      return RunPlannedScatter(*plan, s.pattern, in[0], indices, upd[0], out[0], call);
  NHLO_ASSIGN_OR_RETURN(ScatterWalkPlan walk,
                        WalkOfChecked(dims, *in[0].rec, *indices.rec, *upd[0].rec, operand_window));
  return RunScatterWalk(s, walk, in, indices, upd, out, call);
}

Result<ScatterWalkPlan> PlanScatterWalk(const Step& step, const std::vector<const BufferRecord*>& ops,
                                        const std::vector<const BufferRecord*>& out) {
  const size_t n = (ops.size() - 1) / 2;
  if (n == 0 || ops.size() != 2 * n + 1 || out.size() != n)
    return Status::Error("scatter takes inputs, indices and as many updates");
  const ScatterDimensionNumbers& dims = DimsOf<ScatterDimensionNumbers>(step);
  const std::vector<const BufferRecord*> in(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(n)),
      upd(ops.begin() + static_cast<std::ptrdiff_t>(n) + 1, ops.end());
  std::vector<int64_t> operand_window;
  NHLO_TRY(CheckScatter(dims, in, *ops[n], upd, out, operand_window));
  return WalkOfChecked(dims, *in[0], *ops[n], *upd[0], operand_window);
}

// The general walk: every update element's start vector built in full, the later entries of a
// repeated dimension overriding the earlier ones, the batching dimensions last.
Status RunScatterWalk(const Step& s, const ScatterWalkPlan& plan, const std::vector<Buf>& in, const Buf& indices,
                      const std::vector<Buf>& upd, const std::vector<Buf>& out, const CalleeCall& call) {
  const size_t n = in.size();
  const ScatterDimensionNumbers& dims = DimsOf<ScatterDimensionNumbers>(s);
  const DimIndexList window_dims = dims.update_window_dims;
  const DimIndexList to_operand = dims.scatter_dims_to_operand_dims;
  const DimIndexList input_batching = dims.input_batching_dims;
  const DimIndexList indices_batching = dims.scatter_indices_batching_dims;
  const std::vector<int64_t>& shape = Dims(in[0]);
  const std::vector<int64_t>& udims = Dims(upd[0]);
  const std::vector<int64_t>& idims = Dims(indices);
  const int64_t ivd = dims.index_vector_dim;
  const int64_t index_len = plan.index_len;
  const std::vector<bool>& is_window = plan.is_window;
  const std::vector<int64_t>& operand_window = plan.operand_window;
  const std::vector<int64_t>& window_size = plan.window_size;
  const std::vector<int64_t>& strides = plan.strides;
  const std::vector<int64_t>& istrides = plan.istrides;
  for (size_t i = 0; i < n; ++i)
    if (out[i].data != in[i].data) std::memmove(out[i].data, in[i].data, in[i].rec->size);
  std::vector<int64_t> batch(idims.size()), start(shape.size());
  std::vector<const uint8_t*> args(2 * n);
  std::vector<std::string> cur(n), val(n);
  for (size_t i = 0; i < n; ++i) {
    cur[i].assign(static_cast<size_t>(HostByteSize(out[i].type())), '\0');
    val[i].assign(static_cast<size_t>(HostByteSize(out[i].type())), '\0');
    args[i] = reinterpret_cast<const uint8_t*>(cur[i].data());
    args[n + i] = reinterpret_cast<const uint8_t*>(val[i].data());
  }
  const bool native = n == 1 && s.pattern.op != ScalarOp::kNone;
  const int element_size = HostByteSize(out[0].type()), index_size = HostByteSize(indices.type());
  Status failure;
  ForEachIndex(udims, [&](int64_t linear, const std::vector<int64_t>& u) {
    if (!failure.ok()) return;
    size_t bi = 0;
    for (size_t d = 0; d < u.size(); ++d) {
      if (is_window[d]) continue;
      if (static_cast<int64_t>(bi) == ivd) ++bi;
      if (bi < batch.size()) batch[bi++] = u[d];
    }
    std::fill(start.begin(), start.end(), 0);
    for (int64_t k = 0; k < index_len; ++k) {
      int64_t pos = 0;
      for (size_t d = 0; d < idims.size(); ++d) pos += (static_cast<int64_t>(d) == ivd ? k : batch[d]) * istrides[d];
      start[to_operand[k]] = LoadIndex(indices.type(), indices.data + pos * index_size);
    }
    for (size_t i = 0; i < input_batching.size(); ++i) start[input_batching[i]] = batch[indices_batching[i]];
    int64_t dst = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      // Window out of bounds: skipped. Written so that no index, however large, overflows.
      if (start[d] < 0 || start[d] > shape[d] - window_size[d]) return;
      dst += start[d] * strides[d];
    }
    for (size_t k = 0; k < operand_window.size(); ++k) dst += u[window_dims[k]] * strides[operand_window[k]];
    if (native &&
        ApplyScalarOp(s.pattern, out[0].type(), out[0].data + dst * element_size, upd[0].data + linear * element_size))
      return;
    for (size_t i = 0; i < n; ++i) {
      size_t size = cur[i].size();
      std::memcpy(cur[i].data(), out[i].data + dst * size, size);
      std::memcpy(val[i].data(), upd[i].data + linear * size, size);
    }
    Result<const uint8_t* const*> results = call(args.data());
    if (!results.ok()) {
      failure = results.status();
      return;
    }
    for (size_t i = 0; i < n; ++i) std::memmove(out[i].data + dst * cur[i].size(), (*results)[i], cur[i].size());
  });
  return failure;
}

}  // namespace nhlo
