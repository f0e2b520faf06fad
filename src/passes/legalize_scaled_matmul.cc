// SPDX-License-Identifier: Apache-2.0
// legalize-scaled-matmul (seed 002 §5 "LegalizeScaledMatmul", cluster fixed in DESIGN.md):
// XLA's scaled-dot(lhs, rhs, lhs_scale, rhs_scale) whose data operands are FP8 (e4m3fn/e5m2)
// and whose scales are f8e8m0fnu with 32-element blocks along the single contracting dimension
// becomes custom-call(lhs_packed, rhs_packed, lhs_scale, rhs_scale), target "ScaledMatmul",
// with the dimension numbers and lane dtypes in a JSON backend_config. An operand that is the
// unpacked data of a QuantizeMX device call is replaced by the packed u32 words directly;
// others are packed with plain HLO. The seed's contract (4 operands, U32 LHS, rank >= 2, output
// F32/BF16, batch and contracting dimension rules) is checked on the result; a violation is an
// error naming the instruction. The interpreter computes both forms identically.
#include "ir/builder.h"
#include "ir/custom_calls.h"
#include "ir/dimension_numbers.h"
#include "ir/verifier.h"
#include "passes/mx_packing.h"
#include "passes/pass.h"

namespace nhlo {
namespace {

std::vector<int64_t> Vec(DimIndexList list) { return {list.begin(), list.end()}; }

bool IsMxData(PrimitiveType t) { return t == PrimitiveType::kF8E4M3FN || t == PrimitiveType::kF8E5M2; }

// The MX cluster the pass rewrites; anything else is left alone.
bool Matches(const Instruction& inst) {
  if (inst.opcode != Opcode::kScaledDot || inst.operands.size() != 4) return false;
  const DotDimensionNumbers dims = DotNumbersOf(inst);
  const DimIndexList lc = dims.lhs_contracting, rc = dims.rhs_contracting;
  if (lc.size() != 1 || rc.size() != 1) return false;
  for (int side = 0; side < 2; ++side) {
    const Shape& data = inst.operands[side]->shape;
    const Shape& scale = inst.operands[side + 2]->shape;
    int64_t cd = side ? rc[0] : lc[0];
    if (!IsMxData(data.type) || scale.type != PrimitiveType::kF8E8M0FNU || scale.rank() != data.rank()) return false;
    if (cd < 0 || cd >= static_cast<int64_t>(data.rank()) || scale.dims[cd] * 32 != data.dims[cd]) return false;
  }
  return true;
}

class LegalizeScaledMatmul final : public Pass {
 public:
  Result<bool> Run(Module& module) override {
    return RewriteMatches(
        module, [](Instruction& inst) { return Matches(inst); },
        [&](Computation* comp, Instruction* dot) {
          Emit(RemarkKind::kApplied, *dot, "Legalized",
               "scaled-dot '" + std::string(dot->name) + "' rewritten to a ScaledMatmul custom call");
          return Rewrite(module, comp, dot);
        });
  }

 private:
  static Status Rewrite(Module& module, Computation* comp, Instruction* dot) {
    ScaledMatmulConfig c;
    const DotDimensionNumbers dims = DotNumbersOf(*dot);
    c.lhs_batch = Vec(dims.lhs_batch);
    c.rhs_batch = Vec(dims.rhs_batch);
    c.lhs_contracting = Vec(dims.lhs_contracting);
    c.rhs_contracting = Vec(dims.rhs_contracting);
    c.lhs_element = dot->operands[0]->shape.type;
    c.rhs_element = dot->operands[1]->shape.type;
    Instruction* packed[2];
    for (int side = 0; side < 2; ++side) {
      Instruction* data = dot->operands[side];
      int64_t cd = side ? c.rhs_contracting[0] : c.lhs_contracting[0];
      if (data->shape.dims[cd] % 4 != 0)
        return Status::FromDiagnostic(DiagnosticFor(
            module, *dot,
            "'" + std::string(dot->name) +
                "': ScaledMatmul packs four lanes per u32, so the contracting dimension size must be a multiple of 4"));
      packed[side] = FindPackedSource(data, cd);
      if (!packed[side] && side == 1 && data == dot->operands[0] && cd == c.lhs_contracting[0])
        packed[side] = packed[0];
      if (!packed[side]) packed[side] = PackLanes(module, comp, data, cd);
    }
    Instruction* call = module.NewInstruction(comp, Opcode::kCustomCall, dot->shape,
                                              {packed[0], packed[1], dot->operands[2], dot->operands[3]}, dot->name);
    SetAttr(module, call, TextAttr(module, AttrId::kCustomCallTarget, AttrKind::String, kScaledMatmulTarget));
    SetAttr(module, call, JsonConfigAttr(module, ScaledMatmulConfigJson(c)));
    if (const Attribute* md = dot->FindAttr(AttrId::kMetadata)) SetAttr(module, call, *md);
    if (Status s = CheckScaledMatmul(*call, c); !s.ok()) {
      RemoveInstruction(comp, call);
      return Status::FromDiagnostic(DiagnosticFor(module, *dot, "'" + std::string(dot->name) + "': " + s.message()));
    }
    ReplaceAllUses(comp, dot, call);
    RemoveInstruction(comp, dot);
    return OkStatus();
  }
};

}  // namespace

std::unique_ptr<Pass> CreateLegalizeScaledMatmulPass() { return std::make_unique<LegalizeScaledMatmul>(); }

}  // namespace nhlo
