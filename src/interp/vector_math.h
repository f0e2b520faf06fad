// SPDX-License-Identifier: Apache-2.0
// exp and tanh of f32 arrays, correctly rounded (round to nearest even), in loops that
// vectorize: the f32 domain's exp and tanh for the interpreter. Each value is computed in
// double with an error far below the gap between a float and the nearest rounding boundary;
// the rare values too close to a boundary to decide (and subnormal results) are recomputed
// with the long-double libm functions. The results are the same on every machine and for
// every vector width: each path's results are the correctly rounded ones.
#pragma once

#include <cstdint>

namespace nhlo {

/// out[i] = exp(in[i]) for i < n; `in` and `out` may be the same array.
void ExpF32(const float* in, float* out, int64_t n);
/// out[i] = tanh(in[i]) for i < n; `in` and `out` may be the same array.
void TanhF32(const float* in, float* out, int64_t n);

/// The same with the portable path even where AVX-512 is available (for tests: both paths must
/// give the correctly rounded results).
void ExpF32Portable(const float* in, float* out, int64_t n);
void TanhF32Portable(const float* in, float* out, int64_t n);

/// One value each, the same results as the array forms.
float ExpF32(float x);
float TanhF32(float x);

}  // namespace nhlo
