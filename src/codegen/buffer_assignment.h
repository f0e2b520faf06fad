// SPDX-License-Identifier: Apache-2.0
// Placing a computation's values in its frame. Each value (or block of callee frames) is a slot
// live over an interval of the schedule; two slots whose intervals overlap never share bytes.
#pragma once

#include <cstdint>
#include <vector>

namespace nhlo {

struct FrameSlot {
  uint32_t start = 0;  // first instruction (schedule position) at which the slot is live
  uint32_t end = 0;    // last one, inclusive
  uint64_t size = 0;
  uint64_t align = 1;   // a power of two
  uint64_t offset = 0;  // set by PlaceSlots
};

/// `v` rounded up to a multiple of `align` (a power of two).
inline uint64_t AlignTo(uint64_t v, uint64_t align) { return (v + align - 1) & ~(align - 1); }

/// Sets every slot's offset and returns the frame size. Two strategies are tried and the
/// smaller frame kept (ties: the first): a sweep in schedule order that puts each new slot in
/// the best-fitting free gap, and XLA's/TFLite's offline "greedy by size" that places the
/// largest slots first at the lowest offset free over their whole interval. Deterministic.
uint64_t PlaceSlots(std::vector<FrameSlot>& slots);

}  // namespace nhlo
