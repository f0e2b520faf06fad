// SPDX-License-Identifier: Apache-2.0
// test-add-to-subtract: TEST ONLY, off by default, and deliberately wrong: every `add` on
// numbers becomes `subtract` (reducers included). It exists so that `nhlo-run --check-passes`
// has a pass that changes the numbers, and its bisection a pass to find (the goldens under
// testdata/run/check_passes*). Never part of a real pipeline.
#include "passes/pass.h"

namespace nhlo {
namespace {

class TestAddToSubtract final : public Pass {
 public:
  Result<bool> Run(Module& module) override {
    bool changed = false;
    for (auto& comp : module.computations) {
      for (Instruction* inst : comp->instructions) {
        // pred has no subtract; tuples and tokens never reach an add.
        if (inst->opcode != Opcode::kAdd || inst->shape.IsTuple() || inst->shape.type == PrimitiveType::kPred) continue;
        inst->opcode = Opcode::kSubtract;
        changed = true;
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateTestAddToSubtractPass() { return std::make_unique<TestAddToSubtract>(); }

}  // namespace nhlo
