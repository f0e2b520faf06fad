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

template <typename C>
inline C UnaryFloat(Opcode op, C x, bool* ok) {
  switch (op) {
    case Opcode::kAbs: return std::fabs(x);
    case Opcode::kNegate: return -x;
    case Opcode::kCeil: return std::ceil(x);
    case Opcode::kFloor: return std::floor(x);
    // The f32 domain's exp and tanh are correctly rounded (vector_math.h): the same bits on
    // every machine, where glibc's expf/tanhf differ by CPU and miss on some inputs.
    case Opcode::kExp:
      if constexpr (std::is_same_v<C, float>)
        return ExpF32(x);
      else
        return std::exp(x);
    case Opcode::kExpm1: return std::expm1(x);
    case Opcode::kLog: return std::log(x);
    case Opcode::kLog1p: return std::log1p(x);
    case Opcode::kLogistic:
      if constexpr (std::is_same_v<C, float>)
        return 1.0f / (1.0f + ExpF32(-x));
      else
        return C(1) / (C(1) + std::exp(-x));
    case Opcode::kSqrt: return std::sqrt(x);
    case Opcode::kRsqrt: return C(1) / std::sqrt(x);
    case Opcode::kCbrt: return std::cbrt(x);
    case Opcode::kSin: return std::sin(x);
    case Opcode::kCos: return std::cos(x);
    case Opcode::kTan: return std::tan(x);
    case Opcode::kTanh:
      if constexpr (std::is_same_v<C, float>)
        return TanhF32(x);
      else
        return std::tanh(x);
    case Opcode::kSinh: return std::sinh(x);
    case Opcode::kCosh: return std::cosh(x);
    case Opcode::kAcos: return std::acos(x);
    case Opcode::kAcosh: return std::acosh(x);
    case Opcode::kAsin: return std::asin(x);
    case Opcode::kAsinh: return std::asinh(x);
    case Opcode::kAtanh: return std::atanh(x);
    case Opcode::kErf: return std::erf(x);
    case Opcode::kSign:
      if (std::isnan(x)) return x;
      return x > 0 ? C(1) : x < 0 ? C(-1) : x;  // keeps the sign of zero
    case Opcode::kRoundNearestAfz: return std::round(x);
    case Opcode::kRoundNearestEven: return std::nearbyint(x);
    case Opcode::kCopy:
    case Opcode::kReal: return x;
    case Opcode::kImag: return C(0);
    default: *ok = false; return x;
  }
}

template <typename C>
inline C UnaryInt(Opcode op, C x, int bits, bool* ok) {
  using U = std::make_unsigned_t<C>;
  U mask = bits >= 64 ? ~U(0) : (U(1) << bits) - 1;
  switch (op) {
    case Opcode::kAbs:
      if constexpr (std::is_signed_v<C>)
        return x < 0 ? C(U(0) - U(x)) : x;
      else
        return x;
    case Opcode::kNegate: return C(U(0) - U(x));
    case Opcode::kNot: return C(~U(x));
    case Opcode::kSign:
      if constexpr (std::is_signed_v<C>)
        return x > 0 ? 1 : x < 0 ? -1 : 0;
      else
        return x > 0 ? 1 : 0;
    case Opcode::kCopy: return x;
    case Opcode::kPopulationCount: return C(std::popcount(U(x) & mask));
    case Opcode::kClz: {
      U v = U(x) & mask;
      return C(std::countl_zero(v) - (64 - bits));
    }
    default: *ok = false; return x;
  }
}

template <typename C>
inline C BinaryFloat(Opcode op, C a, C b, bool* ok) {
  switch (op) {
    case Opcode::kAdd: return a + b;
    case Opcode::kSubtract: return a - b;
    case Opcode::kMultiply: return a * b;
    case Opcode::kDivide: return a / b;
    case Opcode::kRemainder: return std::fmod(a, b);
    case Opcode::kAtan2: return std::atan2(a, b);
    case Opcode::kPower:
      if (a == C(1) || b == C(0)) return C(1);
      return std::pow(a, b);
    case Opcode::kMaximum:
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      return a >= b ? a : b;
    case Opcode::kMinimum:
      if (std::isnan(a)) return a;
      if (std::isnan(b)) return b;
      return a <= b ? a : b;
    default: *ok = false; return a;
  }
}

template <typename C>
inline C BinaryInt(Opcode op, C a, C b, int bits, bool* ok) {
  using U = std::make_unsigned_t<C>;
  switch (op) {
    case Opcode::kAdd: return C(U(a) + U(b));
    case Opcode::kSubtract: return C(U(a) - U(b));
    case Opcode::kMultiply: return C(U(a) * U(b));
    case Opcode::kDivide:
      if (b == 0) return std::is_signed_v<C> ? C(-1) : C(~U(0));
      if constexpr (std::is_signed_v<C>) {
        C min = bits >= 64 ? std::numeric_limits<C>::min() : -(C(1) << (bits - 1));
        if (a == min && b == -1) return a;
      }
      return a / b;
    case Opcode::kRemainder:
      if (b == 0) return a;
      if constexpr (std::is_signed_v<C>)
        if (b == -1) return 0;
      return a % b;
    case Opcode::kMaximum: return a >= b ? a : b;
    case Opcode::kMinimum: return a <= b ? a : b;
    case Opcode::kAnd: return a & b;
    case Opcode::kOr: return a | b;
    case Opcode::kXor: return a ^ b;
    case Opcode::kShiftLeft: {
      U amount = U(b) & (bits >= 64 ? ~U(0) : (U(1) << bits) - 1);
      return amount >= U(bits) ? C(0) : C(U(a) << amount);
    }
    case Opcode::kShiftRightLogical: {
      U mask = bits >= 64 ? ~U(0) : (U(1) << bits) - 1;
      U amount = U(b) & mask;
      return amount >= U(bits) ? C(0) : C((U(a) & mask) >> amount);
    }
    case Opcode::kShiftRightArithmetic: {
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
    case Opcode::kPower: {
      if (b < 0) return a == 1 ? C(1) : C(0);
      U result = 1, base = U(a);
      for (U e = U(b); e; e >>= 1, base *= base)
        if (e & 1) result *= base;
      return C(result);
    }
    case Opcode::kMulhi: {
      if constexpr (std::is_signed_v<C>) {
        __int128 p = static_cast<__int128>(a) * b;
        return C(p >> bits);
      } else {
        unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
        return C(p >> bits);
      }
    }
    default: *ok = false; return a;
  }
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

/// An opcode as a type, so a kernel picks its loop once per call.
template <Opcode K>
using OpConst = std::integral_constant<Opcode, K>;

/// Fast forms of the elementwise kernels (kernels_elementwise_fast.cc): each returns false,
/// touching nothing, when it has no fast loop for the op and types; the caller then runs the
/// generic per-element loop. The shape checks are the caller's, done before.
bool FastUnary(Opcode op, const Buf& in, const Buf& out);
bool FastBinary(Opcode op, const Buf& a, const Buf& b, const Buf& out);
bool FastCompare(int code, bool total_order, const Buf& a, const Buf& b, const Buf& out);
bool FastSelect(const Buf& pred, const Buf& on_true, const Buf& on_false, const Buf& out);
bool FastClamp(const Buf& lo, const Buf& x, const Buf& hi, const Buf& out);
bool FastConvert(const Buf& in, const Buf& out);

}  // namespace nhlo
