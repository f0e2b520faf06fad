// SPDX-License-Identifier: Apache-2.0
#include "types/solver_configs.h"

#include <cstring>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "types/ffi_attributes.h"

namespace nhlo {
namespace {

// A legacy opaque descriptor's 32-bit field at `offset`, little-endian.
Result<int32_t> DescriptorField(std::string_view bytes, size_t offset, std::string_view target) {
  if (bytes.size() < offset + 4)
    return Status::Error("custom_call_target '" + std::string(target) + "' has a backend_config descriptor of " +
                         std::to_string(bytes.size()) + " bytes; its field at byte " + std::to_string(offset) +
                         " is missing");
  uint8_t b[4];
  std::memcpy(b, bytes.data() + offset, 4);
  return static_cast<int32_t>(uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24);
}

// An FFI character-code attribute (LAPACK's 'L', 'U', 'N', 'T', 'C', 'R' as ui8 codes).
Result<char> CharAttr(const FfiAttributes& attrs, std::string_view name, char absent, std::string_view target) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return absent;
  const std::string& v = it->second;
  char* end = nullptr;
  long code = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || code < 0 || code > 127)
    return Status::Error("custom_call_target '" + std::string(target) + "' attribute " + std::string(name) + " = " + v +
                         " is not a character code");
  return static_cast<char>(code);
}

Result<bool> BoolAttr(const FfiAttributes& attrs, std::string_view name, bool absent, std::string_view target) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return absent;
  if (it->second == "true") return true;
  if (it->second == "false") return false;
  return Status::Error("custom_call_target '" + std::string(target) + "' attribute " + std::string(name) + " = " +
                       it->second + " is not true or false");
}

// A bool field of XLA GPU's options proto in JSON (CholeskyOptions, TriangularSolveOptions): proto
// JSON leaves a false field out, so an absent one is false.
Result<bool> JsonBool(const nlohmann::json* json, const char* key, std::string_view target) {
  if (!json || !json->is_object()) return false;
  auto it = json->find(key);
  if (it == json->end() || it->is_null()) return false;
  if (it->is_boolean()) return it->get<bool>();
  return Status::Error("custom_call_target '" + std::string(target) + "' backend_config \"" + key +
                       "\" is not true or false");
}

// TriangularSolveOptions.transpose_a by name or number: NO_TRANSPOSE = 1, TRANSPOSE = 2, ADJOINT = 3
// (xla_data.proto); as the kernels count them, 0 = A, 1 = A^T, 2 = A^H.
Result<int32_t> JsonTranspose(const nlohmann::json* json, std::string_view target) {
  if (!json || !json->is_object() || !json->contains("transpose_a")) return 0;
  const nlohmann::json& v = (*json)["transpose_a"];
  if (v == "NO_TRANSPOSE" || v == 1 || v == "1") return 0;
  if (v == "TRANSPOSE" || v == 2 || v == "2") return 1;
  if (v == "ADJOINT" || v == 3 || v == "3") return 2;
  return Status::Error("custom_call_target '" + std::string(target) + "' backend_config \"transpose_a\" is " +
                       v.dump() + ", not NO_TRANSPOSE, TRANSPOSE or ADJOINT");
}

// The singular value decompositions: which factors results 2 and 3 hold, and whether they are
// computed (docs/custom-calls.md, "JAX's SVD calls").
Status DecodeSvd(SolverConfig& c, std::string_view target, bool cpu, bool ffi, size_t operands,
                 std::string_view backend_config, const FfiAttributes& attrs) {
  const bool jacobi =
      target.find("gesvdj") != std::string_view::npos || target.find("gesvdp") != std::string_view::npos;
  auto need = [&](size_t n) -> Status {
    if (operands == n) return OkStatus();
    return Status::Error("custom_call_target '" + std::string(target) + "' takes " + std::to_string(n) +
                         " operands, got " + std::to_string(operands));
  };
  if (cpu && !ffi) {  // lapack_?gesdd(full_matrices, compute_uv, b, m, n, lwork, a)
    c.first_data = 6;
    c.compute_uv = SolverFlag{0, 1};
    return need(7);
  }
  NHLO_TRY(need(1));
  if (cpu) {  // lapack_?gesdd_ffi / lapack_?gesvd_ffi: mode 'A' (full), 'S' (reduced), 'N' (no vectors)
    NHLO_ASSIGN_OR_RETURN(char mode, CharAttr(attrs, "mode", 'A', target));
    if (mode != 'A' && mode != 'S' && mode != 'N')
      return Status::Error("custom_call_target '" + std::string(target) + "' mode " + std::to_string(int{mode}) +
                           " is not 65 ('A'), 83 ('S') or 78 ('N')");
    c.compute_uv = SolverFlag{mode != 'N'};
    return OkStatus();
  }
  if (ffi) {  // {compute_uv, full_matrices[, transposed]}; gesvdj / gesvdp give V
    NHLO_ASSIGN_OR_RETURN(bool uv, BoolAttr(attrs, "compute_uv", true, target));
    NHLO_ASSIGN_OR_RETURN(bool transposed, BoolAttr(attrs, "transposed", false, target));
    c.compute_uv = SolverFlag{uv ? 1 : 0};
    c.svd_factors = jacobi ? SvdFactors::kUV : transposed ? SvdFactors::kVtU : SvdFactors::kUVt;
    return OkStatus();
  }
  // Legacy descriptors {type, batch, m, n, lwork, ...}: gesvd's jobu is a char at byte 20,
  // gesvdj's jobz an int there (0: no vectors). JAX ran a wide matrix's gesvd as its transpose.
  NHLO_ASSIGN_OR_RETURN(int32_t job, DescriptorField(backend_config, 20, target));
  if (jacobi) {
    c.compute_uv = SolverFlag{job != 0 ? 1 : 0};
    c.svd_factors = SvdFactors::kUV;
  } else {
    c.compute_uv = SolverFlag{(job & 0xff) != 'N' ? 1 : 0};
    c.svd_factors = SvdFactors::kVtUWhenWide;
  }
  return OkStatus();
}

}  // namespace

Result<SolverConfig> DecodeSolverCall(SolverOp op, std::string_view target, size_t operands,
                                      std::string_view backend_config, const nlohmann::json* json) {
  const bool ffi = target.ends_with("_ffi");
  const bool cpu = target.starts_with("lapack_") || target.starts_with("blas_");
  // XLA GPU's own library calls (__cusolver$cholesky, __cublas$triangularSolve): options in JSON.
  const bool xla_gpu = target.starts_with("__");
  SolverConfig c;
  c.op = op;
  auto need = [&](size_t n) -> Status {
    if (operands == n) return OkStatus();
    return Status::Error("custom_call_target '" + std::string(target) + "' takes " + std::to_string(n) +
                         " operands, got " + std::to_string(operands));
  };
  FfiAttributes attrs;
  // The FFI attribute dictionary (jaxlib's hybrid eig kernels have one without the _ffi suffix);
  // the tridiagonal solves read none, and cuSPARSE's 2025 form carries an opaque byte string.
  const bool dictionary = ffi || target.find("hybrid_") != std::string_view::npos;
  if (dictionary && op != SolverOp::kGtsv) {
    Result<FfiAttributes> parsed = ParseFfiAttributes(backend_config);
    if (!parsed.ok())
      return Status::Error("custom_call_target '" + std::string(target) + "' backend_config " +
                           parsed.status().message());
    attrs = std::move(*parsed);
  }
  if (xla_gpu && !json && backend_config.find_first_not_of(" \n\t") != std::string_view::npos)
    return Status::Error("custom_call_target '" + std::string(target) + "' backend_config is not JSON: '" +
                         std::string(backend_config) + "'");
  switch (op) {
    case SolverOp::kLu:
      c.first_data = cpu && !ffi ? 3 : 0;  // lapack_?getrf(b, m, n, a)
      NHLO_TRY(need(static_cast<size_t>(c.first_data) + 1));
      return c;
    case SolverOp::kQr:
      c.first_data = cpu && !ffi ? 4 : 0;  // lapack_?geqrf(b, m, n, lwork, a)
      NHLO_TRY(need(static_cast<size_t>(c.first_data) + 1));
      return c;
    case SolverOp::kQrQ:
      c.first_data = cpu && !ffi ? 5 : 0;  // lapack_?orgqr(b, m, n, k, lwork, a, tau)
      NHLO_TRY(need(static_cast<size_t>(c.first_data) + 2));
      return c;
    case SolverOp::kPivotsToPermutation: NHLO_TRY(need(1)); return c;
    case SolverOp::kCholesky:
    case SolverOp::kEigh:
      if (xla_gpu) {  // __cusolver$cholesky(a) -> (factor, workspace, info), CholeskyOptions
        NHLO_ASSIGN_OR_RETURN(bool lower, JsonBool(json, "lower", target));
        c.lower = SolverFlag{lower ? 1 : 0};
        c.info_result = 2;
      } else if (cpu && !ffi) {  // lapack_?potrf(lower, b, n, a), lapack_?syevd(lower, b, n, a)
        c.first_data = 3;
        c.lower = SolverFlag{0, 0};
      } else if (ffi && cpu) {
        NHLO_ASSIGN_OR_RETURN(char uplo, CharAttr(attrs, "uplo", 'L', target));
        c.lower = SolverFlag{uplo == 'L' ? 1 : 0};
      } else if (ffi) {
        NHLO_ASSIGN_OR_RETURN(bool lower, BoolAttr(attrs, "lower", true, target));
        c.lower = SolverFlag{lower ? 1 : 0};
      } else {  // cuSOLVER descriptor: {type, uplo, ...}, cublasFillMode_t LOWER = 0
        NHLO_ASSIGN_OR_RETURN(int32_t uplo, DescriptorField(backend_config, 4, target));
        c.lower = SolverFlag{uplo == 0 ? 1 : 0};
      }
      NHLO_TRY(need(static_cast<size_t>(c.first_data) + 1));
      return c;
    case SolverOp::kSvd: NHLO_TRY(DecodeSvd(c, target, cpu, ffi, operands, backend_config, attrs)); return c;
    case SolverOp::kGtsv: NHLO_TRY(need(4)); return c;
    case SolverOp::kEig:
      if (cpu && !ffi) {  // lapack_?geev(b, n, jobvl, jobvr, a) -> (workspaces..., w..., vl, vr, info)
        NHLO_TRY(need(5));
        c.first_data = 4;
        c.compute_left = SolverFlag{0, 2};
        c.compute_right = SolverFlag{0, 3};
        c.eig_form = EigForm::kLapackLegacy;
        return c;
      }
      NHLO_TRY(need(1));
      if (cpu) {  // lapack_?geev_ffi: compute_left / compute_right as 'V' (86) or 'N' (78)
        NHLO_ASSIGN_OR_RETURN(char left, CharAttr(attrs, "compute_left", 'N', target));
        NHLO_ASSIGN_OR_RETURN(char right, CharAttr(attrs, "compute_right", 'V', target));
        c.compute_left = SolverFlag{left == 'V' ? 1 : 0};
        c.compute_right = SolverFlag{right == 'V' ? 1 : 0};
        return c;
      }
      {  // cusolver_geev_ffi (out, w, vl, vr, info) and cuhybrid_eig_* (as LAPACK's): bool left / right
        NHLO_ASSIGN_OR_RETURN(bool left, BoolAttr(attrs, "left", false, target));
        NHLO_ASSIGN_OR_RETURN(bool right, BoolAttr(attrs, "right", true, target));
        c.compute_left = SolverFlag{left ? 1 : 0};
        c.compute_right = SolverFlag{right ? 1 : 0};
        if (target.find("geev") != std::string_view::npos) c.eig_form = EigForm::kCusolver;
        return c;
      }  // (dl, d, du, b); legacy descriptors add nothing needed
    case SolverOp::kTriangularSolve:
      if (xla_gpu) {  // __cublas$triangularSolve(a, b) -> (x, workspace), TriangularSolveOptions
        NHLO_TRY(need(2));
        NHLO_ASSIGN_OR_RETURN(bool left, JsonBool(json, "left_side", target));
        NHLO_ASSIGN_OR_RETURN(bool lower, JsonBool(json, "lower", target));
        NHLO_ASSIGN_OR_RETURN(bool unit, JsonBool(json, "unit_diagonal", target));
        NHLO_ASSIGN_OR_RETURN(int32_t transpose, JsonTranspose(json, target));
        c.left_side = SolverFlag{left ? 1 : 0};
        c.lower = SolverFlag{lower ? 1 : 0};
        c.unit_diagonal = SolverFlag{unit ? 1 : 0};
        c.transpose = SolverFlag{transpose};
        return c;
      }
      if (cpu && !ffi) {  // blas_?trsm(left_side, lower, trans_a, unit_diag, m, n, batch, alpha, a, b)
        NHLO_TRY(need(10));
        c.first_data = 8;
        c.left_side = SolverFlag{0, 0};
        c.lower = SolverFlag{0, 1};
        c.transpose = SolverFlag{0, 2};
        c.unit_diagonal = SolverFlag{0, 3};
        c.alpha_operand = 7;
        return c;
      }
      if (ffi) {  // lapack_?trsm_ffi(a, b[, alpha]) with side, uplo, trans_x, diag
        if (operands != 2 && operands != 3) NHLO_TRY(need(2));
        if (operands == 3) c.alpha_operand = 2;
        NHLO_ASSIGN_OR_RETURN(char side, CharAttr(attrs, "side", 'L', target));
        NHLO_ASSIGN_OR_RETURN(char uplo, CharAttr(attrs, "uplo", 'L', target));
        NHLO_ASSIGN_OR_RETURN(char trans, CharAttr(attrs, "trans_x", 'N', target));
        NHLO_ASSIGN_OR_RETURN(char diag, CharAttr(attrs, "diag", 'N', target));
        c.left_side = SolverFlag{side == 'L' ? 1 : 0};
        c.lower = SolverFlag{uplo == 'L' ? 1 : 0};
        c.transpose = SolverFlag{trans == 'T' ? 1 : trans == 'C' ? 2 : 0};
        c.unit_diagonal = SolverFlag{diag == 'U' ? 1 : 0};
        return c;
      }
      {  // cublas_trsm_batched(a, b): {type, batch, m, n, side, uplo, trans, diag}, cuBLAS enums
        NHLO_TRY(need(2));
        NHLO_ASSIGN_OR_RETURN(int32_t side, DescriptorField(backend_config, 16, target));
        NHLO_ASSIGN_OR_RETURN(int32_t uplo, DescriptorField(backend_config, 20, target));
        NHLO_ASSIGN_OR_RETURN(int32_t trans, DescriptorField(backend_config, 24, target));
        NHLO_ASSIGN_OR_RETURN(int32_t diag, DescriptorField(backend_config, 28, target));
        c.left_side = SolverFlag{side == 0 ? 1 : 0};
        c.lower = SolverFlag{uplo == 0 ? 1 : 0};
        c.transpose = SolverFlag{trans == 1 || trans == 2 ? trans : 0};
        c.unit_diagonal = SolverFlag{diag == 1 ? 1 : 0};
        return c;
      }
  }
  return Status::Error("unknown solver custom call");
}

SolverOp SolverOpOf(CustomCallKind kind) {
  switch (kind) {
    case CustomCallKind::kCholesky: return SolverOp::kCholesky;
    case CustomCallKind::kQr: return SolverOp::kQr;
    case CustomCallKind::kQrQ: return SolverOp::kQrQ;
    case CustomCallKind::kPivotsToPermutation: return SolverOp::kPivotsToPermutation;
    case CustomCallKind::kTriangularSolve: return SolverOp::kTriangularSolve;
    case CustomCallKind::kEigh: return SolverOp::kEigh;
    case CustomCallKind::kSvd: return SolverOp::kSvd;
    case CustomCallKind::kGtsv: return SolverOp::kGtsv;
    case CustomCallKind::kEig: return SolverOp::kEig;
    case CustomCallKind::kLu:
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
    case CustomCallKind::kEinsum:
    case CustomCallKind::kMatrixDiagonal:
    case CustomCallKind::kScramblePhiloxKey:
    case CustomCallKind::kTridiagonalSolve:
    case CustomCallKind::kSliceToDynamic:
    case CustomCallKind::kPadToStatic:
    case CustomCallKind::kThreefry2x32:
    case CustomCallKind::kNeuronSoftmax:
    case CustomCallKind::kNeuronSoftmaxBackward:
    case CustomCallKind::kNeuronRmsNorm:
    case CustomCallKind::kNeuronArgMax:
    case CustomCallKind::kNeuronArgMin:
    case CustomCallKind::kShadowProbe:
    case CustomCallKind::kBlockQuantize:
    case CustomCallKind::kBlockDequantize:
    case CustomCallKind::kBlockScaledDot:
    case CustomCallKind::kCublasGemm:
    case CustomCallKind::kCudnnConv:
    case CustomCallKind::kCubSort:
    case CustomCallKind::kCudnnFmha:
    case CustomCallKind::kHostCallback: break;
  }
  return SolverOp::kLu;
}

Result<int64_t> DecodeNeuronDimension(std::string_view backend_config, size_t rank) {
  std::string text(backend_config);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.pop_back();
  char* end = nullptr;
  long long dim = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0')
    return Status::Error("backend_config '" + text + "' is not a dimension (decimal text, as torch-neuronx writes it)");
  if (dim < 0) dim += static_cast<long long>(rank);
  if (dim < 0 || dim >= static_cast<long long>(rank))
    return Status::Error("backend_config dimension " + text + " is out of range for rank " + std::to_string(rank));
  return static_cast<int64_t>(dim);
}

}  // namespace nhlo
