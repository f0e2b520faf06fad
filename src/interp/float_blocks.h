// SPDX-License-Identifier: Apache-2.0
// Block conversions between the low-precision float types and f32 for the elementwise kernels:
// a kernel decodes a block of elements to a float scratch array, runs its f32 loop and encodes
// the block back once. The bf16 and f16 codecs are branch-free so the compiler can vectorize
// them; every result is bit-identical to DecodeToF32 / EncodeFromF32 (float_cast.h).
#pragma once

#include <bit>
#include <cstdint>

#include "types/primitive_type.h"

namespace nhlo {

/// Elements per scratch block: small enough for the stack and L1, large enough to amortise.
inline constexpr int64_t kFloatBlock = 512;

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
  uint32_t normal = (em << 13) + 0x38000000u;                    // exponent rebiased by 127 - 15
  uint32_t special = normal + 0x38000000u;                       // all-ones exponent -> 0xff
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

/// Decodes n elements of the low-precision float type t (host layout) to f32.
void DecodeFloatBlock(PrimitiveType t, const uint8_t* src, float* dst, int64_t n);
/// Encodes n f32 values to t (the plain cast XLA's convert uses), in the host layout.
void EncodeFloatBlock(PrimitiveType t, const float* src, uint8_t* dst, int64_t n);

}  // namespace nhlo
