// SPDX-License-Identifier: Apache-2.0
// Host values the interpreter takes and returns: an array (element type, dims, bytes in the
// host layout of types/element.h) or a tuple of values. Text forms are in driver/values.h.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "support/checked_math.h"
#include "types/primitive_type.h"

namespace nhlo {

struct Value {
  PrimitiveType type = PrimitiveType::kInvalid;
  std::vector<int64_t> dims;
  std::string bytes;
  std::vector<Value> tuple;
  /// A value of a bounded dynamic shape (`f32[4,<=8]`): per dimension its bound, -1 for a static
  /// one; `dims` are then the runtime sizes and `bytes` hold only those elements. Empty when
  /// every dimension is static.
  std::vector<int64_t> bounds;

  bool IsTuple() const { return type == PrimitiveType::kTuple; }
  /// -1 for dimensions that cannot be (negative, or multiplying past int64).
  int64_t ElementCount() const { return CheckedElementCount(dims); }
};

/// An array the interpreter holds, seen without a copy; valid only during the call that gives it
/// (ExecuteOptions::probe). `data` holds `bytes` bytes in the host layout of types/element.h.
struct ArrayView {
  PrimitiveType type = PrimitiveType::kInvalid;
  std::span<const int64_t> dims;
  const uint8_t* data = nullptr;
  size_t bytes = 0;
};

/// `f32[2,3]` (tuples as `(f32[2], s32[])`): the shape of a value, for messages.
std::string ValueShapeText(const Value& value);

}  // namespace nhlo
