// SPDX-License-Identifier: Apache-2.0
#include "interp/scratch.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "support/large_alloc.h"

namespace nhlo {
namespace {

constexpr size_t kKeptFrom = size_t(1) << 20;  // smaller blocks come from malloc, as before
constexpr size_t kMaxKept = 8;                 // blocks a thread keeps at most

// Kept blocks: (address, usable bytes), the usable size a multiple of the huge page.
struct Kept {
  std::vector<std::pair<void*, size_t>> blocks;
  void FreeAll() {
    for (auto& [p, size] : blocks) std::free(p);
    blocks.clear();
  }
  ~Kept() { FreeAll(); }
};

Kept& ThreadKept() {
  thread_local Kept kept;
  return kept;
}

size_t Rounded(size_t bytes) { return (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1); }

}  // namespace

void* ScratchAllocate(size_t bytes) {
  if (bytes < kKeptFrom) {
    void* p = std::malloc(bytes ? bytes : 1);
    if (!p) throw std::bad_alloc();
    return p;
  }
  Kept& kept = ThreadKept();
  // The smallest kept block that holds it.
  auto best = kept.blocks.end();
  for (auto it = kept.blocks.begin(); it != kept.blocks.end(); ++it)
    if (it->second >= bytes && (best == kept.blocks.end() || it->second < best->second)) best = it;
  if (best != kept.blocks.end()) {
    void* p = best->first;
    kept.blocks.erase(best);
    return p;
  }
  kept.FreeAll();
  if (bytes > SIZE_MAX - kHugePageBytes) throw std::bad_alloc();
  size_t size = bytes;
  void* p = AllocateHugeAligned(size, 0);
  if (!p) throw std::bad_alloc();
  return p;
}

void ScratchFree(void* block, size_t bytes) {
  if (!block) return;
  if (bytes < kKeptFrom) {
    std::free(block);
    return;
  }
  Kept& kept = ThreadKept();
  kept.blocks.emplace_back(block, Rounded(bytes));
  if (kept.blocks.size() > kMaxKept) {
    auto smallest = std::min_element(kept.blocks.begin(), kept.blocks.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
    std::free(smallest->first);
    kept.blocks.erase(smallest);
  }
}

void ScratchRelease() { ThreadKept().FreeAll(); }

}  // namespace nhlo
