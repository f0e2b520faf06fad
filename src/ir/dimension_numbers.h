// SPDX-License-Identifier: Apache-2.0
// An instruction's dimension numbers as one typed view (types/dimension_numbers.h), the way
// XLA's HloDotInstruction::dot_dimension_numbers() and friends give them. The IR stores each
// list once, as the typed attribute the parser read; the view points into the module's arena
// and is valid while the instruction's attributes are unchanged.
#pragma once

#include "ir/ir.h"
#include "types/dimension_numbers.h"

namespace nhlo {

/// The view for any op: monostate for ops without dimension numbers, and for one that lacks an
/// attribute XLA requires (the verifier reports those).
DimensionNumbers DimensionNumbersOf(const Instruction& inst);

/// dot and scaled-dot (ragged-dot: its dot part); empty lists for any other op.
DotDimensionNumbers DotNumbersOf(const Instruction& inst);
/// The numbers of kind T (GatherDimensionNumbers, ...); null for an op of another kind or one
/// that lacks an attribute XLA requires.
template <typename T>
std::optional<T> NumbersOf(const Instruction& inst) {
  DimensionNumbers dims = DimensionNumbersOf(inst);
  if (const T* numbers = std::get_if<T>(&dims)) return *numbers;
  return std::nullopt;
}

}  // namespace nhlo
