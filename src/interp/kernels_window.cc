// SPDX-License-Identifier: Apache-2.0
// The window ops, with XLA's HloEvaluator rules.
//
// reduce-window(inputs..., inits...): each result element folds the in-bounds, non-hole input
// elements of its window, in row-major window order, into the init values.
//
// select-and-scatter(operand, source, init): the result starts as the init value everywhere;
// for each source element its window over the operand is walked in row-major order (padding
// and base-dilation holes skipped), the first element in bounds is selected, and a later
// element e replaces the selection when select(selected, e) is false; then the selected result
// element becomes scatter(source value, current result value). A window with no element in
// bounds scatters nothing. The computations run through the executor's callbacks.
//
// Both are checked and given their reach (kernel_plans.h: per dimension and position, the input
// offsets the window meets) at load; a step without a plan checks at its run and finds each
// window's reach as it meets it.
#include <algorithm>
#include <cstring>
#include <string>

#include "interp/kernel_plans.h"
#include "interp/kernels.h"
#include "interp/native_callees.h"

namespace nhlo {
namespace {

using Wide = __int128;

std::vector<WindowDim> WindowOf(const Step& s, size_t rank) {
  std::vector<WindowDim> window;
  if (const AttrRecord* w = s.Find(AttrId::kWindow)) window = w->window();
  if (window.empty()) window.assign(rank, WindowDim{});
  return window;
}

Status CheckReduceWindow(const std::vector<WindowDim>& window, const std::vector<const BufferRecord*>& in,
                         const std::vector<const BufferRecord*>& init, const std::vector<const BufferRecord*>& out) {
  const size_t n = in.size();
  if (n == 0 || init.size() != n || out.size() != n)
    return Status::Error("reduce-window operands, init values and results do not match");
  const std::vector<int64_t>& shape = in[0]->dims;
  if (window.size() != shape.size()) return Status::Error("reduce-window window rank does not match the input");
  for (size_t k = 0; k < n; ++k)
    if (in[k]->dims != shape || init[k]->ElementCount() != 1 || init[k]->type != out[k]->type ||
        out[k]->dims != out[0]->dims || out[k]->dims.size() != shape.size())
      return Status::Error("reduce-window operands, init values and results do not match");
  for (const WindowDim& w : window)
    if (w.size < 1 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1)
      return Status::Error("reduce-window has an invalid window");
  return OkStatus();
}

Status CheckSelectAndScatter(const std::vector<WindowDim>& window, const BufferRecord& operand,
                             const BufferRecord& source, const BufferRecord& init, const BufferRecord& out) {
  const std::vector<int64_t>& shape = operand.dims;
  const PrimitiveType t = operand.type;
  if (source.type != t || init.type != t || out.type != t || init.ElementCount() != 1 || out.dims != shape)
    return Status::Error("select-and-scatter operand, source, init value and result do not match");
  if (window.size() != shape.size() || source.dims.size() != shape.size())
    return Status::Error("select-and-scatter window rank does not match the operand");
  for (const WindowDim& w : window)
    if (w.size < 1 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1)
      return Status::Error("select-and-scatter has an invalid window");
  // The source has the shape of the window positions (as reduce-window's result would). In 128
  // bits: a bundle file may carry any window, and the positions o * stride + k * dilation -
  // pad_low formed by the walk must fit in 64 bits too.
  for (size_t d = 0; d < shape.size(); ++d) {
    const WindowDim& w = window[d];
    Wide padded = (shape[d] == 0 ? 0 : Wide{shape[d] - 1} * w.base_dilation + 1) + w.pad_low + w.pad_high;
    Wide span = Wide{w.size - 1} * w.window_dilation + 1;
    Wide positions = padded < span ? 0 : (padded - span) / w.stride + 1;
    if (source.dims[d] != positions)
      return Status::Error("select-and-scatter source dimension " + std::to_string(d) + " is " +
                           std::to_string(source.dims[d]) + ", which does not match its window's positions");
    Wide far = Wide{std::max<int64_t>(source.dims[d] - 1, 0)} * w.stride + (span - 1) - w.pad_low;
    if (far > INT64_MAX || -Wide{w.pad_low} > INT64_MAX)
      return Status::Error("select-and-scatter window positions overflow 64 bits");
  }
  return OkStatus();
}

// Appends the offsets (index * stride) of the elements of an input dimension of `extent` that
// the window `w` at `position` meets, in window order. Found by walking the shorter of the
// window and the input, so a window of 2^31 elements over a small input (or the reverse) costs
// what the overlap costs. In 128 bits: strides, dilations and pads come from the file and may be
// near 2^63.
void AppendReach(const WindowDim& w, int64_t extent, int64_t position, int64_t stride, std::vector<int64_t>& offsets) {
  const Wide origin = Wide{position} * w.stride - w.pad_low;  // window element 0 in the dilated input
  if (w.size <= extent) {
    for (int64_t wi = 0; wi < w.size; ++wi) {
      const Wide p = origin + Wide{wi} * w.window_dilation;
      if (p >= 0 && p % w.base_dilation == 0 && p / w.base_dilation < extent)
        offsets.push_back(static_cast<int64_t>(p / w.base_dilation) * stride);
    }
    return;
  }
  for (int64_t j = 0; j < extent; ++j) {
    const Wide offset = Wide{j} * w.base_dilation - origin;  // = wi * window_dilation
    if (offset >= 0 && offset % w.window_dilation == 0 && offset / w.window_dilation < w.size)
      offsets.push_back(j * stride);
  }
}

// The reach of every position of `positions` (a checked window over `shape`), or an error when
// it would hold more than kMaxWindowReach offsets.
Result<WindowReach> Reach(const std::vector<WindowDim>& window, const std::vector<int64_t>& shape,
                          const std::vector<int64_t>& positions) {
  Wide entries = 0;
  for (size_t d = 0; d < shape.size(); ++d) entries += Wide{positions[d]} * std::min<int64_t>(window[d].size, shape[d]);
  if (entries > kMaxWindowReach) return Status::Error("the windows' reach is too large to plan");
  const std::vector<int64_t> strides = RowMajorStrides(shape);
  WindowReach reach;
  reach.positions = positions;
  reach.first.resize(shape.size());
  reach.offsets.resize(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    reach.first[d].reserve(static_cast<size_t>(positions[d]) + 1);
    for (int64_t o = 0; o < positions[d]; ++o) {
      reach.first[d].push_back(static_cast<int64_t>(reach.offsets[d].size()));
      AppendReach(window[d], shape[d], o, strides[d], reach.offsets[d]);
    }
    reach.first[d].push_back(static_cast<int64_t>(reach.offsets[d].size()));
  }
  return reach;
}

// Walks windows through the plan's reach, or, without one, through the reach of each position
// found as it is met (one position per dimension at a time: no table sized by the window).
class WindowWalk {
 public:
  WindowWalk(const WindowReach* reach, const std::vector<WindowDim>& window, const std::vector<int64_t>& shape)
      : reach_(reach), window_(window), shape_(shape), strides_(RowMajorStrides(shape)) {
    if (reach_) return;
    one_.positions.assign(shape.size(), 1);
    one_.first.resize(shape.size());
    one_.offsets.resize(shape.size());
    origin_.assign(shape.size(), 0);
  }
  template <typename F>
  void Visit(const std::vector<int64_t>& o, F&& f) {
    if (reach_) return ForEachInWindow(*reach_, o.data(), at_, f);
    for (size_t d = 0; d < shape_.size(); ++d) {
      one_.offsets[d].clear();
      AppendReach(window_[d], shape_[d], o[d], strides_[d], one_.offsets[d]);
      one_.first[d] = {0, static_cast<int64_t>(one_.offsets[d].size())};
    }
    ForEachInWindow(one_, origin_.data(), at_, f);
  }

 private:
  const WindowReach* reach_;
  const std::vector<WindowDim>& window_;
  const std::vector<int64_t>& shape_;
  std::vector<int64_t> strides_, origin_, at_;
  WindowReach one_;
};

Status RunReduceWindowWalk(const Step& s, const WindowReach* reach, const std::vector<Buf>& in,
                           const std::vector<Buf>& init, const std::vector<Buf>& out, const CalleeCall& call) {
  const size_t n = in.size();
  if (reach && n == 1 && s.pattern.op != ScalarOp::kNone && in[0].type() == out[0].type()) {
    bool handled = false;
    NHLO_TRY(ReduceWindowNative(s.pattern, *reach, in[0], init[0], out[0], handled));
    if (handled) return OkStatus();
  }
  const std::vector<int64_t>& positions = Dims(out[0]);
  const std::vector<WindowDim> window = WindowOf(s, Dims(in[0]).size());
  WindowWalk walk(reach, window, Dims(in[0]));
  const bool native = n == 1 && s.pattern.op != ScalarOp::kNone && in[0].type() == out[0].type();
  std::vector<std::string> acc(n);
  std::vector<const uint8_t*> args(2 * n);
  Status failure;
  ForEachIndex(positions, [&](int64_t linear, const std::vector<int64_t>& o) {
    if (!failure.ok()) return;
    for (size_t k = 0; k < n; ++k)
      acc[k].assign(reinterpret_cast<const char*>(init[k].data), HostByteSize(out[k].type()));
    walk.Visit(o, [&](int64_t src) {
      if (!failure.ok()) return;
      if (native && ApplyScalarOp(s.pattern, in[0].type(), reinterpret_cast<uint8_t*>(acc[0].data()),
                                  in[0].data + src * acc[0].size()))
        return;
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
    });
    for (size_t k = 0; k < n; ++k) std::memcpy(out[k].data + linear * acc[k].size(), acc[k].data(), acc[k].size());
  });
  return failure;
}

Status RunSelectAndScatterWalk(const Step& s, const WindowReach* reach, const Buf& operand, const Buf& source,
                               const Buf& init, const Buf& out, const ScalarCall& select, const ScalarCall& scatter) {
  const int size = HostByteSize(operand.type());
  for (int64_t i = 0; i < out.count(); ++i) std::memcpy(out.data + i * size, init.data, size);
  const std::vector<int64_t>& positions = Dims(source);
  const std::vector<WindowDim> window = WindowOf(s, Dims(operand).size());
  WindowWalk walk(reach, window, Dims(operand));
  Status failure;
  ForEachIndex(positions, [&](int64_t linear, const std::vector<int64_t>& o) {
    if (!failure.ok()) return;
    int64_t selected = -1;
    walk.Visit(o, [&](int64_t pos) {
      if (!failure.ok()) return;
      if (selected < 0) {
        selected = pos;
        return;
      }
      Result<const uint8_t*> keep = select(operand.data + selected * size, operand.data + pos * size);
      if (!keep.ok()) {
        failure = keep.status();
        return;
      }
      if (**keep == 0) selected = pos;
    });
    if (!failure.ok() || selected < 0) return;
    Result<const uint8_t*> r = scatter(source.data + linear * size, out.data + selected * size);
    if (!r.ok()) {
      failure = r.status();
      return;
    }
    std::memmove(out.data + selected * size, *r, size);
  });
  return failure;
}

}  // namespace

Result<ReduceWindowPlan> PlanReduceWindow(const Step& step, const std::vector<const BufferRecord*>& in,
                                          const std::vector<const BufferRecord*>& init,
                                          const std::vector<const BufferRecord*>& out) {
  if (in.empty()) return Status::Error("reduce-window needs inputs and as many init values");
  const std::vector<WindowDim> window = WindowOf(step, in[0]->dims.size());
  NHLO_TRY(CheckReduceWindow(window, in, init, out));
  NHLO_ASSIGN_OR_RETURN(WindowReach reach, Reach(window, in[0]->dims, out[0]->dims));
  return ReduceWindowPlan{std::move(reach)};
}

Result<SelectAndScatterPlan> PlanSelectAndScatter(const Step& step, const BufferRecord& operand,
                                                  const BufferRecord& source, const BufferRecord& init,
                                                  const BufferRecord& out) {
  const std::vector<WindowDim> window = WindowOf(step, operand.dims.size());
  NHLO_TRY(CheckSelectAndScatter(window, operand, source, init, out));
  NHLO_ASSIGN_OR_RETURN(WindowReach reach, Reach(window, operand.dims, source.dims));
  return SelectAndScatterPlan{std::move(reach)};
}

Status KernelReduceWindow(const Step& s, const std::vector<Buf>& in, const std::vector<Buf>& init,
                          const std::vector<Buf>& out, const CalleeCall& call) {
  if (in.empty()) return Status::Error("reduce-window needs inputs and as many init values");
  NHLO_TRY(CheckReduceWindow(WindowOf(s, Dims(in[0]).size()), RecordsOf(in), RecordsOf(init), RecordsOf(out)));
  return RunReduceWindowWalk(s, nullptr, in, init, out, call);
}

Status RunPlannedReduceWindow(const Step& s, const ReduceWindowPlan& plan, const std::vector<Buf>& in,
                              const std::vector<Buf>& init, const std::vector<Buf>& out, const CalleeCall& call) {
  return RunReduceWindowWalk(s, &plan.reach, in, init, out, call);
}

Status KernelSelectAndScatter(const Step& s, const Buf& operand, const Buf& source, const Buf& init, const Buf& out,
                              const ScalarCall& select, const ScalarCall& scatter) {
  NHLO_TRY(CheckSelectAndScatter(WindowOf(s, Dims(operand).size()), *operand.rec, *source.rec, *init.rec, *out.rec));
  return RunSelectAndScatterWalk(s, nullptr, operand, source, init, out, select, scatter);
}

Status RunPlannedSelectAndScatter(const Step& s, const SelectAndScatterPlan& plan, const Buf& operand,
                                  const Buf& source, const Buf& init, const Buf& out, const ScalarCall& select,
                                  const ScalarCall& scatter) {
  return RunSelectAndScatterWalk(s, &plan.reach, operand, source, init, out, select, scatter);
}

}  // namespace nhlo
