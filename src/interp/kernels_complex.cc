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

template <typename R>
Status UnaryTyped(Opcode op, const Buf& in, const Buf& out) {
  int64_t n = in.count();
  PrimitiveType part = PartType(in.type());
  if (op == Opcode::kAbs || op == Opcode::kReal || op == Opcode::kImag) {
    if (out.type() != part) return Unsupported(op, in.type());
    for (int64_t i = 0; i < n; ++i) {
      std::complex<R> x = LoadComplex<R>(in.data, i);
      StoreR<R>(out.data, i, op == Opcode::kAbs ? std::abs(x) : op == Opcode::kReal ? x.real() : x.imag());
    }
    return OkStatus();
  }
  const std::optional<UnaryOp> unary = AsUnaryOp(op);
  if (out.type() != in.type() || !unary) return Unsupported(op, in.type());
  for (int64_t i = 0; i < n; ++i) {
    std::complex<R> y;
    if (!UnaryC<R>(*unary, LoadComplex<R>(in.data, i), &y)) return Unsupported(op, in.type());
    StoreComplex<R>(out.data, i, y);
  }
  return OkStatus();
}

template <typename R>
Status BinaryTyped(Opcode op, const Buf& a, const Buf& b, const Buf& out) {
  int64_t n = out.count();
  if (op == Opcode::kComplex) {
    if (a.type() != PartType(out.type()) || b.type() != a.type()) return Unsupported(op, a.type());
    for (int64_t i = 0; i < n; ++i) StoreComplex<R>(out.data, i, {LoadR<R>(a.data, i), LoadR<R>(b.data, i)});
    return OkStatus();
  }
  const std::optional<BinaryOp> binary = AsBinaryOp(op);
  if (a.type() != out.type() || b.type() != out.type() || !binary) return Unsupported(op, a.type());
  for (int64_t i = 0; i < n; ++i) {
    std::complex<R> y;
    if (!BinaryC<R>(*binary, LoadComplex<R>(a.data, i), LoadComplex<R>(b.data, i), &y))
      return Unsupported(op, a.type());
    StoreComplex<R>(out.data, i, y);
  }
  return OkStatus();
}

}  // namespace

Status KernelComplexUnary(Opcode op, const Buf& in, const Buf& out) {
  if (in.count() != out.count()) return Status::Error("bundle '" + std::string(OpcodeName(op)) + "' changes the size");
  if (in.type() == PrimitiveType::kC64) return UnaryTyped<float>(op, in, out);
  if (in.type() == PrimitiveType::kC128) return UnaryTyped<double>(op, in, out);
  return Unsupported(op, in.type());
}

Status KernelComplexBinary(Opcode op, const Buf& a, const Buf& b, const Buf& out) {
  if (a.count() != out.count() || b.count() != out.count())
    return Status::Error("bundle '" + std::string(OpcodeName(op)) + "' has operands whose element counts differ");
  if (out.type() == PrimitiveType::kC64) return BinaryTyped<float>(op, a, b, out);
  if (out.type() == PrimitiveType::kC128) return BinaryTyped<double>(op, a, b, out);
  return Unsupported(op, out.type());
}

Status KernelComplexCompare(bool equal, const Buf& a, const Buf& b, const Buf& out) {
  int64_t n = out.count();
  for (int64_t i = 0; i < n; ++i) {
    bool same = a.type() == PrimitiveType::kC64 ? LoadComplex<float>(a.data, i) == LoadComplex<float>(b.data, i)
                                                : LoadComplex<double>(a.data, i) == LoadComplex<double>(b.data, i);
    out.data[i] = same == equal;
  }
  return OkStatus();
}

Status KernelComplexConvert(const Buf& in, const Buf& out) {
  int64_t n = out.count();
  if (!IsComplex(out.type())) return Unsupported(Opcode::kConvert, in.type());  // complex -> real
  bool wide = out.type() == PrimitiveType::kC128;
  for (int64_t i = 0; i < n; ++i) {
    std::complex<double> v;
    if (IsComplex(in.type())) {
      v = in.type() == PrimitiveType::kC64 ? std::complex<double>(LoadComplex<float>(in.data, i))
                                           : LoadComplex<double>(in.data, i);
    } else {
      // The real part as XLA converts a real value to the part type; the imaginary part is 0.
      uint8_t part[8];
      PrimitiveType pt = wide ? PrimitiveType::kF64 : PrimitiveType::kF32;
      ConvertElement(in.type(), in.data + i * HostByteSize(in.type()), pt, part);
      v = wide ? LoadR<double>(part, 0) : LoadR<float>(part, 0);
    }
    if (wide)
      StoreComplex<double>(out.data, i, v);
    else
      StoreComplex<float>(out.data, i, {static_cast<float>(v.real()), static_cast<float>(v.imag())});
  }
  return OkStatus();
}

}  // namespace nhlo
