// SPDX-License-Identifier: Apache-2.0
// dce: removes instructions whose results nobody uses, as XLA's HloDCE does
// (xla/hlo/transforms/simplifiers/hlo_dce.cc, CanRemoveInstruction). Kept are: the root,
// every used value, parameters, instructions with control edges either way, instructions with
// side effects (ir.h SideEffects: the opcode table's effect column, given the instruction's
// attributes, or a computation it calls that has one at any depth, so an unused call whose
// callee does outfeed stays), a dead `after-all` joining a value with side effects, and XLA's
// `Sharding` custom-call kept when its operand is the root, a parameter or used elsewhere.
// One backward sweep per computation removes whole dead chains. Then, as XLA's pass does, the
// computations the entry no longer reaches (or never did) go too (Module::RemoveDeadComputations).
#include <unordered_map>
#include <vector>

#include "passes/pass.h"

namespace nhlo {
namespace {

// How many instructions of a computation use each value, counted the first time one is asked
// for: only a dead `Sharding` custom call needs it, and most computations have none.
struct UserCounts {
  const Computation& comp;
  std::unordered_map<const Instruction*, int> counts;
  bool counted = false;
  int Of(const Instruction* value) {
    if (!counted) {
      for (const Instruction* inst : comp.instructions)
        for (const Instruction* op : inst->operands) ++counts[op];
      counted = true;
    }
    auto it = counts.find(value);
    return it == counts.end() ? 0 : it->second;
  }
};

class DcePass final : public Pass {
 public:
  Result<bool> Run(Module& module) override {
    SideEffects effects(module);
    bool changed = false;
    for (auto& comp : module.computations) changed |= RunOnComputation(*comp, effects, module);
    changed |= !module.RemoveDeadComputations().empty();
    return changed;
  }

 private:
  bool RunOnComputation(Computation& comp, const SideEffects& effects, Module& module) {
    const uint32_t live = module.NewMark();
    UserCounts users{comp, {}, false};
    // Instructions that are some instruction's control predecessor (XLA keeps both ends).
    const uint32_t controls = module.NewMark();
    for (const Instruction* inst : comp.instructions)
      if (const Attribute* preds = inst->FindAttr(AttrId::kControlPredecessors))
        for (Instruction* p : preds->instructions) p->mark = controls;
    std::vector<bool> keep(comp.instructions.size(), false);
    // Walk backwards: users come after their operands, so one sweep finds every live value.
    for (size_t i = comp.instructions.size(); i-- > 0;) {
      Instruction* inst = comp.instructions[i];
      bool needed = inst == comp.root || inst->mark == live || inst->mark == controls ||
                    KeptWhenDead(*inst, effects, users, comp);
      if (!needed) continue;
      keep[i] = true;
      inst->mark = live;
      for (Instruction* op : inst->operands) op->mark = live;
      if (const Attribute* preds = inst->FindAttr(AttrId::kControlPredecessors))
        for (Instruction* p : preds->instructions) p->mark = live;
    }
    size_t before = comp.instructions.size();
    size_t out = 0;
    for (size_t i = 0; i < before; ++i) {
      if (keep[i])
        comp.instructions[out++] = comp.instructions[i];
      else if (Wants(RemarkKind::kApplied))
        Emit(RemarkKind::kApplied, *comp.instructions[i], "Removed",
             "removed '" + std::string(comp.instructions[i]->name) + "': nothing uses it and it has no side effect");
    }
    comp.instructions.resize(out);
    return out != before;
  }

  // Whether XLA's HloDCE keeps `inst` although nothing uses it.
  static bool KeptWhenDead(const Instruction& inst, const SideEffects& effects, UserCounts& users,
                           const Computation& comp) {
    if (inst.opcode == Opcode::kParameter || inst.FindAttr(AttrId::kControlPredecessors)) return true;
    if (effects.Of(inst)) return true;
    if (inst.opcode == Opcode::kAfterAll) {
      // HloComputation::RemoveInstructionAndUnusedOperands leaves an after-all of a value with
      // side effects (or of a tuple element of one).
      for (const Instruction* op : inst.operands) {
        const Instruction* source =
            op->opcode == Opcode::kGetTupleElement && !op->operands.empty() ? op->operands[0] : op;
        if (effects.Of(*op) || effects.Of(*source)) return true;
      }
    }
    if (inst.opcode == Opcode::kCustomCall && inst.operands.size() == 1) {
      const Attribute* target = inst.FindAttr(AttrId::kCustomCallTarget);
      if (target && target->text == "Sharding") {
        const Instruction* op = inst.operands[0];
        if (op == comp.root || op->opcode == Opcode::kParameter || users.Of(op) > 1) return true;
      }
    }
    return false;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateDcePass() { return std::make_unique<DcePass>(); }

}  // namespace nhlo
