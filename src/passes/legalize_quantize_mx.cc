// SPDX-License-Identifier: Apache-2.0
// legalize-quantize-mx (seed 002 §5 "LegalizeQuantizeMX", forms fixed in DESIGN.md): every
// custom call with target "QuantizeMX" is checked against its JSON backend_config contract
// (dtype float8_e4m3fn or float8_e5m2, dim in range, size along dim a multiple of block_size and
// of 4, block_size 32, scale_method EMAX, F32/BF16 input, one operand); a frontend-form call
// (data output f8) is replaced by the packed device form (u32 words holding four FP8 lanes
// along dim, lane 0 in the low byte; the E8M0 scales unchanged). Existing users keep seeing the
// f8 data through a plain-HLO unpack, which legalize-scaled-matmul looks through.
#include "ir/builder.h"
#include "ir/custom_calls.h"
#include "ir/uses.h"
#include "ir/verifier.h"
#include "passes/mx_packing.h"
#include "passes/pass.h"

namespace nhlo {
namespace {

class LegalizeQuantizeMx final : public Pass {
 public:
  Result<bool> Run(Module& module) override {
    // Matches the front-end form; a call that breaks the contract stops the pass.
    auto is_frontend = [&](Instruction& inst) -> Result<bool> {
      if (CustomCallTarget(inst) != kQuantizeMxTarget) return false;
      Result<const QuantizeMxConfig*> config = CustomCallConfigOf(inst).As<QuantizeMxConfig>();
      bool device = false;
      Status s = config.ok() ? CheckQuantizeMx(inst, **config, &device) : config.status();
      if (!s.ok())
        return Status::FromDiagnostic(DiagnosticFor(module, inst, "'" + std::string(inst.name) + "': " + s.message()));
      if (device)
        Emit(RemarkKind::kMissed, inst, "DeviceForm",
             "QuantizeMX '" + std::string(inst.name) + "' left as is: it is in the device form already");
      return !device;
    };
    return RewriteMatches(module, is_frontend, [&](Computation* comp, Instruction* call) {
      Emit(RemarkKind::kApplied, *call, "Legalized",
           "QuantizeMX '" + std::string(call->name) + "' rewritten to the device form (packed data and scales)");
      Lower(module, comp, call);
      return OkStatus();
    });
  }

 private:
  static void Lower(Module& module, Computation* comp, Instruction* call) {
    // Copied: CopyAttrs below decodes the new call's config into the same table.
    const QuantizeMxConfig c = **CustomCallConfigOf(*call).As<QuantizeMxConfig>();
    const Shape& data = call->shape.tuple[0];
    std::vector<int64_t> packed_dims(data.dims.begin(), data.dims.end());
    packed_dims[c.dim] /= 4;
    Shape result =
        module.MakeTupleShape({module.MakeArrayShape(PrimitiveType::kU32, packed_dims), call->shape.tuple[1]});
    Instruction* device = module.NewInstruction(comp, Opcode::kCustomCall, result, {call->operands[0]}, call->name);
    CopyAttrs(module, call, device);  // same target and backend_config
    Instruction* packed = MakeGetTupleElement(module, comp, device, 0);
    Instruction* scales = MakeGetTupleElement(module, comp, device, 1);
    Instruction* unpacked = UnpackLanes(module, comp, packed, c.dim, c.element);
    // get-tuple-element users read the new values directly, so legalize-scaled-matmul sees the
    // unpack chain; any other user gets a re-tupled value.
    Instruction* parts[2] = {unpacked, scales};
    // RewriteMatches gave comp its use index. A copy: replacing a user's uses edits the lists.
    for (Instruction* user : std::vector<Instruction*>(comp->uses->Users(call))) {
      const Attribute* index = user->FindAttr(AttrId::kIndex);
      if (user->opcode == Opcode::kGetTupleElement && user->operands[0] == call && index && index->i >= 0 &&
          index->i < 2)
        ReplaceAllUses(comp, user, parts[index->i]);
    }
    Instruction* tuple = MakeTuple(module, comp, {unpacked, scales});
    ReplaceAllUses(comp, call, tuple);
    RemoveInstruction(comp, call);
  }
};

}  // namespace

std::unique_ptr<Pass> CreateLegalizeQuantizeMxPass() { return std::make_unique<LegalizeQuantizeMx>(); }

}  // namespace nhlo
