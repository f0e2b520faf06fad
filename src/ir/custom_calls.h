// SPDX-License-Identifier: Apache-2.0
// The custom calls nhlo gives meaning to, with their JSON backend_config and shape contracts:
// uniform_quantize / uniform_dequantize (seed 002 §3-4), QuantizeMX (frontend and packed
// device forms, seed 002 §5 + DESIGN.md) and ScaledMatmul. Passes, the verifier and the
// interpreter share these parsers so they cannot disagree about a config.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "support/status.h"

namespace nhlo {

inline constexpr std::string_view kUniformQuantizeTarget = "uniform_quantize";
inline constexpr std::string_view kUniformDequantizeTarget = "uniform_dequantize";
inline constexpr std::string_view kQuantizeMxTarget = "QuantizeMX";
inline constexpr std::string_view kScaledMatmulTarget = "ScaledMatmul";

/// The seven-key quantized-type dictionary of seed 002 §3 (xla::getQuantizedType).
struct UniformQuantConfig {
  std::vector<double> scale;
  std::vector<int64_t> zero_point;
  int64_t quantization_dimension = -1;  // -1: per-tensor (scale[0], zero_point[0]); >= 0: per-axis
  int64_t storage_min = 0;
  int64_t storage_max = 0;
  PrimitiveType storage_type = PrimitiveType::kS8;
  PrimitiveType expressed_type = PrimitiveType::kF32;

  /// Scale and zero point that apply to element `channel` of the quantized dimension.
  double ScaleFor(int64_t channel) const { return quantization_dimension < 0 ? scale[0] : scale[channel]; }
  int64_t ZeroPointFor(int64_t channel) const {
    return quantization_dimension < 0 ? zero_point[0] : zero_point[channel];
  }
};

/// Parses the JSON dictionary; a scalar scale or zero_point is an error, as the seed's
/// deserializer reads both as arrays.
Result<UniformQuantConfig> ParseUniformQuantConfig(std::string_view json);
/// Checks a config against the float tensor it describes (per-axis sizes, storage range).
Status CheckUniformQuantShape(const UniformQuantConfig& config, const Shape& float_shape);

/// QuantizeMX backend_config: {"dtype", "dim", "block_size", "scale_method"}.
struct QuantizeMxConfig {
  PrimitiveType element = PrimitiveType::kF8E4M3FN;  // F8E4M3FN or F8E5M2
  int64_t dim = 0;
  int64_t block_size = 32;
  std::string scale_method = "EMAX";
};

Result<QuantizeMxConfig> ParseQuantizeMxConfig(std::string_view json);

/// Checks one QuantizeMX custom call (operands and result shape). Sets *device_form when the
/// data output is the packed u32 form. Messages name the rule broken.
Status CheckQuantizeMx(const Instruction& inst, const QuantizeMxConfig& config, bool* device_form);

/// ScaledMatmul backend_config: the dot dimension numbers, the element types of the packed
/// lanes and the block size.
struct ScaledMatmulConfig {
  std::vector<int64_t> lhs_batch, lhs_contracting, rhs_batch, rhs_contracting;
  PrimitiveType lhs_element = PrimitiveType::kF8E4M3FN;
  PrimitiveType rhs_element = PrimitiveType::kF8E4M3FN;
  int64_t block_size = 32;
};

Result<ScaledMatmulConfig> ParseScaledMatmulConfig(std::string_view json);
std::string ScaledMatmulConfigJson(const ScaledMatmulConfig& config);
/// The seed's ScaledMatmul contract: 4 operands (lhs, rhs, lhs_scale, rhs_scale), LHS U32
/// (packed MX format from QuantizeMX), rank >= 2, output F32/BF16, batch dims match,
/// contracting dims match in size and do not overlap batch dims, indices in range.
Status CheckScaledMatmul(const Instruction& inst, const ScaledMatmulConfig& config);

/// The backend_config text of a custom call ("" if none).
std::string_view BackendConfigText(const Instruction& inst);
/// The custom_call_target of a custom call ("" for other instructions).
std::string_view CustomCallTarget(const Instruction& inst);

/// "float8_e4m3fn" -> F8E4M3FN, "float8_e5m2" -> F8E5M2 (the only MX element types).
std::optional<PrimitiveType> MxElementFromName(std::string_view name);
std::string_view MxElementName(PrimitiveType t);
/// OCP MX emax of the element type: e4m3fn 8, e5m2 15.
int MxEmax(PrimitiveType t);

}  // namespace nhlo
