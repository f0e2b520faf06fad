// SPDX-License-Identifier: Apache-2.0
// Shape rules per opcode (XLA's ShapeInference), shared by the parser (to fill an omitted result
// shape) and the verifier (to check a written one).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "support/small_vec.h"
#include "support/status.h"

namespace nhlo {

/// What InferShape knows about an instruction.
enum class InferOutcome { kInferred, kNotInferable, kError };

/// Who asks. The parser may fill in only the shapes XLA's parser fills in (HLO_GRAMMAR.md §8,
/// "shape ✓"), so every text nhlo accepts without a shape XLA accepts too. The verifier wants
/// every shape that follows from operands and attributes, including slice, dynamic-slice,
/// reduce-precision, fusion, send and the collectives whose text must spell the shape out.
enum class InferMode { kParse, kVerify };

struct Inference {
  InferOutcome outcome = InferOutcome::kNotInferable;
  Shape shape;          // kInferred
  std::string message;  // kError: what is wrong with the operands or attributes
};

/// Infers `inst`'s result shape from its opcode, operands, attributes and called computations.
/// Opcodes whose result cannot be derived (reshape, convert, iota, custom-call, ...) give
/// kNotInferable; operands, attributes or called computations that break the opcode's rules give
/// kError with a message naming the rule. Where a result element type is free (dot and
/// convolution accumulate in a preferred type) the written one is used when there is one.
Inference InferShape(Module& module, const Instruction& inst, InferMode mode = InferMode::kParse);

}  // namespace nhlo
