// SPDX-License-Identifier: Apache-2.0
// expand-uniform-quantize (seed 002 §3-4, the golden path): custom calls with target
// "uniform_quantize" / "uniform_dequantize" and the seven-key quantized-type dictionary as a
// JSON backend_config (DESIGN.md) become plain int8 arithmetic in the expressed type:
//   quantize:   convert<storage>(clamp(storage_min, round-nearest-even(x * (1/scale)) + zero_point, storage_max))
//   dequantize: (convert<expressed>(q) - zero_point) * scale
// Per-tensor (quantization_dimension == -1) uses scale[0] / zero_point[0] as scalars broadcast
// over the tensor; per-axis uses 1-D constants broadcast along the quantized dimension. A scalar
// scale or any other malformed dictionary is an error naming the instruction.
#include <cstring>

#include "ir/builder.h"
#include "ir/custom_calls.h"
#include "ir/literal.h"
#include "ir/verifier.h"
#include "passes/pass.h"

namespace nhlo {
namespace {

class ExpandUniformQuantize final : public Pass {
 public:
  Result<bool> Run(Module& module) override {
    return RewriteMatches(
        module,
        [](Instruction& inst) {
          std::string_view target = CustomCallTarget(inst);
          return target == kUniformQuantizeTarget || target == kUniformDequantizeTarget;
        },
        [&](Computation* comp, Instruction* inst) {
          Emit(RemarkKind::kApplied, *inst, "Expanded",
               std::string(CustomCallTarget(*inst)) + " '" + std::string(inst->name) +
                   "' expanded into elementwise HLO (scale, round, clamp)");
          return Expand(module, comp, inst);
        });
  }

 private:
  static Status Fail(const Module& module, const Instruction& inst, const Status& why) {
    return Status::FromDiagnostic(DiagnosticFor(module, inst, "'" + std::string(inst.name) + "': " + why.message()));
  }

  // Per-tensor: a scalar constant broadcast to `shape`; per-axis: a 1-D constant broadcast
  // along the quantized dimension. `value(c)` gives channel c's value.
  template <typename F>
  static Instruction* ChannelConstant(Module& module, Computation* comp, const UniformQuantConfig& c,
                                      const Shape& shape, F&& value) {
    PrimitiveType t = c.expressed_type;
    if (c.quantization_dimension < 0)
      return MakeBroadcast(module, comp, MakeScalarConstant(module, comp, t, value(0)), shape, {});
    int64_t channels = shape.dims[c.quantization_dimension];
    std::vector<uint8_t> bytes(static_cast<size_t>(channels * HostByteSize(t)));
    for (int64_t ch = 0; ch < channels; ++ch) StoreFromDouble(t, bytes.data() + ch * HostByteSize(t), value(ch));
    Instruction* k = MakeConstant(module, comp, module.MakeArrayShape(t, {channels}), bytes);
    return MakeBroadcast(module, comp, k, shape, {c.quantization_dimension});
  }

  static Status Expand(Module& module, Computation* comp, Instruction* call) {
    bool quantize = CustomCallTarget(*call) == kUniformQuantizeTarget;
    if (call->operands.size() != 1)
      return Fail(module, *call, Status::Error("uniform quantize custom calls take one operand"));
    Result<const UniformQuantConfig*> config = CustomCallConfigOf(*call).As<UniformQuantConfig>();
    if (!config.ok()) return Fail(module, *call, config.status());
    const UniformQuantConfig& c = **config;
    Instruction* x = call->operands[0];
    const Shape& real_shape = quantize ? x->shape : call->shape;
    const Shape& stored_shape = quantize ? call->shape : x->shape;
    if (Status s = CheckUniformQuantShape(c, real_shape); !s.ok()) return Fail(module, *call, s);
    if (real_shape.type != c.expressed_type || stored_shape.type != c.storage_type || !real_shape.IsArray() ||
        real_shape.ElementCount() != stored_shape.ElementCount())
      return Fail(module, *call,
                  Status::Error("operand and result must be " +
                                std::string(PrimitiveTypeName(quantize ? c.expressed_type : c.storage_type)) + " and " +
                                std::string(PrimitiveTypeName(quantize ? c.storage_type : c.expressed_type)) +
                                " of the same dimensions, as the config says"));
    Shape real = ChangeElementType(module, stored_shape, c.expressed_type);
    Instruction* result;
    if (quantize) {
      Instruction* inv_scale = ChannelConstant(module, comp, c, real, [&](int64_t ch) {
        return static_cast<double>(static_cast<float>(1.0 / c.ScaleFor(ch)));
      });
      Instruction* scaled = MakeElementwise(module, comp, Opcode::kMultiply, {x, inv_scale});
      Instruction* rounded = MakeElementwise(module, comp, Opcode::kRoundNearestEven, {scaled});
      Instruction* zp =
          ChannelConstant(module, comp, c, real, [&](int64_t ch) { return static_cast<double>(c.ZeroPointFor(ch)); });
      Instruction* shifted = MakeElementwise(module, comp, Opcode::kAdd, {rounded, zp});
      Instruction* lo = MakeScalarConstant(module, comp, c.expressed_type, static_cast<double>(c.storage_min));
      Instruction* hi = MakeScalarConstant(module, comp, c.expressed_type, static_cast<double>(c.storage_max));
      Instruction* clamped = MakeElementwise(module, comp, Opcode::kClamp, {lo, shifted, hi});
      result = MakeConvert(module, comp, clamped, call->shape);
    } else {
      Instruction* widened = MakeConvert(module, comp, x, real);
      Instruction* zp =
          ChannelConstant(module, comp, c, real, [&](int64_t ch) { return static_cast<double>(c.ZeroPointFor(ch)); });
      Instruction* centered = MakeElementwise(module, comp, Opcode::kSubtract, {widened, zp});
      Instruction* scale = ChannelConstant(module, comp, c, real, [&](int64_t ch) { return c.ScaleFor(ch); });
      result = MakeElementwise(module, comp, Opcode::kMultiply, {centered, scale});
      result->shape = call->shape;
    }
    if (const Attribute* md = call->FindAttr(AttrId::kMetadata)) SetAttr(module, result, *md);
    ReplaceAllUses(comp, call, result);
    RemoveInstruction(comp, call);
    return OkStatus();
  }
};

}  // namespace

std::unique_ptr<Pass> CreateExpandUniformQuantizePass() { return std::make_unique<ExpandUniformQuantize>(); }

}  // namespace nhlo
