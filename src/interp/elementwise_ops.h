// SPDX-License-Identifier: Apache-2.0
// The scalar rules of the elementwise ops (XLA's HloEvaluator: shared/reference/HLO_SEMANTICS.md)
// shared by the generic per-element kernels and the span kernels of kernels_elementwise_fast.cc,
// which call them with a compile-time opcode so the switch folds away and the loops vectorize.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "interp/kernels.h"
#include "interp/vector_math.h"

namespace nhlo {

// reduce-precision of one value in the bit layout of F (float or double), as XLA's evaluator
// does it: round the mantissa to nearest-even, then flush values below the reduced format's
// normal range to signed zero (denormals included) and values above it to signed infinity. A
// NaN stays the input NaN, or becomes +inf when no mantissa bit is left to carry it.
template <typename F>
inline F ReducePrecisionValue(F x, int exponent_bits, int mantissa_bits) {
  using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  constexpr int kMantissa = std::numeric_limits<F>::digits - 1;
  constexpr int kExponent = 8 * sizeof(F) - kMantissa - 1;
  U bits = std::bit_cast<U>(x);
  if (mantissa_bits < kMantissa) {
    U last_bit = U(1) << (kMantissa - mantissa_bits);
    U bias = (last_bit >> 1) - 1 + ((bits & last_bit) >> (kMantissa - mantissa_bits));
    bits = (bits + bias) & ~(last_bit - 1);  // a carry into the exponent is the right result
  }
  if (exponent_bits < kExponent) {
    U sign = bits & (U(1) << (8 * sizeof(F) - 1));
    U exponent_mask = ((U(1) << kExponent) - 1) << kMantissa;
    U bias = (U(1) << (kExponent - 1)) - 1, reduced_bias = (U(1) << (exponent_bits - 1)) - 1;
    U exponent = bits & exponent_mask;
    if (exponent > (bias + reduced_bias) << kMantissa) bits = sign | exponent_mask;
    if (exponent <= (bias - reduced_bias) << kMantissa) bits = sign;
  }
  if (std::isnan(x)) return mantissa_bits > 0 ? x : std::numeric_limits<F>::infinity();
  return std::bit_cast<F>(bits);
}

template <typename C>
inline C UnaryFloat(UnaryOp op, C x, bool* ok) {
  switch (op) {
    case UnaryOp::kAbs: return std::fabs(x);
    case UnaryOp::kNegate: return -x;
    case UnaryOp::kCeil: return std::ceil(x);
    case UnaryOp::kFloor: return std::floor(x);
    // The f32 domain's exp and tanh are correctly rounded (vector_math.h): the same bits on
    // every machine, where glibc's expf/tanhf differ by CPU and miss on some inputs.
    case UnaryOp::kExp:
      if constexpr (std::is_same_v<C, float>)
        return ExpF32(x);
      else
        return std::exp(x);
    case UnaryOp::kExpm1: return std::expm1(x);
    case UnaryOp::kLog: return std::log(x);
    case UnaryOp::kLog1p: return std::log1p(x);
    case UnaryOp::kLogistic:
      if constexpr (std::is_same_v<C, float>)
        return 1.0f / (1.0f + ExpF32(-x));
      else
        return C(1) / (C(1) + std::exp(-x));
    case UnaryOp::kSqrt: return std::sqrt(x);
    case UnaryOp::kRsqrt: return C(1) / std::sqrt(x);
    case UnaryOp::kCbrt: return std::cbrt(x);
    case UnaryOp::kSin: return std::sin(x);
    case UnaryOp::kCos: return std::cos(x);
    case UnaryOp::kTan: return std::tan(x);
    case UnaryOp::kTanh:
      if constexpr (std::is_same_v<C, float>)
        return TanhF32(x);
      else
        return std::tanh(x);
    case UnaryOp::kSinh: return std::sinh(x);
    case UnaryOp::kCosh: return std::cosh(x);
    case UnaryOp::kAcos: return std::acos(x);
    case UnaryOp::kAcosh: return std::acosh(x);
    case UnaryOp::kAsin: return std::asin(x);
    case UnaryOp::kAsinh: return std::asinh(x);
    case UnaryOp::kAtanh: return std::atanh(x);
    case UnaryOp::kErf: return std::erf(x);
    case UnaryOp::kSign:
      if (std::isnan(x)) return x;
      return x > 0 ? C(1) : x < 0 ? C(-1) : x;  // keeps the sign of zero
    case UnaryOp::kRoundNearestAfz: return std::round(x);
    case UnaryOp::kRoundNearestEven: return std::nearbyint(x);
    case UnaryOp::kCopy:
    case UnaryOp::kReal: return x;
    case UnaryOp::kImag: return C(0);
    // Integer-only ops, and is-finite (its own kernel)
    case UnaryOp::kClz:
    case UnaryOp::kIsFinite:
    case UnaryOp::kNot:
    case UnaryOp::kPopulationCount: break;
  }
  *ok = false;
  return x;
}

template <typename C>
inline C UnaryInt(UnaryOp op, C x, int bits, bool* ok) {
  using U = std::make_unsigned_t<C>;
  U mask = bits >= 64 ? ~U(0) : (U(1) << bits) - 1;
  switch (op) {
    case UnaryOp::kAbs:
      if constexpr (std::is_signed_v<C>)
        return x < 0 ? C(U(0) - U(x)) : x;
      else
        return x;
    case UnaryOp::kNegate: return C(U(0) - U(x));
    case UnaryOp::kNot: return C(~U(x));
    case UnaryOp::kSign:
      if constexpr (std::is_signed_v<C>)
        return x > 0 ? 1 : x < 0 ? -1 : 0;
      else
        return x > 0 ? 1 : 0;
    case UnaryOp::kCopy: return x;
    case UnaryOp::kPopulationCount: return C(std::popcount(U(x) & mask));
    case UnaryOp::kClz: {
      U v = U(x) & mask;
      return C(std::countl_zero(v) - (64 - bits));
    }
    // Floating-point-only ops, and is-finite (its own kernel)
    case UnaryOp::kAcos:
    case UnaryOp::kAcosh:
    case UnaryOp::kAsin:
    case UnaryOp::kAsinh:
    case UnaryOp::kAtanh:
    case UnaryOp::kCbrt:
    case UnaryOp::kCeil:
    case UnaryOp::kCosh:
    case UnaryOp::kCos:
    case UnaryOp::kErf:
    case UnaryOp::kExp:
    case UnaryOp::kExpm1:
    case UnaryOp::kFloor:
    case UnaryOp::kImag:
    case UnaryOp::kIsFinite:
    case UnaryOp::kLog:
    case UnaryOp::kLog1p:
    case UnaryOp::kLogistic:
    case UnaryOp::kReal:
    case UnaryOp::kRoundNearestAfz:
    case UnaryOp::kRoundNearestEven:
    case UnaryOp::kRsqrt:
    case UnaryOp::kSin:
    case UnaryOp::kSinh:
    case UnaryOp::kSqrt:
    case UnaryOp::kTan:
    case UnaryOp::kTanh: break;
  }
  *ok = false;
  return x;
}

template <typename C>
inline C BinaryFloat(BinaryOp op, C a, C b, bool* ok) {
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSubtract: return a - b;
    case BinaryOp::kMultiply: return a * b;
    case BinaryOp::kDivide: return a / b;
    case BinaryOp::kRemainder: return std::fmod(a, b);
    case BinaryOp::kAtan2: return std::atan2(a, b);
    case BinaryOp::kPower:
      if (a == C(1) || b == C(0)) return C(1);
      return std::pow(a, b);
    case BinaryOp::kMaximum:
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      return a >= b ? a : b;
    case BinaryOp::kMinimum:
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      return a <= b ? a : b;
    // Integer-only ops, and complex (its own kernel)
    case BinaryOp::kAnd:
    case BinaryOp::kComplex:
    case BinaryOp::kMulhi:
    case BinaryOp::kOr:
    case BinaryOp::kShiftLeft:
    case BinaryOp::kShiftRightArithmetic:
    case BinaryOp::kShiftRightLogical:
    case BinaryOp::kXor: break;
  }
  *ok = false;
  return a;
}

template <typename C>
inline C BinaryInt(BinaryOp op, C a, C b, int bits, bool* ok) {
  using U = std::make_unsigned_t<C>;
  switch (op) {
    case BinaryOp::kAdd: return C(U(a) + U(b));
    case BinaryOp::kSubtract: return C(U(a) - U(b));
    case BinaryOp::kMultiply: return C(U(a) * U(b));
    case BinaryOp::kDivide:
      if (b == 0) return std::is_signed_v<C> ? C(-1) : C(~U(0));
      if constexpr (std::is_signed_v<C>) {
        C min = bits >= 64 ? std::numeric_limits<C>::min() : -(C(1) << (bits - 1));
        if (a == min && b == -1) return a;
      }
      return a / b;
    case BinaryOp::kRemainder:
      if (b == 0) return a;
      if constexpr (std::is_signed_v<C>)
        if (b == -1) return 0;
      return a % b;
    case BinaryOp::kMaximum: return a >= b ? a : b;
    case BinaryOp::kMinimum: return a <= b ? a : b;
    case BinaryOp::kAnd: return a & b;
    case BinaryOp::kOr: return a | b;
    case BinaryOp::kXor: return a ^ b;
    case BinaryOp::kShiftLeft: {
      U amount = U(b) & (bits >= 64 ? ~U(0) : (U(1) << bits) - 1);
      return amount >= U(bits) ? C(0) : C(U(a) << amount);
    }
    case BinaryOp::kShiftRightLogical: {
      U mask = bits >= 64 ? ~U(0) : (U(1) << bits) - 1;
      U amount = U(b) & mask;
      return amount >= U(bits) ? C(0) : C((U(a) & mask) >> amount);
    }
    case BinaryOp::kShiftRightArithmetic: {
      U mask = bits >= 64 ? ~U(0) : (U(1) << bits) - 1;
      U amount = U(b) & mask;
      // Compute on the sign-extended value; an out-of-range shift fills with the sign.
      int64_t sa = static_cast<int64_t>(a);
      if constexpr (!std::is_signed_v<C>) {
        if (bits < 64 && (U(a) >> (bits - 1)) & 1) sa = static_cast<int64_t>(U(a) | ~mask);
      }
      if (amount >= U(bits)) return sa < 0 ? C(~U(0)) : C(0);
      return C(sa >> amount);
    }
    case BinaryOp::kPower: {
      if (b < 0) return a == 1 ? C(1) : C(0);
      U result = 1, base = U(a);
      for (U e = U(b); e; e >>= 1, base *= base)
        if (e & 1) result *= base;
      return C(result);
    }
    case BinaryOp::kMulhi: {
      if constexpr (std::is_signed_v<C>) {
        __int128 p = static_cast<__int128>(a) * b;
        return C(p >> bits);
      } else {
        unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
        return C(p >> bits);
      }
    }
    // atan2 is floating-point only; complex has its own kernel
    case BinaryOp::kAtan2:
    case BinaryOp::kComplex: break;
  }
  *ok = false;
  return a;
}

/// The ops UnaryFloat / UnaryInt / BinaryFloat / BinaryInt implement, as X-macro lists: the span
/// kernels instantiate one loop per entry.
// clang-format 14 re-wraps these lists differently on every run, so they keep their own layout.
// clang-format off
#define NHLO_UNARY_FLOAT_OPS(X)                                                                      \
  X(kAbs) X(kNegate) X(kCeil) X(kFloor) X(kExp) X(kExpm1) X(kLog) X(kLog1p) X(kLogistic) X(kSqrt)    \
  X(kRsqrt) X(kCbrt) X(kSin) X(kCos) X(kTan) X(kTanh) X(kSinh) X(kCosh) X(kAcos) X(kAcosh) X(kAsin)  \
  X(kAsinh) X(kAtanh) X(kErf) X(kSign) X(kRoundNearestAfz) X(kRoundNearestEven) X(kCopy) X(kReal)    \
  X(kImag)
#define NHLO_UNARY_INT_OPS(X) X(kAbs) X(kNegate) X(kNot) X(kSign) X(kCopy) X(kPopulationCount) X(kClz)
#define NHLO_BINARY_FLOAT_OPS(X)                                                                     \
  X(kAdd) X(kSubtract) X(kMultiply) X(kDivide) X(kRemainder) X(kAtan2) X(kPower) X(kMaximum) X(kMinimum)
#define NHLO_BINARY_INT_OPS(X)                                                                       \
  X(kAdd) X(kSubtract) X(kMultiply) X(kDivide) X(kRemainder) X(kMaximum) X(kMinimum) X(kAnd) X(kOr)  \
  X(kXor) X(kShiftLeft) X(kShiftRightLogical) X(kShiftRightArithmetic) X(kPower) X(kMulhi)
// clang-format on

/// An elementwise opcode as its UnaryOp / BinaryOp, at compile time (an error for any other).
template <Opcode K>
inline constexpr UnaryOp kUnaryOf = *AsUnaryOp(K);
template <Opcode K>
inline constexpr BinaryOp kBinaryOf = *AsBinaryOp(K);

/// An opcode as a type, so a kernel picks its loop once per call.
template <Opcode K>
using OpConst = std::integral_constant<Opcode, K>;

}  // namespace nhlo
