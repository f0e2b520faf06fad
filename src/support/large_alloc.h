// SPDX-License-Identifier: Apache-2.0
// Memory for the few big tables of a module (name tables, the computation list, the verifier's
// signature cache): 2 MiB and more comes 2 MiB-aligned and asked for as transparent huge pages,
// like the arena's big blocks. On the VMs nhlo is measured on a 4 KiB page fault costs 10-14 us
// and a page-table walk several memory reads; one 2 MiB page for 512 of them is what let a
// million-instruction module parse at the speed a small one does (docs/parser-performance.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>

namespace nhlo {

/// Asks the kernel to back the whole pages of [block, block + size) with transparent huge pages
/// (memory from anywhere, malloc's included). A hint only: where they are off (or the call
/// fails) the memory stays in ordinary pages.
void AdviseHugePages(void* block, size_t size);

constexpr size_t kHugePageBytes = size_t(2) << 20;
// From one huge page on: the tables that reach it are sized in powers of two, so they fill their
// huge pages exactly and the module's memory figure does not grow by a partly used page.
constexpr size_t kLargeAllocBytes = kHugePageBytes;

/// 2 MiB-aligned memory for `bytes` rounded up to whole huge pages (the rounded size is written
/// back), asked for as huge pages when that size is `advise_from` or more; freed with std::free,
/// null when out of memory.
inline void* AllocateHugeAligned(size_t& bytes, size_t advise_from) {
  if (bytes > SIZE_MAX - kHugePageBytes) return nullptr;  // rounding up would wrap
  bytes = (bytes + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  void* p = std::aligned_alloc(kHugePageBytes, bytes);
  if (p && bytes >= advise_from) AdviseHugePages(p, bytes);
  return p;
}

/// Makes `s` `n` bytes long, zeros, or (second form) a copy of `data`. From kLargeValueBytes on,
/// a string that must grow is first given fresh memory advised as transparent huge pages, so
/// the fill faults it in 2 MiB at a time: filling a 64 MB value (16M f32 of --random-args)
/// took about 200 ms in 4 KiB page faults on the VMs nhlo is measured on.
void AssignZeros(std::string& s, size_t n);
void AssignBytes(std::string& s, const char* data, size_t n);
/// Gives `s` room for `n` bytes, from kLargeValueBytes on in fresh memory advised as huge pages
/// (its contents are kept).
void ReserveHugeBacked(std::string& s, size_t n);
constexpr size_t kLargeValueBytes = size_t(4) << 20;

/// `bytes` of uninitialised memory, freed with std::free: from malloc below kLargeAllocBytes,
/// else rounded up to whole huge pages.
inline void* AllocateLarge(size_t bytes) {
  void* p = bytes >= kLargeAllocBytes ? AllocateHugeAligned(bytes, 0) : std::malloc(bytes ? bytes : 1);
  if (!p) throw std::bad_alloc();
  return p;
}

/// A std allocator over AllocateLarge, for vectors that may grow to megabytes.
template <typename T>
struct LargeAllocator {
  using value_type = T;
  LargeAllocator() = default;
  template <typename U>
  LargeAllocator(const LargeAllocator<U>&) {}
  T* allocate(size_t n) {
    if (n > size_t(-1) / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(AllocateLarge(n * sizeof(T)));
  }
  void deallocate(T* p, size_t) { std::free(p); }
  template <typename U>
  bool operator==(const LargeAllocator<U>&) const {
    return true;
  }
};

}  // namespace nhlo
