// SPDX-License-Identifier: Apache-2.0
// Helpers passes use to edit the IR: new instructions with attributes, use replacement,
// restoring a def-before-use order, and editing metadata / frontend_attributes entries.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"

namespace nhlo {

/// `shape` with every array leaf's element type replaced by `type` (tuples recursively).
Shape ChangeElementType(Module& module, const Shape& shape, PrimitiveType type);

/// True if every leaf of `shape` is an integer type (XLA's AreAllLeavesIntegers: pred is not).
bool AllLeavesIntegers(const Shape& shape);

/// A new convert of `operand` to `shape`, appended to `comp`.
Instruction* MakeConvert(Module& module, Computation* comp, Instruction* operand, const Shape& shape);
Instruction* MakeGetTupleElement(Module& module, Computation* comp, Instruction* tuple, int64_t index);
Instruction* MakeTuple(Module& module, Computation* comp, const std::vector<Instruction*>& elements);

/// A constant of array `shape` whose host-layout bytes are `bytes`.
Instruction* MakeConstant(Module& module, Computation* comp, const Shape& shape, const std::vector<uint8_t>& bytes);
/// A scalar constant of `type` holding `value` (converted as XLA's convert would).
Instruction* MakeScalarConstant(Module& module, Computation* comp, PrimitiveType type, double value);
/// broadcast(operand) to `shape` with `dimensions` mapping operand dims to result dims.
Instruction* MakeBroadcast(Module& module, Computation* comp, Instruction* operand, const Shape& shape,
                           const std::vector<int64_t>& dimensions);
/// An elementwise op of `operands` with the result shape of operand 0.
Instruction* MakeElementwise(Module& module, Computation* comp, Opcode op, const std::vector<Instruction*>& operands);
Instruction* MakeReshape(Module& module, Computation* comp, Instruction* operand, const std::vector<int64_t>& dims);
Instruction* MakeTranspose(Module& module, Computation* comp, Instruction* operand,
                           const std::vector<int64_t>& permutation);
Instruction* MakeBitcastConvert(Module& module, Computation* comp, Instruction* operand, const Shape& shape);

/// Sets (or replaces) one attribute, keeping the list sorted in printing order.
void SetAttr(Module& module, Instruction* inst, const Attribute& attr);
/// Removes one attribute if present.
void RemoveAttr(Module& module, Instruction* inst, AttrId id);
/// Copies every attribute of `from` onto `to` (a fresh array in the arena).
void CopyAttrs(Module& module, const Instruction* from, Instruction* to);
Attribute IntListAttr(Module& module, AttrId id, const std::vector<int64_t>& values);
/// An attribute of a kind whose whole value is `text` (String, Ident, Raw).
Attribute TextAttr(Module& module, AttrId id, AttrKind kind, std::string_view text);
/// A backend_config written as the raw {...} object `json_text`, parsed once as the parser
/// parses configs (Module::ParseJson).
Attribute JsonConfigAttr(Module& module, std::string_view json_text);

/// Replaces every use of `from` in `comp` (operands, the root, control predecessors) by `to`.
void ReplaceAllUses(Computation* comp, Instruction* from, Instruction* to);
/// Takes `inst` out of `comp`: O(1) while the computation has a use index (ir/uses.h; the list
/// is compacted once when the index goes), a scan of the list otherwise.
void RemoveInstruction(Computation* comp, Instruction* inst);

/// Restores def-before-use order after instructions were appended out of place: a stable
/// depth-first post-order over operands, starting from the current order.
void SortTopologically(Computation* comp);

/// The entry `key` of a KeyValues attribute (metadata, frontend_attributes), or null.
const KeyValue* FindEntry(const Attribute& attr, std::string_view key);
/// A metadata attribute: `metadata` (null: none) with `suffix` appended to op_name. A missing
/// op_name is added where XLA prints it: after op_type, else first.
Attribute AppendToMetadataOpName(Module& module, const Attribute* metadata, std::string_view suffix);
/// A frontend_attributes attribute: `attrs` (null: none) with `key` set to the string `value`
/// and the keys sorted, as XLA keeps them in a map (a key given twice keeps its last value).
Attribute SetFrontendAttribute(Module& module, const Attribute* attrs, std::string_view key, std::string_view value);

}  // namespace nhlo
