// SPDX-License-Identifier: Apache-2.0
#include "interp/op_table.h"

namespace nhlo {

// The family is opcodes.def's column; an op the interpreter cannot run names NotExecutable there.
OpExecution ExecutionOf(Opcode op) { return {OpcodeFamily(op), {}}; }

}  // namespace nhlo
