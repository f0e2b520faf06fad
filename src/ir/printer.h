// SPDX-License-Identifier: Apache-2.0
// Module -> HLO text in XLA's long form (`%` names, layouts, computation signatures). The
// output parses back to a module that prints identically: print(parse(print(m))) == print(m).
#pragma once

#include <string>

#include "ir/ir.h"

namespace nhlo {

std::string PrintModule(const Module& module);
/// One instruction line without indentation or newline (`%a = f32[2]{0} add(%x, %y)`).
std::string PrintInstruction(const Instruction& inst);
void AppendInstruction(std::string& out, const Instruction& inst);

}  // namespace nhlo
