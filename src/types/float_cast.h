// SPDX-License-Identifier: Apache-2.0
// Bit-exact conversions between f32/f64 and XLA's low-precision float types (f16, bf16, every
// f8/f6/f4 variant, E8M0), plus float32r rounding and XLA's float->integer convert. The results
// match ml_dtypes/Eigen `static_cast` (what XLA's HloEvaluator uses) code for code; see
// docs/dtypes.md and reference/NUMERICS.md for the rules.
#pragma once

#include <bit>
#include <cstdint>

#include "types/primitive_type.h"

namespace nhlo {

/// True for the types the encoders/decoders below accept besides F32: F16, BF16, the f8, f6 and
/// f4 types and F8E8M0FNU. Passing any other type to them is a caller bug (NHLO_CHECK).
bool IsCastableLowPrecisionFloat(PrimitiveType t);

/// Plain cast f32 -> `t` (= ml_dtypes/Eigen static_cast = XLA convert, non-saturating): RNE with
/// gradual underflow; overflow gives Inf (IEEE types), NaN (fn/fnuz, E8M0) or ±max (f4/f6, which
/// have neither). Returns the code in the low bits (8 bits for f8, 6 for f6, 4 for f4). For
/// t == F32 returns the bits of `v`.
uint32_t EncodeFromF32(PrimitiveType t, float v);
/// EncodeFromF32 through the generic rounding only (no bf16/f16 fast path): for tests that
/// check the fast paths against it.
uint32_t EncodeFromF32Slow(PrimitiveType t, float v);

/// XLA convert f64 -> `t`. The f8/f6/f4/E8M0 types round the double directly (ml_dtypes has a
/// converting constructor from double, so there is a single rounding); F16 and BF16 first round
/// to f32 and then to the target (Eigen's half/bfloat16 constructors from double go through
/// float), which is a double rounding exactly like XLA's. For t == F32 returns the bits of
/// (float)v.
uint32_t EncodeFromF64(PrimitiveType t, double v);

/// Saturating device encoder (ml_dtypes ConvertFrom<kSaturate=true>): finite values beyond the
/// largest finite value give ±max finite, but ±Inf and NaN inputs are not saturated (e4m3fn Inf
/// -> NaN, fnuz -> 0x80, e5m2 Inf -> Inf, E8M0 -> 0xff). For E8M0, zero and negative inputs give
/// 0x00. Meant for the f8/f6/f4 types; on F16/BF16 it applies the same rule.
uint32_t EncodeFromF32Saturating(PrimitiveType t, float v);

/// Exact widening decode of a code to f32. NaN codes of the f8/f6/f4/E8M0 types give the quiet
/// NaN 0x7fc00000 with the code's sign bit; BF16/F16 NaNs keep their payload (as Eigen does).
/// E8M0 is the host decode 2^(e-127) (0x00 -> the f32 subnormal 2^-127, 0xff -> NaN).
float DecodeToF32(PrimitiveType t, uint32_t code);

/// The device raw-byte decode of E8M0 (seed 004 CORRECTION): the byte as an unsigned integer
/// value (0x7f -> 127.0f), not 2^(e-127). The power of two is applied later by the MX dequant.
float DecodeE8M0DeviceRaw(uint8_t code);

/// float32r (seed 004): rounds an f32 to the TF32-style grid of 10 explicit mantissa bits with
/// round-to-nearest-even, keeping the f32 exponent range (so rounding past FLT_MAX gives Inf).
/// NaN and Inf are returned unchanged.
float RoundToFloat32r(float v);

/// XLA float->integer convert (NUMERICS.md §3): NaN -> 0, values at or beyond the target's
/// limits saturate to them, everything else truncates toward zero. `t` is any signed integer
/// type including S1/S2/S4; the result is the value, sign-extended.
int64_t ConvertFloatToSignedInt(PrimitiveType t, double v);

/// As ConvertFloatToSignedInt for the unsigned types (U1/U2/U4/U8...U64): NaN and v <= 0 give 0.
uint64_t ConvertFloatToUnsignedInt(PrimitiveType t, double v);

/// Largest finite value of a float or integer type (F8E8M0FNU: 2^127, F4E2M1FN: 6).
double MaxFinite(PrimitiveType t);
/// Significand digits including the implicit bit (f16 11, bf16 8, f8e4m3fn 4, f8e8m0fnu 1).
int SignificandDigits(PrimitiveType t);
/// Smallest positive subnormal of a float type (E8M0 has none: its smallest value, 2^-127).
double MinSubnormal(PrimitiveType t);
/// Whether a float type has ±Inf codes (F32, F64, F16, BF16, F8E5M2, F8E4M3, F8E3M4).
bool HasInfinity(PrimitiveType t);
/// Whether a float type has NaN codes (all but F4E2M1FN, F6E2M3FN, F6E3M2FN).
bool HasNaN(PrimitiveType t);
/// Whether a float type has a distinct negative zero (not the fnuz types nor E8M0).
bool HasNegativeZero(PrimitiveType t);

/// The bf16 and f16 codecs, branch-free so that loops over arrays vectorize; EncodeFromF32 and
/// DecodeToF32 give the same codes (they call the encoders; tests/test_float_cast.cc checks
/// the encoders against the general rounding on every f32 exponent and mantissa pattern).

/// bf16 -> f32: the code is the top half of the f32 (NaN payloads kept, as DecodeToF32).
inline float Bf16ToF32(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

/// f32 -> bf16, round to nearest even; NaN -> the quiet NaN with the input's sign (payload dropped).
inline uint16_t F32ToBf16(float f) {
  uint32_t b = std::bit_cast<uint32_t>(f);
  uint32_t rounded = (b + 0x7fffu + ((b >> 16) & 1u)) >> 16;
  uint32_t nan = ((b >> 16) & 0x8000u) | 0x7fc0u;
  return static_cast<uint16_t>((b & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

/// f16 -> f32, exact; NaNs keep their payload unquieted, as DecodeToF32.
inline float F16ToF32(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t em = h & 0x7fffu;
  uint32_t normal = (em << 13) + 0x38000000u;                           // exponent rebiased by 127 - 15
  uint32_t special = normal + 0x38000000u;                              // all-ones exponent -> 0xff
  float sub = static_cast<float>(static_cast<int32_t>(em)) * 0x1p-24f;  // subnormal: exact
  // Selected with masks rather than branches, so the loops over blocks vectorize.
  uint32_t is_sub = 0u - static_cast<uint32_t>(em < 0x400u), is_special = 0u - static_cast<uint32_t>(em >= 0x7c00u);
  uint32_t bits = (std::bit_cast<uint32_t>(sub) & is_sub) | (special & is_special) | (normal & ~(is_sub | is_special));
  return std::bit_cast<float>(sign | bits);
}

/// f32 -> f16, round to nearest even with gradual underflow; overflow -> Inf; NaN -> the quiet
/// NaN with the input's sign.
inline uint16_t F32ToF16(float f) {
  uint32_t b = std::bit_cast<uint32_t>(f);
  uint32_t sign = (b >> 16) & 0x8000u;
  uint32_t a = b & 0x7fffffffu;
  // Normal range: rebias the exponent, then round the 13 dropped bits (a carry is the next binade).
  uint32_t normal = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;
  normal = normal > 0x7c00u ? 0x7c00u : normal;
  // Below 2^-14: adding 0.5 rounds to the 2^-24 grid (RNE); the low bits are the code.
  float half = std::bit_cast<float>(a) + 0.5f;
  uint32_t sub = std::bit_cast<uint32_t>(half) - 0x3f000000u;
  uint32_t is_nan = 0u - static_cast<uint32_t>(a > 0x7f800000u);
  uint32_t is_normal = 0u - static_cast<uint32_t>(a >= 0x38800000u);
  uint32_t code = (0x7e00u & is_nan) | (normal & is_normal & ~is_nan) | (sub & ~is_normal);
  return static_cast<uint16_t>(sign | code);
}

}  // namespace nhlo
