// SPDX-License-Identifier: Apache-2.0
// One parameterised encoder/decoder for every low-precision float type, driven by a constexpr
// table of formats (exponent/mantissa bits, bias, special-value style). Encoding rounds the exact
// value of the input, so f32 and f64 inputs share one code path; the per-style rules for NaN,
// Inf, zero and overflow reproduce ml_dtypes/Eigen bit for bit (reference/NUMERICS.md §1).
#include "types/float_cast.h"

#include <array>
#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>

#include "support/status.h"

namespace nhlo {
namespace {

// How a format spends its special codes.
enum class Style : uint8_t {
  kIeee,        // all-ones exponent: mantissa 0 = Inf, else NaN (f16, bf16, e5m2, e4m3, e3m4)
  kFn,          // no Inf; only sign|all-ones is NaN (e4m3fn)
  kFnuz,        // no Inf, no -0; the lone NaN is the "-0" code 0x80 (the fnuz types)
  kFiniteOnly,  // no Inf, no NaN; overflow saturates (f4e2m1fn, f6e2m3fn, f6e3m2fn)
  kE8M0,        // unsigned, exponent only, no zero; 0xff is NaN (f8e8m0fnu)
};

struct FloatFormat {
  PrimitiveType type = PrimitiveType::kInvalid;
  int bits = 0;  // code width including the sign bit (E8M0 has none)
  int exp_bits = 0;
  int mant_bits = 0;
  int bias = 0;
  Style style = Style::kIeee;
  // Eigen's f16/bf16 -> f32 widening keeps a NaN's payload; the ml_dtypes f8/f6/f4 types
  // return the canonical quiet NaN instead.
  bool nan_keeps_payload = false;
};

constexpr FloatFormat kFormats[] = {
    {PrimitiveType::kF16, 16, 5, 10, 15, Style::kIeee, true},
    {PrimitiveType::kBF16, 16, 8, 7, 127, Style::kIeee, true},
    {PrimitiveType::kF8E5M2, 8, 5, 2, 15, Style::kIeee, false},
    {PrimitiveType::kF8E4M3FN, 8, 4, 3, 7, Style::kFn, false},
    {PrimitiveType::kF8E4M3, 8, 4, 3, 7, Style::kIeee, false},
    {PrimitiveType::kF8E3M4, 8, 3, 4, 3, Style::kIeee, false},
    {PrimitiveType::kF8E4M3FNUZ, 8, 4, 3, 8, Style::kFnuz, false},
    {PrimitiveType::kF8E5M2FNUZ, 8, 5, 2, 16, Style::kFnuz, false},
    {PrimitiveType::kF8E4M3B11FNUZ, 8, 4, 3, 11, Style::kFnuz, false},
    {PrimitiveType::kF4E2M1FN, 4, 2, 1, 1, Style::kFiniteOnly, false},
    {PrimitiveType::kF6E2M3FN, 6, 2, 3, 1, Style::kFiniteOnly, false},
    {PrimitiveType::kF6E3M2FN, 6, 3, 2, 3, Style::kFiniteOnly, false},
    {PrimitiveType::kF8E8M0FNU, 8, 8, 0, 127, Style::kE8M0, false},
};

static_assert(
    [] {
      for (const FloatFormat& f : kFormats) {
        int sign_bits = f.style == Style::kE8M0 ? 0 : 1;
        if (f.bits != sign_bits + f.exp_bits + f.mant_bits) return false;
      }
      return true;
    }(),
    "float_cast.cc: a format's bit widths do not add up");

// Indexed by PrimitiveType code so the hot encode/decode loops do not search the table.
constexpr auto kFormatByCode = [] {
  std::array<const FloatFormat*, kMaxPrimitiveTypeCode + 1> table{};
  for (const FloatFormat& f : kFormats) table[static_cast<int>(f.type)] = &f;
  return table;
}();

const FloatFormat* FindFormat(PrimitiveType t) {
  int code = static_cast<int>(t);
  return code <= kMaxPrimitiveTypeCode ? kFormatByCode[code] : nullptr;
}

const FloatFormat& FormatOf(PrimitiveType t) {
  const FloatFormat* f = FindFormat(t);
  NHLO_CHECK(f != nullptr, "float_cast: not a low-precision float type");
  return *f;
}

// Smallest normal exponent: codes with exponent field 0 share it as subnormals.
constexpr int MinNormalExponent(const FloatFormat& f) { return 1 - f.bias; }

uint32_t SignMask(const FloatFormat& f) { return f.style == Style::kE8M0 ? 0u : 1u << (f.bits - 1); }

// Code of the largest finite magnitude (without sign).
uint32_t MaxMagnitude(const FloatFormat& f) {
  uint32_t all_ones = (1u << (f.exp_bits + f.mant_bits)) - 1;
  switch (f.style) {
    case Style::kIeee: return (((1u << f.exp_bits) - 1) << f.mant_bits) - 1;
    case Style::kFn:
    case Style::kE8M0: return all_ones - 1;
    case Style::kFnuz:
    case Style::kFiniteOnly: return all_ones;
  }
  return all_ones;
}

uint32_t InfinityMagnitude(const FloatFormat& f) { return ((1u << f.exp_bits) - 1) << f.mant_bits; }

uint32_t NanCode(const FloatFormat& f, bool negative) {
  uint32_t sign = negative ? SignMask(f) : 0u;
  switch (f.style) {
    case Style::kIeee:  // the quiet NaN: top mantissa bit set, payload dropped
      return sign | InfinityMagnitude(f) | (1u << (f.mant_bits - 1));
    case Style::kFn: return sign | ((1u << (f.exp_bits + f.mant_bits)) - 1);
    case Style::kFnuz: return SignMask(f);
    case Style::kFiniteOnly:
      // ml_dtypes' quiet_NaN() for these types is the -0 code and its converter returns
      // `sign ? -quiet_NaN : quiet_NaN`, so +NaN -> -0 and -NaN -> +0. Copied on purpose:
      // XLA's evaluator produces exactly this.
      return negative ? 0u : SignMask(f);
    case Style::kE8M0: return 0xffu;
  }
  return 0;
}

// The code a value too large for the format gets.
uint32_t OverflowCode(const FloatFormat& f, bool negative, bool saturate) {
  uint32_t sign = negative ? SignMask(f) : 0u;
  if (saturate) return sign | MaxMagnitude(f);
  switch (f.style) {
    case Style::kIeee: return sign | InfinityMagnitude(f);
    case Style::kFn:
    case Style::kFnuz:
    case Style::kE8M0: return NanCode(f, negative);
    case Style::kFiniteOnly: return sign | MaxMagnitude(f);
  }
  return 0;
}

// Rounds the exact value `v` onto the format's grid (RNE, gradual underflow) and applies the
// style's rules for specials and overflow. Every f32 is exactly a double, so f32 inputs go
// through here unchanged in value.
uint32_t Encode(const FloatFormat& f, double v, bool saturate) {
  const bool negative = std::signbit(v);
  const uint32_t sign = negative ? SignMask(f) : 0u;
  if (std::isnan(v)) return NanCode(f, negative);
  if (std::isinf(v)) {
    // Infinities are never saturated, even by the saturating encoder (ml_dtypes checks them
    // before the overflow logic); the finite-only types have no other choice than ±max.
    switch (f.style) {
      case Style::kIeee: return sign | InfinityMagnitude(f);
      case Style::kFiniteOnly: return sign | MaxMagnitude(f);
      case Style::kFn:
      case Style::kFnuz:
      case Style::kE8M0: return NanCode(f, negative);
    }
  }
  if (f.style == Style::kE8M0 && (v == 0 || negative)) {
    // E8M0 has no zero and no sign: the plain cast calls these NaN, the saturating one clamps
    // them to the smallest code.
    return saturate ? 0u : 0xffu;
  }
  if (v == 0) return f.style == Style::kFnuz ? 0u : sign;

  const double a = std::fabs(v);
  const int emin = MinNormalExponent(f);
  int frexp_exp = 0;
  std::frexp(a, &frexp_exp);
  // e = floor(log2 a), clamped to the subnormal exponent so that everything below the normal
  // range is rounded on the fixed subnormal grid of quantum 2^(emin - mant_bits). For E8M0
  // (no mantissa) that grid is 2^-126: values in (2^-127, 2^-126) round to code 1, the quirk
  // ml_dtypes has.
  int e = frexp_exp - 1;
  if (e < emin) e = emin;
  // n = a / quantum is exact: a power-of-two scaling that stays in double's normal range.
  const double n = std::ldexp(a, f.mant_bits - e);
  const double whole = std::floor(n);
  const double frac = n - whole;
  uint64_t r = static_cast<uint64_t>(whole);
  if (frac > 0.5 || (frac == 0.5 && (r & 1))) ++r;  // ties to even
  // r is in [0, 2^(m+1)]; a carry into the next binade falls out of the sum naturally
  // (the codes of consecutive binades are consecutive).
  const uint64_t magnitude = (static_cast<uint64_t>(e - emin) << f.mant_bits) + r;
  if (magnitude > MaxMagnitude(f)) return OverflowCode(f, negative, saturate);
  if (magnitude == 0 && f.style == Style::kFnuz) return 0;  // no -0: tiny negatives -> +0
  return sign | static_cast<uint32_t>(magnitude);
}

float Decode(const FloatFormat& f, uint32_t code) {
  code &= (1u << f.bits) - 1;
  if (f.style == Style::kE8M0) {
    if (code == 0xff) return std::bit_cast<float>(0x7fc00000u);
    return static_cast<float>(std::ldexp(1.0, static_cast<int>(code) - 127));
  }
  const uint32_t sign_mask = SignMask(f);
  const bool negative = (code & sign_mask) != 0;
  const uint32_t f32_sign = negative ? 0x80000000u : 0u;
  const uint32_t magnitude = code & (sign_mask - 1);
  const uint32_t exp_field = magnitude >> f.mant_bits;
  const uint32_t mant = magnitude & ((1u << f.mant_bits) - 1);
  const uint32_t exp_all_ones = (1u << f.exp_bits) - 1;
  bool is_nan = false;
  switch (f.style) {
    case Style::kIeee:
      if (exp_field == exp_all_ones) {
        if (mant == 0) return std::bit_cast<float>(f32_sign | 0x7f800000u);
        is_nan = true;
      }
      break;
    case Style::kFn: is_nan = magnitude == (1u << (f.exp_bits + f.mant_bits)) - 1; break;
    case Style::kFnuz: is_nan = code == sign_mask; break;
    case Style::kFiniteOnly:
    case Style::kE8M0: break;
  }
  if (is_nan) {
    if (f.nan_keeps_payload) return std::bit_cast<float>(f32_sign | 0x7f800000u | (mant << (23 - f.mant_bits)));
    return std::bit_cast<float>(f32_sign | 0x7fc00000u);
  }
  uint32_t significand = mant;
  int exponent = MinNormalExponent(f);
  if (exp_field != 0) {
    significand |= 1u << f.mant_bits;
    exponent = static_cast<int>(exp_field) - f.bias;
  }
  // Every value of these formats is exactly an f32, so the double->float step is exact.
  const double value = std::ldexp(static_cast<double>(significand), exponent - f.mant_bits);
  return static_cast<float>(negative ? -value : value);
}

}  // namespace

bool IsCastableLowPrecisionFloat(PrimitiveType t) { return FindFormat(t) != nullptr; }

int SignificandDigits(PrimitiveType t) {
  if (t == PrimitiveType::kF32) return 24;
  if (t == PrimitiveType::kF64) return 53;
  const FloatFormat* f = FindFormat(t);
  return f ? f->mant_bits + 1 : 0;
}

uint32_t EncodeFromF32(PrimitiveType t, float v) {
  if (t == PrimitiveType::kF32) return std::bit_cast<uint32_t>(v);
  if (t == PrimitiveType::kBF16) return F32ToBf16(v);
  if (t == PrimitiveType::kF16) return F32ToF16(v);
  return Encode(FormatOf(t), static_cast<double>(v), /*saturate=*/false);
}

uint32_t EncodeFromF32Slow(PrimitiveType t, float v) {
  return Encode(FormatOf(t), static_cast<double>(v), /*saturate=*/false);
}

uint32_t EncodeFromF64(PrimitiveType t, double v) {
  // Eigen::half and Eigen::bfloat16 construct from double via float: round twice, as XLA does.
  if (t == PrimitiveType::kF32 || t == PrimitiveType::kF16 || t == PrimitiveType::kBF16)
    return EncodeFromF32(t, static_cast<float>(v));
  return Encode(FormatOf(t), v, /*saturate=*/false);
}

uint32_t EncodeFromF32Saturating(PrimitiveType t, float v) {
  return Encode(FormatOf(t), static_cast<double>(v), /*saturate=*/true);
}

float DecodeToF32(PrimitiveType t, uint32_t code) {
  if (t == PrimitiveType::kF32) return std::bit_cast<float>(code);
  // bf16 is the top half of an f32, NaN payloads included (nan_keeps_payload).
  if (t == PrimitiveType::kBF16) return std::bit_cast<float>((code & 0xffffu) << 16);
  return Decode(FormatOf(t), code);
}

float DecodeE8M0DeviceRaw(uint8_t code) { return static_cast<float>(code); }

float RoundToFloat32r(float v) {
  if (!std::isfinite(v)) return v;
  // RNE on the 23-bit f32 mantissa down to 10 bits: add half an ulp minus one plus the kept
  // lsb, then clear the 13 dropped bits. A carry walks into the exponent, which is the correct
  // next binade (or Inf past FLT_MAX).
  constexpr int kDropped = 23 - 10;
  uint32_t bits = std::bit_cast<uint32_t>(v);
  uint32_t lsb = (bits >> kDropped) & 1u;
  bits += ((1u << (kDropped - 1)) - 1u) + lsb;
  bits &= ~((1u << kDropped) - 1u);
  return std::bit_cast<float>(bits);
}

int64_t ConvertFloatToSignedInt(PrimitiveType t, double v) {
  NHLO_CHECK(IsSignedInt(t), "ConvertFloatToSignedInt: not a signed integer type");
  const int bits = BitWidth(t);
  if (std::isnan(v)) return 0;
  // 2^(bits-1) is the first value that does not fit; comparing against it (rather than against
  // max, which is not a double for s64) gives XLA's `x >= (Float)max -> max` for every width.
  const double limit = std::ldexp(1.0, bits - 1);
  const int64_t max = static_cast<int64_t>((uint64_t{1} << (bits - 1)) - 1);
  if (v >= limit) return max;
  if (v <= -limit) return -max - 1;
  return static_cast<int64_t>(std::trunc(v));
}

uint64_t ConvertFloatToUnsignedInt(PrimitiveType t, double v) {
  NHLO_CHECK(IsUnsignedInt(t), "ConvertFloatToUnsignedInt: not an unsigned integer type");
  const int bits = BitWidth(t);
  if (std::isnan(v) || v <= 0) return 0;
  const double limit = std::ldexp(1.0, bits);
  if (v >= limit) return bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  return static_cast<uint64_t>(std::trunc(v));
}

double MaxFinite(PrimitiveType t) {
  if (t == PrimitiveType::kF32) return FLT_MAX;
  if (t == PrimitiveType::kF64) return DBL_MAX;
  if (IsSignedInt(t)) return std::ldexp(1.0, BitWidth(t) - 1) - 1;  // s64: rounds to 2^63
  if (IsUnsignedInt(t)) return std::ldexp(1.0, BitWidth(t)) - 1;    // u64: rounds to 2^64
  const FloatFormat& f = FormatOf(t);
  return Decode(f, MaxMagnitude(f));
}

double MinSubnormal(PrimitiveType t) {
  if (t == PrimitiveType::kF32) return std::numeric_limits<float>::denorm_min();
  if (t == PrimitiveType::kF64) return std::numeric_limits<double>::denorm_min();
  const FloatFormat& f = FormatOf(t);
  return Decode(f, f.style == Style::kE8M0 ? 0u : 1u);
}

bool HasInfinity(PrimitiveType t) {
  if (t == PrimitiveType::kF32 || t == PrimitiveType::kF64) return true;
  const FloatFormat* f = FindFormat(t);
  return f != nullptr && f->style == Style::kIeee;
}

bool HasNaN(PrimitiveType t) {
  if (t == PrimitiveType::kF32 || t == PrimitiveType::kF64) return true;
  const FloatFormat* f = FindFormat(t);
  return f != nullptr && f->style != Style::kFiniteOnly;
}

bool HasNegativeZero(PrimitiveType t) {
  if (t == PrimitiveType::kF32 || t == PrimitiveType::kF64) return true;
  const FloatFormat* f = FindFormat(t);
  return f != nullptr && f->style != Style::kFnuz && f->style != Style::kE8M0;
}

}  // namespace nhlo
