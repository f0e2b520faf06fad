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

// One level of nested braces; `outer_index` is this level's index in the level above.
void AppendArrayLevel(std::string& out, const Shape& shape, const uint8_t* data, size_t dim, int64_t outer_index,
                      int64_t& index, int64_t elem_size, LiteralForm form) {
  const size_t rank = shape.dims.size();
  const bool innermost = dim + 1 == rank;
  const int64_t n = shape.dims[dim];
  const bool xla = form == LiteralForm::kXla;
  // Spaced: outer levels always; XLA also spaces an innermost level of rank >= 2 holding more
  // than one element.
  const bool spaced = !innermost || (xla && rank >= 2 && n > 1);
  out += spaced ? "{ " : "{";
  if (xla && rank >= 4 && dim > 0 && !innermost) {
    out.pop_back();  // the comment takes the space's place, and gets one after it when not empty
    out += " /*i" + std::to_string(dim - 1) + "=" + std::to_string(outer_index) + "*/";
    if (n > 0) out += ' ';
  }
  for (int64_t i = 0; i < n; ++i) {
    if (i) out += ", ";
    if (innermost) {
      const uint8_t* p = data + index * elem_size;
      if (xla)
        AppendElementXla(out, shape.type, p, /*in_array=*/true);
      else
        AppendElement(out, shape.type, p, /*in_array=*/true);
      ++index;
    } else {
      AppendArrayLevel(out, shape, data, dim + 1, i, index, elem_size, form);
    }
  }
  out += spaced ? " }" : "}";
}

}  // namespace

// Empty arrays with more nested `{}` than this print elided.
constexpr uint64_t kMaxEmptyGroups = 4096;

void AppendArrayLiteral(std::string& out, const Shape& shape, const uint8_t* data, LiteralForm form) {
  if (shape.dims.empty()) {
    if (form == LiteralForm::kXla)
      AppendElementXla(out, shape.type, data, /*in_array=*/false);
    else
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
  AppendArrayLevel(out, shape, data, 0, 0, index, HostByteSize(shape.type), form);
}

void AppendLiteral(std::string& out, const Literal& lit) {
  if (lit.shape.IsTuple()) {
    // XLA's TuplePrintHelper in one line: `( {1, 2}, 3 )`, spaces inside the parentheses.
    out += "( ";
    for (size_t i = 0; i < lit.tuple.size(); ++i) {
      if (i) out += ", ";
      AppendLiteral(out, *lit.tuple[i]);
    }
    out += " )";
    return;
  }
  if (lit.elided) {
    out += "{...}";
    return;
  }
  AppendArrayLiteral(out, lit.shape, lit.data.data(), LiteralForm::kXla);
}

}  // namespace nhlo
