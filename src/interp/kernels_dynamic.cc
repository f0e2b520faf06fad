// SPDX-License-Identifier: Apache-2.0
// Data movement for bounded dynamic shapes (docs/interpreter.md "Bounded dynamic shapes"). A
// value of shape f32[<=4,3] is stored at its bound, row-major over the bound, as XLA's
// evaluator keeps a dynamic literal; its runtime sizes travel beside it. These kernels move the
// elements inside the runtime sizes between layouts.
#include "interp/kernels.h"

#include <cstring>

namespace nhlo {

void CopyBox(const uint8_t* src, const std::vector<int64_t>& src_dims, uint8_t* dst,
             const std::vector<int64_t>& dst_dims, const std::vector<int64_t>& box, int elem_size) {
  const size_t rank = box.size();
  for (int64_t extent : box)
    if (extent <= 0) return;
  if (rank == 0) {
    std::memcpy(dst, src, static_cast<size_t>(elem_size));
    return;
  }
  std::vector<int64_t> src_strides(rank, 1), dst_strides(rank, 1);
  for (size_t d = rank - 1; d-- > 0;) {
    src_strides[d] = src_strides[d + 1] * src_dims[d + 1];
    dst_strides[d] = dst_strides[d + 1] * dst_dims[d + 1];
  }
  const size_t row_bytes = static_cast<size_t>(box[rank - 1]) * static_cast<size_t>(elem_size);
  std::vector<int64_t> index(rank, 0);  // over the box's outer dimensions; the last stays 0
  for (;;) {
    int64_t s = 0, t = 0;
    for (size_t d = 0; d + 1 < rank; ++d) s += index[d] * src_strides[d], t += index[d] * dst_strides[d];
    std::memcpy(dst + t * elem_size, src + s * elem_size, row_bytes);
    size_t d = rank - 1;
    while (d-- > 0) {
      if (++index[d] < box[d]) break;
      index[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

Status KernelDynamicReshape(const Buf& x, const std::vector<int64_t>& x_sizes, const std::vector<int64_t>& sizes,
                            const Buf& out) {
  int64_t valid = 1, want = 1;
  for (int64_t s : x_sizes) valid *= s;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] < 0 || sizes[d] > Dims(out)[d])
      return Status::Error("dynamic-reshape size " + std::to_string(sizes[d]) + " of dimension " + std::to_string(d) +
                           " is outside [0, " + std::to_string(Dims(out)[d]) + "]");
    want *= sizes[d];
  }
  if (want != valid)
    return Status::Error("dynamic-reshape to " + std::to_string(want) + " elements of a value that holds " +
                         std::to_string(valid));
  const int size = HostByteSize(out.type());
  // The operand's elements in row-major order of its runtime sizes, then laid out in the result.
  std::string compact(static_cast<size_t>(valid) * static_cast<size_t>(size), '\0');
  CopyBox(x.data, Dims(x), reinterpret_cast<uint8_t*>(compact.data()), x_sizes, x_sizes, size);
  if (out.rec->size) std::memset(out.data, 0, out.rec->size);
  CopyBox(reinterpret_cast<const uint8_t*>(compact.data()), sizes, out.data, Dims(out), sizes, size);
  return OkStatus();
}

}  // namespace nhlo
