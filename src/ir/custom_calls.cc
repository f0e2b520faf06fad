// SPDX-License-Identifier: Apache-2.0
#include "ir/custom_calls.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "ir/expanded_calls.h"
#include "types/float_cast.h"

namespace nhlo {
namespace {

std::string Str(const Shape& s) { return ShapeToString(s, false); }

}  // namespace

const nlohmann::json* BackendConfigJson(const Instruction& inst) {
  const Attribute* a = inst.FindAttr(AttrId::kBackendConfig);
  return a && a->kind == AttrKind::Config ? a->json : nullptr;
}

void DecodeCustomCallConfig(Module& module, const Instruction& inst) {
  if (inst.opcode != Opcode::kCustomCall) return;
  CustomCallOperands operands;
  for (const Instruction* op : inst.operands)
    operands.ranks.push_back(op->shape.IsArray() ? static_cast<int64_t>(op->shape.rank()) : -1);
  const Attribute* config = inst.FindAttr(AttrId::kBackendConfig);
  module.custom_call_configs[&inst] =
      DecodeCustomCallConfig(CustomCallTarget(inst), CustomCallComputation(inst) != nullptr, BackendConfigJson(inst),
                             config ? config->text : std::string_view(), operands);
}

const CustomCallConfig& CustomCallConfigOf(const Instruction& inst) {
  static const CustomCallConfig* const kNotDecoded = [] {
    auto* config = new CustomCallConfig;
    config->status = Status::Error("the backend_config was never decoded (an nhlo bug)");
    return config;
  }();
  const Module* module = inst.parent ? inst.parent->parent : nullptr;
  if (!module) return *kNotDecoded;
  auto it = module->custom_call_configs.find(&inst);
  return it == module->custom_call_configs.end() ? *kNotDecoded : it->second;
}

std::string_view CustomCallTarget(const Instruction& inst) {
  if (inst.opcode != Opcode::kCustomCall) return {};
  const Attribute* a = inst.FindAttr(AttrId::kCustomCallTarget);
  return a ? a->text : std::string_view();
}

Status CustomCallError(const Instruction& call, const std::string& message) {
  return Status::Error("'" + std::string(CustomCallTarget(call)) + "' " + message);
}

Status CheckUniformQuantShape(const UniformQuantConfig& c, const Shape& float_shape) {
  if (!float_shape.IsArray()) return Status::Error("uniform quantize operates on arrays");
  if (c.quantization_dimension >= 0) {
    if (c.quantization_dimension >= static_cast<int64_t>(float_shape.rank()))
      return Status::Error("uniform quantize quantization_dimension " + std::to_string(c.quantization_dimension) +
                           " is out of range for " + Str(float_shape));
    int64_t channels = float_shape.dims[c.quantization_dimension];
    if (static_cast<int64_t>(c.scale.size()) != channels)
      return Status::Error("per-axis uniform quantize needs " + std::to_string(channels) + " scales (dimension " +
                           std::to_string(c.quantization_dimension) + " of " + Str(float_shape) + "), got " +
                           std::to_string(c.scale.size()));
  }
  return OkStatus();
}

Status CheckQuantizeMx(const Instruction& inst, const QuantizeMxConfig& c, bool* device_form) {
  if (inst.operands.size() != 1)
    return Status::Error("QuantizeMX takes exactly one operand, got " + std::to_string(inst.operands.size()));
  const Shape& x = inst.operands[0]->shape;
  if (x.type != PrimitiveType::kF32 && x.type != PrimitiveType::kBF16)
    return Status::Error("QuantizeMX input must be F32 or BF16, got " + Str(x));
  if (c.dim < 0 || c.dim >= static_cast<int64_t>(x.rank()))
    return Status::Error("QuantizeMX dim " + std::to_string(c.dim) + " is out of range for " + Str(x));
  int64_t k = x.dims[c.dim];
  if (k % c.block_size != 0)
    return Status::Error("QuantizeMX size " + std::to_string(k) + " along dim " + std::to_string(c.dim) +
                         " is not a multiple of block_size " + std::to_string(c.block_size));
  if (k % 4 != 0)
    return Status::Error("QuantizeMX size " + std::to_string(k) + " along dim " + std::to_string(c.dim) +
                         " is not a multiple of 4");
  const Shape& r = inst.shape;
  if (!r.IsTuple() || r.tuple.size() != 2)
    return Status::Error("QuantizeMX result must be a (data, scales) tuple, got " + Str(r));
  const Shape& data = r.tuple[0];
  const Shape& scales = r.tuple[1];
  *device_form = data.type == PrimitiveType::kU32;
  if (data.type != c.element && !*device_form)
    return Status::Error("QuantizeMX data output " + Str(data) + " must be " +
                         std::string(PrimitiveTypeName(c.element)) + " (or u32 in the packed device form)");
  std::vector<int64_t> want_data(x.dims.begin(), x.dims.end()), want_scales(x.dims.begin(), x.dims.end());
  if (*device_form) want_data[c.dim] = k / 4;
  want_scales[c.dim] = k / c.block_size;
  if (std::vector<int64_t>(data.dims.begin(), data.dims.end()) != want_data)
    return Status::Error("QuantizeMX data output " + Str(data) + " has the wrong dimensions for input " + Str(x) +
                         (*device_form ? " (packed: four lanes per u32 along dim)" : ""));
  if (scales.type != PrimitiveType::kF8E8M0FNU ||
      std::vector<int64_t>(scales.dims.begin(), scales.dims.end()) != want_scales)
    return Status::Error("QuantizeMX scale output " + Str(scales) + " must be f8e8m0fnu with one scale per " +
                         std::to_string(c.block_size) + " elements along dim " + std::to_string(c.dim));
  return OkStatus();
}

Status CheckScaledMatmul(const Instruction& inst, const ScaledMatmulConfig& c) {
  if (inst.operands.size() != 4)
    return Status::Error("ScaledMatmul takes exactly 4 operands (lhs, rhs, lhs_scale, rhs_scale), got " +
                         std::to_string(inst.operands.size()));
  const Shape& lhs = inst.operands[0]->shape;
  const Shape& rhs = inst.operands[1]->shape;
  if (lhs.type != PrimitiveType::kU32)
    return Status::Error("ScaledMatmul LHS input type must be U32 (packed MX format from QuantizeMX), got " + Str(lhs));
  if (rhs.type != PrimitiveType::kU32)
    return Status::Error("ScaledMatmul RHS input type must be U32 (packed MX format), got " + Str(rhs));
  if (lhs.rank() < 2) return Status::Error("ScaledMatmul LHS tensor must have rank >= 2");
  if (rhs.rank() < 2) return Status::Error("ScaledMatmul RHS tensor must have rank >= 2");
  if (inst.shape.type != PrimitiveType::kF32 && inst.shape.type != PrimitiveType::kBF16)
    return Status::Error("ScaledMatmul output type " + std::string(PrimitiveTypeName(inst.shape.type)) +
                         ": only F32 and BF16 are supported");
  auto in_range = [](const std::vector<int64_t>& dims, const Shape& s, const char* what) -> Status {
    for (int64_t d : dims)
      if (d < 0 || d >= static_cast<int64_t>(s.rank()))
        return Status::Error(std::string("ScaledMatmul ") + what + " dimension " + std::to_string(d) +
                             " out of bounds for tensor of rank " + std::to_string(s.rank()));
    return OkStatus();
  };
  NHLO_TRY(in_range(c.lhs_batch, lhs, "lhs batch"));
  NHLO_TRY(in_range(c.rhs_batch, rhs, "rhs batch"));
  NHLO_TRY(in_range(c.lhs_contracting, lhs, "lhs contracting"));
  NHLO_TRY(in_range(c.rhs_contracting, rhs, "rhs contracting"));
  if (c.lhs_batch.size() != c.rhs_batch.size()) return Status::Error("ScaledMatmul batch dimensions do not match");
  for (size_t i = 0; i < c.lhs_batch.size(); ++i)
    if (lhs.dims[c.lhs_batch[i]] != rhs.dims[c.rhs_batch[i]])
      return Status::Error("ScaledMatmul batch dimension sizes do not match");
  if (c.lhs_contracting.size() != 1 || c.rhs_contracting.size() != 1)
    return Status::Error("ScaledMatmul needs exactly one contracting dimension on each side");
  for (const auto& [contract, batch, side] :
       {std::tuple{&c.lhs_contracting, &c.lhs_batch, "lhs"}, std::tuple{&c.rhs_contracting, &c.rhs_batch, "rhs"}})
    for (int64_t d : *contract)
      if (std::find(batch->begin(), batch->end(), d) != batch->end())
        return Status::Error(std::string("ScaledMatmul ") + side + " contracting dimension " + std::to_string(d) +
                             " that overlaps with batch dimension");
  if (lhs.dims[c.lhs_contracting[0]] != rhs.dims[c.rhs_contracting[0]])
    return Status::Error("ScaledMatmul contracting dimension sizes do not match");
  // Scales: one per block of 32 logical (= 8 packed) elements along the contracting dimension.
  for (int side = 0; side < 2; ++side) {
    const Shape& data = side ? rhs : lhs;
    const Shape& scale = inst.operands[2 + side]->shape;
    int64_t cd = side ? c.rhs_contracting[0] : c.lhs_contracting[0];
    std::vector<int64_t> want(data.dims.begin(), data.dims.end());
    want[cd] = data.dims[cd] * 4 / c.block_size;
    if (scale.type != PrimitiveType::kF8E8M0FNU || std::vector<int64_t>(scale.dims.begin(), scale.dims.end()) != want)
      return Status::Error(std::string("ScaledMatmul ") + (side ? "rhs" : "lhs") + "_scale " + Str(scale) +
                           " must be f8e8m0fnu with one scale per 32 elements along the contracting dimension");
  }
  return OkStatus();
}

}  // namespace nhlo

namespace nhlo {
namespace {

std::string Quoted(std::string_view target) { return "custom_call_target \"" + std::string(target) + "\""; }

// The computations a custom call names, in called_computations then to_apply.
std::vector<const Computation*> NamedComputations(const Instruction& inst) {
  std::vector<const Computation*> out;
  for (AttrId id : {AttrId::kCalledComputations, AttrId::kToApply})
    if (const Attribute* a = inst.FindAttr(id))
      for (const Computation* c : a->computations) out.push_back(c);
  return out;
}

Status CheckTopK(const Instruction& inst, std::string_view target) {
  const Shape& r = inst.shape;
  if (inst.operands.size() != 1 || !inst.operands[0]->shape.IsArray() || inst.operands[0]->shape.rank() < 1)
    return Status::Error(Quoted(target) + " takes one array operand of rank >= 1");
  const Shape& x = inst.operands[0]->shape;
  if (!r.IsTuple() || r.tuple.size() != 2 || !r.tuple[0].IsArray() || !r.tuple[1].IsArray() ||
      r.tuple[0].type != x.type || r.tuple[1].type != PrimitiveType::kS32 || r.tuple[0].rank() != x.rank() ||
      r.tuple[1].rank() != x.rank())
    return Status::Error(Quoted(target) + " returns (" + std::string(PrimitiveTypeName(x.type)) +
                         " values, s32 indices) of the operand's rank, got " + Str(r));
  size_t last = x.rank() - 1;
  for (size_t d = 0; d < x.rank(); ++d) {
    int64_t want = r.tuple[0].dims[d];
    if (r.tuple[1].dims[d] != want || (d != last && want != x.dims[d]) || (d == last && want > x.dims[d]))
      return Status::Error(Quoted(target) + " result " + Str(r) + " does not take k <= " +
                           std::to_string(x.dims[last]) + " elements along the last dimension of " + Str(x));
  }
  std::vector<const Computation*> called = NamedComputations(inst);
  if (called.size() > 1) return Status::Error(Quoted(target) + " names more than one comparator");
  // (value, value) or, as XLA's TopkRewriter writes it, (value, value, index, index).
  if (called.size() == 1 && called[0]->Parameters().size() != 2 && called[0]->Parameters().size() != 4)
    return Status::Error(Quoted(target) + " comparator '" + std::string(called[0]->name) +
                         "' must take 2 parameters (or 4 with the indices)");
  return OkStatus();
}

// The builder-library calls nhlo computes natively (no called computation): operands and
// result as each function defines them.
Status CheckBuilderLibraryCall(const Instruction& inst, std::string_view target, CustomCallKind kind) {
  const Shape& r = inst.shape;
  auto arrays = [&](size_t n) {
    if (inst.operands.size() != n) return false;
    for (const Instruction* o : inst.operands)
      if (!o->shape.IsArray()) return false;
    return r.IsArray();
  };
  auto result_must_be = [&](const std::vector<int64_t>& dims, PrimitiveType type) -> Status {
    bool same = r.IsArray() && r.type == type && r.rank() == dims.size();
    for (size_t d = 0; same && d < dims.size(); ++d) same = r.dims[d] == dims[d];
    if (same) return OkStatus();
    std::string text = std::string(PrimitiveTypeName(type)) + "[";
    for (size_t d = 0; d < dims.size(); ++d) text += (d ? "," : "") + std::to_string(dims[d]);
    return Status::Error(Quoted(target) + " gives " + text + "], not " + Str(r));
  };
  auto dims_of = [](const Shape& s) { return std::vector<int64_t>(s.dims.begin(), s.dims.end()); };
  switch (kind) {
    case CustomCallKind::kEinsum: {
      if (!arrays(2)) return Status::Error(Quoted(target) + " takes two array operands");
      const Shape& x = inst.operands[0]->shape;
      const Shape& y = inst.operands[1]->shape;
      bool type_ok = x.type == r.type && y.type == r.type &&
                     (r.type == PrimitiveType::kF32 || r.type == PrimitiveType::kF64 || IsInteger(r.type));
      if (!type_ok)
        return Status::Error(Quoted(target) + " computes on f32, f64 or integer operands of its result's type, not " +
                             Str(x) + " and " + Str(y) + " to " + Str(r));
      const Attribute* config = inst.FindAttr(AttrId::kBackendConfig);
      if (!config) return Status::Error(Quoted(target) + " needs its einsum as backend_config (\"ij,jk->ik\")");
      NHLO_ASSIGN_OR_RETURN(const EinsumConfig* parsed, CustomCallConfigOf(inst).As<EinsumConfig>());
      auto dims = EinsumResultDims(*parsed, dims_of(x), dims_of(y));
      if (!dims.ok()) return dims.status();
      return result_must_be(*dims, r.type);
    }
    case CustomCallKind::kMatrixDiagonal: {
      if (!arrays(1) || inst.operands[0]->shape.rank() < 2)
        return Status::Error(Quoted(target) + " takes one array operand of rank >= 2");
      std::vector<int64_t> dims = dims_of(inst.operands[0]->shape);
      int64_t n = std::min(dims[dims.size() - 2], dims.back());
      dims.resize(dims.size() - 2);
      dims.push_back(n);
      return result_must_be(dims, inst.operands[0]->shape.type);
    }
    case CustomCallKind::kScramblePhiloxKey:
      if (!arrays(1) || inst.operands[0]->shape.type != PrimitiveType::kU64)
        return Status::Error(Quoted(target) + " takes one u64 array of keys");
      return result_must_be(dims_of(inst.operands[0]->shape), PrimitiveType::kU64);
    case CustomCallKind::kTridiagonalSolve: {
      size_t n = inst.operands.size();
      if ((n != 2 && n != 4) || !arrays(n))
        return Status::Error(Quoted(target) + " takes (diagonals, rhs) or (lower, main, upper, rhs) arrays");
      const Shape& rhs = inst.operands[n - 1]->shape;
      if ((rhs.type != PrimitiveType::kF32 && rhs.type != PrimitiveType::kF64) || rhs.rank() < 2)
        return Status::Error(Quoted(target) + " solves f32 or f64 systems of rank >= 2, not " + Str(rhs));
      std::vector<int64_t> batch = dims_of(rhs);
      batch.resize(batch.size() - 2);
      // Two operands: diagonals [..., 3, M], rhs [..., M, K]; four: [..., 1, M] each, rhs [..., K, M].
      int64_t m = n == 2 ? rhs.dims[rhs.rank() - 2] : rhs.dims[rhs.rank() - 1];
      std::vector<int64_t> diag = batch;
      diag.push_back(n == 2 ? 3 : 1);
      diag.push_back(m);
      for (size_t i = 0; i + 1 < n; ++i) {
        const Shape& d = inst.operands[i]->shape;
        if (d.type != rhs.type || dims_of(d) != diag)
          return Status::Error(Quoted(target) + " diagonal operand " + std::to_string(i) + " " + Str(d) + " must be " +
                               std::string(PrimitiveTypeName(rhs.type)) + "[..., " +
                               std::to_string(diag[diag.size() - 2]) + ", " + std::to_string(m) + "] for rhs " +
                               Str(rhs));
      }
      return result_must_be(dims_of(rhs), rhs.type);
    }
    case CustomCallKind::kNone:
    case CustomCallKind::kUnknown:
    case CustomCallKind::kUniformQuantize:
    case CustomCallKind::kUniformDequantize:
    case CustomCallKind::kQuantizeMx:
    case CustomCallKind::kScaledMatmul:
    case CustomCallKind::kIdentity:
    case CustomCallKind::kShardShape:
    case CustomCallKind::kTopK:
    case CustomCallKind::kCallComputation:
    case CustomCallKind::kBuilderMath:
    case CustomCallKind::kSliceToDynamic:
    case CustomCallKind::kPadToStatic:
    case CustomCallKind::kThreefry2x32:
    case CustomCallKind::kLu:
    case CustomCallKind::kCholesky:
    case CustomCallKind::kQr:
    case CustomCallKind::kQrQ:
    case CustomCallKind::kPivotsToPermutation:
    case CustomCallKind::kTriangularSolve:
    case CustomCallKind::kEigh:
    case CustomCallKind::kSvd:
    case CustomCallKind::kGtsv:
    case CustomCallKind::kEig:
    case CustomCallKind::kNeuronSoftmax:
    case CustomCallKind::kNeuronSoftmaxBackward:
    case CustomCallKind::kNeuronRmsNorm:
    case CustomCallKind::kNeuronArgMax:
    case CustomCallKind::kNeuronArgMin:
    case CustomCallKind::kBlockQuantize:
    case CustomCallKind::kBlockDequantize:
    case CustomCallKind::kBlockScaledDot:
    case CustomCallKind::kCublasGemm:
    case CustomCallKind::kCudnnConv:
    case CustomCallKind::kCubSort:
    case CustomCallKind::kCudnnFmha:
    case CustomCallKind::kHostCallback:
    case CustomCallKind::kShadowProbe: break;
  }
  return Status::Error("compiler bug: " + Quoted(target) + " is not a builder-library call");
}

}  // namespace

const Computation* CustomCallComputation(const Instruction& inst) {
  std::vector<const Computation*> called = NamedComputations(inst);
  return called.empty() ? nullptr : called[0];
}

CustomCallKind CustomCallKindOf(const Instruction& inst) {
  if (inst.opcode != Opcode::kCustomCall) return CustomCallKind::kNone;
  return CustomCallKindOf(CustomCallTarget(inst), CustomCallComputation(inst) != nullptr);
}

Status CheckCustomCallExecutable(const Instruction& inst) {
  std::string_view target = CustomCallTarget(inst);
  std::vector<const Computation*> called = NamedComputations(inst);
  switch (CustomCallKindOf(inst)) {
    case CustomCallKind::kNone: return OkStatus();
    case CustomCallKind::kUnknown:
      return Status::Error("unknown " + Quoted(target) +
                           ": nhlo cannot compile or run it (its meaning lives in the backend that provides it; "
                           "docs/interpreter.md lists the known targets)");
    case CustomCallKind::kUniformQuantize:
    case CustomCallKind::kUniformDequantize:
    case CustomCallKind::kQuantizeMx:
    case CustomCallKind::kScaledMatmul: return OkStatus();  // their contracts are the verifier's (CheckKnownCustomCall)
    case CustomCallKind::kIdentity:
      if (inst.operands.size() != 1 || !SameShape(inst.operands[0]->shape, inst.shape))
        return Status::Error(Quoted(target) + " is an identity: it takes one operand of its result's shape " +
                             Str(inst.shape));
      return OkStatus();
    case CustomCallKind::kShardShape: {
      if (inst.operands.size() != 1 || !inst.operands[0]->shape.IsArray() || !inst.shape.IsArray() ||
          inst.operands[0]->shape.type != inst.shape.type)
        return Status::Error(Quoted(target) + " takes one array operand of its result's element type");
      const Shape& x = inst.operands[0]->shape;
      if (x.ElementCount() != inst.shape.ElementCount())
        return Status::Error(Quoted(target) + " from " + Str(x) + " to " + Str(inst.shape) +
                             " changes the element count: the interpreter does not yet cut a value into per-device "
                             "shards or put shards together (the sharding annotation of an unpartitioned program)");
      return OkStatus();
    }
    case CustomCallKind::kTopK: return CheckTopK(inst, target);
    case CustomCallKind::kLu:
    case CustomCallKind::kCholesky:
    case CustomCallKind::kQr:
    case CustomCallKind::kQrQ:
    case CustomCallKind::kPivotsToPermutation:
    case CustomCallKind::kTriangularSolve:
    case CustomCallKind::kEigh:
    case CustomCallKind::kSvd:
    case CustomCallKind::kGtsv:
    case CustomCallKind::kEig: {
      // The operand counts and the backend_config now; shapes and types when the interpreter loads it.
      return CustomCallConfigOf(inst).As<SolverConfig>().status();
    }
    case CustomCallKind::kNeuronSoftmax:
    case CustomCallKind::kNeuronSoftmaxBackward:
    case CustomCallKind::kNeuronRmsNorm:
    case CustomCallKind::kNeuronArgMax:
    case CustomCallKind::kNeuronArgMin: {
      if (inst.operands.empty() || !inst.operands[0]->shape.IsArray())
        return Status::Error(Quoted(target) + " takes an array operand");
      return CustomCallConfigOf(inst).As<NeuronDimension>().status();
    }
    case CustomCallKind::kThreefry2x32: return OkStatus();  // shapes and types checked when the interpreter loads it
    case CustomCallKind::kBlockQuantize:
    case CustomCallKind::kBlockDequantize:
    case CustomCallKind::kBlockScaledDot:
    case CustomCallKind::kCublasGemm:
    case CustomCallKind::kCudnnConv:
    case CustomCallKind::kCubSort:
    case CustomCallKind::kCudnnFmha:
    case CustomCallKind::kHostCallback: return CheckExpandedCall(inst);
    case CustomCallKind::kShadowProbe:
      if (!inst.shape.IsTuple() || !inst.shape.tuple.empty())
        return Status::Error(Quoted(target) + " returns the empty tuple ()");
      return OkStatus();
    case CustomCallKind::kSliceToDynamic: {
      const Shape& r = inst.shape;
      bool ok = r.IsArray() && !inst.operands.empty() && inst.operands.size() == r.rank() + 1 &&
                inst.operands[0]->shape.IsArray() && inst.operands[0]->shape.type == r.type &&
                inst.operands[0]->shape.rank() == r.rank();
      for (size_t d = 0; ok && d < r.rank(); ++d) ok = inst.operands[0]->shape.dims[d] == r.dims[d];
      for (size_t i = 1; ok && i < inst.operands.size(); ++i)
        ok = inst.operands[i]->shape.IsScalar() && inst.operands[i]->shape.type == PrimitiveType::kS32;
      if (!ok)
        return Status::Error(Quoted(target) +
                             " takes data of its result's bounds and one s32[] size per dimension, "
                             "to " +
                             Str(r));
      return OkStatus();
    }
    case CustomCallKind::kPadToStatic: {
      const Shape& r = inst.shape;
      bool ok = inst.operands.size() == 1 && inst.operands[0]->shape.IsArray() && r.IsTuple() &&
                r.tuple.size() == inst.operands[0]->shape.rank() + 1 && r.tuple[0].IsArray() &&
                r.tuple[0].type == inst.operands[0]->shape.type && r.tuple[0].rank() == inst.operands[0]->shape.rank();
      for (size_t d = 0; ok && d < r.tuple[0].rank(); ++d)
        ok = r.tuple[0].dims[d] == inst.operands[0]->shape.dims[d] && !r.tuple[0].IsDynamicDim(d);
      for (size_t i = 1; ok && i < r.tuple.size(); ++i)
        ok = r.tuple[i].IsScalar() && r.tuple[i].type == PrimitiveType::kS32;
      if (!ok)
        return Status::Error(Quoted(target) +
                             " takes one array and returns (its data at the bound, one s32[] size "
                             "per dimension), not " +
                             Str(r));
      return OkStatus();
    }
    case CustomCallKind::kBuilderMath: {
      const BuilderMathRow& row = *FindBuilderMath(target);
      const Shape& r = inst.shape;
      bool types_ok = r.IsArray() && (IsFloat(r.type) || (row.complex && IsComplex(r.type))) &&
                      (row.fn == BuilderMathFn::kNextAfter || IsCastableLowPrecisionFloat(r.type) ||
                       r.type == PrimitiveType::kF32 || r.type == PrimitiveType::kF64 || IsComplex(r.type));
      if (!types_ok)
        return Status::Error(Quoted(target) + " computes on " +
                             (row.complex ? "floating-point or complex" : "floating-point") + " arrays, not " + Str(r));
      if (inst.operands.size() != static_cast<size_t>(row.operands))
        return Status::Error(Quoted(target) + " takes " + std::to_string(row.operands) + " operand(s), not " +
                             std::to_string(inst.operands.size()));
      for (size_t i = 0; i < inst.operands.size(); ++i)
        if (!SameShape(inst.operands[i]->shape, r))
          return Status::Error(Quoted(target) + " operand " + std::to_string(i) + " " + Str(inst.operands[i]->shape) +
                               " does not have its result's shape " + Str(r));
      return OkStatus();
    }
    case CustomCallKind::kEinsum:
    case CustomCallKind::kMatrixDiagonal:
    case CustomCallKind::kScramblePhiloxKey:
    case CustomCallKind::kTridiagonalSolve: return CheckBuilderLibraryCall(inst, target, CustomCallKindOf(inst));
    case CustomCallKind::kCallComputation: {
      if (called.empty())
        return Status::Error(Quoted(target) +
                             " names no computation to run (called_computations={...}); nhlo "
                             "does not expand XLA builder library calls by name");
      if (called.size() > 1) return Status::Error(Quoted(target) + " names more than one computation to run");
      const Computation& f = *called[0];
      std::vector<Instruction*> params = f.Parameters();
      if (params.size() != inst.operands.size())
        return Status::Error(Quoted(target) + " passes " + std::to_string(inst.operands.size()) + " operand(s) to " +
                             "computation '" + std::string(f.name) + "', which takes " + std::to_string(params.size()) +
                             " parameter(s)");
      // A computation of scalars called with arrays is a comparator or reducer the backend's
      // kernel applies (PartialReduce, ApproxTopK on TPU), not an expansion of the call.
      bool applies_per_element = !params.empty();
      for (size_t i = 0; i < params.size() && applies_per_element; ++i)
        applies_per_element = params[i]->shape.IsScalar() && inst.operands[i]->shape.IsArray();
      bool some_array = false;
      for (const Instruction* o : inst.operands)
        some_array = some_array || (o->shape.IsArray() && !o->shape.IsScalar());
      if (applies_per_element && some_array)
        return Status::Error(Quoted(target) + " calls computation '" + std::string(f.name) +
                             "' on scalars (a "
                             "comparator or reducer its kernel applies), so it is not an expansion nhlo could run: "
                             "its meaning lives in the backend that provides it");
      for (size_t i = 0; i < params.size(); ++i)
        if (!SameShape(params[i]->shape, inst.operands[i]->shape))
          return Status::Error(Quoted(target) + " operand " + std::to_string(i) + " " + Str(inst.operands[i]->shape) +
                               " does not match parameter " + std::to_string(i) + " " + Str(params[i]->shape) +
                               " of computation '" + std::string(f.name) + "'");
      if (!SameShape(f.root->shape, inst.shape))
        return Status::Error(Quoted(target) + " result " + Str(inst.shape) + " is not what computation '" +
                             std::string(f.name) + "' returns, " + Str(f.root->shape));
      return OkStatus();
    }
  }
  return OkStatus();
}

}  // namespace nhlo
