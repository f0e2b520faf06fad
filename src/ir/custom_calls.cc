// SPDX-License-Identifier: Apache-2.0
#include "ir/custom_calls.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <optional>

namespace nhlo {
namespace {

using Json = nlohmann::json;

Result<Json> ParseObject(std::string_view text, std::string_view what) {
  Json j = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::Error(std::string(what) + " backend_config is not valid JSON");
  if (!j.is_object()) return Status::Error(std::string(what) + " backend_config must be a JSON object");
  return j;
}

Result<int64_t> IntKey(const Json& j, const char* key, std::string_view what) {
  auto it = j.find(key);
  if (it == j.end()) return Status::Error(std::string(what) + " backend_config has no \"" + key + "\"");
  if (!it->is_number_integer()) return Status::Error(std::string(what) + " backend_config \"" + key + "\" must be an integer");
  return it->get<int64_t>();
}

Result<std::string> StringKey(const Json& j, const char* key, std::string_view what) {
  auto it = j.find(key);
  if (it == j.end()) return Status::Error(std::string(what) + " backend_config has no \"" + key + "\"");
  if (!it->is_string()) return Status::Error(std::string(what) + " backend_config \"" + key + "\" must be a string");
  return it->get<std::string>();
}

Result<std::vector<int64_t>> IntListKey(const Json& j, const char* key, std::string_view what) {
  auto it = j.find(key);
  if (it == j.end()) return std::vector<int64_t>{};
  if (!it->is_array()) return Status::Error(std::string(what) + " backend_config \"" + key + "\" must be an array");
  std::vector<int64_t> out;
  for (const Json& v : *it) {
    if (!v.is_number_integer()) return Status::Error(std::string(what) + " backend_config \"" + key + "\" must hold integers");
    out.push_back(v.get<int64_t>());
  }
  return out;
}

// MLIR spellings of the quantized storage and expressed types.
std::optional<PrimitiveType> QuantTypeFromName(std::string_view name) {
  static constexpr std::pair<std::string_view, PrimitiveType> kNames[] = {
      {"i4", PrimitiveType::kS4},   {"i8", PrimitiveType::kS8},   {"i16", PrimitiveType::kS16},
      {"i32", PrimitiveType::kS32}, {"u4", PrimitiveType::kU4},   {"u8", PrimitiveType::kU8},
      {"u16", PrimitiveType::kU16}, {"ui4", PrimitiveType::kU4},  {"ui8", PrimitiveType::kU8},
      {"ui16", PrimitiveType::kU16}, {"f32", PrimitiveType::kF32}, {"bf16", PrimitiveType::kBF16},
      {"f16", PrimitiveType::kF16},  {"f64", PrimitiveType::kF64}};
  for (auto [n, t] : kNames)
    if (n == name) return t;
  if (auto t = PrimitiveTypeFromName(name)) return t;  // also accept XLA spellings (s8, u8, ...)
  return std::nullopt;
}

int64_t IntTypeMin(PrimitiveType t) { return IsSignedInt(t) ? -(int64_t(1) << (BitWidth(t) - 1)) : 0; }
int64_t IntTypeMax(PrimitiveType t) {
  return IsSignedInt(t) ? (int64_t(1) << (BitWidth(t) - 1)) - 1 : (int64_t(1) << BitWidth(t)) - 1;
}

std::string Str(const Shape& s) { return ShapeToString(s, false); }

}  // namespace

std::optional<PrimitiveType> MxElementFromName(std::string_view name) {
  if (name == "float8_e4m3fn") return PrimitiveType::kF8E4M3FN;
  if (name == "float8_e5m2") return PrimitiveType::kF8E5M2;
  return std::nullopt;
}

std::string_view MxElementName(PrimitiveType t) {
  return t == PrimitiveType::kF8E5M2 ? "float8_e5m2" : "float8_e4m3fn";
}

int MxEmax(PrimitiveType t) { return t == PrimitiveType::kF8E5M2 ? 15 : 8; }

std::string_view BackendConfigText(const Instruction& inst) {
  const Attribute* a = inst.FindAttr(AttrId::kBackendConfig);
  return a ? a->text : std::string_view();
}

std::string_view CustomCallTarget(const Instruction& inst) {
  if (inst.opcode != Opcode::kCustomCall) return {};
  const Attribute* a = inst.FindAttr(AttrId::kCustomCallTarget);
  return a ? a->text : std::string_view();
}

Result<UniformQuantConfig> ParseUniformQuantConfig(std::string_view json) {
  constexpr std::string_view what = "uniform quantize";
  NHLO_ASSIGN_OR_RETURN(Json j, ParseObject(json, what));
  UniformQuantConfig c;
  auto scale = j.find("scale");
  if (scale == j.end()) return Status::Error("uniform quantize backend_config has no \"scale\"");
  if (!scale->is_array())
    return Status::Error("uniform quantize \"scale\" must be an array, also for per-tensor quantization (a scalar scale is rejected)");
  for (const Json& v : *scale) {
    if (!v.is_number()) return Status::Error("uniform quantize \"scale\" must hold numbers");
    c.scale.push_back(v.get<double>());
  }
  auto zp = j.find("zero_point");
  if (zp == j.end()) return Status::Error("uniform quantize backend_config has no \"zero_point\"");
  if (!zp->is_array())
    return Status::Error("uniform quantize \"zero_point\" must be an array, also for per-tensor quantization");
  for (const Json& v : *zp) {
    if (!v.is_number_integer()) return Status::Error("uniform quantize \"zero_point\" must hold integers");
    c.zero_point.push_back(v.get<int64_t>());
  }
  NHLO_ASSIGN_OR_RETURN(c.quantization_dimension, IntKey(j, "quantization_dimension", what));
  NHLO_ASSIGN_OR_RETURN(c.storage_min, IntKey(j, "storage_min", what));
  NHLO_ASSIGN_OR_RETURN(c.storage_max, IntKey(j, "storage_max", what));
  NHLO_ASSIGN_OR_RETURN(std::string storage, StringKey(j, "storage_type", what));
  NHLO_ASSIGN_OR_RETURN(std::string expressed, StringKey(j, "expressed_type", what));
  auto st = QuantTypeFromName(storage);
  if (!st || !IsInteger(*st)) return Status::Error("uniform quantize storage_type \"" + storage + "\" is not an integer type");
  auto et = QuantTypeFromName(expressed);
  if (!et || !IsFloat(*et)) return Status::Error("uniform quantize expressed_type \"" + expressed + "\" is not a float type");
  c.storage_type = *st;
  c.expressed_type = *et;
  if (c.scale.empty() || c.zero_point.empty()) return Status::Error("uniform quantize \"scale\" and \"zero_point\" must not be empty");
  if (c.scale.size() != c.zero_point.size())
    return Status::Error("uniform quantize \"scale\" has " + std::to_string(c.scale.size()) + " entries but \"zero_point\" has " +
                         std::to_string(c.zero_point.size()));
  for (double s : c.scale)
    if (!(s > 0) || !std::isfinite(s)) return Status::Error("uniform quantize scales must be positive and finite");
  if (c.quantization_dimension < -1) return Status::Error("uniform quantize quantization_dimension must be -1 (per-tensor) or >= 0 (per-axis)");
  if (c.storage_min > c.storage_max || c.storage_min < IntTypeMin(c.storage_type) || c.storage_max > IntTypeMax(c.storage_type))
    return Status::Error("uniform quantize storage range [" + std::to_string(c.storage_min) + ", " + std::to_string(c.storage_max) +
                         "] does not fit " + storage);
  return c;
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

Result<QuantizeMxConfig> ParseQuantizeMxConfig(std::string_view json) {
  constexpr std::string_view what = "QuantizeMX";
  NHLO_ASSIGN_OR_RETURN(Json j, ParseObject(json, what));
  QuantizeMxConfig c;
  NHLO_ASSIGN_OR_RETURN(std::string dtype, StringKey(j, "dtype", what));
  auto element = MxElementFromName(dtype);
  if (!element) return Status::Error("QuantizeMX dtype \"" + dtype + "\": only 'float8_e5m2' and 'float8_e4m3fn' are supported");
  c.element = *element;
  NHLO_ASSIGN_OR_RETURN(c.dim, IntKey(j, "dim", what));
  NHLO_ASSIGN_OR_RETURN(c.block_size, IntKey(j, "block_size", what));
  NHLO_ASSIGN_OR_RETURN(c.scale_method, StringKey(j, "scale_method", what));
  if (c.block_size != 32) return Status::Error("QuantizeMX block_size must be 32, got " + std::to_string(c.block_size));
  if (c.scale_method != "EMAX") return Status::Error("QuantizeMX scale_method must be \"EMAX\", got \"" + c.scale_method + "\"");
  return c;
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
  if (k % 4 != 0) return Status::Error("QuantizeMX size " + std::to_string(k) + " along dim " + std::to_string(c.dim) + " is not a multiple of 4");
  const Shape& r = inst.shape;
  if (!r.IsTuple() || r.tuple.size() != 2) return Status::Error("QuantizeMX result must be a (data, scales) tuple, got " + Str(r));
  const Shape& data = r.tuple[0];
  const Shape& scales = r.tuple[1];
  *device_form = data.type == PrimitiveType::kU32;
  if (data.type != c.element && !*device_form)
    return Status::Error("QuantizeMX data output " + Str(data) + " must be " + std::string(PrimitiveTypeName(c.element)) +
                         " (or u32 in the packed device form)");
  std::vector<int64_t> want_data(x.dims.begin(), x.dims.end()), want_scales(x.dims.begin(), x.dims.end());
  if (*device_form) want_data[c.dim] = k / 4;
  want_scales[c.dim] = k / c.block_size;
  if (std::vector<int64_t>(data.dims.begin(), data.dims.end()) != want_data)
    return Status::Error("QuantizeMX data output " + Str(data) + " has the wrong dimensions for input " + Str(x) +
                         (*device_form ? " (packed: four lanes per u32 along dim)" : ""));
  if (scales.type != PrimitiveType::kF8E8M0FNU || std::vector<int64_t>(scales.dims.begin(), scales.dims.end()) != want_scales)
    return Status::Error("QuantizeMX scale output " + Str(scales) + " must be f8e8m0fnu with one scale per " +
                         std::to_string(c.block_size) + " elements along dim " + std::to_string(c.dim));
  return OkStatus();
}

Result<ScaledMatmulConfig> ParseScaledMatmulConfig(std::string_view json) {
  constexpr std::string_view what = "ScaledMatmul";
  NHLO_ASSIGN_OR_RETURN(Json j, ParseObject(json, what));
  ScaledMatmulConfig c;
  NHLO_ASSIGN_OR_RETURN(c.lhs_batch, IntListKey(j, "lhs_batch_dims", what));
  NHLO_ASSIGN_OR_RETURN(c.lhs_contracting, IntListKey(j, "lhs_contracting_dims", what));
  NHLO_ASSIGN_OR_RETURN(c.rhs_batch, IntListKey(j, "rhs_batch_dims", what));
  NHLO_ASSIGN_OR_RETURN(c.rhs_contracting, IntListKey(j, "rhs_contracting_dims", what));
  NHLO_ASSIGN_OR_RETURN(std::string lhs, StringKey(j, "lhs_dtype", what));
  NHLO_ASSIGN_OR_RETURN(std::string rhs, StringKey(j, "rhs_dtype", what));
  auto l = MxElementFromName(lhs), r = MxElementFromName(rhs);
  if (!l || !r) return Status::Error("ScaledMatmul lane dtypes: only 'float8_e5m2' and 'float8_e4m3fn' are supported");
  c.lhs_element = *l;
  c.rhs_element = *r;
  NHLO_ASSIGN_OR_RETURN(c.block_size, IntKey(j, "block_size", what));
  if (c.block_size != 32) return Status::Error("ScaledMatmul block_size must be 32");
  return c;
}

std::string ScaledMatmulConfigJson(const ScaledMatmulConfig& c) {
  Json j = Json::object();
  j["block_size"] = c.block_size;
  j["lhs_batch_dims"] = c.lhs_batch;
  j["lhs_contracting_dims"] = c.lhs_contracting;
  j["lhs_dtype"] = std::string(MxElementName(c.lhs_element));
  j["rhs_batch_dims"] = c.rhs_batch;
  j["rhs_contracting_dims"] = c.rhs_contracting;
  j["rhs_dtype"] = std::string(MxElementName(c.rhs_element));
  return j.dump();  // keys sorted (std::map): deterministic text
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
    if (lhs.dims[c.lhs_batch[i]] != rhs.dims[c.rhs_batch[i]]) return Status::Error("ScaledMatmul batch dimension sizes do not match");
  if (c.lhs_contracting.size() != 1 || c.rhs_contracting.size() != 1)
    return Status::Error("ScaledMatmul needs exactly one contracting dimension on each side");
  for (const auto& [contract, batch, side] : {std::tuple{&c.lhs_contracting, &c.lhs_batch, "lhs"}, std::tuple{&c.rhs_contracting, &c.rhs_batch, "rhs"}})
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
