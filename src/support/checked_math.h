// SPDX-License-Identifier: Apache-2.0
// Overflow-checked integer arithmetic for sizes, products of dimensions and offsets: every place
// that multiplies or adds numbers a file or a user supplied uses these, so a hostile dimension
// or index gives an error instead of signed overflow (undefined behaviour) or a wrapped size.
#pragma once

#include <cstdint>

namespace nhlo {

/// `*out = a * b`; true when the product does not fit (then *out is unspecified).
inline bool MulOverflows(int64_t a, int64_t b, int64_t* out) { return __builtin_mul_overflow(a, b, out); }
inline bool MulOverflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_mul_overflow(a, b, out); }
/// `*out = a + b`; true when the sum does not fit.
inline bool AddOverflows(int64_t a, int64_t b, int64_t* out) { return __builtin_add_overflow(a, b, out); }
inline bool AddOverflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_add_overflow(a, b, out); }

/// The number of elements of an array with `dims`, or -1 when a dimension is negative or the
/// non-zero dimensions multiply past int64. The rule is the parser's: an empty array's other
/// dimensions still size its loops and printed form, so they must multiply within range too, and
/// the answer never depends on the order of the dimensions.
template <typename Dims>
int64_t CheckedElementCount(const Dims& dims) {
  int64_t nonzero = 1;
  bool empty = false;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    if (d == 0) empty = true;
    else if (MulOverflows(nonzero, d, &nonzero)) return -1;
  }
  return empty ? 0 : nonzero;
}

}  // namespace nhlo
