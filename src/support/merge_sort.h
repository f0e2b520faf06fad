// SPDX-License-Identifier: Apache-2.0
// A stable merge sort that stays in bounds whatever the comparator answers. std::stable_sort
// needs a strict weak order, and a sort comparator in HLO is a user computation that may be
// anything (one that calls rng, NaNs compared by hand): with such a comparator std::stable_sort
// reads and writes outside its range. Here every merge step only ever takes the next element of
// one of two runs, so any answers give a permutation of the input; with a strict weak order the
// result is the stable sorted order, as std::stable_sort's.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace nhlo {

/// Sorts `v` by `less` (bottom-up, runs of 1, 2, 4, ...). The result for a comparator that is
/// not a strict weak order: merging runs A (left) and B (right), B's head goes first exactly when
/// less(B's head, A's head), else A's head; runs are merged left to right at each width.
template <typename T, typename Less>
void StableMergeSort(std::vector<T>& v, Less less) {
  const size_t n = v.size();
  if (n < 2) return;
  std::vector<T> buffer(n);
  std::vector<T>* from = &v;
  std::vector<T>* to = &buffer;
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      const size_t mid = lo + width < n ? lo + width : n;
      const size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      size_t a = lo, b = mid, out = lo;
      while (a < mid && b < hi) (*to)[out++] = less((*from)[b], (*from)[a]) ? (*from)[b++] : (*from)[a++];
      while (a < mid) (*to)[out++] = (*from)[a++];
      while (b < hi) (*to)[out++] = (*from)[b++];
    }
    std::swap(from, to);
  }
  if (from != &v) v.swap(*from);
}

}  // namespace nhlo
