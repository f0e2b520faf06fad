// SPDX-License-Identifier: Apache-2.0
// Structural and shape checks over a whole module. Every problem is reported (not only the
// first), each at the instruction it concerns.
#pragma once

#include <string>
#include <string_view>

#include "ir/ir.h"
#include "support/status.h"

namespace nhlo {

/// Checks the module: operand counts, required attributes, result shapes against the opcode's
/// shape rule, parameter numbering, roots and entry. OK if nothing is wrong.
Status VerifyModule(Module& module);

/// The end of every diagnostic that refuses XLA's late binding of async operands (an
/// async-start that leaves operands or its result to async-update / async-done): nhlo's
/// deliberate deviation, said the same way by the parser and the verifier.
extern const std::string_view kLateBindingRefusal;

/// A diagnostic pointing at `inst` in the source it came from; instructions created by passes
/// have no source position and are named in the message instead.
Diagnostic DiagnosticFor(const Module& module, const Instruction& inst, std::string message);

}  // namespace nhlo
