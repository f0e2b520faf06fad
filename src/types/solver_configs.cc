// SPDX-License-Identifier: Apache-2.0
#include "types/solver_configs.h"

#include <cstring>
#include <map>
#include <string>

namespace nhlo {
namespace {

// An FFI call's attributes as JAX prints them into backend_config: `{lower = true}`,
// `{mode = 86 : ui8, uplo = 76 : ui8}` (MLIR attribute syntax, types after a colon). Values are
// kept as their text without the type.
Result<std::map<std::string, std::string, std::less<>>> FfiAttributes(std::string_view text) {
  std::map<std::string, std::string, std::less<>> attrs;
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  text = trim(text);
  if (text.empty()) return attrs;
  if (text.front() != '{' || text.back() != '}')
    return Status::Error("backend_config '" + std::string(text) + "' is not an attribute dictionary {name = value}");
  text = text.substr(1, text.size() - 2);
  while (!trim(text).empty()) {
    size_t comma = text.find(',');
    std::string_view item = trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      return Status::Error("backend_config attribute '" + std::string(item) + "' has no '='");
    std::string_view value = trim(item.substr(eq + 1));
    value = trim(value.substr(0, value.find(':')));
    attrs[std::string(trim(item.substr(0, eq)))] = std::string(value);
  }
  return attrs;
}

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
Result<char> CharAttr(const std::map<std::string, std::string, std::less<>>& attrs, std::string_view name, char absent,
                      std::string_view target) {
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

Result<bool> BoolAttr(const std::map<std::string, std::string, std::less<>>& attrs, std::string_view name, bool absent,
                      std::string_view target) {
  auto it = attrs.find(name);
  if (it == attrs.end()) return absent;
  if (it->second == "true") return true;
  if (it->second == "false") return false;
  return Status::Error("custom_call_target '" + std::string(target) + "' attribute " + std::string(name) + " = " +
                       it->second + " is not true or false");
}

}  // namespace

Result<SolverConfig> DecodeSolverCall(SolverOp op, std::string_view target, size_t operands,
                                      std::string_view backend_config) {
  const bool ffi = target.ends_with("_ffi");
  const bool cpu = target.starts_with("lapack_") || target.starts_with("blas_");
  SolverConfig c;
  c.op = op;
  auto need = [&](size_t n) -> Status {
    if (operands == n) return OkStatus();
    return Status::Error("custom_call_target '" + std::string(target) + "' takes " + std::to_string(n) +
                         " operands, got " + std::to_string(operands));
  };
  std::map<std::string, std::string, std::less<>> attrs;
  if (ffi) {
    NHLO_ASSIGN_OR_RETURN(attrs, FfiAttributes(backend_config));
  }
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
      if (cpu && !ffi) {  // lapack_?potrf(lower, b, n, a), lapack_?syevd(lower, b, n, a)
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
    case SolverOp::kTriangularSolve:
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
    case CustomCallKind::kCudnnConv: break;
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
