// SPDX-License-Identifier: Apache-2.0
// The ops that call a computation per element: reduce, map and sort (reduce-window:
// kernels_window.cc; scatter: kernels_scatter.cc).
// Each checks its operands, takes the native kernel when load recognised the computation
// (native_callees.h), and otherwise walks the elements in XLA's evaluator order and hands each
// element's scalars to the executor's call (CalleeCall), as the computation is written.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "interp/fused_groups.h"
#include "interp/kernel_plans.h"
#include "interp/native_callees.h"
#include "support/merge_sort.h"

namespace nhlo {

Status KernelReduce(const CalleePattern& pattern, const std::vector<Buf>& in, const std::vector<Buf>& init,
                    const std::vector<Buf>& out, const std::vector<int64_t>& reduce_dims, const CalleeCall& call) {
  NHLO_ASSIGN_OR_RETURN(ReducePlan plan, PlanReduce(RecordsOf(in), RecordsOf(init), RecordsOf(out), reduce_dims));
  return RunPlannedReduce(plan, pattern, in, init, out, call);
}

Status RunPlannedReduce(const ReducePlan& plan, const CalleePattern& pattern, const std::vector<Buf>& in,
                        const std::vector<Buf>& init, const std::vector<Buf>& out, const CalleeCall& call) {
  const size_t n = in.size();
  if (plan.accumulate != PrimitiveType::kInvalid) {
    // Mixed precision (a bf16 result of an f32 reducer): XLA's evaluator reduces in the reducer's
    // type and converts the result once (HandleReduce, ConvertToShape).
    std::vector<uint8_t> scratch(static_cast<size_t>(out[0].count() * HostByteSize(plan.accumulate)));
    BufferRecord rec = *out[0].rec;
    rec.type = plan.accumulate;
    rec.size = scratch.size();
    Buf reduced{&rec, scratch.data()};
    ReducePlan same_type = plan;
    same_type.accumulate = PrimitiveType::kInvalid;
    NHLO_TRY(RunPlannedReduce(same_type, pattern, in, init, {reduced}, call));
    RunStepSpan(plan.convert, {&reduced}, out[0]);
    return OkStatus();
  }
  if (n == 1 && pattern.op != ScalarOp::kNone) return KernelReduceNative(pattern, in[0], init[0], out[0], plan);
  if (n == 2 && pattern.arg_reduce)
    return KernelArgReduceNative(pattern, in[0], in[1], init[0], init[1], out[0], out[1], plan);
  std::vector<std::string> acc(n), elem(n);
  std::vector<const uint8_t*> args(2 * n);
  for (size_t i = 0; i < n; ++i) {
    acc[i].assign(static_cast<size_t>(HostByteSize(out[i].type())), '\0');
    elem[i].assign(static_cast<size_t>(HostByteSize(in[i].type())), '\0');
    args[i] = reinterpret_cast<const uint8_t*>(acc[i].data());
    args[n + i] = reinterpret_cast<const uint8_t*>(elem[i].data());
  }
  // Results in row-major order over the kept groups; each folds the reduced groups' elements in
  // row-major order (the evaluator's), both walked by an odometer of input offsets.
  int64_t kept_count = 1, reduced_count = 1;
  for (const StridedGroup& g : plan.kept) kept_count *= g.size;
  for (const StridedGroup& g : plan.reduced) reduced_count *= g.size;
  auto advance = [](const std::vector<StridedGroup>& groups, std::vector<int64_t>& index, int64_t& offset) {
    for (size_t k = groups.size(); k-- > 0;) {
      offset += groups[k].stride;
      if (++index[k] < groups[k].size) return;
      offset -= groups[k].stride * groups[k].size;
      index[k] = 0;
    }
  };
  std::vector<int64_t> kept_index(plan.kept.size(), 0), red_index(plan.reduced.size(), 0);
  int64_t base = 0;
  for (int64_t k = 0; k < kept_count; ++k, advance(plan.kept, kept_index, base)) {
    for (size_t i = 0; i < n; ++i) std::memcpy(acc[i].data(), init[i].data, acc[i].size());
    int64_t at = 0;
    for (int64_t m = 0; m < reduced_count; ++m, advance(plan.reduced, red_index, at)) {
      const int64_t src = base + at;
      for (size_t i = 0; i < n; ++i) std::memcpy(elem[i].data(), in[i].data + src * elem[i].size(), elem[i].size());
      NHLO_ASSIGN_OR_RETURN(const uint8_t* const* results, call(args.data()));
      TakeResults(results, acc);
    }
    for (size_t i = 0; i < n; ++i) std::memcpy(out[i].data + k * acc[i].size(), acc[i].data(), acc[i].size());
  }
  return OkStatus();
}

Result<MapPlan> PlanMap(const CalleePattern& pattern, const std::vector<const BufferRecord*>& in,
                        const BufferRecord& out) {
  for (const BufferRecord* x : in)
    if (x->ElementCount() != out.ElementCount()) return Status::Error("map operands and result differ in size");
  MapPlan plan;
  if (pattern.op != ScalarOp::kNone && in.size() == 2) {  // root = op(p0, p1): the elementwise kernel
    plan.swapped = pattern.swapped;
    NHLO_ASSIGN_OR_RETURN(plan.native,
                          BinaryStepSpan(ScalarOpcode(pattern.op), *in[plan.swapped], *in[!plan.swapped], out));
  }
  return plan;
}

Status RunMap(const MapPlan& plan, const std::vector<Buf>& in, const Buf& out, const CalleeCall& call) {
  if (plan.native.fn) {
    RunStepSpan(plan.native, {&in[plan.swapped], &in[!plan.swapped]}, out);
    return OkStatus();
  }
  if (plan.lifted) {
    RunLiftedCallee(*plan.lifted, in, out);
    return OkStatus();
  }
  std::vector<std::string> elems(in.size());
  std::vector<const uint8_t*> args(in.size());
  for (size_t k = 0; k < in.size(); ++k) {
    elems[k].assign(static_cast<size_t>(HostByteSize(in[k].type())), '\0');
    args[k] = reinterpret_cast<const uint8_t*>(elems[k].data());
  }
  int out_size = HostByteSize(out.type());
  for (int64_t i = 0; i < out.count(); ++i) {
    for (size_t k = 0; k < in.size(); ++k)
      std::memcpy(elems[k].data(), in[k].data + i * elems[k].size(), elems[k].size());
    NHLO_ASSIGN_OR_RETURN(const uint8_t* const* results, call(args.data()));
    std::memmove(out.data + i * out_size, results[0], out_size);
  }
  return OkStatus();
}

Status KernelMap(const CalleePattern& pattern, const std::vector<Buf>& in, const Buf& out, const CalleeCall& call) {
  NHLO_ASSIGN_OR_RETURN(MapPlan plan, PlanMap(pattern, RecordsOf(in), *out.rec));
  return RunMap(plan, in, out, call);
}

Result<SortPlan> PlanSort(const std::vector<const BufferRecord*>& in, const std::vector<const BufferRecord*>& out,
                          int64_t d, const CalleePattern* pattern) {
  const size_t n = in.size();
  if (n == 0 || out.size() != n) return Status::Error("sort operands and results must have one shape");
  const std::vector<int64_t>& shape = in[0]->dims;
  if (d < 0 || d >= static_cast<int64_t>(shape.size())) return Status::Error("sort dimension is out of range");
  for (size_t k = 0; k < n; ++k)
    if (in[k]->dims != shape || out[k]->dims != shape || in[k]->type != out[k]->type)
      return Status::Error("sort operands and results must have one shape");
  SortPlan plan;
  plan.dim = d;
  plan.len = shape[d];
  plan.stride = RowMajorStrides(shape)[d];
  plan.total = in[0]->ElementCount();
  for (const BufferRecord* r : in) plan.sizes.push_back(HostByteSize(r->type));
  if (pattern && pattern->compare_known && plan.len <= int64_t{UINT32_MAX}) {
    if (pattern->key_operand >= n) return Status::Error("sort comparator names an operand the sort does not have");
    plan.native = true;
    plan.key = PlanSortKey(*pattern, in[pattern->key_operand]->type, n, plan.len);
  }
  return plan;
}

Status KernelSort(const CalleePattern& pattern, const std::vector<Buf>& in, const std::vector<Buf>& out, int64_t d,
                  const CalleeCall& less) {
  NHLO_ASSIGN_OR_RETURN(SortPlan plan, PlanSort(RecordsOf(in), RecordsOf(out), d, &pattern));
  return RunPlannedSort(plan, in, out, less);
}

Status RunPlannedSort(const SortPlan& plan, const std::vector<Buf>& in, const std::vector<Buf>& out,
                      const CalleeCall& less) {
  const size_t n = in.size();
  if (plan.native) return KernelSortNative(plan, in, out);
  const int64_t len = plan.len, stride = plan.stride, total = plan.total;
  std::vector<int64_t> order(static_cast<size_t>(len));
  std::vector<const uint8_t*> args(2 * n);
  Status failure;
  for (int64_t base = 0; base < total; ++base) {
    if ((base / stride) % len != 0) continue;  // visit each line along `d` once, from its start
    for (int64_t i = 0; i < len; ++i) order[i] = i;
    StableMergeSort(order, [&](int64_t x, int64_t y) {
      if (!failure.ok()) return false;
      for (size_t k = 0; k < n; ++k) {
        int size = HostByteSize(in[k].type());
        args[2 * k] = in[k].data + (base + x * stride) * size;
        args[2 * k + 1] = in[k].data + (base + y * stride) * size;
      }
      Result<const uint8_t* const*> result = less(args.data());
      if (!result.ok()) {
        failure = result.status();
        return false;
      }
      return (*result)[0][0] != 0;
    });
    NHLO_TRY(failure);
    for (size_t k = 0; k < n; ++k) {
      int size = HostByteSize(in[k].type());
      for (int64_t i = 0; i < len; ++i)
        std::memcpy(out[k].data + (base + i * stride) * size, in[k].data + (base + order[i] * stride) * size, size);
    }
  }
  return OkStatus();
}

}  // namespace nhlo
