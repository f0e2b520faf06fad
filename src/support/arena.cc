// SPDX-License-Identifier: Apache-2.0
#include "support/arena.h"

#include <sys/mman.h>

#include <mutex>
#include <string>

#include "support/large_alloc.h"

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

// The fresh block is advised before anything touches it (malloc maps a block this large
// afresh, or reuses a freed one whose pages stay as they are).
void ReserveHugeBacked(std::string& s, size_t n) {
  if (s.capacity() >= n) return;
  if (n < kLargeValueBytes) return s.reserve(n);
  std::string fresh;
  fresh.reserve(n);
  AdviseHugePages(fresh.data(), n);
  fresh.assign(s);
  s.swap(fresh);
}

void AssignZeros(std::string& s, size_t n) {
  ReserveHugeBacked(s, n);
  s.assign(n, '\0');
}

void AssignBytes(std::string& s, const char* data, size_t n) {
  ReserveHugeBacked(s, n);
  s.assign(data, n);
}

namespace {

// Freed arena blocks of 2 MiB and more, kept for the next arena of this process. Capped, so a
// process that parsed one huge module does not keep all of its memory; the cap is above the
// arena of every corpus file (17 MB for the largest) and of a 100k-instruction module.
// Under AddressSanitizer nothing is pooled: freed blocks must go back to it, so that a use of a
// module's memory after the module died is reported.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NHLO_ARENA_NO_POOL 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(NHLO_ARENA_NO_POOL)
constexpr size_t kPoolCapBytes = 0;
#else
constexpr size_t kPoolCapBytes = size_t(256) << 20;
#endif
struct BlockPool {
  std::mutex mutex;
  // Fixed storage: blocks are pooled from a destructor, which must not allocate.
  std::pair<char*, size_t> blocks[kPoolCapBytes / kHugePageBytes + 1];
  size_t count = 0;
  size_t bytes = 0;
};

BlockPool& Pool() {
  static BlockPool* pool = new BlockPool;  // never destroyed: arenas may die after static destructors ran
  return *pool;
}

}  // namespace

char* Arena::TakePooledBlock(size_t& size) {
  BlockPool& pool = Pool();
  std::lock_guard<std::mutex> lock(pool.mutex);
  // At most twice the size asked for, as the block doubling would give: a module after a much
  // bigger one does not take that one's largest block (its arena figures would be overstated).
  size_t best = pool.count;
  for (size_t i = 0; i < pool.count; ++i)  // at most 128 entries, once per new block
    if (pool.blocks[i].second >= size && pool.blocks[i].second / 2 <= size &&
        (best == pool.count || pool.blocks[i].second < pool.blocks[best].second))
      best = i;
  if (best == pool.count) return nullptr;
  char* block = pool.blocks[best].first;
  size = pool.blocks[best].second;
  pool.bytes -= size;
  pool.blocks[best] = pool.blocks[--pool.count];
  return block;
}

bool Arena::Pooling() { return kPoolCapBytes > 0; }

void Arena::DrainPool() {
  BlockPool& pool = Pool();
  std::lock_guard<std::mutex> lock(pool.mutex);
  for (size_t i = 0; i < pool.count; ++i) std::free(pool.blocks[i].first);
  pool.count = 0;
  pool.bytes = 0;
}

void Arena::ReleaseBlocks() {
  if (blocks_.empty()) return;
  BlockPool& pool = Pool();
  std::lock_guard<std::mutex> lock(pool.mutex);
  for (const Block& b : blocks_) {
    if (b.size >= kHugePageBytes && pool.bytes + b.size <= kPoolCapBytes) {  // so count stays < 128
      pool.blocks[pool.count++] = {b.data, b.size};
      pool.bytes += b.size;
    } else {
      std::free(b.data);
    }
  }
  blocks_.clear();
}

}  // namespace nhlo
