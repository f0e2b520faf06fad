// SPDX-License-Identifier: Apache-2.0
// Overflow-checked integer arithmetic for sizes, products of dimensions and offsets: every place
// that multiplies or adds numbers a file or a user supplied uses these, so a hostile dimension
// or index gives an error instead of signed overflow (undefined behaviour) or a wrapped size.
#pragma once

#include <cstdint>
#include <vector>

namespace nhlo {

/// `*out = a * b`; true when the product does not fit (then *out is unspecified).
inline bool MulOverflows(int64_t a, int64_t b, int64_t* out) { return __builtin_mul_overflow(a, b, out); }
inline bool MulOverflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_mul_overflow(a, b, out); }
/// `*out = a + b`; true when the sum does not fit.
inline bool AddOverflows(int64_t a, int64_t b, int64_t* out) { return __builtin_add_overflow(a, b, out); }
inline bool AddOverflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_add_overflow(a, b, out); }
/// a + b, or UINT64_MAX when that overflows: a byte total from input (a bundle's figures, a
/// kernel's scratch) must not wrap into a small one that passes a memory check.
inline uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  uint64_t sum;
  return AddOverflows(a, b, &sum) ? UINT64_MAX : sum;
}

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
    if (d == 0)
      empty = true;
    else if (MulOverflows(nonzero, d, &nonzero))
      return -1;
  }
  return empty ? 0 : nonzero;
}

/// What is wrong with an iota device list `[num_groups,group_size]<=[reshape]T(perm)` (replica
/// groups), or nullptr: negative sizes, an id count past int64, reshape dimensions whose product
/// is not num_groups * group_size, or a transpose that is not a permutation of them (empty: none).
/// The parser and the bundle reader both judge by it.
inline constexpr const char kIotaCountMismatch[] = "the iota dimensions do not hold as many ids as the groups";
template <typename Ints>
const char* IotaDeviceListProblem(int64_t num_groups, int64_t group_size, const Ints& reshape, const Ints& perm) {
  if (num_groups < 0 || group_size < 0) return "the iota shape must not be negative";
  int64_t ids = 0, product = 1;
  if (MulOverflows(num_groups, group_size, &ids)) return "the iota shape is too large";
  for (int64_t d : reshape)
    if (d < 0 || MulOverflows(product, d, &product)) return "the iota dimensions are invalid";
  if (product != ids) return kIotaCountMismatch;
  if (perm.size() == 0) return nullptr;
  if (perm.size() != reshape.size()) return "the transpose does not match the iota dimensions";
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[static_cast<size_t>(p)])
      return "the transpose is not a permutation";
    seen[static_cast<size_t>(p)] = true;
  }
  return nullptr;
}

}  // namespace nhlo
