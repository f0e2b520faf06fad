// SPDX-License-Identifier: Apache-2.0
// "Did you mean" for names a user typed: the closest known name by edit distance, as the
// programs suggest an option for an unknown flag and a pass for an unknown pass name.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace nhlo {

/// Edit distance with adjacent transpositions (optimal string alignment): inserting, deleting
/// or substituting one byte costs 1, and so does swapping two neighbours (`dec` -> `dce`).
inline size_t EditDistance(std::string_view a, std::string_view b) {
  const size_t w = b.size() + 1;
  std::vector<size_t> d((a.size() + 1) * w);
  for (size_t i = 0; i <= a.size(); ++i) d[i * w] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t& here = d[i * w + j];
      here = std::min(
          {d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1, d[(i - 1) * w + j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        here = std::min(here, d[(i - 2) * w + j - 2] + 1);
    }
  return d[a.size() * w + b.size()];
}

/// The candidate closest to `word`, or empty when none is close: at most a third of the word's
/// letters differ (a candidate the word is a prefix of, from 4 letters on, counts as distance 1).
inline std::string ClosestName(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = word.size() / 3 + 1;
  for (const std::string& candidate : candidates) {
    size_t d = EditDistance(word, candidate);
    if (candidate.compare(0, word.size(), word) == 0 && word.size() >= 4) d = std::min<size_t>(d, 1);
    if (d < best_distance) best_distance = d, best = candidate;
  }
  return best;
}

}  // namespace nhlo
