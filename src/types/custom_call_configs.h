// SPDX-License-Identifier: Apache-2.0
// The backend_config of the custom calls nhlo gives meaning to, as typed values and their JSON
// readers: uniform_quantize / uniform_dequantize (seed 002 §3-4), QuantizeMX (seed 002 §5 +
// DESIGN.md) and ScaledMatmul. The verifier, the passes and the interpreter's loader share these
// readers so they cannot disagree about a config. Each reader takes the config text (the
// interpreter's loader has only that) or the value the IR parsed once (null: the text was not
// valid JSON); both give the same result and the same messages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "support/status.h"
#include "types/gpu_library_configs.h"
#include "types/primitive_type.h"
#include "types/solver_configs.h"

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
Result<UniformQuantConfig> ParseUniformQuantConfig(const nlohmann::json* config);

/// QuantizeMX backend_config: {"dtype", "dim", "block_size", "scale_method"}.
struct QuantizeMxConfig {
  PrimitiveType element = PrimitiveType::kF8E4M3FN;  // F8E4M3FN or F8E5M2
  int64_t dim = 0;
  int64_t block_size = 32;
  std::string scale_method = "EMAX";
};

Result<QuantizeMxConfig> ParseQuantizeMxConfig(std::string_view json);
Result<QuantizeMxConfig> ParseQuantizeMxConfig(const nlohmann::json* config);

/// ScaledMatmul backend_config: the dot dimension numbers, the element types of the packed
/// lanes and the block size.
struct ScaledMatmulConfig {
  std::vector<int64_t> lhs_batch, lhs_contracting, rhs_batch, rhs_contracting;
  PrimitiveType lhs_element = PrimitiveType::kF8E4M3FN;
  PrimitiveType rhs_element = PrimitiveType::kF8E4M3FN;
  int64_t block_size = 32;
};

Result<ScaledMatmulConfig> ParseScaledMatmulConfig(std::string_view json);
Result<ScaledMatmulConfig> ParseScaledMatmulConfig(const nlohmann::json* config);
std::string ScaledMatmulConfigJson(const ScaledMatmulConfig& config);

/// __op$block_scaled_dot's backend_config, XLA's GpuBackendConfig: only
/// {"block_scaled_dot_backend_config": {"block_size": N}} matters (N a number or, as protobuf's
/// JSON writes an int64, a decimal string). XLA ignores a config it cannot read as that message,
/// and so does nhlo: block_size 0 means none given (the block is the data's minor dimension over
/// the scale's).
struct BlockScaledDotConfig {
  int64_t block_size = 0;
};
Result<BlockScaledDotConfig> ParseBlockScaledDotConfig(const nlohmann::json* config);

/// XLA GPU's CUB radix sort calls (__cub$DeviceRadixSort, xla.gpu.ext.cub_sort_*): SortOptions,
/// `{"descending":true}` in JSON or `{descending = true, batch_size = N : i64}` as a typed-FFI
/// dictionary (batch_size follows from the shapes and is not read). Absent means ascending.
struct CubSortConfig {
  bool descending = false;
};
Result<CubSortConfig> ParseCubSortConfig(std::string_view target, const nlohmann::json* json, std::string_view text);

/// xla_builder.matrix.Einsum's backend_config, `x,y->out` (XLA's ParseEinsumString and
/// NormalizeEinsumString): each operand and the result as one label per dimension, letters as
/// their character code and the dimensions of a `...` as -e..-1 (matched from the right).
/// Without `->`, the result is `...` (when written) and every letter that occurs once in the
/// whole string, in character order. The ranks give the `...` their extent.
struct EinsumConfig {
  std::vector<int> x, y, out;
};
Result<EinsumConfig> ParseEinsumConfig(std::string_view text, size_t x_rank, size_t y_rank);
/// The result dimensions of an einsum of operands with dimensions `x` and `y`: a label's
/// extent where it appears (1 for a result label in neither operand). A label of two extents
/// is an error: XLA broadcasts an extent of 1 there, nhlo does not.
Result<std::vector<int64_t>> EinsumResultDims(const EinsumConfig& c, const std::vector<int64_t>& x,
                                              const std::vector<int64_t>& y);

/// "float8_e4m3fn" -> F8E4M3FN, "float8_e5m2" -> F8E5M2 (the only MX element types).
std::optional<PrimitiveType> MxElementFromName(std::string_view name);
std::string_view MxElementName(PrimitiveType t);
/// OCP MX emax of the element type: e4m3fn 8, e5m2 15.
int MxEmax(PrimitiveType t);

/// torch-neuronx's Softmax, SoftmaxBackward, RmsNorm, ArgMax and ArgMin: the dimension their
/// backend_config names, counted from the front.
struct NeuronDimension {
  int64_t dim = 0;
};

/// What the decoding of a custom call's config may look at besides the config: the operand count
/// and each operand's rank (-1 for one that is not an array).
struct CustomCallOperands {
  std::vector<int64_t> ranks;
};

/// A custom call's backend_config decoded for its target, once, where the config enters: the
/// parser and the IR builder (ir/custom_calls.h DecodeCustomCallConfig), the bundle reader.
/// Everything after reads `value`; nothing parses the config again. `status` says why a config of
/// a target that has one does not decode (the verifier and the loader report it); targets with
/// no typed config hold monostate and OkStatus.
struct CustomCallConfig {
  std::variant<std::monostate, UniformQuantConfig, QuantizeMxConfig, ScaledMatmulConfig, EinsumConfig, SolverConfig,
               NeuronDimension, BlockScaledDotConfig, GemmConfig, ConvConfig, CubSortConfig, FmhaConfig>
      value;
  Status status;

  /// The typed config, or why there is none.
  template <typename T>
  Result<const T*> As() const {
    if (!status.ok()) return status;
    if (const T* typed = std::get_if<T>(&value)) return typed;
    return Status::Error("custom call has no such backend_config");
  }
};
/// Decodes the config of a custom call of `target` (`calls_computation`: it names one) from the
/// value the parser read (`json`, null: none or not valid JSON) and the config's text. The
/// einsum, solver and Neuron configs also need the operands' ranks.
CustomCallConfig DecodeCustomCallConfig(std::string_view target, bool calls_computation, const nlohmann::json* json,
                                        std::string_view config_text, const CustomCallOperands& operands);
/// The same from the text alone (the bundle reader has only that).
CustomCallConfig DecodeCustomCallConfig(std::string_view target, bool calls_computation, std::string_view config_text,
                                        const CustomCallOperands& operands);

}  // namespace nhlo
