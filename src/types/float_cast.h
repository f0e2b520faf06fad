// SPDX-License-Identifier: Apache-2.0
// Bit-exact conversions between f32/f64 and XLA's low-precision float types (f16, bf16, every
// f8/f6/f4 variant, E8M0), plus float32r rounding and XLA's float->integer convert. The results
// match ml_dtypes/Eigen `static_cast` (what XLA's HloEvaluator uses) code for code; see
// docs/dtypes.md and reference/NUMERICS.md for the rules.
#pragma once

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
/// Smallest positive subnormal of a float type (E8M0 has none: its smallest value, 2^-127).
double MinSubnormal(PrimitiveType t);
/// Whether a float type has ±Inf codes (F32, F64, F16, BF16, F8E5M2, F8E4M3, F8E3M4).
bool HasInfinity(PrimitiveType t);
/// Whether a float type has NaN codes (all but F4E2M1FN, F6E2M3FN, F6E3M2FN).
bool HasNaN(PrimitiveType t);
/// Whether a float type has a distinct negative zero (not the fnuz types nor E8M0).
bool HasNegativeZero(PrimitiveType t);

}  // namespace nhlo
