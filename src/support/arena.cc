// SPDX-License-Identifier: Apache-2.0
#include "support/arena.h"

#include <sys/mman.h>

namespace nhlo {

// A hint only: where transparent huge pages are off (or the call fails) the memory stays in
// ordinary pages. The range is narrowed to whole 4 KiB pages (madvise wants an aligned start);
// the kernel uses huge pages for the 2 MiB-aligned parts.
void AdviseHugePages(void* block, size_t size) {
#ifdef MADV_HUGEPAGE
  constexpr uintptr_t kPage = 4096;
  uintptr_t begin = (reinterpret_cast<uintptr_t>(block) + kPage - 1) & ~(kPage - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(block) + size) & ~(kPage - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)block;
  (void)size;
#endif
}

}  // namespace nhlo
