// SPDX-License-Identifier: Apache-2.0
// Module -> HLO text in one of XLA's print forms (PrintStyle; by default the long form of
// HloModule::ToString(): `%` names, layouts, computation signatures). The output parses back to
// a module that prints identically: print(parse(print(m))) == print(m).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"

namespace nhlo {

/// The forms --print-style names (docs/cli.md): XLA's printers, and the input's own.
///   kLong          HloModule::ToString(): `%` names, signatures, operand index comments
///   kLongShapes    the same with operand shapes, as ToString(HloPrintOptions()) was before 2025
///   kShort         the --xla_dump_to text of 2023-2025: bare names, no signatures, operand
///                  index comments, `} // name` after computations of more than 5 instructions
///   kShortParsable HloPrintOptions::ShortParsable(): bare names, no signatures, no comments
///   kAsRead        whichever of these the module was written in (as the parser saw it)
enum class PrintStyleName : uint8_t { kLong, kLongShapes, kShort, kShortParsable, kAsRead };
/// The style `name` gives `module`.
PrintStyle NamedPrintStyle(PrintStyleName name, const Module& module);
/// "long", "long-shapes", "short", "short-parsable", "as-read"; nullopt for any other word.
std::optional<PrintStyleName> PrintStyleFromName(std::string_view name);

/// The module in its `print_style` (XLA's long form unless the driver chose another).
std::string PrintModule(const Module& module);
/// `HloModule NAME` (no header attributes) and only the computations `shown` accepts
/// (--print-computation). The text is not a whole module when a callee is left out. A null
/// `shown` prints the whole module.
std::string PrintModule(const Module& module, const std::function<bool(const Computation&)>& shown);
/// One instruction line without indentation or newline (`%a = f32[2]{0} add(%x, %y)`), in the
/// long form or in `style`.
std::string PrintInstruction(const Instruction& inst);
void AppendInstruction(std::string& out, const Instruction& inst);
void AppendInstruction(std::string& out, const Instruction& inst, const PrintStyle& style);
/// The text after `name=` of one attribute, as XLA writes it (or as the source spelled a
/// structured value the printer would write differently; see Attribute).
void AppendAttributeValue(std::string& out, const Attribute& a);
void AppendAttributeValue(std::string& out, const Attribute& a, const PrintStyle& style);
/// What the printer writes between the entries of a KeyValues attribute: a space in metadata,
/// as XLA's OpMetadataToString; ", " in frontend_attributes, as nhlo's passes have always
/// written them (XLA's FrontendAttributesToString joins with a bare ",").
std::string_view KeyValueSeparator(AttrId id);

/// window={...}, slice={...}, padding=..., dim_labels=... values as the printer writes them
/// (without the name and '='), for values held outside the IR (nhlo-objdump's records).
void AppendWindowText(std::string& out, const std::vector<WindowDim>& window);
void AppendSliceText(std::string& out, const std::vector<SliceDim>& slices);
void AppendPaddingText(std::string& out, const std::vector<PaddingDim>& padding);
void AppendDimLabelsText(std::string& out, const ConvDimLabels& labels);

}  // namespace nhlo
