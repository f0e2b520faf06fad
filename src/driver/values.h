// SPDX-License-Identifier: Apache-2.0
// Interpreter values as users write and read them: XLA literal text (`f32[2] {1, 2}`,
// `(f32[], s32[2]) (1, {2, 3})`), deterministic random arguments, and IR literals.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "interp/value.h"
#include "ir/ir.h"
#include "support/status.h"

namespace nhlo {

/// Parses `shape literal` text, e.g. `f32[2] {1, 2}` or `s32[] 7`. `what` names the text in
/// diagnostics (e.g. "--arg 1").
Result<Value> ParseValue(std::string_view text, std::string_view what);

/// A deterministic pseudo-random value of `shape` from `seed` (splitmix64): floats uniform in
/// [-1, 1) rounded to the type, integers in a small range, pred 0/1.
Value RandomValue(const Shape& shape, uint64_t seed);

/// `f32[2] {1, 2}`: the shape without layout, a space, then the literal body.
std::string PrintValue(const Value& value);

Value ValueFromLiteral(const Literal& literal);

}  // namespace nhlo
