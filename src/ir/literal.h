// SPDX-License-Identifier: Apache-2.0
// Literal text for the host layout (see Literal in ir.h); element access is types/element.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ir/ir.h"
#include "types/element.h"

namespace nhlo {

/// How literal text is written. kShortest (nhlo-run's values): floats as the shortest decimal
/// that reads back, rank 2 as `{ {1, 2}, {3, 4} }`. kXla (the HLO printer): as XLA's
/// HloPrinter writes constants: floats with RoundTripFpToString's digits, every level of a rank
/// >= 2 array spaced (`{ { 1, 2 }, { 3, 4 } }`, but `{0}` and `{}` for inner levels of at most
/// one element) and, from rank 4, `/*i<k>=<v>*/` index comments on the middle levels.
enum class LiteralForm : uint8_t { kShortest, kXla };

/// Appends the literal body for an array of `shape` stored row-major at `data`.
void AppendArrayLiteral(std::string& out, const Shape& shape, const uint8_t* data,
                        LiteralForm form = LiteralForm::kShortest);
/// Appends a literal body (tuples as `( a, b )`, elided as `{...}`) in XLA's form.
void AppendLiteral(std::string& out, const Literal& lit);

/// Bytes of host storage for an array shape; -1 if the count overflows or the shape is not an
/// array.
int64_t HostBytes(const Shape& shape);

}  // namespace nhlo
