// SPDX-License-Identifier: Apache-2.0
// How the interpreter executes each opcode: the family of step that runs it, or why it cannot.
// The family is opcodes.def's column (a new opcode names its family in its row), read once per
// bundle when a program is loaded.
#pragma once

#include <string_view>

#include "types/opcode.h"

namespace nhlo {

// OpFamily, the kinds of step the interpreter has, is opcodes.def's family column (types/opcode.h).

struct OpExecution {
  OpFamily family = OpFamily::kNotExecutable;
  std::string_view not_executable;  // why, for kNotExecutable
};

OpExecution ExecutionOf(Opcode op);

}  // namespace nhlo
