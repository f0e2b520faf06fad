// SPDX-License-Identifier: Apache-2.0
// The custom-call targets nhlo knows (custom_call_targets.def) and what each one runs as. Shared
// by the compiler, which refuses any other target, and the interpreter's loader.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace nhlo {

/// What a custom call runs as. kNone: not a custom call; kUnknown: a target nhlo cannot run.
enum class CustomCallKind : uint8_t {
  kNone,
  kUnknown,
  kUniformQuantize,
  kUniformDequantize,
  kQuantizeMx,
  kScaledMatmul,
  kIdentity,               // result = operand
  kShardShape,             // result = operand's bytes in the result's dimensions (same element count)
  kTopK,                   // (values, indices) of the k first elements in the comparator's order
  kCallComputation,        // result = the called computation run on the operands
  kBuilderMath,            // an XLA builder-library math function computed natively (builder_math.def)
  kEinsum,                 // xla_builder.matrix.Einsum: its backend_config's einsum, natively
  kMatrixDiagonal,         // xla_builder.matrix.GetMatrixDiagonalViaGather: the main diagonal
  kScramblePhiloxKey,      // xla_builder.prng.ScramblePhiloxKey: Philox4x32-10 of each u64 key
  kTridiagonalSolve,       // xla_builder.tridiagonal.TridiagonalSolver: the Thomas algorithm
  kSliceToDynamic,         // (data, sizes...) -> data with those runtime sizes (bounded dynamic shape)
  kPadToStatic,            // dynamic data -> (static data, its runtime sizes...)
  kThreefry2x32,           // JAX's GPU threefry kernel: (key0, key1, x0, x1) -> (out0, out1), elementwise
  kLu,                     // getrf: (lu, 1-based pivots, info), LAPACK's packed form (solver_configs.h)
  kCholesky,               // potrf: (the factor in the named triangle, info)
  kQr,                     // geqrf: (R and Householder vectors, tau)
  kQrQ,                    // orgqr / ungqr: Q from Householder vectors and tau
  kPivotsToPermutation,    // JAX's lu_pivots_to_permutation
  kTriangularSolve,        // trsm: the solution of a triangular system
  kEigh,                   // syevd / heevd / syevj: (eigenvectors, ascending eigenvalues, info)
  kSvd,                    // gesdd / gesvd / gesvdj: (a, descending singular values, u, vt or v, info)
  kGtsv,                   // gtsv / gtsv2: a tridiagonal system's solution (LU with partial pivoting)
  kEig,                    // geev: eigenvalues and right / left eigenvectors of a general matrix
  kNeuronSoftmax,          // AwsNeuronSoftmax: softmax along the backend_config's dimension
  kNeuronSoftmaxBackward,  // AwsNeuronSoftmaxBackward(grad, output): output * (grad - sum(grad * output))
  kNeuronRmsNorm,          // AwsNeuronRmsNorm(x, weight, eps): x * rsqrt(mean(x^2) + eps) * weight
  kNeuronArgMax,           // AwsNeuronArgMax: the index of the first largest element along the dimension
  kNeuronArgMin,           // AwsNeuronArgMin: the index of the first smallest element along the dimension
  kShadowProbe,            // nhlo.shadow_probe: hands its operands to the run's observer (nhlo-run --shadow)
  kBlockQuantize,          // __op$quantize: expanded before it runs (ir/block_scaling.h)
  kBlockDequantize,        // __op$dequantize: expanded before it runs
  kBlockScaledDot,         // __op$block_scaled_dot: expanded before it runs
  kCublasGemm,             // __cublas$gemm, __cublas$lt$matmul(.f8): expanded before it runs (ir/gpu_library_calls.h)
  kCudnnConv,              // __cudnn$conv...: expanded before it runs
  kCubSort,                // __cub$DeviceRadixSort: expanded before it runs (ir/gpu_sort_calls.h)
  kCudnnFmha,              // __cudnn$fmha...: expanded before it runs (ir/gpu_attention_calls.h)
  kHostCallback,           // JAX's Python callbacks without results: expanded to nothing (ir/host_callbacks.h)
};

/// Whether a custom call of `kind` is expanded into a computation by the compiler
/// (ir/expanded_calls.h) and then runs as that computation (kCallComputation).
constexpr bool ExpandsBeforeRun(CustomCallKind kind) {
  return kind == CustomCallKind::kBlockQuantize || kind == CustomCallKind::kBlockDequantize ||
         kind == CustomCallKind::kBlockScaledDot || kind == CustomCallKind::kCublasGemm ||
         kind == CustomCallKind::kCudnnConv || kind == CustomCallKind::kCubSort || kind == CustomCallKind::kCudnnFmha ||
         kind == CustomCallKind::kHostCallback;
}

/// The functions of builder_math.def.
enum class BuilderMathFn : uint8_t {
#define NHLO_BUILDER_MATH(Name, operands, complex, meaning) k##Name,
#include "types/builder_math.def"
#undef NHLO_BUILDER_MATH
};

struct BuilderMathRow {
  BuilderMathFn fn;
  std::string_view name;  // the target's suffix after "xla_builder.math."
  int operands;
  bool complex;
  std::string_view meaning;
};

/// Every row of builder_math.def, in its order.
std::span<const BuilderMathRow> BuilderMathFunctions();
/// The row for a target `xla_builder.math.<Name>`; null for any other target.
const BuilderMathRow* FindBuilderMath(std::string_view target);

/// How a row's target text matches a custom_call_target.
enum class TargetMatch : uint8_t {
  kExact,
  kPrefix,      // every target that starts with the text
  kPrecisions,  // the text with its one `?` replaced by s, d, c or z (LAPACK's precision letter)
};

struct CustomCallTargetRow {
  CustomCallKind kind;
  std::string_view target;
  TargetMatch match;
  std::string_view meaning;
};

/// Every row of custom_call_targets.def, in its order.
std::span<const CustomCallTargetRow> KnownCustomCallTargets();

/// The row that matches `target` (exact rows before prefix rows); null when none does.
const CustomCallTargetRow* FindCustomCallTarget(std::string_view target);

/// What a custom call with `target` runs as: its row's kind; without a row, kCallComputation
/// when it names a called computation, else kUnknown. A builder-library math target runs its
/// called computation when it names one (XLA's expansion), else natively when builder_math.def
/// has it.
CustomCallKind CustomCallKindOf(std::string_view target, bool calls_computation);

}  // namespace nhlo
