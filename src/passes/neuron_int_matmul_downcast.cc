// SPDX-License-Identifier: Apache-2.0
// neuron-int-matmul-downcast (seed 000 "NeuronIntMatmulDowncast", seed 002 Path E): the PE
// array has no integer matmul, so a dot whose result is all-integer is routed through the F32
// datapath. Each integer operand is converted to F32 (a float operand is used as is), the dot
// is recomputed in F32 with the same dimension numbers and precision config, and the result is
// converted back to the original integer shape. The four new instructions get the original
// dot's metadata with " Downcast for int support " appended (to op_name: inferred, the seed
// says only "appended to that metadata") and frontend attribute auto_cast="none". Products
// beyond 2^24 lose bits, exactly as the seed says the original does.
#include "ir/builder.h"
#include "passes/pass.h"

namespace nhlo {
namespace {

constexpr std::string_view kDowncastNote = " Downcast for int support ";

void AddAutoCastNone(Module& module, const Instruction* original_dot, Instruction* inst) {
  SetAttr(module, inst, AppendToMetadataOpName(module, original_dot->FindAttr(AttrId::kMetadata), kDowncastNote));
  SetAttr(module, inst, SetFrontendAttribute(module, inst->FindAttr(AttrId::kFrontendAttributes), "auto_cast", "none"));
}

class NeuronIntMatmulDowncast final : public Pass {
 public:
  Result<bool> Run(Module& module) override {
    return RewriteMatches(
        module, [](Instruction& inst) { return inst.opcode == Opcode::kDot && AllLeavesIntegers(inst.shape); },
        [&](Computation* comp, Instruction* dot) {
          Rewrite(module, comp, dot);
          return OkStatus();
        });
  }

 private:
  static void Rewrite(Module& module, Computation* comp, Instruction* dot) {
    Instruction* converted[2];
    std::vector<Instruction*> created;
    for (int i = 0; i < 2; ++i) {
      Instruction* op = dot->operands[i];
      if (AllLeavesIntegers(op->shape)) {
        converted[i] = MakeConvert(module, comp, op, ChangeElementType(module, op->shape, PrimitiveType::kF32));
        created.push_back(converted[i]);
      } else {
        converted[i] = op;
      }
    }
    Instruction* f32_dot =
        module.NewInstruction(comp, Opcode::kDot, ChangeElementType(module, dot->shape, PrimitiveType::kF32),
                              {converted[0], converted[1]}, dot->name);
    // Dimension numbers and precision config carry over verbatim; so does everything else.
    CopyAttrs(module, dot, f32_dot);
    Instruction* result = MakeConvert(module, comp, f32_dot, dot->shape);
    created.push_back(f32_dot);
    created.push_back(result);
    for (Instruction* inst : created) AddAutoCastNone(module, dot, inst);
    ReplaceAllUses(comp, dot, result);
    std::erase(comp->instructions, dot);
  }
};

}  // namespace

std::unique_ptr<Pass> CreateNeuronIntMatmulDowncastPass() { return std::make_unique<NeuronIntMatmulDowncast>(); }

}  // namespace nhlo
