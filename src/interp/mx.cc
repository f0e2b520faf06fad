// SPDX-License-Identifier: Apache-2.0
#include "interp/mx.h"

#include <cmath>
#include <limits>

#include "types/custom_call_configs.h"
#include "types/float_cast.h"

namespace nhlo {

uint8_t QuantizeMxBlock(PrimitiveType element, const float* values, int64_t n, uint8_t* codes) {
  float amax = 0;
  bool special = false;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(values[i])) special = true;
    amax = std::max(amax, std::fabs(values[i]));
  }
  if (special) {
    uint32_t nan_code = EncodeFromF32(element, std::numeric_limits<float>::quiet_NaN());
    for (int64_t i = 0; i < n; ++i) codes[i] = static_cast<uint8_t>(nan_code);
    return 0xff;
  }
  if (amax == 0) amax = 0x1p-126f;
  int exponent = std::ilogb(amax) - MxEmax(element);  // ilogb is floor(log2) for finite non-zero
  if (exponent < -127) exponent = -127;
  if (exponent > 127) {  // cannot happen for finite f32 inputs (ilogb <= 127), kept for safety
    uint32_t nan_code = EncodeFromF32(element, std::numeric_limits<float>::quiet_NaN());
    for (int64_t i = 0; i < n; ++i) codes[i] = static_cast<uint8_t>(nan_code);
    return 0xff;
  }
  for (int64_t i = 0; i < n; ++i) {
    // Dividing by a power of two in double is exact; the saturating encoder rounds RNE onto the
    // FP8 grid (subnormals kept) and clamps finite overflow to ±max.
    double scaled = std::ldexp(static_cast<double>(values[i]), -exponent);
    codes[i] = static_cast<uint8_t>(EncodeFromF32Saturating(element, static_cast<float>(scaled)));
  }
  return static_cast<uint8_t>(exponent + 127);
}

float DequantizeMx(PrimitiveType element, uint8_t code, uint8_t scale) {
  if (scale == 0xff) return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(DecodeToF32(element, code), static_cast<int>(scale) - 127);
}

}  // namespace nhlo
