// SPDX-License-Identifier: Apache-2.0
#include "ir/literal.h"

#include <cstring>

namespace nhlo {

int64_t HostBytes(const Shape& shape) {
  int64_t n = shape.ElementCount();
  int64_t size = HostByteSize(shape.type);
  if (n < 0 || size <= 0) return -1;
  if (n > INT64_MAX / size) return -1;
  return n * size;
}

namespace {

// Innermost level `{1, 2}`; outer levels `{ {1, 2}, {3, 4} }`, as XLA writes them.
void AppendArrayLevel(std::string& out, const Shape& shape, const uint8_t* data, size_t dim,
                      int64_t& index, int64_t elem_size) {
  bool innermost = dim + 1 == shape.dims.size();
  out += innermost ? "{" : "{ ";
  int64_t n = shape.dims[dim];
  for (int64_t i = 0; i < n; ++i) {
    if (i) out += ", ";
    if (innermost) {
      AppendElement(out, shape.type, data + index * elem_size, /*in_array=*/true);
      ++index;
    } else {
      AppendArrayLevel(out, shape, data, dim + 1, index, elem_size);
    }
  }
  out += innermost ? "}" : " }";
}

}  // namespace

// Empty arrays with more nested `{}` than this print elided.
constexpr uint64_t kMaxEmptyGroups = 4096;

void AppendArrayLiteral(std::string& out, const Shape& shape, const uint8_t* data) {
  if (shape.dims.empty()) {
    AppendElement(out, shape.type, data, /*in_array=*/false);
    return;
  }
  // An empty array whose leading dimensions are huge (`s32[1000000000000,0]`) would print a
  // trillion `{}`; it has no values, so the elided form, which reads back as the same empty
  // array, says everything.
  uint64_t groups = 1;
  for (int64_t d : shape.dims) {
    if (d == 0) break;
    groups = d > 0 && groups <= (uint64_t(1) << 40) / static_cast<uint64_t>(d) ? groups * static_cast<uint64_t>(d)
                                                                              : uint64_t(1) << 41;
  }
  if (shape.ElementCount() == 0 && groups > kMaxEmptyGroups) {
    out += "{...}";
    return;
  }
  int64_t index = 0;
  AppendArrayLevel(out, shape, data, 0, index, HostByteSize(shape.type));
}

void AppendLiteral(std::string& out, const Literal& lit) {
  if (lit.shape.IsTuple()) {
    out += '(';
    for (size_t i = 0; i < lit.tuple.size(); ++i) {
      if (i) out += ", ";
      AppendLiteral(out, *lit.tuple[i]);
    }
    out += ')';
    return;
  }
  if (lit.elided) {
    out += "{...}";
    return;
  }
  AppendArrayLiteral(out, lit.shape, lit.data.data());
}

}  // namespace nhlo
