// SPDX-License-Identifier: Apache-2.0
// Interpreter values as users write and read them: XLA literal text (`f32[2] {1, 2}`,
// `(f32[], s32[2]) (1, {2, 3})`), deterministic random arguments, and IR literals.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "interp/value.h"
#include "ir/ir.h"
#include "support/status.h"

namespace nhlo {

/// Parses `shape literal` text, e.g. `f32[2] {1, 2}` or `s32[] 7`. `what` names the text in
/// diagnostics (e.g. "--arg 1").
Result<Value> ParseValue(std::string_view text, std::string_view what);

/// `--random-range=LO,HI`: the interval every random argument is drawn from instead of its
/// type's default.
struct RandomRange {
  double lo = 0, hi = 0;
};

/// Parses `LO,HI` (finite numbers, LO <= HI).
Result<RandomRange> ParseRandomRange(std::string_view text);

/// A deterministic pseudo-random value of `shape` from `seed` (splitmix64, one draw per
/// element). Without a range: floats uniform in [-1, 1) rounded to the type; f8e8m0fnu (a
/// scale: exponent only) a power of two 2^k, k uniform in [-4, 4]; integers of 8 bits and more
/// uniform in [-8, 7] (signed) or [0, 15] (unsigned), narrower ones in [0, 2^(bits-1) - 1];
/// pred 0/1; complex numbers a real part as floats and imaginary part 0. With `range`: floats
/// uniform in [lo, hi) rounded to the type, integers uniform in [ceil(lo), floor(hi)] clamped to
/// the type, f8e8m0fnu 2^k with k uniform over the powers of two in [lo, hi]; pred unchanged.
/// docs/cli.md has the reasons.
Value RandomValue(const Shape& shape, uint64_t seed, const std::optional<RandomRange>& range = std::nullopt);

/// `f32[2] {1, 2}`: the shape without layout, a space, then the literal body.
std::string PrintValue(const Value& value);

Value ValueFromLiteral(const Literal& literal);

/// The arrays of a result with the names nhlo-run gives them everywhere (--output's files,
/// --expected's archive members, summaries): out0, out1... for a tuple's elements, out1_0... for
/// a nested tuple's, and out0 for a result that is not a tuple. Pointers into `result`.
std::vector<std::pair<std::string, const Value*>> NamedOutputs(const Value& result);

/// An array value converted element by element to `type`, as XLA's convert does (a widening
/// float convert is exact). `value` itself when it is a tuple, already of `type`, either type
/// is not an array type, or its bytes do not hold its elements.
void ConvertElementsTo(Value& value, PrimitiveType type);

}  // namespace nhlo
