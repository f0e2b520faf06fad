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
/// ragged-dot; null for any other op.
std::optional<RaggedDotDimensionNumbers> RaggedDotNumbersOf(const Instruction& inst);
/// convolution; null for any other op or one without dim_labels.
std::optional<ConvolutionDimensionNumbers> ConvolutionNumbersOf(const Instruction& inst);
/// gather; null for any other op or a gather that lacks a required list.
std::optional<GatherDimensionNumbers> GatherNumbersOf(const Instruction& inst);
/// scatter; null for any other op or a scatter that lacks a required list.
std::optional<ScatterDimensionNumbers> ScatterNumbersOf(const Instruction& inst);

}  // namespace nhlo
