// SPDX-License-Identifier: Apache-2.0
#include "types/custom_call_configs.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <optional>

#include "types/ffi_attributes.h"

namespace nhlo {
namespace {

using Json = nlohmann::json;

// The config text parsed the way Module::ParseJson parses it (null: not valid JSON), kept in
// `storage`; so a reader given text and one given the IR's parsed value see the same thing.
const Json* ParseText(std::string_view text, Json& storage) {
  if (text.empty()) return nullptr;
  storage = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return storage.is_discarded() ? nullptr : &storage;
}

Result<const Json*> CheckObject(const Json* j, std::string_view what) {
  if (!j) return Status::Error(std::string(what) + " backend_config is not valid JSON");
  if (!j->is_object()) return Status::Error(std::string(what) + " backend_config must be a JSON object");
  return j;
}

Result<int64_t> IntKey(const Json& j, const char* key, std::string_view what) {
  auto it = j.find(key);
  if (it == j.end()) return Status::Error(std::string(what) + " backend_config has no \"" + key + "\"");
  if (!it->is_number_integer())
    return Status::Error(std::string(what) + " backend_config \"" + key + "\" must be an integer");
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
    if (!v.is_number_integer())
      return Status::Error(std::string(what) + " backend_config \"" + key + "\" must hold integers");
    out.push_back(v.get<int64_t>());
  }
  return out;
}

// MLIR spellings of the quantized storage and expressed types.
std::optional<PrimitiveType> QuantTypeFromName(std::string_view name) {
  static constexpr std::pair<std::string_view, PrimitiveType> kNames[] = {
      {"i4", PrimitiveType::kS4},    {"i8", PrimitiveType::kS8},   {"i16", PrimitiveType::kS16},
      {"i32", PrimitiveType::kS32},  {"u4", PrimitiveType::kU4},   {"u8", PrimitiveType::kU8},
      {"u16", PrimitiveType::kU16},  {"ui4", PrimitiveType::kU4},  {"ui8", PrimitiveType::kU8},
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

Result<UniformQuantConfig> ParseUniformQuantConfig(std::string_view json) {
  Json storage;
  return ParseUniformQuantConfig(ParseText(json, storage));
}

Result<UniformQuantConfig> ParseUniformQuantConfig(const Json* config) {
  constexpr std::string_view what = "uniform quantize";
  NHLO_ASSIGN_OR_RETURN(const Json* object, CheckObject(config, what));
  const Json& j = *object;
  UniformQuantConfig c;
  auto scale = j.find("scale");
  if (scale == j.end()) return Status::Error("uniform quantize backend_config has no \"scale\"");
  if (!scale->is_array())
    return Status::Error(
        "uniform quantize \"scale\" must be an array, also for per-tensor quantization (a scalar scale is rejected)");
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
  if (!st || !IsInteger(*st))
    return Status::Error("uniform quantize storage_type \"" + storage + "\" is not an integer type");
  auto et = QuantTypeFromName(expressed);
  if (!et || !IsFloat(*et))
    return Status::Error("uniform quantize expressed_type \"" + expressed + "\" is not a float type");
  c.storage_type = *st;
  c.expressed_type = *et;
  if (c.scale.empty() || c.zero_point.empty())
    return Status::Error("uniform quantize \"scale\" and \"zero_point\" must not be empty");
  if (c.scale.size() != c.zero_point.size())
    return Status::Error("uniform quantize \"scale\" has " + std::to_string(c.scale.size()) +
                         " entries but \"zero_point\" has " + std::to_string(c.zero_point.size()));
  for (double s : c.scale)
    if (!(s > 0) || !std::isfinite(s)) return Status::Error("uniform quantize scales must be positive and finite");
  if (c.quantization_dimension < -1)
    return Status::Error("uniform quantize quantization_dimension must be -1 (per-tensor) or >= 0 (per-axis)");
  if (c.storage_min > c.storage_max || c.storage_min < IntTypeMin(c.storage_type) ||
      c.storage_max > IntTypeMax(c.storage_type))
    return Status::Error("uniform quantize storage range [" + std::to_string(c.storage_min) + ", " +
                         std::to_string(c.storage_max) + "] does not fit " + storage);
  return c;
}

Result<QuantizeMxConfig> ParseQuantizeMxConfig(std::string_view json) {
  Json storage;
  return ParseQuantizeMxConfig(ParseText(json, storage));
}

Result<QuantizeMxConfig> ParseQuantizeMxConfig(const Json* config) {
  constexpr std::string_view what = "QuantizeMX";
  NHLO_ASSIGN_OR_RETURN(const Json* object, CheckObject(config, what));
  const Json& j = *object;
  QuantizeMxConfig c;
  NHLO_ASSIGN_OR_RETURN(std::string dtype, StringKey(j, "dtype", what));
  auto element = MxElementFromName(dtype);
  if (!element)
    return Status::Error("QuantizeMX dtype \"" + dtype + "\": only 'float8_e5m2' and 'float8_e4m3fn' are supported");
  c.element = *element;
  NHLO_ASSIGN_OR_RETURN(c.dim, IntKey(j, "dim", what));
  NHLO_ASSIGN_OR_RETURN(c.block_size, IntKey(j, "block_size", what));
  NHLO_ASSIGN_OR_RETURN(c.scale_method, StringKey(j, "scale_method", what));
  if (c.block_size != 32) return Status::Error("QuantizeMX block_size must be 32, got " + std::to_string(c.block_size));
  if (c.scale_method != "EMAX")
    return Status::Error("QuantizeMX scale_method must be \"EMAX\", got \"" + c.scale_method + "\"");
  return c;
}

Result<ScaledMatmulConfig> ParseScaledMatmulConfig(std::string_view json) {
  Json storage;
  return ParseScaledMatmulConfig(ParseText(json, storage));
}

Result<ScaledMatmulConfig> ParseScaledMatmulConfig(const Json* config) {
  constexpr std::string_view what = "ScaledMatmul";
  NHLO_ASSIGN_OR_RETURN(const Json* object, CheckObject(config, what));
  const Json& j = *object;
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

namespace {

template <typename T>
CustomCallConfig Decoded(Result<T> parsed) {
  CustomCallConfig config;
  if (parsed.ok())
    config.value = std::move(*parsed);
  else
    config.status = parsed.status();
  return config;
}

}  // namespace

CustomCallConfig DecodeCustomCallConfig(std::string_view target, bool calls_computation, const Json* json,
                                        std::string_view config_text, const CustomCallOperands& operands) {
  const CustomCallKind kind = CustomCallKindOf(target, calls_computation);
  const std::vector<int64_t>& ranks = operands.ranks;
  switch (kind) {
    case CustomCallKind::kUniformQuantize:
    case CustomCallKind::kUniformDequantize: return Decoded(ParseUniformQuantConfig(json));
    case CustomCallKind::kQuantizeMx: return Decoded(ParseQuantizeMxConfig(json));
    case CustomCallKind::kScaledMatmul: return Decoded(ParseScaledMatmulConfig(json));
    case CustomCallKind::kBlockScaledDot: return Decoded(ParseBlockScaledDotConfig(json));
    case CustomCallKind::kCublasGemm: return Decoded(ParseGemmConfig(target, json));
    case CustomCallKind::kCudnnConv: return Decoded(ParseConvConfig(target, json, config_text));
    case CustomCallKind::kCubSort: return Decoded(ParseCubSortConfig(target, json, config_text));
    case CustomCallKind::kCudnnFmha: return Decoded(ParseFmhaConfig(target, json));
    case CustomCallKind::kEinsum:
      // The operand checks (two arrays) come first where the call is checked; then this.
      if (ranks.size() != 2 || ranks[0] < 0 || ranks[1] < 0) return {};
      return Decoded(ParseEinsumConfig(config_text, static_cast<size_t>(ranks[0]), static_cast<size_t>(ranks[1])));
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
      return Decoded(DecodeSolverCall(SolverOpOf(kind), target, ranks.size(), config_text, json));
    case CustomCallKind::kNeuronSoftmax:
    case CustomCallKind::kNeuronSoftmaxBackward:
    case CustomCallKind::kNeuronRmsNorm:
    case CustomCallKind::kNeuronArgMax:
    case CustomCallKind::kNeuronArgMin: {
      if (ranks.empty() || ranks[0] < 0) return {};
      Result<int64_t> dim = DecodeNeuronDimension(config_text, static_cast<size_t>(ranks[0]));
      if (!dim.ok()) return Decoded(Result<NeuronDimension>(dim.status()));
      return Decoded(Result<NeuronDimension>(NeuronDimension{*dim}));
    }
    case CustomCallKind::kNone:
    case CustomCallKind::kUnknown:
    case CustomCallKind::kIdentity:
    case CustomCallKind::kShardShape:
    case CustomCallKind::kTopK:
    case CustomCallKind::kBuilderMath:
    case CustomCallKind::kMatrixDiagonal:
    case CustomCallKind::kScramblePhiloxKey:
    case CustomCallKind::kSliceToDynamic:
    case CustomCallKind::kPadToStatic:
    case CustomCallKind::kTridiagonalSolve:
    case CustomCallKind::kThreefry2x32:
    case CustomCallKind::kHostCallback:
    case CustomCallKind::kShadowProbe:
    case CustomCallKind::kBlockQuantize:
    case CustomCallKind::kBlockDequantize:
    case CustomCallKind::kCallComputation: return {};
  }
  return {};
}

CustomCallConfig DecodeCustomCallConfig(std::string_view target, bool calls_computation, std::string_view config_text,
                                        const CustomCallOperands& operands) {
  Json storage;
  return DecodeCustomCallConfig(target, calls_computation, ParseText(config_text, storage), config_text, operands);
}

Result<CubSortConfig> ParseCubSortConfig(std::string_view target, const Json* json, std::string_view text) {
  CubSortConfig c;
  const std::string bad = "custom_call_target \"" + std::string(target) + "\" backend_config ";
  if (json) {  // SortOptions in JSON: {"descending":true}; proto JSON leaves a false field out
    if (!json->is_object()) return Status::Error(bad + "is not a SortOptions object");
    auto it = json->find("descending");
    if (it == json->end() || it->is_null()) return c;
    if (!it->is_boolean()) return Status::Error(bad + "\"descending\" is not true or false");
    c.descending = it->get<bool>();
    return c;
  }
  // The typed-FFI form's attribute dictionary: {descending = true, batch_size = 10 : i64}.
  Result<FfiAttributes> attrs = ParseFfiAttributes(text);
  if (!attrs.ok()) {
    // Neither form: say what was expected rather than what the dictionary reader tripped on.
    if (text.find_first_of('{') == std::string_view::npos)
      return Status::Error(bad + "is neither JSON nor {name = value}");
    return Status::Error(bad + attrs.status().message());
  }
  // batch_size is not read: the rows follow from the shapes.
  auto it = attrs->find("descending");
  if (it == attrs->end()) return c;
  if (it->second != "true" && it->second != "false")
    return Status::Error(bad + "descending = " + it->second + " is not true or false");
  c.descending = it->second == "true";
  return c;
}

Result<BlockScaledDotConfig> ParseBlockScaledDotConfig(const Json* config) {
  BlockScaledDotConfig c;
  if (!config || !config->is_object()) return c;
  auto inner = config->find("block_scaled_dot_backend_config");
  if (inner == config->end() || !inner->is_object()) return c;
  auto size = inner->find("block_size");
  if (size == inner->end()) return c;
  // protobuf's JSON reader takes an int64 as a number or a decimal string; anything else makes
  // the whole config unreadable, which XLA treats as no config.
  int64_t n = 0;
  if (size->is_number_integer()) {
    n = size->get<int64_t>();
  } else if (size->is_string()) {
    const std::string& text = size->get_ref<const std::string&>();
    if (text.empty() || text.size() > 18 ||
        !std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
      return c;
    n = std::stoll(text);
  } else {
    return c;
  }
  if (n <= 0)
    return Status::Error("__op$block_scaled_dot backend_config block_size must be positive, got " + std::to_string(n));
  c.block_size = n;
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

namespace {

// One term: its letters and where its `...` stands (-1: none).
struct EinsumTerm {
  std::vector<int> letters;
  int ellipsis_at = -1;
};

Result<EinsumTerm> ReadEinsumTerm(std::string_view term, std::string_view whole) {
  EinsumTerm t;
  for (size_t i = 0; i < term.size(); ++i) {
    char c = term[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      t.letters.push_back(c);
    } else if (term.substr(i, 3) == "...") {
      if (t.ellipsis_at >= 0)
        return Status::Error("einsum config \"" + std::string(whole) + "\" has two '...' in one term");
      t.ellipsis_at = static_cast<int>(t.letters.size());
      i += 2;
    } else {
      return Status::Error("einsum config \"" + std::string(whole) + "\" has '" + std::string(1, c) +
                           "' where a letter or '...' belongs");
    }
  }
  return t;
}

}  // namespace

Result<EinsumConfig> ParseEinsumConfig(std::string_view text, size_t x_rank, size_t y_rank) {
  std::string whole(text);
  size_t comma = text.find(',');
  if (comma == std::string_view::npos || text.find(',', comma + 1) != std::string_view::npos)
    return Status::Error("einsum config \"" + whole + "\" must name exactly two operands (x,y->out)");
  size_t arrow = text.find("->");
  if (arrow != std::string_view::npos && (arrow < comma || text.find("->", arrow + 2) != std::string_view::npos))
    return Status::Error("einsum config \"" + whole + "\" must read x,y->out");
  std::string_view xs = text.substr(0, comma);
  std::string_view ys =
      text.substr(comma + 1, arrow == std::string_view::npos ? std::string_view::npos : arrow - comma - 1);
  NHLO_ASSIGN_OR_RETURN(EinsumTerm x, ReadEinsumTerm(xs, text));
  NHLO_ASSIGN_OR_RETURN(EinsumTerm y, ReadEinsumTerm(ys, text));
  EinsumTerm out;
  if (arrow != std::string_view::npos) {
    NHLO_ASSIGN_OR_RETURN(out, ReadEinsumTerm(text.substr(arrow + 2), text));
  } else {
    int count[128] = {};
    for (const EinsumTerm* t : {&x, &y})
      for (int c : t->letters) ++count[c];
    if (x.ellipsis_at >= 0 || y.ellipsis_at >= 0) out.ellipsis_at = 0;
    for (int c = 0; c < 128; ++c)
      if (count[c] == 1) out.letters.push_back(c);
  }
  // The `...` of an operand covers the dimensions its letters leave; the result's, the wider.
  auto expand = [&](const EinsumTerm& t, size_t rank, const char* what, std::vector<int>& labels) -> Status {
    if (t.letters.size() > rank || (t.ellipsis_at < 0 && t.letters.size() != rank))
      return Status::Error("einsum config \"" + whole + "\" gives " + what + " " + std::to_string(t.letters.size()) +
                           " labels for " + std::to_string(rank) + " dimensions");
    int e = t.ellipsis_at < 0 ? 0 : static_cast<int>(rank - t.letters.size());
    for (size_t i = 0; i <= t.letters.size(); ++i) {
      if (static_cast<int>(i) == t.ellipsis_at)
        for (int k = -e; k < 0; ++k) labels.push_back(k);
      if (i < t.letters.size()) labels.push_back(t.letters[i]);
    }
    return OkStatus();
  };
  EinsumConfig c;
  NHLO_TRY(expand(x, x_rank, "x", c.x));
  NHLO_TRY(expand(y, y_rank, "y", c.y));
  size_t xe = x.ellipsis_at < 0 ? 0 : x_rank - x.letters.size();
  size_t ye = y.ellipsis_at < 0 ? 0 : y_rank - y.letters.size();
  if (out.ellipsis_at >= 0 && x.ellipsis_at < 0 && y.ellipsis_at < 0)
    return Status::Error("einsum config \"" + whole + "\" has '...' in its result only");
  NHLO_TRY(expand(out, out.letters.size() + (out.ellipsis_at < 0 ? 0 : std::max(xe, ye)), "the result", c.out));
  return c;
}

Result<std::vector<int64_t>> EinsumResultDims(const EinsumConfig& c, const std::vector<int64_t>& x,
                                              const std::vector<int64_t>& y) {
  std::vector<std::pair<int, int64_t>> extent;  // label -> extent, in first-seen order
  auto name = [](int label) {
    return label > 0 ? "'" + std::string(1, static_cast<char>(label)) + "'"
                     : "'...' dimension " + std::to_string(label);
  };
  for (const auto& operand : {std::pair{&c.x, &x}, std::pair{&c.y, &y}}) {
    const std::vector<int>* labels = operand.first;
    const std::vector<int64_t>* dims = operand.second;
    for (size_t i = 0; i < labels->size() && i < dims->size(); ++i) {
      const int label = (*labels)[i];
      auto it = std::find_if(extent.begin(), extent.end(), [label](const auto& e) { return e.first == label; });
      if (it == extent.end())
        extent.push_back({(*labels)[i], (*dims)[i]});
      else if (it->second != (*dims)[i])
        return Status::Error("einsum label " + name((*labels)[i]) + " has extents " + std::to_string(it->second) +
                             " and " + std::to_string((*dims)[i]) + " (nhlo does not broadcast an extent of 1)");
    }
  }
  std::vector<int64_t> out;
  for (int label : c.out) {
    auto it = std::find_if(extent.begin(), extent.end(), [&](const auto& e) { return e.first == label; });
    out.push_back(it == extent.end() ? 1 : it->second);
  }
  return out;
}

}  // namespace nhlo
