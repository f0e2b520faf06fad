// SPDX-License-Identifier: Apache-2.0
// The interpreter's arena: mapped from the kernel (pages it zeroes on first touch, so the parts a
// run never touches cost nothing) and advised as transparent huge pages from 2 MiB on. Zeroing a
// 10 GB arena with memset faulted in 2.5 million 4 KiB pages, 60% of mobilenet_v2's page faults
// and most of its 40 s of system time.
//
// A rerun keeps the mapping and the previous run's bytes. Clearing them is not needed (buffer
// assignment gives one slot to many values within a run, so every kernel already writes all of
// its result) and cost more than it saved: a memset of the arena between runs left its lines
// dirty in the cache, and the next run's first kernel wrote them back inside its own time.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nhlo {

class MappedArena {
 public:
  MappedArena() = default;
  ~MappedArena();
  MappedArena(const MappedArena&) = delete;
  MappedArena& operator=(const MappedArena&) = delete;

  /// `bytes` of memory at data(): zeros when newly mapped, the previous contents when the last
  /// mapping holds them. False, with no memory, when the system refuses it.
  bool Reset(size_t bytes);
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void Release();
  uint8_t* data_ = nullptr;
  size_t size_ = 0, mapped_ = 0;
};

}  // namespace nhlo
