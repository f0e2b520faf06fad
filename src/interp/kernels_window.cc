// SPDX-License-Identifier: Apache-2.0
// select-and-scatter, with XLA's HloEvaluator rules: the result starts as the init value
// everywhere; for each source element its window over the operand is walked in row-major order
// (padding and base-dilation holes skipped), the first element in bounds is selected, and a
// later element e replaces the selection when select(selected, e) is false; then the selected
// result element becomes scatter(source value, current result value). A window with no element
// in bounds scatters nothing. The two computations run through the executor's callback.
#include <algorithm>
#include <cstring>
#include <string>

#include "interp/kernels.h"

namespace nhlo {

Status KernelSelectAndScatter(const Step& s, const Buf& operand, const Buf& source, const Buf& init, const Buf& out,
                              const ScalarCall& select, const ScalarCall& scatter) {
  const std::vector<int64_t>& shape = Dims(operand);
  PrimitiveType t = operand.type();
  if (source.type() != t || init.type() != t || out.type() != t || init.count() != 1 || Dims(out) != shape)
    return Status::Error("select-and-scatter operand, source, init value and result do not match");
  std::vector<WindowDim> window;
  if (const AttrRecord* w = s.Find(AttrId::kWindow)) window = w->window();
  if (window.empty()) window.assign(shape.size(), WindowDim{});
  if (window.size() != shape.size() || source.rank() != shape.size())
    return Status::Error("select-and-scatter window rank does not match the operand");
  for (const WindowDim& w : window)
    if (w.size < 1 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1)
      return Status::Error("select-and-scatter has an invalid window");
  // The source has the shape of the window positions (as reduce-window's result would). In 128
  // bits: a bundle file may carry any window, and the positions o * stride + k * dilation -
  // pad_low formed below must fit in 64 bits too.
  for (size_t d = 0; d < shape.size(); ++d) {
    const WindowDim& w = window[d];
    using Wide = __int128;
    Wide padded = (shape[d] == 0 ? 0 : Wide{shape[d] - 1} * w.base_dilation + 1) + w.pad_low + w.pad_high;
    Wide span = Wide{w.size - 1} * w.window_dilation + 1;
    Wide positions = padded < span ? 0 : (padded - span) / w.stride + 1;
    if (Dims(source)[d] != positions)
      return Status::Error("select-and-scatter source dimension " + std::to_string(d) + " is " +
                           std::to_string(Dims(source)[d]) + ", which does not match its window's positions");
    Wide far = Wide{std::max<int64_t>(Dims(source)[d] - 1, 0)} * w.stride + (span - 1) - w.pad_low;
    if (far > INT64_MAX || -Wide{w.pad_low} > INT64_MAX)
      return Status::Error("select-and-scatter window positions overflow 64 bits");
  }
  int size = HostByteSize(t);
  for (int64_t i = 0; i < out.count(); ++i) std::memcpy(out.data + i * size, init.data, size);
  std::vector<int64_t> strides = RowMajorStrides(shape), window_dims(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) window_dims[d] = window[d].size;
  Status failure;
  ForEachIndex(Dims(source), [&](int64_t linear, const std::vector<int64_t>& o) {
    if (!failure.ok()) return;
    int64_t selected = -1;
    ForEachIndex(window_dims, [&](int64_t, const std::vector<int64_t>& k) {
      if (!failure.ok()) return;
      int64_t pos = 0;
      for (size_t d = 0; d < shape.size(); ++d) {
        int64_t p = o[d] * window[d].stride + k[d] * window[d].window_dilation - window[d].pad_low;
        if (p < 0 || p % window[d].base_dilation != 0 || p / window[d].base_dilation >= shape[d]) return;
        pos += (p / window[d].base_dilation) * strides[d];
      }
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

}  // namespace nhlo
