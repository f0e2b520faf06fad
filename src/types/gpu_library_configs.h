// SPDX-License-Identifier: Apache-2.0
// The backend_config of XLA GPU's library calls, which post-optimization GPU dumps are full of:
// cuBLAS matmuls (`__cublas$gemm`, `__cublas$lt$matmul`, `__cublas$lt$matmul$f8`; XLA's
// GemmBackendConfig) and cuDNN convolutions (`__cudnn$conv...`; CudnnConvBackendConfig), both in
// xla/service/gpu/backend_configs.proto. Each is read from protobuf's JSON form, bare or inside a
// GpuBackendConfig (`{"gemm_backend_config": {...}}`); an int64 may be a number or a decimal
// string, an enum a name or its number. The old text form of the convolution config
// (`{conv_result_scale:1}`) is read too. docs/custom-calls.md gives the meaning of each field.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "support/status.h"
#include "types/primitive_type.h"

namespace nhlo {

/// GemmBackendConfig.Epilogue, with its proto numbers.
enum class GemmEpilogue : uint8_t {
  kDefault = 0,
  kBias = 1,
  kRelu = 2,
  kBiasRelu = 3,
  kGelu = 4,
  kGeluAux = 5,
  kBiasGelu = 6,
  kBiasGeluAux = 7,
};

/// Which of the three cuBLAS targets a call is; the operand lists differ (docs/custom-calls.md).
enum class GemmTarget : uint8_t { kLegacy, kLt, kLtF8 };

struct GemmConfig {
  GemmTarget target = GemmTarget::kLegacy;
  double alpha_real = 0;  // proto3 defaults: XLA always writes both alphas and beta
  double alpha_imag = 0;
  double beta = 0;
  std::vector<int64_t> lhs_batch, lhs_contracting, rhs_batch, rhs_contracting;
  GemmEpilogue epilogue = GemmEpilogue::kDefault;
  bool damax_output = false;

  bool AddsBias() const;
  bool Relu() const;
  bool Gelu() const;
  bool HasAux() const;
};

/// The proto name of an epilogue ("BIAS_RELU").
std::string_view GemmEpilogueName(GemmEpilogue epilogue);

/// `target` is one of the three cuBLAS targets; `json` the config as the parser read it (null:
/// none or not JSON).
Result<GemmConfig> ParseGemmConfig(std::string_view target, const nlohmann::json* json);

/// The convolution a cuDNN call runs; its window, dim_labels and feature_group_count describe the
/// forward convolution y = conv(x, w) in every kind, and the kind says which of x, w, y the call
/// computes from the other two (XLA's CudnnConvKind).
enum class ConvKind : uint8_t { kForward, kBackwardInput, kBackwardFilter, kForwardActivation };

/// stream_executor.dnn.ActivationMode, with its proto numbers (the ones XLA fuses into convs).
enum class ConvActivation : uint8_t {
  kNone = 0,
  kSigmoid = 1,
  kRelu = 2,
  kRelu6 = 3,
  kReluX = 4,
  kTanh = 5,
  kBandPass = 6,
  kElu = 7,
  kLeakyRelu = 8,
  kGeluExact = 9,
};

struct ConvConfig {
  ConvKind kind = ConvKind::kForward;
  double conv_result_scale = 1;  // a config that does not give it: 1, as XLA's rewriter writes [inferred]
  ConvActivation activation = ConvActivation::kNone;
  double side_input_scale = 0;
  double leakyrelu_alpha = 0;
};

/// `target` is one of the four `__cudnn$conv...` targets; `json` as for ParseGemmConfig and
/// `text` the config as written (for the text form).
Result<ConvConfig> ParseConvConfig(std::string_view target, const nlohmann::json* json, std::string_view text);

/// CudnnfMHABackendConfig.MaskType (xla/service/gpu/backend_configs.proto), with its proto numbers.
enum class FmhaMask : uint8_t {
  kNone = 0,
  kPadding = 1,        // keys at or past kv_seqlen[b] masked; rows at or past q_seqlen[b] give zeros
  kCausal = 2,         // key j masked for query t when j > t (top-left aligned)
  kPaddingCausal = 3,  // both
  kAlibi = 4,          // XLA's cuDNN graph sets no ALiBi bias for it: no mask
};

/// One of the attention's batched products, as XLA's DotDimensionNumbers.
struct FmhaDot {
  std::vector<int64_t> lhs_batch, lhs_contracting, rhs_batch, rhs_contracting;
};

/// What a `__cudnn$fmha...` call computes (docs/custom-calls.md, "cuDNN fused attention"): its
/// target's parts and its CudnnfMHABackendConfig.
struct FmhaConfig {
  bool backward = false;  // ...Backward: (dQ, dK, dV[, dbias], workspace)
  bool bias = false;      // ...ScaleBias...: a bias operand (and a dbias result when backward)
  bool f8 = false;        // ...F8: refused (the scale and amax operands)
  double scale = 0;       // fmha_scale, multiplied into Q.K before the bias (proto3 default 0)
  double dropout_rate = 0;
  uint64_t seed = 0;
  FmhaMask mask = FmhaMask::kNone;
  int64_t sliding_window = 0;     // sliding_window_length: keys t - W < j <= t when > 0
  int64_t max_seg_per_batch = 0;  // > 1: packed sequences (refused)
  bool paged = false;             // is_paged_attention (refused)
  // Forward: bmm1 (Q.K -> scores) and bmm2 (probabilities.V -> O). Backward: bmm1_grad_gemm1
  // (dS.Q -> dK), bmm1_grad_gemm2 (dS.K -> dQ), bmm2_grad_gemm1 (P.dO -> dV), bmm2_grad_gemm2
  // (dO.V -> dP); their rhs sides describe Q, K, dO and V.
  FmhaDot bmm1, bmm2, bmm1_grad_gemm1, bmm1_grad_gemm2, bmm2_grad_gemm1, bmm2_grad_gemm2;
  PrimitiveType intermediate = PrimitiveType::kInvalid;  // intermediate_tensor_shape's type (the probabilities')
};

/// `target` is a `__cudnn$fmha...` target; `json` as for ParseGemmConfig.
Result<FmhaConfig> ParseFmhaConfig(std::string_view target, const nlohmann::json* json);

}  // namespace nhlo
