// SPDX-License-Identifier: Apache-2.0
// Span forms of the elementwise kernels: the op and the element type are resolved once per call,
// then a tight loop runs over native arrays (float*, int32_t*, ...) that the compiler vectorizes.
// The loops call the same scalar rules as the generic kernels (elementwise_ops.h) with a constant
// opcode, so every result is bit-identical to them. bf16/f16/f8/f6/f4 are decoded a block at a
// time to f32, computed in f32 and encoded once (float_blocks.h). Large calls are cut into
// fixed-size chunks for ParallelFor; the cut depends only on the element count.
#include <algorithm>
#include <cmath>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

#include "interp/elementwise_ops.h"
#include "interp/float_blocks.h"
#include "support/parallel.h"
#include "types/float_cast.h"

namespace nhlo {
namespace {

constexpr int64_t kChunk = 1 << 16;  // elements per parallel chunk

template <typename F>
void ForChunks(int64_t n, F&& body) {
  if (n <= 0) return;
  if (n <= kChunk) {
    body(int64_t{0}, n);
    return;
  }
  ParallelFor(n, kChunk, body);
}

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

bool IsBlockFloat(PrimitiveType t) { return t != PrimitiveType::kF32 && IsCastableLowPrecisionFloat(t); }

// Calls f(T{}) for the element types with a native C++ array form (not pred, not sub-byte).
template <typename F>
bool WithNativeInt(PrimitiveType t, F&& f) {
  switch (t) {
    case PrimitiveType::kS8: f(int8_t{}); return true;
    case PrimitiveType::kS16: f(int16_t{}); return true;
    case PrimitiveType::kS32: f(int32_t{}); return true;
    case PrimitiveType::kS64: f(int64_t{}); return true;
    case PrimitiveType::kU8: f(uint8_t{}); return true;
    case PrimitiveType::kU16: f(uint16_t{}); return true;
    case PrimitiveType::kU32: f(uint32_t{}); return true;
    case PrimitiveType::kU64: f(uint64_t{}); return true;
    case PrimitiveType::kInvalid:
    case PrimitiveType::kPred:
    case PrimitiveType::kF16:
    case PrimitiveType::kF32:
    case PrimitiveType::kF64:
    case PrimitiveType::kTuple:
    case PrimitiveType::kOpaque:
    case PrimitiveType::kC64:
    case PrimitiveType::kBF16:
    case PrimitiveType::kToken:
    case PrimitiveType::kC128:
    case PrimitiveType::kF8E5M2:
    case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kS4:
    case PrimitiveType::kU4:
    case PrimitiveType::kF8E4M3B11FNUZ:
    case PrimitiveType::kF8E5M2FNUZ:
    case PrimitiveType::kF8E4M3FNUZ:
    case PrimitiveType::kS2:
    case PrimitiveType::kU2:
    case PrimitiveType::kF8E4M3:
    case PrimitiveType::kF8E3M4:
    case PrimitiveType::kS1:
    case PrimitiveType::kU1:
    case PrimitiveType::kF4E2M1FN:
    case PrimitiveType::kF8E8M0FNU:
    case PrimitiveType::kBuffer:
    case PrimitiveType::kF6E3M2FN:
    case PrimitiveType::kF6E2M3FN: return false;
  }
  return false;
}

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

// Outputs at least this large are written with non-temporal stores by add, subtract and
// multiply: they would leave the cache anyway, and skipping the read-for-ownership of every
// output line makes these memory-bound loops about 1.5x faster. Only the stores differ.
constexpr int64_t kStreamBytes = int64_t{8} << 20;

template <Opcode K>
constexpr bool kStreamable = K == Opcode::kAdd || K == Opcode::kSubtract || K == Opcode::kMultiply;

// BinarySpan for add/subtract/multiply over 16-byte vectors with streaming stores; the same
// IEEE (or wrapping unsigned) operations, and the same both-NaN rule (the hardware's: the
// destination operand's NaN), as BinarySpan.
template <Opcode K, typename T, bool kSecondNaN = false>
void StreamBinary(const T* x, const T* y, T* z, int64_t m) {
#if defined(__SSE2__)
  uintptr_t address = reinterpret_cast<uintptr_t>(z);
  int64_t head = address % sizeof(T) != 0 ? m : static_cast<int64_t>(((64 - (address & 63)) & 63) / sizeof(T));
  head = std::min(head, m);
  BinarySpan<K, T, kSecondNaN>(x, y, z, head);
  using E = typename std::conditional_t<std::is_floating_point_v<T>, std::type_identity<T>,
                                        std::make_unsigned<T>>::type;  // integers wrap as unsigned
  typedef E V __attribute__((vector_size(16)));
  constexpr int64_t kLanes = 16 / sizeof(T);
  int64_t i = head;
  for (; i + kLanes <= m; i += kLanes) {
    V a, b, r;
    std::memcpy(&a, x + i, 16);
    std::memcpy(&b, y + i, 16);
    if constexpr (std::is_floating_point_v<T> && K != Opcode::kSubtract) {
      // The instruction itself, with the operand whose NaN wins (the destination) fixed, so
      // the compiler cannot swap them: IEEE + and * are otherwise commutative, bit for bit.
      r = kSecondNaN ? b : a;
      V q = kSecondNaN ? a : b;
      if constexpr (std::is_same_v<T, float> && K == Opcode::kAdd)
        asm("addps %1, %0" : "+x"(r) : "x"(q));
      else if constexpr (std::is_same_v<T, float>)
        asm("mulps %1, %0" : "+x"(r) : "x"(q));
      else if constexpr (K == Opcode::kAdd)
        asm("addpd %1, %0" : "+x"(r) : "x"(q));
      else
        asm("mulpd %1, %0" : "+x"(r) : "x"(q));
    } else if constexpr (K == Opcode::kAdd) {
      r = a + b;
    } else if constexpr (K == Opcode::kSubtract) {
      r = a - b;
    } else {
      r = a * b;
    }
    _mm_stream_si128(reinterpret_cast<__m128i*>(z + i), std::bit_cast<__m128i>(r));
  }
  BinarySpan<K, T, kSecondNaN>(x + i, y + i, z + i, m - i);
  _mm_sfence();
#else
  BinarySpan<K, T, kSecondNaN>(x, y, z, m);
#endif
}

template <Opcode K>
void BlockUnary(PrimitiveType t, const uint8_t* x, uint8_t* z, int64_t begin, int64_t end) {
  int size = HostByteSize(t);
  alignas(64) float a[kFloatBlock], r[kFloatBlock];
  for (int64_t i = begin; i < end; i += kFloatBlock) {
    int64_t m = std::min(kFloatBlock, end - i);
    DecodeFloatBlock(t, x + i * size, a, m);
    UnarySpan<K, float>(a, r, m);
    EncodeFloatBlock(t, r, z + i * size, m);
  }
}

template <Opcode K>
void BlockBinary(PrimitiveType t, const uint8_t* x, const uint8_t* y, uint8_t* z, int64_t begin, int64_t end) {
  int size = HostByteSize(t);
  alignas(64) float a[kFloatBlock], b[kFloatBlock], r[kFloatBlock];
  for (int64_t i = begin; i < end; i += kFloatBlock) {
    int64_t m = std::min(kFloatBlock, end - i);
    DecodeFloatBlock(t, x + i * size, a, m);
    DecodeFloatBlock(t, y + i * size, b, m);
    BinarySpan<K, float>(a, b, r, m);
    EncodeFloatBlock(t, r, z + i * size, m);
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

// Total order of a float's bits (sign-magnitude image), `width` the type's bit width.
template <int kCode, typename U>
void TotalOrderSpan(const U* x, const U* y, uint8_t* o, int64_t m, int width) {
  uint64_t sign = uint64_t(1) << (width - 1);
  auto key = [sign](uint64_t bits) {
    int64_t mag = static_cast<int64_t>(bits & (sign - 1));
    return (bits & sign) ? -mag - 1 : mag;
  };
  for (int64_t i = 0; i < m; ++i) o[i] = Cmp<kCode>(key(x[i]), key(y[i]));
}

template <int kCode>
bool CompareWithCode(bool total_order, const Buf& a, const Buf& b, const Buf& out) {
  PrimitiveType t = a.type();
  int64_t n = out.count();
  const uint8_t* x = a.data;
  const uint8_t* y = b.data;
  uint8_t* o = out.data;
  if (total_order && IsFloat(t)) {
    int width = BitWidth(t);
    auto run = [&](auto u) {
      using U = decltype(u);
      ForChunks(
          n, [&](int64_t s, int64_t e) { TotalOrderSpan<kCode, U>(As<U>(x) + s, As<U>(y) + s, o + s, e - s, width); });
    };
    switch (HostByteSize(t)) {
      case 1: run(uint8_t{}); return true;
      case 2: run(uint16_t{}); return true;
      case 4: run(uint32_t{}); return true;
      case 8: run(uint64_t{}); return true;
      default: return false;
    }
  }
  auto native = [&](auto v) {
    using T = decltype(v);
    ForChunks(n, [&](int64_t s, int64_t e) { CompareSpan<kCode, T>(As<T>(x) + s, As<T>(y) + s, o + s, e - s); });
  };
  if (t == PrimitiveType::kF32)
    native(float{});
  else if (t == PrimitiveType::kF64)
    native(double{});
  else if (WithNativeInt(t, native)) {
  } else if (t == PrimitiveType::kPred) {
    ForChunks(n, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) o[i] = Cmp<kCode>(x[i] != 0, y[i] != 0);
    });
  } else if (IsBlockFloat(t)) {
    int size = HostByteSize(t);
    ForChunks(n, [&](int64_t s, int64_t e) {
      alignas(64) float p[kFloatBlock], q[kFloatBlock];
      for (int64_t i = s; i < e; i += kFloatBlock) {
        int64_t m = std::min(kFloatBlock, e - i);
        DecodeFloatBlock(t, x + i * size, p, m);
        DecodeFloatBlock(t, y + i * size, q, m);
        CompareSpan<kCode, float>(p, q, o + i, m);
      }
    });
  } else {
    return false;
  }
  return true;
}

// ---- select / clamp ----

template <typename U>
void SelectSpan(const uint8_t* p, const U* t, const U* f, U* o, int64_t m) {
  for (int64_t i = 0; i < m; ++i) {
    U a = t[i], b = f[i];
    o[i] = p[i] != 0 ? a : b;
  }
}

template <typename T, bool kLoScalar, bool kHiScalar>
void ClampSpan(const T* lo, const T* x, const T* hi, T* o, int64_t m) {
  for (int64_t i = 0; i < m; ++i) {
    T l = lo[kLoScalar ? 0 : i], v = x[i], h = hi[kHiScalar ? 0 : i];
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(l)) {
        o[i] = l;
        continue;
      }
      if (std::isnan(v)) {
        o[i] = v;
        continue;
      }
      if (std::isnan(h)) {
        o[i] = h;
        continue;
      }
    }
    T c = v < l ? l : v;  // std::max(value, low): keeps value when equal (clamp(0, -0, 1) is -0)
    o[i] = c < h ? c : h;
  }
}

template <typename T>
void ClampRange(bool lo_scalar, bool hi_scalar, const T* lo, const T* x, const T* hi, T* o, int64_t s, int64_t e) {
  const T* l = lo_scalar ? lo : lo + s;
  const T* h = hi_scalar ? hi : hi + s;
  if (lo_scalar && hi_scalar)
    ClampSpan<T, true, true>(l, x + s, h, o + s, e - s);
  else if (lo_scalar)
    ClampSpan<T, true, false>(l, x + s, h, o + s, e - s);
  else if (hi_scalar)
    ClampSpan<T, false, true>(l, x + s, h, o + s, e - s);
  else
    ClampSpan<T, false, false>(l, x + s, h, o + s, e - s);
}

// ---- convert ----

// XLA's float -> integer convert (ConvertFloatToSignedInt / ConvertFloatToUnsignedInt) for a
// native integer type T.
template <typename T>
inline T FloatToInt(double v) {
  constexpr int kBits = 8 * sizeof(T);
  if constexpr (std::is_signed_v<T>) {
    constexpr double kLimit = static_cast<double>(uint64_t(1) << (kBits - 1));
    if (std::isnan(v)) return 0;
    if (v >= kLimit) return std::numeric_limits<T>::max();
    if (v <= -kLimit) return std::numeric_limits<T>::min();
    return static_cast<T>(static_cast<int64_t>(v));
  } else {
    constexpr double kLimit = kBits == 64 ? 18446744073709551616.0 : static_cast<double>(uint64_t(1) << (kBits & 63));
    if (std::isnan(v) || v <= 0) return 0;
    if (v >= kLimit) return std::numeric_limits<T>::max();
    return static_cast<T>(static_cast<uint64_t>(v));
  }
}

// f32 through double and back, as the generic convert does: a signaling NaN comes out quiet.
inline float ViaDouble(float f) {
  uint32_t b = std::bit_cast<uint32_t>(f);
  return std::isnan(f) ? std::bit_cast<float>(b | 0x00400000u) : f;
}

// One block of a convert: the source as double (floats, exact) or as int64/uint64 (integers and
// pred), then the destination rule of ConvertElement.
struct ConvertBlock {
  PrimitiveType from, to;
  alignas(64) double d[kFloatBlock];
  alignas(64) int64_t s[kFloatBlock];
  alignas(64) uint64_t u[kFloatBlock];
  alignas(64) float f[kFloatBlock];
  enum class Src { kDouble, kSigned, kUnsigned } src = Src::kDouble;

  void Load(const uint8_t* p, int64_t m) {
    if (from == PrimitiveType::kF32) {
      src = Src::kDouble;
      for (int64_t i = 0; i < m; ++i) d[i] = As<float>(p)[i];
    } else if (from == PrimitiveType::kF64) {
      src = Src::kDouble;
      std::memcpy(d, p, static_cast<size_t>(m) * 8);
    } else if (IsBlockFloat(from)) {
      src = Src::kDouble;
      DecodeFloatBlock(from, p, f, m);
      for (int64_t i = 0; i < m; ++i) d[i] = f[i];
    } else if (from == PrimitiveType::kPred) {
      src = Src::kUnsigned;
      for (int64_t i = 0; i < m; ++i) u[i] = p[i] != 0;
    } else {
      WithNativeInt(from, [&](auto v) {
        using T = decltype(v);
        const T* x = As<T>(p);
        if constexpr (std::is_signed_v<T>) {
          src = Src::kSigned;
          for (int64_t i = 0; i < m; ++i) s[i] = x[i];
        } else {
          src = Src::kUnsigned;
          for (int64_t i = 0; i < m; ++i) u[i] = x[i];
        }
      });
    }
  }

  template <typename V>
  void StoreFrom(const V* v, uint8_t* p, int64_t m) {
    if (to == PrimitiveType::kF64) {
      for (int64_t i = 0; i < m; ++i) As<double>(p)[i] = static_cast<double>(v[i]);
    } else if (to == PrimitiveType::kF32 || IsBlockFloat(to)) {
      // Integers round once to f32; doubles to f32 first too (every narrower type is encoded
      // from double directly except bf16 and f16, which go through f32 as Eigen does). Doubles
      // that came from f32 or a narrower float are exact floats, so the f32 encoder is the same.
      bool exact_float = from == PrimitiveType::kF32 || IsBlockFloat(from);
      if (to == PrimitiveType::kF32 || to == PrimitiveType::kBF16 || to == PrimitiveType::kF16 ||
          !std::is_same_v<V, double> || exact_float) {
        float* out = to == PrimitiveType::kF32 ? As<float>(p) : f;
        for (int64_t i = 0; i < m; ++i) out[i] = static_cast<float>(v[i]);
        if (to != PrimitiveType::kF32) EncodeFloatBlock(to, f, p, m);
      } else {
        for (int64_t i = 0; i < m; ++i) StoreBits(to, p + i, EncodeFromF64(to, static_cast<double>(v[i])));
      }
    } else if (to == PrimitiveType::kPred) {
      for (int64_t i = 0; i < m; ++i) p[i] = v[i] != 0;
    } else {
      WithNativeInt(to, [&](auto w) {
        using T = decltype(w);
        T* out = As<T>(p);
        if constexpr (std::is_same_v<V, double>) {
          for (int64_t i = 0; i < m; ++i) out[i] = FloatToInt<T>(v[i]);
        } else {
          for (int64_t i = 0; i < m; ++i) out[i] = static_cast<T>(static_cast<uint64_t>(v[i]));
        }
      });
    }
  }

  void Store(uint8_t* p, int64_t m) {
    if (src == Src::kDouble)
      StoreFrom(d, p, m);
    else if (src == Src::kSigned)
      StoreFrom(s, p, m);
    else
      StoreFrom(u, p, m);
  }
};

bool IsConvertible(PrimitiveType t) {
  return t == PrimitiveType::kF32 || t == PrimitiveType::kF64 || t == PrimitiveType::kPred || IsBlockFloat(t) ||
         WithNativeInt(t, [](auto) {});
}

}  // namespace

bool FastUnary(Opcode op, const Buf& in, const Buf& out) {
  PrimitiveType t = in.type();
  int64_t n = in.count();
  const uint8_t* x = in.data;
  uint8_t* z = out.data;
  bool handled = false;
  if (op == Opcode::kIsFinite) {
    if (out.type() != PrimitiveType::kPred) return false;
    auto finite = [&](auto v) {
      using T = decltype(v);
      ForChunks(n, [&](int64_t s, int64_t e) {
        for (int64_t i = s; i < e; ++i) z[i] = std::isfinite(As<T>(x)[i]);
      });
    };
    if (t == PrimitiveType::kF32)
      finite(float{});
    else if (t == PrimitiveType::kF64)
      finite(double{});
    else if (IsBlockFloat(t)) {
      int size = HostByteSize(t);
      ForChunks(n, [&](int64_t s, int64_t e) {
        alignas(64) float a[kFloatBlock];
        for (int64_t i = s; i < e; i += kFloatBlock) {
          int64_t m = std::min(kFloatBlock, e - i);
          DecodeFloatBlock(t, x + i * size, a, m);
          for (int64_t j = 0; j < m; ++j) z[i + j] = std::isfinite(a[j]);
        }
      });
    } else {
      return false;
    }
    return true;
  }
  if (out.type() != t) return false;
  if (t == PrimitiveType::kF32 || t == PrimitiveType::kF64 || IsBlockFloat(t)) {
    auto run = [&](auto k) {
      constexpr Opcode K = decltype(k)::value;
      handled = true;
      if (t == PrimitiveType::kF32) {
        ForChunks(n, [&](int64_t s, int64_t e) { UnarySpan<K, float>(As<float>(x) + s, As<float>(z) + s, e - s); });
      } else if (t == PrimitiveType::kF64) {
        ForChunks(n, [&](int64_t s, int64_t e) { UnarySpan<K, double>(As<double>(x) + s, As<double>(z) + s, e - s); });
      } else {
        ForChunks(n, [&](int64_t s, int64_t e) { BlockUnary<K>(t, x, z, s, e); });
      }
    };
#define NHLO_X(name)              \
  if (op == Opcode::name)         \
    run(OpConst<Opcode::name>{}); \
  else
    NHLO_UNARY_FLOAT_OPS(NHLO_X) {}
#undef NHLO_X
    return handled;
  }
  WithNativeInt(t, [&](auto v) {
    using T = decltype(v);
    auto run = [&](auto k) {
      constexpr Opcode K = decltype(k)::value;
      handled = true;
      ForChunks(n, [&](int64_t s, int64_t e) { UnarySpan<K, T>(As<T>(x) + s, As<T>(z) + s, e - s); });
    };
#define NHLO_X(name)              \
  if (op == Opcode::name)         \
    run(OpConst<Opcode::name>{}); \
  else
    NHLO_UNARY_INT_OPS(NHLO_X) {}
#undef NHLO_X
  });
  return handled;
}

bool FastBinary(Opcode op, const Buf& a, const Buf& b, const Buf& out) {
  PrimitiveType t = out.type();
  if (a.type() != t || b.type() != t) return false;
  int64_t n = out.count();
  const uint8_t* x = a.data;
  const uint8_t* y = b.data;
  uint8_t* z = out.data;
  bool handled = false;
  if (t == PrimitiveType::kF32 || t == PrimitiveType::kF64 || IsBlockFloat(t)) {
    auto run = [&](auto k) {
      constexpr Opcode K = decltype(k)::value;
      handled = true;
      if (t == PrimitiveType::kF32 && kStreamable<K> && n * 4 >= kStreamBytes) {
        ForChunks(n, [&](int64_t s, int64_t e) {
          StreamBinary<K, float, K == Opcode::kAdd>(As<float>(x) + s, As<float>(y) + s, As<float>(z) + s, e - s);
        });
      } else if (t == PrimitiveType::kF32) {
        ForChunks(n, [&](int64_t s, int64_t e) {
          BinarySpan<K, float, K == Opcode::kAdd>(As<float>(x) + s, As<float>(y) + s, As<float>(z) + s, e - s);
        });
      } else if (t == PrimitiveType::kF64 && kStreamable<K> && n * 8 >= kStreamBytes) {
        ForChunks(n, [&](int64_t s, int64_t e) {
          StreamBinary<K, double>(As<double>(x) + s, As<double>(y) + s, As<double>(z) + s, e - s);
        });
      } else if (t == PrimitiveType::kF64) {
        ForChunks(n, [&](int64_t s, int64_t e) {
          BinarySpan<K, double>(As<double>(x) + s, As<double>(y) + s, As<double>(z) + s, e - s);
        });
      } else {
        ForChunks(n, [&](int64_t s, int64_t e) { BlockBinary<K>(t, x, y, z, s, e); });
      }
    };
#define NHLO_X(name)              \
  if (op == Opcode::name)         \
    run(OpConst<Opcode::name>{}); \
  else
    NHLO_BINARY_FLOAT_OPS(NHLO_X) {}
#undef NHLO_X
    return handled;
  }
  WithNativeInt(t, [&](auto v) {
    using T = decltype(v);
    auto run = [&](auto k) {
      constexpr Opcode K = decltype(k)::value;
      handled = true;
      if (kStreamable<K> && n * static_cast<int64_t>(sizeof(T)) >= kStreamBytes) {
        ForChunks(n,
                  [&](int64_t s, int64_t e) { StreamBinary<K, T>(As<T>(x) + s, As<T>(y) + s, As<T>(z) + s, e - s); });
      } else {
        ForChunks(n, [&](int64_t s, int64_t e) { BinarySpan<K, T>(As<T>(x) + s, As<T>(y) + s, As<T>(z) + s, e - s); });
      }
    };
#define NHLO_X(name)              \
  if (op == Opcode::name)         \
    run(OpConst<Opcode::name>{}); \
  else
    NHLO_BINARY_INT_OPS(NHLO_X) {}
#undef NHLO_X
  });
  return handled;
}

bool FastCompare(int code, bool total_order, const Buf& a, const Buf& b, const Buf& out) {
  switch (code) {
    case 0: return CompareWithCode<0>(total_order, a, b, out);
    case 1: return CompareWithCode<1>(total_order, a, b, out);
    case 2: return CompareWithCode<2>(total_order, a, b, out);
    case 3: return CompareWithCode<3>(total_order, a, b, out);
    case 4: return CompareWithCode<4>(total_order, a, b, out);
    case 5: return CompareWithCode<5>(total_order, a, b, out);
    default: return false;
  }
}

bool FastSelect(const Buf& pred, const Buf& on_true, const Buf& on_false, const Buf& out) {
  int64_t n = out.count();
  size_t size = static_cast<size_t>(HostByteSize(out.type()));
  if (pred.count() != n) {  // a scalar predicate (the caller checked: one element)
    const Buf& pick = pred.data[0] != 0 ? on_true : on_false;
    if (pick.data != out.data && n > 0) std::memmove(out.data, pick.data, static_cast<size_t>(n) * size);
    return true;
  }
  const uint8_t* p = pred.data;
  auto run = [&](auto u) {
    using U = decltype(u);
    ForChunks(n, [&](int64_t s, int64_t e) {
      SelectSpan<U>(p + s, As<U>(on_true.data) + s, As<U>(on_false.data) + s, As<U>(out.data) + s, e - s);
    });
  };
  switch (size) {
    case 1: run(uint8_t{}); return true;
    case 2: run(uint16_t{}); return true;
    case 4: run(uint32_t{}); return true;
    case 8: run(uint64_t{}); return true;
    default: return false;
  }
}

bool FastClamp(const Buf& lo, const Buf& x, const Buf& hi, const Buf& out) {
  PrimitiveType t = x.type();
  int64_t n = out.count();
  bool lo_scalar = lo.count() == 1, hi_scalar = hi.count() == 1;
  auto native = [&](auto v) {
    using T = decltype(v);
    ForChunks(n, [&](int64_t s, int64_t e) {
      ClampRange<T>(lo_scalar, hi_scalar, As<T>(lo.data), As<T>(x.data), As<T>(hi.data), As<T>(out.data), s, e);
    });
  };
  if (t == PrimitiveType::kF32)
    native(float{});
  else if (t == PrimitiveType::kF64)
    native(double{});
  else if (WithNativeInt(t, native)) {
  } else if (IsBlockFloat(t)) {
    int size = HostByteSize(t);
    float lo_value = 0, hi_value = 0;
    if (lo_scalar) DecodeFloatBlock(t, lo.data, &lo_value, 1);
    if (hi_scalar) DecodeFloatBlock(t, hi.data, &hi_value, 1);
    ForChunks(n, [&](int64_t s, int64_t e) {
      alignas(64) float l[kFloatBlock], v[kFloatBlock], h[kFloatBlock], r[kFloatBlock];
      for (int64_t i = s; i < e; i += kFloatBlock) {
        int64_t m = std::min(kFloatBlock, e - i);
        if (!lo_scalar) DecodeFloatBlock(t, lo.data + i * size, l, m);
        if (!hi_scalar) DecodeFloatBlock(t, hi.data + i * size, h, m);
        DecodeFloatBlock(t, x.data + i * size, v, m);
        ClampRange<float>(lo_scalar, hi_scalar, lo_scalar ? &lo_value : l, v, hi_scalar ? &hi_value : h, r, 0, m);
        EncodeFloatBlock(t, r, out.data + i * size, m);
      }
    });
  } else {
    return false;
  }
  return true;
}

bool FastConvert(const Buf& in, const Buf& out) {
  PrimitiveType from = in.type(), to = out.type();
  if (!IsConvertible(from) || !IsConvertible(to)) return false;
  int64_t n = out.count();
  const uint8_t* x = in.data;
  uint8_t* z = out.data;
  // The common float conversions in one pass.
  if (from == PrimitiveType::kF32 && (to == PrimitiveType::kBF16 || to == PrimitiveType::kF16)) {
    ForChunks(n, [&](int64_t s, int64_t e) { EncodeFloatBlock(to, As<float>(x) + s, z + s * 2, e - s); });
    return true;
  }
  if ((from == PrimitiveType::kBF16 || from == PrimitiveType::kF16) && to == PrimitiveType::kF32) {
    ForChunks(n, [&](int64_t s, int64_t e) {
      float* o = As<float>(z) + s;
      DecodeFloatBlock(from, x + s * 2, o, e - s);
      for (int64_t i = 0; i < e - s; ++i) o[i] = ViaDouble(o[i]);
    });
    return true;
  }
  int in_size = HostByteSize(from), out_size = HostByteSize(to);
  ForChunks(n, [&](int64_t s, int64_t e) {
    ConvertBlock block;
    block.from = from;
    block.to = to;
    for (int64_t i = s; i < e; i += kFloatBlock) {
      int64_t m = std::min(kFloatBlock, e - i);
      block.Load(x + i * in_size, m);
      block.Store(z + i * out_size, m);
    }
  });
  return true;
}

}  // namespace nhlo
