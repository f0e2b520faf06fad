// SPDX-License-Identifier: Apache-2.0
// What a computation called once per element computes, when it is a pattern the kernels run
// natively: recognised once, at load (callee_pattern.cc), and kept in the op's Step, so reduce,
// sort, scatter, map and their kin do not run the computation through the executor per element.
#pragma once

#include <cstdint>

namespace nhlo {

/// The binary op a reducer or combiner computes of its two scalar parameters; kNone when the
/// computation is anything else (it then runs as written).
enum class ScalarOp : uint8_t { kNone, kAdd, kMultiply, kMaximum, kMinimum, kAnd, kOr, kXor };

struct CalleePattern {
  /// reduce, reduce-window, scatter, map, select-and-scatter's scatter: root = op(p0, p1), or
  /// op(p1, p0) when `swapped` (kept, since float ops need not commute bit for bit).
  ScalarOp op = ScalarOp::kNone;
  bool swapped = false;
  /// sort: the comparator is compare(key(p[2k]), key(p[2k+1])) LT (GT when `descending`), k =
  /// `key_operand`, the other parameters unused. select-and-scatter's select: compare(p0, p1)
  /// with `direction` (a ComparisonDirection code).
  bool compare_known = false;
  bool descending = false;
  bool total_order = false;  // type=TOTALORDER on floats
  /// key(x) = isnan(x) ? nan_bits : (x == zero (float equality) ? zero_bits : x): JAX's
  /// canonicalisation of NaNs and zeros before a total-order compare. Else key(x) = x.
  bool canonical = false;
  uint8_t direction = 0;
  /// reduce of (values, indices): JAX's argmax (direction GT) or argmin (LT) reducer: the
  /// accumulator (v0, i0) stays when compare(v0, v1) or v0 is NaN, or v0 == v1 and i0 < i1.
  bool arg_reduce = false;
  uint32_t key_operand = 0;
  uint64_t nan_bits = 0, zero_bits = 0;
};

}  // namespace nhlo
