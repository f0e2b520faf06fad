// SPDX-License-Identifier: Apache-2.0
#include "types/gpu_library_configs.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>
#include <optional>
#include <string>

namespace nhlo {
namespace {

using Json = nlohmann::json;

// The message object: inside GpuBackendConfig under `key`, or the whole config (XLA before the
// GpuBackendConfig wrapper, 2023).
const Json* MessageOf(const Json* config, const char* key) {
  if (!config || !config->is_object()) return nullptr;
  auto inner = config->find(key);
  if (inner != config->end()) return inner->is_object() ? &*inner : nullptr;
  return config;
}

// protobuf's JSON: a number, or (int64, and any number written so) a decimal string.
Result<double> NumberField(const Json& message, const char* key, double absent, std::string_view what) {
  auto it = message.find(key);
  if (it == message.end() || it->is_null()) return absent;
  if (it->is_number()) return it->get<double>();
  if (it->is_string()) {
    const std::string& text = it->get_ref<const std::string&>();
    double value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && end == text.data() + text.size()) return value;
  }
  return Status::Error(std::string(what) + " backend_config \"" + key + "\" must be a number");
}

Result<std::vector<int64_t>> IntListField(const Json& message, const char* key, std::string_view what) {
  std::vector<int64_t> out;
  auto it = message.find(key);
  if (it == message.end() || it->is_null()) return out;
  const std::string bad = std::string(what) + " backend_config \"" + key + "\" must be a list of integers";
  if (!it->is_array()) return Status::Error(bad);
  for (const Json& v : *it) {
    if (v.is_number_integer()) {
      out.push_back(v.get<int64_t>());
      continue;
    }
    if (!v.is_string()) return Status::Error(bad);
    const std::string& text = v.get_ref<const std::string&>();
    int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) return Status::Error(bad);
    out.push_back(value);
  }
  return out;
}

// An enum field: its name, or its number (as a number or a string).
template <typename Enum, size_t N>
Result<Enum> EnumField(const Json& message, const char* key, const std::string_view (&names)[N],
                       std::string_view what) {
  auto it = message.find(key);
  if (it == message.end() || it->is_null()) return static_cast<Enum>(0);
  int64_t code = -1;
  if (it->is_number_integer()) {
    code = it->get<int64_t>();
  } else if (it->is_string()) {
    const std::string& text = it->get_ref<const std::string&>();
    for (size_t i = 0; i < N; ++i)
      if (names[i] == text) code = static_cast<int64_t>(i);
    if (code < 0) {
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), code);
      if (ec != std::errc() || end != text.data() + text.size()) code = -1;
    }
  }
  if (code < 0 || code >= static_cast<int64_t>(N)) {
    std::string list;
    for (size_t i = 0; i < N; ++i) list += (i ? ", " : "") + std::string(names[i]);
    return Status::Error(std::string(what) + " backend_config \"" + key + "\" must be one of " + list);
  }
  return static_cast<Enum>(code);
}

constexpr std::string_view kEpilogueNames[] = {"DEFAULT", "BIAS",     "RELU",      "BIAS_RELU",
                                               "GELU",    "GELU_AUX", "BIAS_GELU", "BIAS_GELU_AUX"};
constexpr std::string_view kActivationNames[] = {"kNone", "kSigmoid",  "kRelu", "kRelu6",     "kReluX",
                                                 "kTanh", "kBandPass", "kElu",  "kLeakyRelu", "kGeluExact"};

// The old text form of a flat message, `{conv_result_scale:1 activation_mode:kRelu}`: scalar
// fields only, as a JSON object.
Json TextProtoFields(std::string_view text) {
  Json out = Json::object();
  size_t i = 0;
  auto skip = [&] {
    while (i < text.size() &&
           (std::isspace(static_cast<unsigned char>(text[i])) || text[i] == '{' || text[i] == '}' || text[i] == ','))
      ++i;
  };
  for (skip(); i < text.size(); skip()) {
    size_t key_end = text.find(':', i);
    if (key_end == std::string_view::npos) break;
    std::string key(text.substr(i, key_end - i));
    i = key_end + 1;
    while (i < text.size() && text[i] == ' ') ++i;
    size_t value_end = i;
    while (value_end < text.size() && !std::isspace(static_cast<unsigned char>(text[value_end])) &&
           text[value_end] != '}' && text[value_end] != ',')
      ++value_end;
    std::string value(text.substr(i, value_end - i));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    out[key] = value;
    i = value_end;
  }
  return out;
}

}  // namespace

std::string_view GemmEpilogueName(GemmEpilogue epilogue) { return kEpilogueNames[static_cast<size_t>(epilogue)]; }

namespace {

// What each epilogue adds: a bias, an activation, an aux output (the value before it).
struct EpilogueParts {
  bool bias, relu, gelu, aux;
};

EpilogueParts PartsOf(GemmEpilogue epilogue) {
  switch (epilogue) {
    case GemmEpilogue::kDefault: return {false, false, false, false};
    case GemmEpilogue::kBias: return {true, false, false, false};
    case GemmEpilogue::kRelu: return {false, true, false, false};
    case GemmEpilogue::kBiasRelu: return {true, true, false, false};
    case GemmEpilogue::kGelu: return {false, false, true, false};
    case GemmEpilogue::kGeluAux: return {false, false, true, true};
    case GemmEpilogue::kBiasGelu: return {true, false, true, false};
    case GemmEpilogue::kBiasGeluAux: return {true, false, true, true};
  }
  return {false, false, false, false};
}

}  // namespace

bool GemmConfig::AddsBias() const { return PartsOf(epilogue).bias; }
bool GemmConfig::Relu() const { return PartsOf(epilogue).relu; }
bool GemmConfig::Gelu() const { return PartsOf(epilogue).gelu; }
bool GemmConfig::HasAux() const { return PartsOf(epilogue).aux; }

Result<GemmConfig> ParseGemmConfig(std::string_view target, const Json* json) {
  const std::string what(target);
  const Json* message = MessageOf(json, "gemm_backend_config");
  if (!message) return Status::Error(what + " needs its GemmBackendConfig as a JSON backend_config");
  GemmConfig c;
  c.target = target == "__cublas$gemm"        ? GemmTarget::kLegacy
             : target == "__cublas$lt$matmul" ? GemmTarget::kLt
                                              : GemmTarget::kLtF8;
  NHLO_ASSIGN_OR_RETURN(c.alpha_real, NumberField(*message, "alpha_real", 0, what));
  NHLO_ASSIGN_OR_RETURN(c.alpha_imag, NumberField(*message, "alpha_imag", 0, what));
  NHLO_ASSIGN_OR_RETURN(c.beta, NumberField(*message, "beta", 0, what));
  auto dims = message->find("dot_dimension_numbers");
  if (dims == message->end() || !dims->is_object())
    return Status::Error(what + " backend_config has no \"dot_dimension_numbers\"");
  NHLO_ASSIGN_OR_RETURN(c.lhs_batch, IntListField(*dims, "lhs_batch_dimensions", what));
  NHLO_ASSIGN_OR_RETURN(c.lhs_contracting, IntListField(*dims, "lhs_contracting_dimensions", what));
  NHLO_ASSIGN_OR_RETURN(c.rhs_batch, IntListField(*dims, "rhs_batch_dimensions", what));
  NHLO_ASSIGN_OR_RETURN(c.rhs_contracting, IntListField(*dims, "rhs_contracting_dimensions", what));
  NHLO_ASSIGN_OR_RETURN(c.epilogue, EnumField<GemmEpilogue>(*message, "epilogue", kEpilogueNames, what));
  auto damax = message->find("damax_output");
  c.damax_output = damax != message->end() && damax->is_boolean() && damax->get<bool>();
  return c;
}

Result<ConvConfig> ParseConvConfig(std::string_view target, const Json* json, std::string_view text) {
  const std::string what(target);
  ConvConfig c;
  c.kind = target == "__cudnn$convForward"          ? ConvKind::kForward
           : target == "__cudnn$convBackwardInput"  ? ConvKind::kBackwardInput
           : target == "__cudnn$convBackwardFilter" ? ConvKind::kBackwardFilter
                                                    : ConvKind::kForwardActivation;
  Json from_text;
  const Json* message = MessageOf(json, "cudnn_conv_backend_config");
  if (json && !message) return Status::Error(what + " backend_config must be a JSON object");
  if (!json && !text.empty()) {
    from_text = TextProtoFields(text);
    message = &from_text;
  }
  if (!message) return c;  // no config: XLA's rewriter defaults
  NHLO_ASSIGN_OR_RETURN(c.conv_result_scale, NumberField(*message, "conv_result_scale", 1, what));
  NHLO_ASSIGN_OR_RETURN(c.activation, EnumField<ConvActivation>(*message, "activation_mode", kActivationNames, what));
  NHLO_ASSIGN_OR_RETURN(c.side_input_scale, NumberField(*message, "side_input_scale", 0, what));
  NHLO_ASSIGN_OR_RETURN(c.leakyrelu_alpha, NumberField(*message, "leakyrelu_alpha", 0, what));
  return c;
}

namespace {

constexpr std::string_view kMaskNames[] = {"NO_MASK", "PADDING", "CAUSAL", "PADDING_CAUSAL", "ALIBI"};

Result<FmhaDot> DotField(const Json& message, const char* key, std::string_view what) {
  FmhaDot d;
  auto it = message.find(key);
  if (it == message.end() || it->is_null()) return d;
  if (!it->is_object()) return Status::Error(std::string(what) + " backend_config \"" + key + "\" must be an object");
  NHLO_ASSIGN_OR_RETURN(d.lhs_batch, IntListField(*it, "lhs_batch_dimensions", what));
  NHLO_ASSIGN_OR_RETURN(d.lhs_contracting, IntListField(*it, "lhs_contracting_dimensions", what));
  NHLO_ASSIGN_OR_RETURN(d.rhs_batch, IntListField(*it, "rhs_batch_dimensions", what));
  NHLO_ASSIGN_OR_RETURN(d.rhs_contracting, IntListField(*it, "rhs_contracting_dimensions", what));
  return d;
}

Result<bool> BoolField(const Json& message, const char* key, std::string_view what) {
  auto it = message.find(key);
  if (it == message.end() || it->is_null()) return false;
  if (!it->is_boolean())
    return Status::Error(std::string(what) + " backend_config \"" + key + "\" must be true or false");
  return it->get<bool>();
}

// A ShapeProto's element_type: its proto name ("BF16") or number.
Result<PrimitiveType> ElementTypeField(const Json& message, const char* key, std::string_view what) {
  auto shape = message.find(key);
  if (shape == message.end() || !shape->is_object()) return PrimitiveType::kInvalid;
  auto it = shape->find("element_type");
  if (it == shape->end() || it->is_null()) return PrimitiveType::kInvalid;
  std::optional<PrimitiveType> t;
  if (it->is_number_integer()) {
    t = PrimitiveTypeFromCode(it->get<int>());
  } else if (it->is_string()) {
    std::string name = it->get<std::string>();
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    t = PrimitiveTypeFromName(name);
  }
  if (!t) return Status::Error(std::string(what) + " backend_config \"" + key + "\" has an unknown element_type");
  return *t;
}

}  // namespace

Result<FmhaConfig> ParseFmhaConfig(std::string_view target, const Json* json) {
  const std::string what(target);
  FmhaConfig c;
  c.backward = target.find("Backward") != std::string_view::npos;
  c.bias = target.find("Bias") != std::string_view::npos;
  c.f8 = target.ends_with("F8");
  const Json* message = MessageOf(json, "cudnn_fmha_backend_config");
  if (!message) return Status::Error(what + " needs its CudnnfMHABackendConfig as a JSON backend_config");
  NHLO_ASSIGN_OR_RETURN(c.scale, NumberField(*message, "fmha_scale", 0, what));
  NHLO_ASSIGN_OR_RETURN(c.dropout_rate, NumberField(*message, "dropout_rate", 0, what));
  NHLO_ASSIGN_OR_RETURN(double seed, NumberField(*message, "seed", 0, what));
  c.seed = seed >= 0 && seed < 1.8e19 ? static_cast<uint64_t>(seed) : 0;
  NHLO_ASSIGN_OR_RETURN(c.mask, EnumField<FmhaMask>(*message, "mask_type", kMaskNames, what));
  // JAX before May 2024 said causal with is_causal_mask alone.
  NHLO_ASSIGN_OR_RETURN(bool causal, BoolField(*message, "is_causal_mask", what));
  if (causal && c.mask == FmhaMask::kNone) c.mask = FmhaMask::kCausal;
  if (causal && c.mask == FmhaMask::kPadding) c.mask = FmhaMask::kPaddingCausal;
  NHLO_ASSIGN_OR_RETURN(double window, NumberField(*message, "sliding_window_length", 0, what));
  NHLO_ASSIGN_OR_RETURN(double segments, NumberField(*message, "max_seg_per_batch", 0, what));
  auto int32 = [](double v) { return v >= INT32_MIN && v <= INT32_MAX && v == std::trunc(v); };  // NaN: false
  if (!int32(window) || !int32(segments))
    return Status::Error(what + " backend_config \"sliding_window_length\" and \"max_seg_per_batch\" must be int32");
  c.sliding_window = static_cast<int64_t>(window);
  c.max_seg_per_batch = static_cast<int64_t>(segments);
  NHLO_ASSIGN_OR_RETURN(c.paged, BoolField(*message, "is_paged_attention", what));
  NHLO_ASSIGN_OR_RETURN(c.bmm1, DotField(*message, "bmm1_dot_dimension_numbers", what));
  NHLO_ASSIGN_OR_RETURN(c.bmm2, DotField(*message, "bmm2_dot_dimension_numbers", what));
  NHLO_ASSIGN_OR_RETURN(c.bmm1_grad_gemm1, DotField(*message, "bmm1_grad_gemm1_dot_dimension_numbers", what));
  NHLO_ASSIGN_OR_RETURN(c.bmm1_grad_gemm2, DotField(*message, "bmm1_grad_gemm2_dot_dimension_numbers", what));
  NHLO_ASSIGN_OR_RETURN(c.bmm2_grad_gemm1, DotField(*message, "bmm2_grad_gemm1_dot_dimension_numbers", what));
  NHLO_ASSIGN_OR_RETURN(c.bmm2_grad_gemm2, DotField(*message, "bmm2_grad_gemm2_dot_dimension_numbers", what));
  NHLO_ASSIGN_OR_RETURN(c.intermediate, ElementTypeField(*message, "intermediate_tensor_shape", what));
  return c;
}

}  // namespace nhlo
