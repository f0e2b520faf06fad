// SPDX-License-Identifier: Apache-2.0
#include "support/diff.h"

#include <algorithm>
#include <vector>

namespace nhlo {
namespace {

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    lines.push_back(text.substr(pos, eol - pos));
    pos = eol + 1;
  }
  return lines;
}

enum class Edit : char { kKeep = ' ', kDelete = '-', kInsert = '+' };

// Myers' O((N+M)D) shortest edit script, returned in order.
std::vector<Edit> ShortestEdit(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
  const int n = static_cast<int>(a.size()), m = static_cast<int>(b.size());
  const int max = n + m, offset = max + 1;
  std::vector<int> v(2 * max + 3, 0);
  std::vector<std::vector<int>> trace;
  for (int d = 0; d <= max; ++d) {
    trace.push_back(v);
    for (int k = -d; k <= d; k += 2) {
      int x =
          (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1])) ? v[offset + k + 1] : v[offset + k - 1] + 1;
      int y = x - k;
      while (x < n && y < m && a[x] == b[y]) ++x, ++y;
      v[offset + k] = x;
      if (x >= n && y >= m) {
        // Backtrack through the saved frontiers.
        std::vector<Edit> edits;
        int cx = n, cy = m;
        for (int dd = d; dd > 0; --dd) {
          const std::vector<int>& pv = trace[dd];
          int ck = cx - cy;
          int pk = (ck == -dd || (ck != dd && pv[offset + ck - 1] < pv[offset + ck + 1])) ? ck + 1 : ck - 1;
          int px = pv[offset + pk], py = px - pk;
          while (cx > px && cy > py) edits.push_back(Edit::kKeep), --cx, --cy;
          edits.push_back(cx == px ? Edit::kInsert : Edit::kDelete);
          cx = px;
          cy = py;
        }
        while (cx > 0 && cy > 0) edits.push_back(Edit::kKeep), --cx, --cy;
        std::reverse(edits.begin(), edits.end());
        return edits;
      }
    }
  }
  return {};
}

}  // namespace

std::string UnifiedDiff(std::string_view before, std::string_view after, std::string_view a_name,
                        std::string_view b_name, int context) {
  if (before == after) return {};
  std::vector<std::string_view> a = SplitLines(before), b = SplitLines(after);
  std::vector<Edit> edits = ShortestEdit(a, b);
  // Position of each edit in a and b.
  struct Step {
    Edit e;
    int ai, bi;
  };
  std::vector<Step> steps;
  int ai = 0, bi = 0;
  for (Edit e : edits) {
    steps.push_back({e, ai, bi});
    if (e != Edit::kInsert) ++ai;
    if (e != Edit::kDelete) ++bi;
  }
  std::string out;
  out += "--- ";
  out += a_name;
  out += "\n+++ ";
  out += b_name;
  out += '\n';
  size_t i = 0;
  while (i < steps.size()) {
    while (i < steps.size() && steps[i].e == Edit::kKeep) ++i;
    if (i == steps.size()) break;
    size_t start = i >= static_cast<size_t>(context) ? i - context : 0;
    // Extend the hunk while changes are within 2*context of each other.
    size_t end = i;
    for (;;) {
      while (end < steps.size() && steps[end].e != Edit::kKeep) ++end;
      size_t next = end;
      while (next < steps.size() && steps[next].e == Edit::kKeep) ++next;
      if (next < steps.size() && next - end <= static_cast<size_t>(2 * context)) {
        end = next;
        continue;
      }
      end = std::min(steps.size(), end + context);
      break;
    }
    int a_start = steps[start].ai, b_start = steps[start].bi, a_len = 0, b_len = 0;
    for (size_t j = start; j < end; ++j) {
      if (steps[j].e != Edit::kInsert) ++a_len;
      if (steps[j].e != Edit::kDelete) ++b_len;
    }
    out += "@@ -" + std::to_string(a_len ? a_start + 1 : a_start) + "," + std::to_string(a_len) + " +" +
           std::to_string(b_len ? b_start + 1 : b_start) + "," + std::to_string(b_len) + " @@\n";
    for (size_t j = start; j < end; ++j) {
      out += static_cast<char>(steps[j].e);
      out += steps[j].e == Edit::kInsert ? b[steps[j].bi] : a[steps[j].ai];
      out += '\n';
    }
    i = end;
  }
  return out;
}

}  // namespace nhlo
