// SPDX-License-Identifier: Apache-2.0
// Block conversions between the low-precision float types and f32 for the elementwise kernels:
// a kernel decodes a block of elements to a float scratch array, runs its f32 loop and encodes
// the block back once. The bf16 and f16 codecs are branch-free so the compiler can vectorize
// them (Bf16ToF32 and friends, float_cast.h): every result is bit-identical to DecodeToF32 /
// EncodeFromF32.
#pragma once

#include <cstdint>

#include "types/float_cast.h"
#include "types/primitive_type.h"

namespace nhlo {

/// Elements per scratch block: small enough for the stack and L1, large enough to amortise.
inline constexpr int64_t kFloatBlock = 512;

/// Decodes n elements of the low-precision float type t (host layout) to f32.
void DecodeFloatBlock(PrimitiveType t, const uint8_t* src, float* dst, int64_t n);
/// Encodes n f32 values to t (the plain cast XLA's convert uses), in the host layout.
void EncodeFloatBlock(PrimitiveType t, const float* src, uint8_t* dst, int64_t n);

}  // namespace nhlo
