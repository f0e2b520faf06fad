// SPDX-License-Identifier: Apache-2.0
// Elementwise kernels on c64 and c128, as XLA's evaluator computes them: in std::complex of the
// part type (float for c64, double for c128), with the standard library's functions. complex()
// builds a value from two real parts, real/imag/abs return the part type, compare knows EQ and
// NE, and convert goes real -> complex (imaginary part 0) and complex -> complex; complex ->
// real is refused, as XLA's Literal::Convert refuses it.
#include <complex>
#include <cstring>
#include <optional>

#include "interp/element_traits.h"
#include "interp/kernels.h"
#include "types/element.h"

namespace nhlo {
namespace {

Status Unsupported(Opcode op, PrimitiveType t) {
  return Status::Error("the interpreter does not implement '" + std::string(OpcodeName(op)) + "' on " +
                       std::string(PrimitiveTypeName(t)));
}

// The real type of a complex type's parts, or kInvalid.
PrimitiveType PartType(PrimitiveType t) {
  if (t == PrimitiveType::kC64) return PrimitiveType::kF32;
  if (t == PrimitiveType::kC128) return PrimitiveType::kF64;
  return PrimitiveType::kInvalid;
}

template <typename R>
void StoreR(uint8_t* p, int64_t i, R v) {
  std::memcpy(p + i * sizeof(R), &v, sizeof(R));
}

template <typename R>
R LoadR(const uint8_t* p, int64_t i) {
  R v;
  std::memcpy(&v, p + i * sizeof(R), sizeof(R));
  return v;
}

// One complex -> complex function; false when XLA's evaluator has none for complex.
template <typename R>
bool UnaryC(UnaryOp op, std::complex<R> x, std::complex<R>* y) {
  using C = std::complex<R>;
  switch (op) {
    case UnaryOp::kNegate: *y = -x; return true;
    case UnaryOp::kCopy: *y = x; return true;
    case UnaryOp::kExp: *y = std::exp(x); return true;
    case UnaryOp::kLog: *y = std::log(x); return true;
    case UnaryOp::kSqrt: *y = std::sqrt(x); return true;
    case UnaryOp::kRsqrt: *y = C(1) / std::sqrt(x); return true;
    case UnaryOp::kSin: *y = std::sin(x); return true;
    case UnaryOp::kCos: *y = std::cos(x); return true;
    case UnaryOp::kTan: *y = std::tan(x); return true;
    case UnaryOp::kTanh: *y = std::tanh(x); return true;
    case UnaryOp::kSinh: *y = std::sinh(x); return true;
    case UnaryOp::kCosh: *y = std::cosh(x); return true;
    case UnaryOp::kAsin: *y = std::asin(x); return true;
    case UnaryOp::kAcos: *y = std::acos(x); return true;
    case UnaryOp::kAsinh: *y = std::asinh(x); return true;
    case UnaryOp::kAcosh: *y = std::acosh(x); return true;
    case UnaryOp::kAtanh: *y = std::atanh(x); return true;
    case UnaryOp::kLogistic: *y = C(1) / (C(1) + std::exp(-x)); return true;
    case UnaryOp::kSign:  // x / |x|, and 0 for 0 (NaN parts propagate through the division)
      *y = x == C(0) ? C(0) : x / std::abs(x);
      return true;
    // abs, real and imag have their own loop (a real result); the rest take no complex
    case UnaryOp::kAbs:
    case UnaryOp::kCbrt:
    case UnaryOp::kCeil:
    case UnaryOp::kClz:
    case UnaryOp::kErf:
    case UnaryOp::kExpm1:
    case UnaryOp::kFloor:
    case UnaryOp::kImag:
    case UnaryOp::kIsFinite:
    case UnaryOp::kLog1p:
    case UnaryOp::kNot:
    case UnaryOp::kPopulationCount:
    case UnaryOp::kReal:
    case UnaryOp::kRoundNearestAfz:
    case UnaryOp::kRoundNearestEven: break;
  }
  return false;
}

template <typename R>
bool BinaryC(BinaryOp op, std::complex<R> a, std::complex<R> b, std::complex<R>* y) {
  using C = std::complex<R>;
  switch (op) {
    case BinaryOp::kAdd: *y = a + b; return true;
    case BinaryOp::kSubtract: *y = a - b; return true;
    case BinaryOp::kMultiply: *y = a * b; return true;
    case BinaryOp::kDivide: *y = a / b; return true;
    case BinaryOp::kPower: *y = a == C(1) || b == C(0) ? C(1) : std::pow(a, b); return true;
    // complex has its own loop (real operands); the rest take no complex
    case BinaryOp::kAnd:
    case BinaryOp::kAtan2:
    case BinaryOp::kComplex:
    case BinaryOp::kMaximum:
    case BinaryOp::kMinimum:
    case BinaryOp::kMulhi:
    case BinaryOp::kOr:
    case BinaryOp::kRemainder:
    case BinaryOp::kShiftLeft:
    case BinaryOp::kShiftRightArithmetic:
    case BinaryOp::kShiftRightLogical:
    case BinaryOp::kXor: break;
  }
  return false;
}

// The spans (elementwise_spans.h). ComplexUnarySpan / ComplexBinarySpan checked the op, so
// UnaryC / BinaryC return true here.
template <typename R>
void UnaryLoop(const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
  const UnaryOp unary = *AsUnaryOp(o.opcode);
  for (int64_t i = 0; i < m; ++i) {
    std::complex<R> y;
    (void)UnaryC<R>(unary, LoadComplex<R>(x[0], i), &y);
    StoreComplex<R>(z, i, y);
  }
}

// abs, real and imag: a result of the part type.
template <typename R>
void PartLoop(const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
  for (int64_t i = 0; i < m; ++i) {
    std::complex<R> v = LoadComplex<R>(x[0], i);
    StoreR<R>(z, i, o.opcode == Opcode::kAbs ? std::abs(v) : o.opcode == Opcode::kReal ? v.real() : v.imag());
  }
}

template <typename R>
void BinaryLoop(const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
  const BinaryOp binary = *AsBinaryOp(o.opcode);
  for (int64_t i = 0; i < m; ++i) {
    std::complex<R> y;
    (void)BinaryC<R>(binary, LoadComplex<R>(x[0], i), LoadComplex<R>(x[1], i), &y);
    StoreComplex<R>(z, i, y);
  }
}

// complex(re, im): two operands of the part type.
template <typename R>
void BuildLoop(const SpanOp&, const uint8_t* const* x, uint8_t* z, int64_t m) {
  for (int64_t i = 0; i < m; ++i) StoreComplex<R>(z, i, {LoadR<R>(x[0], i), LoadR<R>(x[1], i)});
}

// EQ (code 0) or NE (code 1).
template <typename R>
void CompareLoop(const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
  for (int64_t i = 0; i < m; ++i) z[i] = (LoadComplex<R>(x[0], i) == LoadComplex<R>(x[1], i)) == (o.code == 0);
}

void ConvertLoop(const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
  const PrimitiveType from = o.in_type;
  const bool wide = o.out_type == PrimitiveType::kC128;
  for (int64_t i = 0; i < m; ++i) {
    std::complex<double> v;
    if (IsComplex(from)) {
      v = from == PrimitiveType::kC64 ? std::complex<double>(LoadComplex<float>(x[0], i))
                                      : LoadComplex<double>(x[0], i);
    } else {
      // The real part as XLA converts a real value to the part type; the imaginary part is 0.
      uint8_t part[8];
      PrimitiveType pt = wide ? PrimitiveType::kF64 : PrimitiveType::kF32;
      ConvertElement(from, x[0] + i * HostByteSize(from), pt, part);
      v = wide ? LoadR<double>(part, 0) : LoadR<float>(part, 0);
    }
    if (wide)
      StoreComplex<double>(z, i, v);
    else
      StoreComplex<float>(z, i, {static_cast<float>(v.real()), static_cast<float>(v.imag())});
  }
}

}  // namespace

Result<SpanOp> ComplexUnarySpan(Opcode op, PrimitiveType in, PrimitiveType out) {
  const bool wide = in == PrimitiveType::kC128;
  if (!IsComplex(in)) return Unsupported(op, in);
  if (op == Opcode::kAbs || op == Opcode::kReal || op == Opcode::kImag) {
    if (out != PartType(in)) return Unsupported(op, in);
    return OpSpan(wide ? PartLoop<double> : PartLoop<float>, op, in, out, 1);
  }
  const std::optional<UnaryOp> unary = AsUnaryOp(op);
  std::complex<double> probe;
  // Whether UnaryC has the op depends on the op alone.
  if (out != in || !unary || !UnaryC<double>(*unary, {0, 0}, &probe)) return Unsupported(op, in);
  return OpSpan(wide ? UnaryLoop<double> : UnaryLoop<float>, op, in, out, 1);
}

Result<SpanOp> ComplexBinarySpan(Opcode op, PrimitiveType a, PrimitiveType b, PrimitiveType out) {
  const bool wide = out == PrimitiveType::kC128;
  if (!IsComplex(out)) return Unsupported(op, out);
  if (op == Opcode::kComplex) {
    if (a != PartType(out) || b != a) return Unsupported(op, a);
    return OpSpan(wide ? BuildLoop<double> : BuildLoop<float>, op, a, out, 2);
  }
  const std::optional<BinaryOp> binary = AsBinaryOp(op);
  std::complex<double> probe;
  // Whether BinaryC has the op depends on the op alone.
  if (a != out || b != out || !binary || !BinaryC<double>(*binary, {0, 0}, {0, 0}, &probe)) return Unsupported(op, a);
  return OpSpan(wide ? BinaryLoop<double> : BinaryLoop<float>, op, out, out, 2);
}

SpanOp ComplexCompareSpan(bool equal, PrimitiveType t) {
  SpanOp span = OpSpan(t == PrimitiveType::kC128 ? CompareLoop<double> : CompareLoop<float>, Opcode::kCompare, t,
                       PrimitiveType::kPred, 2);
  span.code = equal ? 0 : 1;
  return span;
}

Result<SpanOp> ComplexConvertSpan(PrimitiveType from, PrimitiveType to) {
  if (!IsComplex(to)) return Unsupported(Opcode::kConvert, from);  // complex -> real
  return OpSpan(ConvertLoop, Opcode::kConvert, from, to, 1);
}

}  // namespace nhlo
