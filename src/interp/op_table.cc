// SPDX-License-Identifier: Apache-2.0
#include "interp/op_table.h"

// One case per row of opcodes.def, from its family column.
#pragma GCC diagnostic error "-Wswitch"

namespace nhlo {

OpExecution ExecutionOf(Opcode op) {
  switch (op) {
#define NHLO_OPCODE(Enum, text, arity, code, effect, family, elementwise) \
  case Opcode::k##Enum:                                                   \
    return {OpFamily::k##family, {}};
#include "types/opcodes.def"
#undef NHLO_OPCODE
  }
  return {OpFamily::kNotExecutable, "unknown opcode"};
}

}  // namespace nhlo
