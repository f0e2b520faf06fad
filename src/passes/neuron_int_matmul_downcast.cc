// SPDX-License-Identifier: Apache-2.0
// neuron-int-matmul-downcast (seed 000 "NeuronIntMatmulDowncast", seed 002 Path E): the PE
// array has no integer matmul, so a dot whose result is all-integer is routed through the F32
// datapath. Each integer operand is converted to F32 (a float operand is used as is), the dot
// is recomputed in F32 with the same dimension numbers and precision config, and the result is
// converted back to the original integer shape. The four new instructions get the original
// dot's metadata with " Downcast for int support " appended (to op_name: inferred, the seed
// says only "appended to that metadata") and frontend attribute auto_cast="none". Products
// beyond 2^24 lose bits, exactly as the seed says the original does.
//
// Remarks (passes/remarks.h): each rewritten dot is an applied remark. From the operand types
// and the contracted extent K the pass bounds |sum| <= K * max|a| * max|b| and warns, by
// default, when that bound passes 2^24 (f32 holds every integer only up to 2^24: a sum beyond
// may lose its last bits) or the result type's range (the f32 result converts back saturating,
// where the integer dot wraps); otherwise an analysis remark says why the rewrite is exact.
#include <cmath>
#include <cstdio>
#include <string>

#include "ir/builder.h"
#include "ir/dimension_numbers.h"
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
          Explain(*dot);
          Rewrite(module, comp, dot);
          return OkStatus();
        });
  }

 private:
  // The largest magnitude an element of integer type `t` can have; 0 for a non-integer type.
  static double MaxMagnitude(PrimitiveType t) {
    if (t == PrimitiveType::kPred) return 1;
    if (IsSignedInt(t)) return std::ldexp(1.0, BitWidth(t) - 1);
    if (IsUnsignedInt(t)) return std::ldexp(1.0, BitWidth(t)) - 1;
    return 0;
  }

  void Explain(const Instruction& dot) {
    const Shape& a = dot.operands[0]->shape;
    const Shape& b = dot.operands[1]->shape;
    double k = 1;
    for (int64_t d : DotNumbersOf(dot).lhs_contracting)
      if (d >= 0 && static_cast<size_t>(d) < a.dims.size()) k *= static_cast<double>(a.dims[d]);
    const std::string types = std::string(PrimitiveTypeName(a.type)) + " x " + std::string(PrimitiveTypeName(b.type)) +
                              " -> " + std::string(PrimitiveTypeName(dot.shape.type));
    const std::string what = "dot '" + std::string(dot.name) + "' (" + types + ", K=" + Number(k) + ")";
    Emit(RemarkKind::kApplied, dot, "ComputedInF32", what + " computed in f32 and converted back");
    const double ma = MaxMagnitude(a.type), mb = MaxMagnitude(b.type);
    if (ma == 0 || mb == 0 || !dot.shape.IsArray()) return;  // a float operand: no integer bound
    const double bound = k * ma * mb;
    // The largest value the result type holds: 2^(bits-1) - 1 signed, 2^bits - 1 unsigned.
    const double result_max =
        IsSignedInt(dot.shape.type) ? MaxMagnitude(dot.shape.type) - 1 : MaxMagnitude(dot.shape.type);
    const std::string sum = "|sum| <= K * " + Number(ma) + " * " + Number(mb) + " = " + Number(bound);
    if (bound > std::ldexp(1.0, 24))
      Emit(RemarkKind::kWarning, dot, "MayLoseBits",
           what + " may change results: " + sum + " > 2^24, beyond which f32 does not hold every integer");
    if (bound > result_max)
      Emit(RemarkKind::kWarning, dot, "MaySaturate",
           what + " may change results: " + sum + " exceeds what " + std::string(PrimitiveTypeName(dot.shape.type)) +
               " holds; the f32 result converts back saturating where the integer dot wraps");
    if (bound <= std::ldexp(1.0, 24) && bound <= result_max)
      Emit(RemarkKind::kAnalysis, dot, "Exact", what + " is exact: " + sum + " <= 2^24 and fits the result type");
  }

  static std::string Number(double v) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.17g", v);
    return text;
  }

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
    RemoveInstruction(comp, dot);
  }
};

}  // namespace

std::unique_ptr<Pass> CreateNeuronIntMatmulDowncastPass() { return std::make_unique<NeuronIntMatmulDowncast>(); }

}  // namespace nhlo
