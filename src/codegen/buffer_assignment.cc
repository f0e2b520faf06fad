// SPDX-License-Identifier: Apache-2.0
#include "codegen/buffer_assignment.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace nhlo {
namespace {

// Best-fit placement in schedule order: free gaps keyed by offset, coalesced on release.
class GapAllocator {
 public:
  uint64_t Allocate(uint64_t bytes, uint64_t align) {
    auto best = free_.end();
    uint64_t best_at = 0;
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      uint64_t at = AlignTo(it->first, align);
      if (at + bytes <= it->first + it->second && (best == free_.end() || it->second < best->second)) {
        best = it;
        best_at = at;
      }
    }
    if (best != free_.end()) {
      uint64_t gap_start = best->first, gap_end = best->first + best->second;
      free_.erase(best);
      if (best_at > gap_start) free_.emplace(gap_start, best_at - gap_start);
      if (best_at + bytes < gap_end) free_.emplace(best_at + bytes, gap_end - best_at - bytes);
      return best_at;
    }
    // A gap that ends at the frame's end grows instead of leaving a hole.
    uint64_t from = end_;
    if (!free_.empty()) {
      auto last = std::prev(free_.end());
      if (last->first + last->second == end_) {
        from = last->first;
        free_.erase(last);
      }
    }
    uint64_t at = AlignTo(from, align);
    if (at > from) free_.emplace(from, at - from);
    end_ = at + bytes;
    return at;
  }
  void Release(uint64_t at, uint64_t bytes) {
    if (bytes == 0) return;
    auto next = free_.lower_bound(at);
    if (next != free_.end() && next->first == at + bytes) {
      bytes += next->second;
      next = free_.erase(next);
    }
    if (next != free_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == at) {
        prev->second += bytes;
        return;
      }
    }
    free_.emplace(at, bytes);
  }
  uint64_t size() const { return end_; }

 private:
  std::map<uint64_t, uint64_t> free_;
  uint64_t end_ = 0;
};

uint64_t Sweep(const std::vector<FrameSlot>& slots, std::vector<uint64_t>& offsets) {
  uint32_t last = 0;
  for (const FrameSlot& s : slots) last = std::max(last, s.end);
  std::vector<std::vector<uint32_t>> starting(last + 1), ending(last + 1);
  for (uint32_t i = 0; i < slots.size(); ++i) {
    if (slots[i].size == 0) continue;
    starting[slots[i].start].push_back(i);
    ending[slots[i].end].push_back(i);
  }
  GapAllocator frame;
  for (uint32_t t = 0; t <= last; ++t) {
    for (uint32_t i : starting[t]) offsets[i] = frame.Allocate(slots[i].size, slots[i].align);
    for (uint32_t i : ending[t]) frame.Release(offsets[i], slots[i].size);
  }
  return frame.size();
}

uint64_t GreedyBySize(const std::vector<FrameSlot>& slots, std::vector<uint64_t>& offsets) {
  std::vector<uint32_t> order(slots.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (slots[a].size != slots[b].size) return slots[a].size > slots[b].size;
    return slots[a].start < slots[b].start;
  });
  // Placed slots in offset order: a new slot walks them once, skipping the ones whose live
  // range misses its own, and takes the first gap that holds it.
  std::vector<uint32_t> by_offset;
  uint64_t frame = 0;
  for (uint32_t i : order) {
    const FrameSlot& s = slots[i];
    if (s.size == 0) continue;
    uint64_t at = 0;
    for (uint32_t j : by_offset) {
      if (slots[j].end < s.start || s.end < slots[j].start) continue;
      if (AlignTo(at, s.align) + s.size <= offsets[j]) break;
      at = std::max(at, offsets[j] + slots[j].size);
    }
    offsets[i] = AlignTo(at, s.align);
    frame = std::max(frame, offsets[i] + s.size);
    auto pos = std::lower_bound(by_offset.begin(), by_offset.end(), offsets[i],
                                [&](uint32_t j, uint64_t offset) { return offsets[j] < offset; });
    by_offset.insert(pos, i);
  }
  return frame;
}

}  // namespace

constexpr size_t kMaxGreedySlots = 8000;

uint64_t PlaceSlots(std::vector<FrameSlot>& slots) {
  std::vector<uint64_t> sweep(slots.size(), 0), greedy(slots.size(), 0);
  uint64_t sweep_size = Sweep(slots, sweep);
  // The offline strategy compares each slot with every slot placed before it; computations with
  // more slots than this keep the sweep's answer (at this size the comparisons take about 0.1 s).
  uint64_t greedy_size = slots.size() <= kMaxGreedySlots ? GreedyBySize(slots, greedy) : UINT64_MAX;
  const std::vector<uint64_t>& best = greedy_size < sweep_size ? greedy : sweep;
  for (size_t i = 0; i < slots.size(); ++i) slots[i].offset = slots[i].size == 0 ? 0 : best[i];
  return std::min(sweep_size, greedy_size);
}

}  // namespace nhlo
