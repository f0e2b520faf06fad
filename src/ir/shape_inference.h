// SPDX-License-Identifier: Apache-2.0
// Shape rules per opcode, shared by the parser (to fill an omitted result shape) and the
// verifier (to check a written one).
#pragma once

#include <string>

#include "ir/ir.h"
#include "support/status.h"

namespace nhlo {

/// What InferShape knows about an instruction.
enum class InferOutcome { kInferred, kNotInferable, kError };

struct Inference {
  InferOutcome outcome = InferOutcome::kNotInferable;
  Shape shape;          // kInferred
  std::string message;  // kError: what is wrong with the operands or attributes
};

/// Infers `inst`'s result shape from its opcode, operands and attributes. Opcodes whose result
/// cannot be derived (reshape, slice, convert, ...) give kNotInferable; operands that break the
/// opcode's rules give kError with a message naming the rule.
Inference InferShape(Module& module, const Instruction& inst);

}  // namespace nhlo
