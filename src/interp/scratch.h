// SPDX-License-Identifier: Apache-2.0
// Memory for the kernels' large temporaries (operands converted or permuted, im2col matrices,
// results in the compute type), kept per thread between kernel calls. A model's kernels ask for
// the same few large sizes over and over; glibc maps every block over 32 MiB afresh and unmaps it
// when it is freed, so each call faulted in and cleared every page again (mobilenet_v2: 0.8 M
// page faults after the arena's were gone). A freed block of 1 MiB or more is kept (in huge
// pages) and handed to the next request it fits; a request none fits first frees every kept
// block, so what a thread keeps stays below what one kernel call of its held at once.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace nhlo {

void* ScratchAllocate(size_t bytes);
void ScratchFree(void* block, size_t bytes);
/// Frees the calling thread's kept blocks (tests; a thread's are freed when it ends).
void ScratchRelease();

template <typename T>
struct ScratchAllocator {
  using value_type = T;
  ScratchAllocator() = default;
  template <typename U>
  ScratchAllocator(const ScratchAllocator<U>&) {}
  T* allocate(size_t n) {
    if (n > size_t(-1) / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(ScratchAllocate(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) { ScratchFree(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const ScratchAllocator<U>&) const {
    return true;
  }
};

/// A kernel's temporary array: a std::vector (value-initialised as usual) over scratch memory.
template <typename T>
using ScratchVector = std::vector<T, ScratchAllocator<T>>;

}  // namespace nhlo
