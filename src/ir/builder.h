// SPDX-License-Identifier: Apache-2.0
// Helpers passes use to edit the IR: new instructions with attributes, use replacement,
// restoring a def-before-use order, and editing metadata / frontend_attributes text.
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
Instruction* MakeTranspose(Module& module, Computation* comp, Instruction* operand, const std::vector<int64_t>& permutation);
Instruction* MakeBitcastConvert(Module& module, Computation* comp, Instruction* operand, const Shape& shape);

/// Sets (or replaces) one attribute, keeping the list sorted in printing order.
void SetAttr(Module& module, Instruction* inst, const Attribute& attr);
/// Removes one attribute if present.
void RemoveAttr(Module& module, Instruction* inst, AttrId id);
/// Copies every attribute of `from` onto `to` (a fresh array in the arena).
void CopyAttrs(Module& module, const Instruction* from, Instruction* to);
Attribute IntListAttr(Module& module, AttrId id, const std::vector<int64_t>& values);
Attribute TextAttr(Module& module, AttrId id, AttrKind kind, std::string_view text);

/// Replaces every use of `from` in `comp` (operands, the root, control predecessors) by `to`.
void ReplaceAllUses(Computation* comp, Instruction* from, Instruction* to);

/// Restores def-before-use order after instructions were appended out of place: a stable
/// depth-first post-order over operands, starting from the current order.
void SortTopologically(Computation* comp);

/// `metadata={...}` text with `suffix` appended to op_name (op_name is created if missing).
std::string AppendToMetadataOpName(std::string_view metadata_raw, std::string_view suffix);
/// `frontend_attributes={...}` text with key=value set (keys kept sorted, as XLA prints them).
std::string SetFrontendAttribute(std::string_view raw, std::string_view key, std::string_view value);

}  // namespace nhlo
