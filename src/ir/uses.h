// SPDX-License-Identifier: Apache-2.0
// The users of every instruction of a computation, for passes that edit it (XLA's
// HloInstruction::users()). Built in one pass over the computation; while a computation has one
// (Computation::uses), the builder keeps it current: Module::NewInstruction records the new
// instruction's uses, ReplaceAllUses touches only the users of the replaced value, and
// RemoveInstruction is O(1) (the list is compacted once, by RemoveMarked). Without one, the
// builder scans the computation as before.
#pragma once

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/ir.h"

namespace nhlo {

class UseIndex {
 public:
  explicit UseIndex(const Computation& comp);

  /// The instructions that use `value` as an operand or a control predecessor, each once.
  const std::vector<Instruction*>& Users(const Instruction* value) const;
  /// Records the uses of an instruction just added to the computation.
  void Add(Instruction* inst);
  /// Records `inst`'s control predecessors as uses again after its attributes changed (the
  /// builder's SetAttr and CopyAttrs); a user already recorded is not added twice.
  void AddControlUses(Instruction* inst);
  /// Every use of `from` becomes a use of `to` (operands and control predecessors of from's
  /// users, except `to` itself, which may use `from`). O(uses of from).
  void ReplaceAllUsesWith(Instruction* from, Instruction* to);
  /// Marks `inst` removed: O(1). RemoveMarked drops the marked instructions from the list.
  void MarkRemoved(const Instruction* inst) { removed_.insert(inst); }
  bool IsRemoved(const Instruction* inst) const { return removed_.count(inst) != 0; }
  /// Drops the instructions marked removed from `comp`'s list, in one pass.
  void RemoveMarked(Computation& comp);

 private:
  void AddUse(Instruction* value, Instruction* user);
  std::unordered_map<const Instruction*, std::vector<Instruction*>> users_;
  std::unordered_set<const Instruction*> removed_;
};

/// Gives `comp` a use index for the duration of a rewrite: built here, dropped (after removing
/// the instructions marked removed) when the scope ends.
class ScopedUseIndex {
 public:
  explicit ScopedUseIndex(Computation& comp);
  ~ScopedUseIndex();
  ScopedUseIndex(const ScopedUseIndex&) = delete;
  ScopedUseIndex& operator=(const ScopedUseIndex&) = delete;
  UseIndex& index() { return *comp_.uses; }

 private:
  Computation& comp_;
};

}  // namespace nhlo
