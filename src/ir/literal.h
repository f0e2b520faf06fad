// SPDX-License-Identifier: Apache-2.0
// Literal text for the host layout (see Literal in ir.h); element access is types/element.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ir/ir.h"
#include "types/element.h"

namespace nhlo {

/// Appends the literal body for an array of `shape` stored row-major at `data`:
/// scalars `1`, rank 1 `{1, 2}`, rank 2 `{ {1, 2}, {3, 4} }`.
void AppendArrayLiteral(std::string& out, const Shape& shape, const uint8_t* data);
/// Appends a literal body (tuples as `(a, b)`, elided as `{...}`).
void AppendLiteral(std::string& out, const Literal& lit);

/// Bytes of host storage for an array shape; -1 if the count overflows or the shape is not an
/// array.
int64_t HostBytes(const Shape& shape);

}  // namespace nhlo
