// SPDX-License-Identifier: Apache-2.0
#include "ir/uses.h"

#include <algorithm>

namespace nhlo {
namespace {

// Every value `inst` uses: its operands, then its control predecessors.
template <typename F>
void ForEachUse(const Instruction& inst, F&& f) {
  for (Instruction* op : inst.operands) f(op);
  if (const Attribute* preds = inst.FindAttr(AttrId::kControlPredecessors))
    for (Instruction* p : preds->instructions) f(p);
}

}  // namespace

UseIndex::UseIndex(const Computation& comp) {
  users_.reserve(comp.instructions.size());
  for (Instruction* inst : comp.instructions) Add(inst);
}

const std::vector<Instruction*>& UseIndex::Users(const Instruction* value) const {
  static const std::vector<Instruction*> kNone;
  auto it = users_.find(value);
  return it == users_.end() ? kNone : it->second;
}

void UseIndex::AddUse(Instruction* value, Instruction* user) {
  std::vector<Instruction*>& users = users_[value];
  // An instruction using a value twice is one user; instructions have few operands, and a
  // value's newest user is the one most likely to repeat.
  if (users.empty() || users.back() != user) users.push_back(user);
}

void UseIndex::Add(Instruction* inst) {
  ForEachUse(*inst, [&](Instruction* value) { AddUse(value, inst); });
}

void UseIndex::AddControlUses(Instruction* inst) {
  const Attribute* preds = inst->FindAttr(AttrId::kControlPredecessors);
  if (!preds) return;
  for (Instruction* p : preds->instructions) {
    std::vector<Instruction*>& users = users_[p];
    if (std::find(users.begin(), users.end(), inst) == users.end()) users.push_back(inst);
  }
}

void UseIndex::ReplaceAllUsesWith(Instruction* from, Instruction* to) {
  auto it = users_.find(from);
  if (it == users_.end()) return;
  std::vector<Instruction*> users = std::move(it->second);
  it->second.clear();
  for (Instruction* user : users) {
    if (user == to) {
      AddUse(from, user);  // the replacement keeps its own use of the original
      continue;
    }
    for (Instruction*& op : user->operands)
      if (op == from) op = to;
    for (const Attribute& a : user->attrs)
      if (a.kind == AttrKind::InstructionList)
        for (Instruction*& p : a.instructions)
          if (p == from) p = to;
    std::vector<Instruction*>& to_users = users_[to];
    if (std::find(to_users.begin(), to_users.end(), user) == to_users.end()) to_users.push_back(user);
  }
}

void UseIndex::RemoveMarked(Computation& comp) {
  if (removed_.empty()) return;
  std::erase_if(comp.instructions, [&](const Instruction* inst) { return removed_.count(inst) != 0; });
  removed_.clear();
}

void UseIndexDeleter::operator()(UseIndex* index) const { delete index; }

ScopedUseIndex::ScopedUseIndex(Computation& comp) : comp_(comp) { comp_.uses.reset(new UseIndex(comp)); }

ScopedUseIndex::~ScopedUseIndex() {
  comp_.uses->RemoveMarked(comp_);
  comp_.uses.reset();
}

}  // namespace nhlo
