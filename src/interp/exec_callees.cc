// SPDX-License-Identifier: Apache-2.0
// The ops that call a computation per element: reduce, map, sort and reduce-window (scatter:
// kernels_scatter.cc).
// Each checks its operands, takes the native kernel when load recognised the computation
// (native_callees.h), and otherwise walks the elements in XLA's evaluator order and hands each
// element's scalars to the executor's call (CalleeCall), as the computation is written.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "interp/kernel_plans.h"
#include "interp/native_callees.h"
#include "support/merge_sort.h"

namespace nhlo {
namespace {

// The result leaves a call returned, copied into `acc` (their sizes checked by the executor).
void TakeResults(const uint8_t* const* results, std::vector<std::string>& acc) {
  for (size_t k = 0; k < acc.size(); ++k) std::memmove(acc[k].data(), results[k], acc[k].size());
}

}  // namespace

Status KernelReduce(const CalleePattern& pattern, const std::vector<Buf>& in, const std::vector<Buf>& init,
                    const std::vector<Buf>& out, const std::vector<int64_t>& reduce_dims, const CalleeCall& call) {
  std::vector<const BufferRecord*> in_records, init_records, out_records;
  for (const Buf& b : in) in_records.push_back(b.rec);
  for (const Buf& b : init) init_records.push_back(b.rec);
  for (const Buf& b : out) out_records.push_back(b.rec);
  NHLO_ASSIGN_OR_RETURN(ReducePlan plan, PlanReduce(in_records, init_records, out_records, reduce_dims));
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
    return KernelConvert(reduced, out[0]);
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

Status KernelMap(const CalleePattern& pattern, const std::vector<Buf>& in, const Buf& out, const CalleeCall& call) {
  for (const Buf& x : in)
    if (x.count() != out.count()) return Status::Error("map operands and result differ in size");
  if (pattern.op != ScalarOp::kNone && in.size() == 2)  // root = op(p0, p1): the elementwise kernel
    return KernelBinary(ScalarOpcode(pattern.op), in[pattern.swapped], in[!pattern.swapped], out);
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

Status KernelSort(const CalleePattern& pattern, const std::vector<Buf>& in, const std::vector<Buf>& out, int64_t d,
                  const CalleeCall& less) {
  size_t n = in.size();
  const std::vector<int64_t>& shape = Dims(in[0]);
  if (d < 0 || d >= static_cast<int64_t>(shape.size())) return Status::Error("sort dimension is out of range");
  for (size_t k = 0; k < n; ++k)
    if (Dims(in[k]) != shape || Dims(out[k]) != shape || in[k].type() != out[k].type())
      return Status::Error("sort operands and results must have one shape");
  if (pattern.compare_known && shape[d] <= int64_t{UINT32_MAX}) return KernelSortNative(pattern, in, out, d);
  std::vector<int64_t> strides = RowMajorStrides(shape);
  int64_t len = shape[d], stride = strides[d], total = in[0].count();
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

Status KernelReduceWindow(const Step& s, const std::vector<Buf>& in, const std::vector<Buf>& init,
                          const std::vector<Buf>& out, const CalleeCall& call) {
  size_t n = in.size();
  const std::vector<int64_t>& shape = Dims(in[0]);
  std::vector<WindowDim> window;
  if (const AttrRecord* w = s.Find(AttrId::kWindow)) window = w->window();
  if (window.empty()) window.assign(shape.size(), WindowDim{});
  if (window.size() != shape.size()) return Status::Error("reduce-window window rank does not match the input");
  for (size_t k = 0; k < n; ++k)
    if (Dims(in[k]) != shape || init[k].count() != 1 || init[k].type() != out[k].type() ||
        Dims(out[k]) != Dims(out[0]) || out[k].rank() != shape.size())
      return Status::Error("reduce-window operands, init values and results do not match");
  for (const WindowDim& w : window)
    if (w.size < 1 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1)
      return Status::Error("reduce-window has an invalid window");
  std::vector<int64_t> in_strides = RowMajorStrides(shape);
  std::vector<std::string> acc(n);
  std::vector<const uint8_t*> args(2 * n);
  // Per dimension, the input indices the window meets at this output position, in window order.
  // Found by walking the shorter of the window and the input, so a window of 2^31 elements over
  // a small input (or the reverse) costs what the overlap costs, not the window's size.
  std::vector<std::vector<int64_t>> hits(shape.size());
  bool native = n == 1 && s.pattern.op != ScalarOp::kNone && in[0].type() == out[0].type();
  std::vector<size_t> at(shape.size());
  Status failure;
  ForEachIndex(Dims(out[0]), [&](int64_t linear, const std::vector<int64_t>& o) {
    if (!failure.ok()) return;
    for (size_t k = 0; k < n; ++k)
      acc[k].assign(reinterpret_cast<const char*>(init[k].data), HostByteSize(out[k].type()));
    bool empty = false;
    for (size_t dd = 0; dd < shape.size(); ++dd) {
      const WindowDim& w = window[dd];
      hits[dd].clear();
      // In 128 bits: strides, dilations and pads come from the file and may be near 2^63.
      __int128 origin = __int128{o[dd]} * w.stride - w.pad_low;  // window element 0 in the dilated input
      if (w.size <= shape[dd]) {
        for (int64_t wi = 0; wi < w.size; ++wi) {
          __int128 p = origin + __int128{wi} * w.window_dilation;
          if (p >= 0 && p % w.base_dilation == 0 && p / w.base_dilation < shape[dd])
            hits[dd].push_back(static_cast<int64_t>(p / w.base_dilation));
        }
      } else {
        for (int64_t j = 0; j < shape[dd]; ++j) {
          __int128 offset = __int128{j} * w.base_dilation - origin;  // = wi * window_dilation
          if (offset >= 0 && offset % w.window_dilation == 0 && offset / w.window_dilation < w.size)
            hits[dd].push_back(j);
        }
      }
      empty |= hits[dd].empty();
    }
    std::fill(at.begin(), at.end(), 0);
    for (bool more = !empty; more && failure.ok();) {
      int64_t src = 0;
      for (size_t dd = 0; dd < shape.size(); ++dd) src += hits[dd][at[dd]] * in_strides[dd];
      // The next window element, the last dimension fastest (the order of the window).
      more = false;
      for (size_t dd = shape.size(); dd-- > 0;) {
        if (++at[dd] < hits[dd].size()) {
          more = true;
          break;
        }
        at[dd] = 0;
      }
      if (native && ApplyScalarOp(s.pattern, in[0].type(), reinterpret_cast<uint8_t*>(acc[0].data()),
                                  in[0].data + src * acc[0].size()))
        continue;
      for (size_t k = 0; k < n; ++k) {
        args[k] = reinterpret_cast<const uint8_t*>(acc[k].data());
        args[n + k] = in[k].data + src * HostByteSize(in[k].type());
      }
      Result<const uint8_t* const*> results = call(args.data());
      if (!results.ok()) {
        failure = results.status();
        return;
      }
      TakeResults(*results, acc);
    }
    for (size_t k = 0; k < n; ++k) std::memcpy(out[k].data + linear * acc[k].size(), acc[k].data(), acc[k].size());
  });
  return failure;
}

}  // namespace nhlo
