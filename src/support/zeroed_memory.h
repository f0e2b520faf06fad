// SPDX-License-Identifier: Apache-2.0
// Zeroed memory for the interpreter's arena: mapped from the kernel (pages it zeroes on first
// touch, so the parts a run never touches cost nothing) and advised as transparent huge pages
// from 2 MiB on. Zeroing a 10 GB arena with memset faulted in 2.5 million 4 KiB pages, 60% of
// mobilenet_v2's page faults and most of its 40 s of system time.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nhlo {

class ZeroedMemory {
 public:
  ZeroedMemory() = default;
  ~ZeroedMemory();
  ZeroedMemory(const ZeroedMemory&) = delete;
  ZeroedMemory& operator=(const ZeroedMemory&) = delete;

  /// `bytes` of zeros at data(), replacing what was there (a rerun that fits is zeroed in place
  /// with memset). False, with no memory, when the system refuses it.
  bool Reset(size_t bytes);
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void Release();
  uint8_t* data_ = nullptr;
  size_t size_ = 0, mapped_ = 0;
};

}  // namespace nhlo
