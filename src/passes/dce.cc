// SPDX-License-Identifier: Apache-2.0
// dce: removes instructions whose results nobody uses — not a root, not an operand, not a
// control predecessor — unless they have side effects (parameters, custom calls marked
// custom_call_has_side_effect, I/O, collectives, rng). Runs to a fixed point per computation,
// so whole dead chains go in one run.
#include <unordered_set>

#include "passes/pass.h"

namespace nhlo {
namespace {

bool HasSideEffect(const Instruction& inst) {
  switch (inst.opcode) {
    case Opcode::kParameter:
    case Opcode::kInfeed: case Opcode::kOutfeed: case Opcode::kSend: case Opcode::kSendDone:
    case Opcode::kRecv: case Opcode::kRecvDone:
    case Opcode::kRng: case Opcode::kRngGetAndUpdateState:
    case Opcode::kAllReduce: case Opcode::kAllReduceStart: case Opcode::kAllReduceDone:
    case Opcode::kAllGather: case Opcode::kAllGatherStart: case Opcode::kAllGatherDone:
    case Opcode::kAllToAll: case Opcode::kRaggedAllToAll: case Opcode::kReduceScatter:
    case Opcode::kCollectiveBroadcast: case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart: case Opcode::kCollectivePermuteDone:
    case Opcode::kAsyncStart: case Opcode::kAsyncUpdate: case Opcode::kAsyncDone:
    case Opcode::kCopyStart: case Opcode::kCopyDone:
    case Opcode::kAfterAll: case Opcode::kAddDependency:
      return true;
    case Opcode::kCustomCall: {
      const Attribute* a = inst.FindAttr(AttrId::kCustomCallHasSideEffect);
      return a && a->b;
    }
    default:
      return false;
  }
}

class DcePass final : public Pass {
 public:
  Result<bool> Run(Module& module) override {
    bool changed = false;
    for (auto& comp : module.computations) changed |= RunOnComputation(*comp);
    return changed;
  }

 private:
  static bool RunOnComputation(Computation& comp) {
    std::unordered_set<const Instruction*> live;
    live.insert(comp.root);
    // Walk backwards: users come after their operands, so one sweep finds every live value.
    for (size_t i = comp.instructions.size(); i-- > 0;) {
      Instruction* inst = comp.instructions[i];
      if (!live.count(inst) && !HasSideEffect(*inst)) continue;
      live.insert(inst);
      for (Instruction* op : inst->operands) live.insert(op);
      if (const Attribute* preds = inst->FindAttr(AttrId::kControlPredecessors))
        for (Instruction* p : preds->instructions) live.insert(p);
    }
    size_t before = comp.instructions.size();
    std::vector<Instruction*> kept;
    kept.reserve(before);
    for (Instruction* inst : comp.instructions)
      if (live.count(inst)) kept.push_back(inst);
    comp.instructions.assign(kept.begin(), kept.end());
    return comp.instructions.size() != before;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateDcePass() { return std::make_unique<DcePass>(); }

}  // namespace nhlo
