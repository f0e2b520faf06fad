// SPDX-License-Identifier: Apache-2.0
#include "support/arena.h"

#include <sys/mman.h>

namespace nhlo {

// A hint only: where transparent huge pages are off (or the call fails) the block stays in
// ordinary pages.
void Arena::AdviseHugePages(char* block, size_t size) {
#ifdef MADV_HUGEPAGE
  (void)madvise(block, size, MADV_HUGEPAGE);
#else
  (void)block;
  (void)size;
#endif
}

}  // namespace nhlo
