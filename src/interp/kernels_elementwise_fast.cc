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
#if defined(NHLO_SPAN_X86)
#include "interp/elementwise_spans_isa.h"
#include "interp/gemm.h"
#endif

#include "interp/elementwise_ops.h"
#include "interp/elementwise_spans.h"
#include "interp/float_blocks.h"
#include "interp/span_loops.h"
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

// Outputs at least this large are written with non-temporal stores by add, subtract and
// multiply: they would leave the cache anyway, and skipping the read-for-ownership of every
// output line makes these memory-bound loops about 1.5x faster. Only the stores differ.
constexpr int64_t kStreamBytes = int64_t{8} << 20;

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
void BlockUnary(PrimitiveType t, const uint8_t* x, uint8_t* z, int64_t n) {
  int size = HostByteSize(t);
  alignas(64) float a[kFloatBlock], r[kFloatBlock];
  for (int64_t i = 0; i < n; i += kFloatBlock) {
    int64_t m = std::min(kFloatBlock, n - i);
    DecodeFloatBlock(t, x + i * size, a, m);
    UnarySpan<K, float>(a, r, m);
    EncodeFloatBlock(t, r, z + i * size, m);
  }
}

template <Opcode K>
void BlockBinary(PrimitiveType t, const uint8_t* x, const uint8_t* y, uint8_t* z, int64_t n) {
  int size = HostByteSize(t);
  alignas(64) float a[kFloatBlock], b[kFloatBlock], r[kFloatBlock];
  for (int64_t i = 0; i < n; i += kFloatBlock) {
    int64_t m = std::min(kFloatBlock, n - i);
    DecodeFloatBlock(t, x + i * size, a, m);
    DecodeFloatBlock(t, y + i * size, b, m);
    BinarySpan<K, float>(a, b, r, m);
    EncodeFloatBlock(t, r, z + i * size, m);
  }
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

// ---- select / clamp ----

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

// Calls f(T{}) for the element types whose arithmetic is their C++ type's own: f32, f64 and the
// native integers; false, without calling f, for the others.
template <typename F>
bool WithNativeNumber(PrimitiveType t, F&& f) {
  if (t == PrimitiveType::kF32) {
    f(float{});
    return true;
  }
  if (t == PrimitiveType::kF64) {
    f(double{});
    return true;
  }
  return WithNativeInt(t, f);
}

bool IsConvertible(PrimitiveType t) {
  return t == PrimitiveType::kPred || IsBlockFloat(t) || WithNativeNumber(t, [](auto) {});
}

}  // namespace

// ---- span forms, resolved once (elementwise_spans.h) ----

namespace {

// The wider-vector builds of the spans (elementwise_spans_isa.h) for one ISA level.
struct IsaSpans {
  SpanFn (*unary)(Opcode, PrimitiveType);
  SpanFn (*binary)(Opcode, PrimitiveType);
  SpanFn (*compare)(int, PrimitiveType);
  SpanFn (*select)(int);
};

// The spans of the ISA level the GEMM runs at (gemm.h: the best the CPU has, or what SetGemmIsa
// chose), or null to keep the baseline loops (also where meson built no other level). Their
// results are the baseline's either way.
const IsaSpans* ActiveIsaSpans() {
#if defined(NHLO_SPAN_X86)
  static constexpr IsaSpans kAvx2 = {span_isa_Avx2::UnaryFn, span_isa_Avx2::BinaryFn, span_isa_Avx2::CompareFn,
                                     span_isa_Avx2::SelectFn};
  static constexpr IsaSpans kAvx512 = {span_isa_Avx512::UnaryFn, span_isa_Avx512::BinaryFn, span_isa_Avx512::CompareFn,
                                       span_isa_Avx512::SelectFn};
  switch (ActiveGemmIsa()) {
    case GemmIsa::kAvx512: return &kAvx512;
    case GemmIsa::kAvx2: return &kAvx2;
    case GemmIsa::kBaseline: return nullptr;
  }
#endif
  return nullptr;
}

}  // namespace

namespace {

template <typename T>
void IsFiniteFn(const SpanOp&, const uint8_t* const* x, uint8_t* z, int64_t m) {
  const T* v = As<T>(x[0]);
  for (int64_t i = 0; i < m; ++i) z[i] = std::isfinite(v[i]);
}

void BlockIsFiniteFn(const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t n) {
  const int size = HostByteSize(o.in_type);
  alignas(64) float a[kFloatBlock];
  for (int64_t i = 0; i < n; i += kFloatBlock) {
    const int64_t m = std::min(kFloatBlock, n - i);
    DecodeFloatBlock(o.in_type, x[0] + i * size, a, m);
    for (int64_t j = 0; j < m; ++j) z[i + j] = std::isfinite(a[j]);
  }
}

}  // namespace

// Each lambda is the body the op-by-op kernel above hands to ForChunks for the same op and types.

SpanOp UnarySpanOp(Opcode op, PrimitiveType in, PrimitiveType out) {
  SpanOp r{nullptr, in, out, 1};
  if (op == Opcode::kIsFinite) {
    if (out != PrimitiveType::kPred) return r;
    if (in == PrimitiveType::kF32) r.fn = IsFiniteFn<float>;
    if (in == PrimitiveType::kF64) r.fn = IsFiniteFn<double>;
    if (IsBlockFloat(in)) r.fn = BlockIsFiniteFn;
    return r;
  }
  if (in != out) return r;
  if (in == PrimitiveType::kF32 || in == PrimitiveType::kF64 || IsBlockFloat(in)) {
    auto pick = [&](auto k) {
      constexpr Opcode K = decltype(k)::value;
      if (in == PrimitiveType::kF32)
        r.fn = [](const SpanOp&, const uint8_t* const* x, uint8_t* z, int64_t m) {
          UnarySpan<K, float>(As<float>(x[0]), As<float>(z), m);
        };
      else if (in == PrimitiveType::kF64)
        r.fn = [](const SpanOp&, const uint8_t* const* x, uint8_t* z, int64_t m) {
          UnarySpan<K, double>(As<double>(x[0]), As<double>(z), m);
        };
      else
        r.fn = [](const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
          BlockUnary<K>(o.in_type, x[0], z, m);
        };
    };
#define NHLO_X(name)               \
  if (op == Opcode::name)          \
    pick(OpConst<Opcode::name>{}); \
  else
    NHLO_UNARY_FLOAT_OPS(NHLO_X) {}
#undef NHLO_X
    if (const IsaSpans* isa = ActiveIsaSpans(); isa && r.fn)
      if (SpanFn wide = isa->unary(op, in)) r.fn = wide;
    return r;
  }
  WithNativeInt(in, [&](auto v) {
    using T = decltype(v);
    auto pick = [&](auto k) {
      constexpr Opcode K = decltype(k)::value;
      r.fn = [](const SpanOp&, const uint8_t* const* x, uint8_t* z, int64_t m) {
        UnarySpan<K, T>(As<T>(x[0]), As<T>(z), m);
      };
    };
#define NHLO_X(name)               \
  if (op == Opcode::name)          \
    pick(OpConst<Opcode::name>{}); \
  else
    NHLO_UNARY_INT_OPS(NHLO_X) {}
#undef NHLO_X
  });
  return r;
}

namespace {

// XLA's evaluator on pred operands (kernels_elementwise.cc's BinaryPred): and, minimum and
// multiply are and; or, maximum and add are or; xor and subtract are xor; power is x || !y. A
// byte other than 0 is true, and results are 0 or 1.
// Bitwise on 0/1 bytes, not && and ||: the same results, and no branch per element, so the loop
// vectorizes (the short-circuit form ran a compare and a jump per byte).
template <int kRule>
void PredSpan(const SpanOp&, const uint8_t* const* x, uint8_t* z, int64_t m) {
  const uint8_t* a = x[0];
  const uint8_t* b = x[1];
  for (int64_t i = 0; i < m; ++i) {
    const uint8_t p = a[i] != 0, q = b[i] != 0;
    z[i] = kRule == 0 ? (p & q) : kRule == 1 ? (p | q) : kRule == 2 ? (p ^ q) : (p | (q ^ 1));
  }
}

SpanFn PredBinary(Opcode op) {
  if (op == Opcode::kAnd || op == Opcode::kMinimum || op == Opcode::kMultiply) return PredSpan<0>;
  if (op == Opcode::kOr || op == Opcode::kMaximum || op == Opcode::kAdd) return PredSpan<1>;
  if (op == Opcode::kXor || op == Opcode::kSubtract) return PredSpan<2>;
  if (op == Opcode::kPower) return PredSpan<3>;
  return nullptr;
}

}  // namespace

void RunSpanChunks(const SpanOp& span, const uint8_t* const* in, const int64_t* element, uint8_t* out, int64_t n) {
  const int64_t out_size = HostByteSize(span.out_type);
  ForChunks(n, [&](int64_t s, int64_t e) {
    const uint8_t* at[3];
    for (int k = 0; k < 3; ++k) at[k] = in[k] ? in[k] + s * element[k] : nullptr;
    span.fn(span, at, out + s * out_size, e - s);
  });
}

SpanOp BinaryKernelSpanOp(Opcode op, PrimitiveType t, int64_t elements) {
  const bool streamable = op == Opcode::kAdd || op == Opcode::kSubtract || op == Opcode::kMultiply;
  SpanOp r{nullptr, t, t, 2};
  if (!streamable || elements < kStreamBytes / std::max(1, HostByteSize(t))) return BinarySpanOp(op, t, t, t);
  auto pick = [&](auto k, auto v) {
    constexpr Opcode K = decltype(k)::value;
    using T = decltype(v);
    r.fn = [](const SpanOp&, const uint8_t* const* x, uint8_t* z, int64_t m) {
      StreamBinary<K, T, std::is_same_v<T, float> && K == Opcode::kAdd>(As<T>(x[0]), As<T>(x[1]), As<T>(z), m);
    };
  };
  auto typed = [&](auto v) {
    if (op == Opcode::kAdd)
      pick(OpConst<Opcode::kAdd>{}, v);
    else if (op == Opcode::kSubtract)
      pick(OpConst<Opcode::kSubtract>{}, v);
    else
      pick(OpConst<Opcode::kMultiply>{}, v);
  };
  if (!WithNativeNumber(t, typed)) return BinarySpanOp(op, t, t, t);
  return r;
}

SpanOp BinarySpanOp(Opcode op, PrimitiveType a, PrimitiveType b, PrimitiveType out) {
  SpanOp r{nullptr, out, out, 2};
  if (a != out || b != out) return r;
  PrimitiveType t = out;
  if (t == PrimitiveType::kPred) {
    r.fn = PredBinary(op);
    return r;
  }
  if (t == PrimitiveType::kF32 || t == PrimitiveType::kF64 || IsBlockFloat(t)) {
    auto pick = [&](auto k) {
      constexpr Opcode K = decltype(k)::value;
      if (t == PrimitiveType::kF32)
        r.fn = [](const SpanOp&, const uint8_t* const* x, uint8_t* z, int64_t m) {
          BinarySpan<K, float, K == Opcode::kAdd>(As<float>(x[0]), As<float>(x[1]), As<float>(z), m);
        };
      else if (t == PrimitiveType::kF64)
        r.fn = [](const SpanOp&, const uint8_t* const* x, uint8_t* z, int64_t m) {
          BinarySpan<K, double>(As<double>(x[0]), As<double>(x[1]), As<double>(z), m);
        };
      else
        r.fn = [](const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
          BlockBinary<K>(o.out_type, x[0], x[1], z, m);
        };
    };
#define NHLO_X(name)               \
  if (op == Opcode::name)          \
    pick(OpConst<Opcode::name>{}); \
  else
    NHLO_BINARY_FLOAT_OPS(NHLO_X) {}
#undef NHLO_X
    if (const IsaSpans* isa = ActiveIsaSpans(); isa && r.fn)
      if (SpanFn wide = isa->binary(op, t)) r.fn = wide;
    return r;
  }
  WithNativeInt(t, [&](auto v) {
    using T = decltype(v);
    auto pick = [&](auto k) {
      constexpr Opcode K = decltype(k)::value;
      r.fn = [](const SpanOp&, const uint8_t* const* x, uint8_t* z, int64_t m) {
        BinarySpan<K, T>(As<T>(x[0]), As<T>(x[1]), As<T>(z), m);
      };
    };
#define NHLO_X(name)               \
  if (op == Opcode::name)          \
    pick(OpConst<Opcode::name>{}); \
  else
    NHLO_BINARY_INT_OPS(NHLO_X) {}
#undef NHLO_X
  });
  return r;
}

namespace {

template <int kCode>
SpanFn CompareFn(bool total_order, PrimitiveType t) {
  if (total_order && IsFloat(t)) {
    switch (HostByteSize(t)) {
      case 1:
        return [](const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
          TotalOrderSpan<kCode, uint8_t>(x[0], x[1], z, m, BitWidth(o.in_type));
        };
      case 2:
        return [](const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
          TotalOrderSpan<kCode, uint16_t>(As<uint16_t>(x[0]), As<uint16_t>(x[1]), z, m, BitWidth(o.in_type));
        };
      case 4:
        return [](const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
          TotalOrderSpan<kCode, uint32_t>(As<uint32_t>(x[0]), As<uint32_t>(x[1]), z, m, BitWidth(o.in_type));
        };
      case 8:
        return [](const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
          TotalOrderSpan<kCode, uint64_t>(As<uint64_t>(x[0]), As<uint64_t>(x[1]), z, m, BitWidth(o.in_type));
        };
      default: return nullptr;
    }
  }
  SpanFn fn = nullptr;
  auto native = [&](auto v) {
    using T = decltype(v);
    fn = [](const SpanOp&, const uint8_t* const* x, uint8_t* z, int64_t m) {
      CompareSpan<kCode, T>(As<T>(x[0]), As<T>(x[1]), z, m);
    };
  };
  if (WithNativeNumber(t, native)) {
  } else if (t == PrimitiveType::kPred) {
    fn = [](const SpanOp&, const uint8_t* const* x, uint8_t* z, int64_t m) {
      for (int64_t i = 0; i < m; ++i) z[i] = Cmp<kCode>(x[0][i] != 0, x[1][i] != 0);
    };
  } else if (IsBlockFloat(t)) {
    fn = [](const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
      int size = HostByteSize(o.in_type);
      alignas(64) float p[kFloatBlock], q[kFloatBlock];
      for (int64_t i = 0; i < m; i += kFloatBlock) {
        int64_t k = std::min(kFloatBlock, m - i);
        DecodeFloatBlock(o.in_type, x[0] + i * size, p, k);
        DecodeFloatBlock(o.in_type, x[1] + i * size, q, k);
        CompareSpan<kCode, float>(p, q, z + i, k);
      }
    };
  }
  return fn;
}

template <typename U>
void SelectFn(const SpanOp&, const uint8_t* const* x, uint8_t* z, int64_t m) {
  SelectSpan<U>(x[0], As<U>(x[1]), As<U>(x[2]), As<U>(z), m);
}

template <typename U>
void FillFn(const SpanOp&, const uint8_t* const* x, uint8_t* z, int64_t m) {
  U v;
  std::memcpy(&v, x[0], sizeof(U));
  U* o = As<U>(z);
  for (int64_t i = 0; i < m; ++i) o[i] = v;
}

}  // namespace

SpanOp CompareSpanOp(int code, bool total_order, PrimitiveType t) {
  SpanOp r{nullptr, t, PrimitiveType::kPred, 2};
  if (!total_order)
    if (const IsaSpans* isa = ActiveIsaSpans())
      if (SpanFn wide = isa->compare(code, t)) {
        r.fn = wide;
        return r;
      }
  switch (code) {
    case 0: r.fn = CompareFn<0>(total_order, t); break;
    case 1: r.fn = CompareFn<1>(total_order, t); break;
    case 2: r.fn = CompareFn<2>(total_order, t); break;
    case 3: r.fn = CompareFn<3>(total_order, t); break;
    case 4: r.fn = CompareFn<4>(total_order, t); break;
    case 5: r.fn = CompareFn<5>(total_order, t); break;
    default: break;
  }
  return r;
}

SpanOp SelectSpanOp(PrimitiveType t) {
  SpanOp r{nullptr, t, t, 3};
  if (!IsArrayType(t)) return r;
  if (const IsaSpans* isa = ActiveIsaSpans())
    if (SpanFn wide = isa->select(HostByteSize(t))) {
      r.fn = wide;
      return r;
    }
  switch (HostByteSize(t)) {
    case 1: r.fn = SelectFn<uint8_t>; break;
    case 2: r.fn = SelectFn<uint16_t>; break;
    case 4: r.fn = SelectFn<uint32_t>; break;
    case 8: r.fn = SelectFn<uint64_t>; break;
    default: break;
  }
  return r;
}

template <typename T, bool kLoScalar, bool kHiScalar>
void ClampFn(const SpanOp&, const uint8_t* const* in, uint8_t* out, int64_t m) {
  ClampSpan<T, kLoScalar, kHiScalar>(As<T>(in[0]), As<T>(in[1]), As<T>(in[2]), As<T>(out), m);
}

// A low-precision float clamp: decoded to f32 a block at a time, clamped as f32 (the same
// values: every such type widens exactly) and encoded once.
template <bool kLoScalar, bool kHiScalar>
void BlockClampFn(const SpanOp& o, const uint8_t* const* in, uint8_t* out, int64_t n) {
  const PrimitiveType t = o.out_type;
  const int size = HostByteSize(t);
  float lo_value = 0, hi_value = 0;
  if (kLoScalar) DecodeFloatBlock(t, in[0], &lo_value, 1);
  if (kHiScalar) DecodeFloatBlock(t, in[2], &hi_value, 1);
  alignas(64) float l[kFloatBlock], v[kFloatBlock], h[kFloatBlock], r[kFloatBlock];
  for (int64_t i = 0; i < n; i += kFloatBlock) {
    const int64_t m = std::min(kFloatBlock, n - i);
    if (!kLoScalar) DecodeFloatBlock(t, in[0] + i * size, l, m);
    if (!kHiScalar) DecodeFloatBlock(t, in[2] + i * size, h, m);
    DecodeFloatBlock(t, in[1] + i * size, v, m);
    ClampRange<float>(kLoScalar, kHiScalar, kLoScalar ? &lo_value : l, v, kHiScalar ? &hi_value : h, r, 0, m);
    EncodeFloatBlock(t, r, out + i * size, m);
  }
}

SpanOp ClampSpanOp(PrimitiveType t, bool lo_scalar, bool hi_scalar) {
  SpanOp r{nullptr, t, t, 3};
  auto pick = [&](auto v) {
    using T = decltype(v);
    if (lo_scalar)
      r.fn = hi_scalar ? ClampFn<T, true, true> : ClampFn<T, true, false>;
    else
      r.fn = hi_scalar ? ClampFn<T, false, true> : ClampFn<T, false, false>;
  };
  if (WithNativeNumber(t, pick) || !IsBlockFloat(t)) return r;
  if (lo_scalar)
    r.fn = hi_scalar ? BlockClampFn<true, true> : BlockClampFn<true, false>;
  else
    r.fn = hi_scalar ? BlockClampFn<false, true> : BlockClampFn<false, false>;
  return r;
}

namespace {

template <typename T>
void ReducePrecisionFn(const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
  const T* v = As<T>(x[0]);
  T* r = As<T>(z);
  for (int64_t i = 0; i < m; ++i) r[i] = ReducePrecisionValue<T>(v[i], o.exponent_bits, o.mantissa_bits);
}

// Narrower floats are reduced in f32's layout and rounded back once, as XLA computes them.
void BlockReducePrecisionFn(const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t n) {
  const int size = HostByteSize(o.in_type);
  alignas(64) float a[kFloatBlock];
  for (int64_t i = 0; i < n; i += kFloatBlock) {
    const int64_t m = std::min(kFloatBlock, n - i);
    DecodeFloatBlock(o.in_type, x[0] + i * size, a, m);
    for (int64_t j = 0; j < m; ++j) a[j] = ReducePrecisionValue<float>(a[j], o.exponent_bits, o.mantissa_bits);
    EncodeFloatBlock(o.in_type, a, z + i * size, m);
  }
}

}  // namespace

SpanOp ReducePrecisionSpanOp(PrimitiveType t, int exponent_bits, int mantissa_bits) {
  SpanOp r{nullptr, t, t, 1};
  r.exponent_bits = exponent_bits;
  r.mantissa_bits = mantissa_bits;
  if (exponent_bits < 1 || mantissa_bits < 0) return r;
  if (t == PrimitiveType::kF32) r.fn = ReducePrecisionFn<float>;
  if (t == PrimitiveType::kF64) r.fn = ReducePrecisionFn<double>;
  if (IsBlockFloat(t)) r.fn = BlockReducePrecisionFn;
  return r;
}

SpanOp FillSpanOp(PrimitiveType t) {
  SpanOp r{nullptr, t, t, 1};
  if (!IsArrayType(t)) return r;
  switch (HostByteSize(t)) {
    case 1: r.fn = FillFn<uint8_t>; break;
    case 2: r.fn = FillFn<uint16_t>; break;
    case 4: r.fn = FillFn<uint32_t>; break;
    case 8: r.fn = FillFn<uint64_t>; break;
    default: break;
  }
  return r;
}

SpanOp CopySpanOp(PrimitiveType t) {
  SpanOp r{nullptr, t, t, 1};
  if (!IsArrayType(t)) return r;
  r.fn = [](const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
    if (x[0] != z) std::memcpy(z, x[0], static_cast<size_t>(m) * HostByteSize(o.in_type));
  };
  return r;
}

SpanOp ConvertSpanOp(PrimitiveType from, PrimitiveType to) {
  SpanOp r{nullptr, from, to, 1};
  if (!IsConvertible(from) || !IsConvertible(to)) return r;
  if (from == PrimitiveType::kF32 && (to == PrimitiveType::kBF16 || to == PrimitiveType::kF16)) {
    r.fn = [](const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
      EncodeFloatBlock(o.out_type, As<float>(x[0]), z, m);
    };
  } else if ((from == PrimitiveType::kBF16 || from == PrimitiveType::kF16) && to == PrimitiveType::kF32) {
    r.fn = [](const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
      float* f = As<float>(z);
      DecodeFloatBlock(o.in_type, x[0], f, m);
      for (int64_t i = 0; i < m; ++i) f[i] = ViaDouble(f[i]);
    };
  } else {
    r.fn = [](const SpanOp& o, const uint8_t* const* x, uint8_t* z, int64_t m) {
      ConvertBlock block;
      block.from = o.in_type;
      block.to = o.out_type;
      int in_size = HostByteSize(o.in_type), out_size = HostByteSize(o.out_type);
      for (int64_t i = 0; i < m; i += kFloatBlock) {
        int64_t k = std::min(kFloatBlock, m - i);
        block.Load(x[0] + i * in_size, k);
        block.Store(z + i * out_size, k);
      }
    };
  }
  return r;
}

}  // namespace nhlo
