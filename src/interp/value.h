// SPDX-License-Identifier: Apache-2.0
// Host values the interpreter takes and returns: an array (element type, dims, bytes in the
// host layout of ir/literal.h) or a tuple of values. Parsed from and printed as XLA literal
// text, e.g. `f32[2] {1, 2}` or `(f32[], s32[2]) (1, {2, 3})`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "support/status.h"

namespace nhlo {

struct Value {
  PrimitiveType type = PrimitiveType::kInvalid;
  std::vector<int64_t> dims;
  std::string bytes;
  std::vector<Value> tuple;

  bool IsTuple() const { return type == PrimitiveType::kTuple; }
  int64_t ElementCount() const;
};

/// Parses `shape literal` text, e.g. `f32[2] {1, 2}` or `s32[] 7`. `what` names the text in
/// diagnostics (e.g. "--arg 1").
Result<Value> ParseValue(std::string_view text, std::string_view what);

/// A deterministic pseudo-random value of `shape` from `seed` (splitmix64): floats uniform in
/// [-1, 1) rounded to the type, integers in a small range, pred 0/1.
Value RandomValue(const Shape& shape, uint64_t seed);

/// `f32[2] {1, 2}`: the shape without layout, a space, then the literal body.
std::string PrintValue(const Value& value);

/// Value <-> Literal conversions.
Value ValueFromLiteral(const Literal& literal);

}  // namespace nhlo
