// SPDX-License-Identifier: Apache-2.0
// OCP MX block quantization (DESIGN.md "EMAX scaling", reference/NUMERICS.md §2a): one shared
// E8M0 exponent per block, elements rounded to nearest-even onto the FP8 grid and clamped to
// ±max finite.
#pragma once

#include <cstdint>

#include "types/primitive_type.h"

namespace nhlo {

/// Quantizes `n` values (one block) to `element` (F8E4M3FN or F8E5M2): writes n element codes
/// and returns the scale byte. amax = max |x| (0 counts as 2^-126); e = floor(log2 amax) - emax,
/// clamped below at -127; scale = e + 127. A block holding NaN or Inf gets scale 0xff and NaN
/// elements.
uint8_t QuantizeMxBlock(PrimitiveType element, const float* values, int64_t n, uint8_t* codes);

/// The value of an element code times its block scale (2^(scale-127); scale 0xff is NaN).
float DequantizeMx(PrimitiveType element, uint8_t code, uint8_t scale);

}  // namespace nhlo
