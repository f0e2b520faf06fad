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
/// The text after `name=` of one attribute, as XLA writes it (or as the source spelled a
/// structured value the printer would write differently; see Attribute).
void AppendAttributeValue(std::string& out, const Attribute& a);
/// What the printer writes between the entries of a KeyValues attribute: a space in metadata,
/// as XLA's OpMetadataToString; ", " in frontend_attributes, as nhlo's passes have always
/// written them (XLA's FrontendAttributesToString joins with a bare ",").
std::string_view KeyValueSeparator(AttrId id);

}  // namespace nhlo
