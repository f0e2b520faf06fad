// SPDX-License-Identifier: Apache-2.0
// The loops of the elementwise span kernels over native arrays, shared by the baseline build
// (kernels_elementwise_fast.cc) and the AVX2/AVX-512 builds (elementwise_spans_isa.cc), which
// compile the same loops with wider vectors. They are in an unnamed namespace on purpose: each
// file that includes them gets its own copies, so the linker never merges an AVX-512 copy into
// baseline code (the ISA files also flatten every call into their entry points).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "interp/elementwise_ops.h"
#include "interp/vector_math.h"

namespace nhlo {
namespace {

template <typename T>
T* As(uint8_t* p) {
  return reinterpret_cast<T*>(p);
}
template <typename T>
const T* As(const uint8_t* p) {
  return reinterpret_cast<const T*>(p);
}

// The integer compute domain of the scalar rules: int64 for signed types, uint64 for unsigned.
template <typename T>
using IntCompute = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;

// ---- unary / binary spans ----

// Integer ops SSE2 has no lane instructions for (variable shifts, popcount, 64-bit products):
// their loops stay scalar, which is faster than the vectorizer's emulation.
template <Opcode K>
constexpr bool kScalarInt =
    K == Opcode::kShiftLeft || K == Opcode::kShiftRightLogical || K == Opcode::kShiftRightArithmetic ||
    K == Opcode::kPower || K == Opcode::kMulhi || K == Opcode::kPopulationCount || K == Opcode::kClz;

// Keeps the compiler from vectorizing a loop through v (an empty asm, no instruction).
template <typename T>
inline T Opaque(T v) {
  asm("" : "+r"(v));
  return v;
}

// sqrt and rsqrt over SSE2 lanes: the IEEE square root glibc's sqrtf/sqrt also return (they
// are the same instruction), which the compiler cannot vectorize itself while errno is on.
// Returns how many elements it did.
template <Opcode K, typename T>
int64_t SqrtLanes(const T* x, T* z, int64_t m) {
  int64_t i = 0;
#if defined(__SSE2__)
  if constexpr (std::is_same_v<T, float>) {
    for (; i + 4 <= m; i += 4) {
      __m128 r = _mm_sqrt_ps(_mm_loadu_ps(x + i));
      if constexpr (K == Opcode::kRsqrt) r = _mm_div_ps(_mm_set1_ps(1.0f), r);
      _mm_storeu_ps(z + i, r);
    }
  } else {
    for (; i + 2 <= m; i += 2) {
      __m128d r = _mm_sqrt_pd(_mm_loadu_pd(x + i));
      if constexpr (K == Opcode::kRsqrt) r = _mm_div_pd(_mm_set1_pd(1.0), r);
      _mm_storeu_pd(z + i, r);
    }
  }
#endif
  return i;
}

template <Opcode K, typename T>
void UnarySpan(const T* x, T* z, int64_t m) {
  bool ignored = true;
  if constexpr (std::is_same_v<T, float> && (K == Opcode::kExp || K == Opcode::kTanh)) {
    // The array forms of UnaryFloat's rule.
    if constexpr (K == Opcode::kExp)
      ExpF32(x, z, m);
    else
      TanhF32(x, z, m);
  } else if constexpr (std::is_same_v<T, float> && K == Opcode::kLogistic) {
    // 1 / (1 + exp(-x)) as UnaryFloat computes it, with exp over blocks.
    float e[256];
    for (int64_t start = 0; start < m; start += 256) {
      int64_t count = std::min<int64_t>(256, m - start);
      for (int64_t j = 0; j < count; ++j) e[j] = -x[start + j];
      ExpF32(e, e, count);
      for (int64_t j = 0; j < count; ++j) z[start + j] = 1.0f / (1.0f + e[j]);
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    int64_t i = 0;
    if constexpr (K == Opcode::kSqrt || K == Opcode::kRsqrt) i = SqrtLanes<K, T>(x, z, m);
    for (; i < m; ++i) z[i] = UnaryFloat<T>(kUnaryOf<K>, x[i], &ignored);
  } else {
    using C = IntCompute<T>;
    for (int64_t i = 0; i < m; ++i) {
      T r = static_cast<T>(UnaryInt<C>(kUnaryOf<K>, static_cast<C>(x[i]), 8 * sizeof(T), &ignored));
      z[i] = kScalarInt<K> ? Opaque(r) : r;
    }
  }
}

// A NaN with its quiet bit set, as the hardware returns it.
template <typename T>
inline T Quiet(T v) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  constexpr U kQuiet = U(1) << (std::numeric_limits<T>::digits - 2);
  return std::bit_cast<T>(static_cast<U>(std::bit_cast<U>(v) | kQuiet));
}

// When both operands of + or * are NaN, x86 returns the first one (quieted), but the compiler
// may swap the operands of a commutative op, so the choice is made explicit here: the first
// operand's NaN, as the per-element kernels return, or the second's (kSecondNaN), as their f32
// add loop did.
template <Opcode K, typename T, bool kSecondNaN = false>
void BinarySpan(const T* x, const T* y, T* z, int64_t m) {
  bool ignored = true;
  if constexpr (std::is_floating_point_v<T> && (K == Opcode::kAdd || K == Opcode::kMultiply)) {
    for (int64_t i = 0; i < m; ++i) {
      T a = x[i], b = y[i];
      T r = BinaryFloat<T>(kBinaryOf<K>, a, b, &ignored);
      z[i] = std::isnan(a) && std::isnan(b) ? Quiet(kSecondNaN ? b : a) : r;
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    for (int64_t i = 0; i < m; ++i) z[i] = BinaryFloat<T>(kBinaryOf<K>, x[i], y[i], &ignored);
  } else {
    using C = IntCompute<T>;
    for (int64_t i = 0; i < m; ++i) {
      T r = static_cast<T>(
          BinaryInt<C>(kBinaryOf<K>, static_cast<C>(x[i]), static_cast<C>(y[i]), 8 * sizeof(T), &ignored));
      z[i] = kScalarInt<K> ? Opaque(r) : r;
    }
  }
}

// ---- compare ----

template <int kCode, typename T>
inline bool Cmp(T x, T y) {
  if constexpr (kCode == 0)
    return x == y;
  else if constexpr (kCode == 1)
    return x != y;
  else if constexpr (kCode == 2)
    return x < y;
  else if constexpr (kCode == 3)
    return x <= y;
  else if constexpr (kCode == 4)
    return x > y;
  else
    return x >= y;
}

template <int kCode, typename T>
void CompareSpan(const T* x, const T* y, uint8_t* o, int64_t m) {
  for (int64_t i = 0; i < m; ++i) o[i] = Cmp<kCode>(x[i], y[i]);
}

template <typename U>
void SelectSpan(const uint8_t* p, const U* t, const U* f, U* o, int64_t m) {
  for (int64_t i = 0; i < m; ++i) {
    U a = t[i], b = f[i];
    o[i] = p[i] != 0 ? a : b;
  }
}

}  // namespace
}  // namespace nhlo
