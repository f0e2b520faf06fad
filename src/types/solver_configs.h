// SPDX-License-Identifier: Apache-2.0
// What the linear-algebra, random-bit and Neuron custom calls of JAX, jaxlib and torch-neuronx
// say beside their operands (docs/custom-calls.md): the decoded form of a target name, its
// backend_config (a legacy opaque descriptor, an FFI attribute dictionary, or Neuron's decimal
// text) and which operands carry sizes or flags. Decoded once, when a program is loaded.
#pragma once

#include <cstdint>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "support/status.h"
#include "types/custom_call_targets.h"

namespace nhlo {

/// The factorisation or solve a custom call runs.
enum class SolverOp : uint8_t {
  kLu,                   // getrf: P A = L U with partial pivoting, LAPACK's packed result and 1-based pivots
  kCholesky,             // potrf: the named triangle of the factor, the other triangle as given
  kQr,                   // geqrf: R and the Householder vectors, LAPACK's packed form, and tau
  kQrQ,                  // orgqr / ungqr: Q from the Householder vectors and tau
  kPivotsToPermutation,  // JAX's lu_pivots_to_permutation: 0-based row swaps applied to the identity
  kTriangularSolve,      // trsm: op(A) X = alpha B or X op(A) = alpha B
  kEigh,                 // syevd / heevd / syevj: ascending eigenvalues, eigenvectors in columns
  kSvd,                  // gesdd / gesvd / gesvdj / gesvdp: descending singular values, u, vt (or v)
  kGtsv,                 // gtsv / gtsv2: (dl, d, du, b) -> x, LAPACK's LU with partial pivoting
  kEig,                  // geev: eigenvalues (LAPACK's order), unit right / left eigenvectors
};

/// Where a general eigendecomposition's results are (docs/custom-calls.md, "JAX's eig calls").
enum class EigForm : uint8_t {
  kLapackFfi,     // real: (wr, wi, vl, vr, info); complex: (w, vl, vr, info); vectors complex
  kLapackLegacy,  // the same after workspaces: three for real data, two for complex
  kCusolver,      // (a, w complex, vl, vr, info), vectors of the data's type (real ones packed as LAPACK's)
};

/// Which factor a singular value decomposition's results 2 and 3 hold (A = U diag(s) V^H).
enum class SvdFactors : uint8_t {
  kUVt,          // (u, vt): LAPACK gesdd / gesvd
  kUV,           // (u, v): cuSOLVER gesvdj / gesvdp give V, which JAX transposes after
  kVtU,          // (vt, u): cuSOLVER gesvd of a wide matrix, run as its transpose (`transposed`)
  kVtUWhenWide,  // kVtU when the matrix has fewer rows than columns, else kUVt (legacy cusolver_gesvd)
};

/// Where a flag comes from: fixed at load, or the value of an s32 scalar operand (jaxlib's legacy
/// LAPACK calls pass `lower`, `left_side`, `trans_a` and `unit_diag` as operands).
struct SolverFlag {
  int32_t value = 0;
  int operand = -1;  // >= 0: read operand `operand` when the call runs
};

struct SolverConfig {
  SolverOp op = SolverOp::kLu;
  /// The operands that are the data (the matrix; then tau for kQrQ, b for kTriangularSolve):
  /// the first is operand `first_data`; earlier ones are sizes or flags.
  int first_data = 0;
  SolverFlag lower{1};      // potrf, syevd, trsm: which triangle is read
  SolverFlag left_side{1};  // trsm: op(A) X = B (left) or X op(A) = B (right)
  SolverFlag transpose{0};  // trsm: 0 = A, 1 = A^T, 2 = A^H
  SolverFlag unit_diagonal{0};
  int alpha_operand = -1;    // trsm: a scalar alpha operand (legacy blas_?trsm; early FFI), else 1
  int info_result = -1;      // potrf: the s32 info result when it is not result 1 (XLA GPU's (a, workspace, info))
  SolverFlag compute_uv{1};  // gesdd / gesvd: 0 leaves the two factors zeros (LAPACK's job 'N')
  SvdFactors svd_factors = SvdFactors::kUVt;
  SolverFlag compute_left{0};   // geev: left eigenvectors (an operand holds LAPACK's job 'V' or 'N')
  SolverFlag compute_right{1};  // geev: right eigenvectors
  EigForm eig_form = EigForm::kLapackFfi;
};

/// The config of a linear-algebra custom call `target` with `operands` operands and
/// `backend_config` (the text as parsed: a legacy descriptor's bytes, an FFI dictionary's
/// `{name = value : type, ...}`, or empty; `json` is that text parsed when it is JSON, as XLA GPU's
/// own calls write their options, else null); errors say what does not fit.
Result<SolverConfig> DecodeSolverCall(SolverOp op, std::string_view target, size_t operands,
                                      std::string_view backend_config, const nlohmann::json* json);

/// The op of a solver custom-call kind (kLu ... kEigh); kLu for any other kind.
SolverOp SolverOpOf(CustomCallKind kind);

/// torch-neuronx's backend_config for Softmax, SoftmaxBackward, RmsNorm, ArgMax, ArgMin: the
/// dimension as decimal text ("3"); negative values count from the end, as PyTorch's do.
Result<int64_t> DecodeNeuronDimension(std::string_view backend_config, size_t rank);

}  // namespace nhlo
