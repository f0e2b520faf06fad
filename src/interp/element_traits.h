// SPDX-License-Identifier: Apache-2.0
// Typed element access for kernels: DispatchType(t, f) calls f with a traits object whose
// Load/Store move elements between the host layout and the compute domain XLA's evaluator uses
// (float for every float up to 32 bits, double for f64, int64/uint64 for integers).
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "support/status.h"
#include "types/element.h"
#include "types/float_cast.h"

namespace nhlo {

template <typename T, typename C>
struct NativeTraits {
  using Compute = C;
  static constexpr bool kIsFloat = std::is_floating_point_v<C>;
  C Load(const uint8_t* p, int64_t i) const {
    T v;
    std::memcpy(&v, p + i * sizeof(T), sizeof(T));
    return static_cast<C>(v);
  }
  void Store(uint8_t* p, int64_t i, C v) const {
    T t = static_cast<T>(v);
    std::memcpy(p + i * sizeof(T), &t, sizeof(T));
  }
};

/// bf16, f16 and every f8/f6/f4 type: decoded to f32, computed in f32, rounded once on store.
struct LowFloatTraits {
  using Compute = float;
  static constexpr bool kIsFloat = true;
  PrimitiveType type;
  int size;
  float Load(const uint8_t* p, int64_t i) const {
    return DecodeToF32(type, static_cast<uint32_t>(LoadBits(type, p + i * size)));
  }
  void Store(uint8_t* p, int64_t i, float v) const { StoreBits(type, p + i * size, EncodeFromF32(type, v)); }
};

/// Sub-byte integers (s1/s2/s4/u1/u2/u4): one per byte, wrapped to their width on store.
template <typename C>
struct SubByteTraits {
  using Compute = C;
  static constexpr bool kIsFloat = false;
  PrimitiveType type;
  C Load(const uint8_t* p, int64_t i) const {
    if constexpr (std::is_signed_v<C>)
      return LoadAsInt(type, p + i);
    else
      return LoadAsUint(type, p + i);
  }
  void Store(uint8_t* p, int64_t i, C v) const { StoreBits(type, p + i, static_cast<uint64_t>(v)); }
};

struct PredTraits {
  using Compute = uint64_t;
  static constexpr bool kIsFloat = false;
  uint64_t Load(const uint8_t* p, int64_t i) const { return p[i] != 0; }
  void Store(uint8_t* p, int64_t i, uint64_t v) const { p[i] = v != 0; }
};

/// Element i of a c64 (R = float) or c128 (R = double) array: the real part, then the imaginary.
template <typename R>
std::complex<R> LoadComplex(const uint8_t* p, int64_t i) {
  R parts[2];
  std::memcpy(parts, p + i * sizeof(parts), sizeof(parts));
  return {parts[0], parts[1]};
}

template <typename R>
void StoreComplex(uint8_t* p, int64_t i, std::complex<R> v) {
  R parts[2] = {v.real(), v.imag()};
  std::memcpy(p + i * sizeof(parts), parts, sizeof(parts));
}

/// Whether C is std::complex<R>.
template <typename C>
struct IsComplexCompute : std::false_type {};
template <typename R>
struct IsComplexCompute<std::complex<R>> : std::true_type {};

/// The traits of c64 (R = float) and c128 (R = double), for kernels whose loops take complex
/// elements too (dot, convolution): DispatchType leaves complex types to their own loops.
template <typename R>
struct ComplexTraits {
  using Compute = std::complex<R>;
  static constexpr bool kIsFloat = false;
  std::complex<R> Load(const uint8_t* p, int64_t i) const { return LoadComplex<R>(p, i); }
  void Store(uint8_t* p, int64_t i, std::complex<R> v) const { StoreComplex<R>(p, i, v); }
};

/// Calls f(traits) for element type t; an error for types without a compute domain here.
template <typename F>
Status DispatchType(PrimitiveType t, F&& f) {
  switch (t) {
    case PrimitiveType::kF32: return f(NativeTraits<float, float>{});
    case PrimitiveType::kF64: return f(NativeTraits<double, double>{});
    case PrimitiveType::kS8: return f(NativeTraits<int8_t, int64_t>{});
    case PrimitiveType::kS16: return f(NativeTraits<int16_t, int64_t>{});
    case PrimitiveType::kS32: return f(NativeTraits<int32_t, int64_t>{});
    case PrimitiveType::kS64: return f(NativeTraits<int64_t, int64_t>{});
    case PrimitiveType::kU8: return f(NativeTraits<uint8_t, uint64_t>{});
    case PrimitiveType::kU16: return f(NativeTraits<uint16_t, uint64_t>{});
    case PrimitiveType::kU32: return f(NativeTraits<uint32_t, uint64_t>{});
    case PrimitiveType::kU64: return f(NativeTraits<uint64_t, uint64_t>{});
    case PrimitiveType::kS1:
    case PrimitiveType::kS2:
    case PrimitiveType::kS4: return f(SubByteTraits<int64_t>{t});
    case PrimitiveType::kU1:
    case PrimitiveType::kU2:
    case PrimitiveType::kU4: return f(SubByteTraits<uint64_t>{t});
    case PrimitiveType::kPred: return f(PredTraits{});
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
    case PrimitiveType::kF8E5M2:
    case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kF8E4M3B11FNUZ:
    case PrimitiveType::kF8E5M2FNUZ:
    case PrimitiveType::kF8E4M3FNUZ:
    case PrimitiveType::kF8E4M3:
    case PrimitiveType::kF8E3M4:
    case PrimitiveType::kF4E2M1FN:
    case PrimitiveType::kF8E8M0FNU:
    case PrimitiveType::kF6E3M2FN:
    case PrimitiveType::kF6E2M3FN:
      if (IsCastableLowPrecisionFloat(t)) return f(LowFloatTraits{t, HostByteSize(t)});
      break;
    case PrimitiveType::kC64:
    case PrimitiveType::kC128:  // complex kernels have their own loops (kernels_complex.cc)
    case PrimitiveType::kInvalid:
    case PrimitiveType::kTuple:
    case PrimitiveType::kOpaque:
    case PrimitiveType::kToken:
    case PrimitiveType::kBuffer: break;
  }
  return Status::Error("the interpreter does not implement element type " + std::string(PrimitiveTypeName(t)) +
                       " for this operation");
}

/// Whether DispatchType computes elements of `t` in float or double (every float type it takes).
inline bool HasFloatCompute(PrimitiveType t) {
  bool floating = false;
  (void)DispatchType(t, [&](auto traits) {
    floating = std::is_floating_point_v<typename decltype(traits)::Compute>;
    return OkStatus();
  });
  return floating;
}

/// The byte size of the type DispatchType computes elements of `t` in (4 for float, 8 for
/// double); 0 for a type it does not take.
inline int64_t ComputeByteSize(PrimitiveType t) {
  int64_t bytes = 0;
  (void)DispatchType(t, [&](auto traits) {
    bytes = static_cast<int64_t>(sizeof(typename decltype(traits)::Compute));
    return OkStatus();
  });
  return bytes;
}

}  // namespace nhlo
