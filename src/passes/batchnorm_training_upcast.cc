// SPDX-License-Identifier: Apache-2.0
// batchnorm-training-upcast (seed 000 "BatchNormTrainingUpcast"): a batch-norm-training with
// at least one BF16 operand computes its statistics in F32. All three operands are converted to
// F32 (an operand that already is F32 gets a no-op convert too, as in the seed's rewrite loop),
// an F32 batch-norm-training with the same epsilon and
// feature_index runs, and each of its three results (out, mean, variance) is converted back to
// the original element shape and re-tupled, replacing the original. F32 batch-norm-training,
// batch-norm-inference and batch-norm-grad are untouched.
#include "ir/builder.h"
#include "passes/pass.h"

namespace nhlo {
namespace {

class BatchNormTrainingUpcast final : public Pass {
 public:
  Result<bool> Run(Module& module) override {
    return RewriteMatches(
        module,
        [this](Instruction& inst) {
          if (inst.opcode != Opcode::kBatchNormTraining) return false;
          if (HasBf16Operand(inst)) return true;
          Emit(RemarkKind::kMissed, inst, "NoBf16Operand",
               "batch-norm-training '" + std::string(inst.name) + "' left as is: no operand is bf16");
          return false;
        },
        [&](Computation* comp, Instruction* bnt) {
          Emit(RemarkKind::kApplied, *bnt, "StatisticsInF32",
               "batch-norm-training '" + std::string(bnt->name) +
                   "': bf16 operands widened to f32 for the statistics, the three results narrowed back to bf16");
          Rewrite(module, comp, bnt);
          return OkStatus();
        });
  }

 private:
  static bool HasBf16Operand(const Instruction& inst) {
    for (const Instruction* op : inst.operands)
      if (op->shape.type == PrimitiveType::kBF16) return true;
    return false;
  }

  static void Rewrite(Module& module, Computation* comp, Instruction* bf16_bnt) {
    std::vector<Instruction*> widened;
    for (Instruction* op : bf16_bnt->operands)
      widened.push_back(MakeConvert(module, comp, op, ChangeElementType(module, op->shape, PrimitiveType::kF32)));
    Instruction* f32_bnt =
        module.NewInstruction(comp, Opcode::kBatchNormTraining,
                              ChangeElementType(module, bf16_bnt->shape, PrimitiveType::kF32), widened, bf16_bnt->name);
    CopyAttrs(module, bf16_bnt, f32_bnt);  // epsilon, feature_index (and metadata) unchanged
    std::vector<Instruction*> narrowed;
    for (int64_t i = 0; i < 3; ++i) {
      Instruction* gte = MakeGetTupleElement(module, comp, f32_bnt, i);
      narrowed.push_back(MakeConvert(module, comp, gte, bf16_bnt->shape.tuple[i]));
    }
    Instruction* tuple = MakeTuple(module, comp, narrowed);
    tuple->shape = bf16_bnt->shape;  // keeps the original layouts
    ReplaceAllUses(comp, bf16_bnt, tuple);
    RemoveInstruction(comp, bf16_bnt);
  }
};

}  // namespace

std::unique_ptr<Pass> CreateBatchNormTrainingUpcastPass() { return std::make_unique<BatchNormTrainingUpcast>(); }

}  // namespace nhlo
