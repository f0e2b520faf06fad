// SPDX-License-Identifier: Apache-2.0
#include "support/mapped_arena.h"

#include <sys/mman.h>

#include "support/large_alloc.h"

namespace nhlo {

MappedArena::~MappedArena() { Release(); }

void MappedArena::Release() {
  if (mapped_ != 0) munmap(data_, mapped_);
  data_ = nullptr;
  size_ = mapped_ = 0;
}

bool MappedArena::Reset(size_t bytes) {
  if (mapped_ != 0 && bytes <= mapped_) {
    // Kept as it is: the pages stay mapped, so the next run's kernels do not fault them in
    // again (handing them back with MADV_DONTNEED made a 16M-element add 1.6x slower per run).
    size_ = bytes;
    return true;
  }
  Release();
  // One page at least, so data() is never null (an arena of 0 bytes is a valid program's).
  size_t length = bytes == 0 ? 1 : bytes;
  void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  data_ = static_cast<uint8_t*>(p);
  size_ = bytes;
  mapped_ = length;
  if (length >= kHugePageBytes) AdviseHugePages(p, length);
  return true;
}

}  // namespace nhlo
