// SPDX-License-Identifier: Apache-2.0
// A bump allocator for the IR: instructions, shapes, operand lists and names live in large
// blocks freed all at once with their module. Only trivially destructible types go in it, so
// nothing needs to run when the module dies and allocation is a pointer bump.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string_view>
#include <type_traits>
#include <vector>

#include "support/large_alloc.h"

namespace nhlo {

/// A fixed-size view of arena (or static) memory; the IR's list type. Trivial (so it can live in
/// a union): declare members as `Span<T> x{};` to start empty.
///
/// Packed to 12 bytes, 4-aligned: a Shape holds three and an Instruction five more, and the
/// padding after the 32-bit size was a sixth of every instruction's memory (text with short
/// lines made modules over 4x its size). The pointer is read unaligned, which costs nothing on
/// x86-64 and AArch64.
template <typename T>
struct __attribute__((packed, aligned(4))) Span {
  T* data_;
  uint32_t size_;

  Span() = default;
  Span(T* data, size_t size) : data_(data), size_(static_cast<uint32_t>(size)) {}
  T* begin() const { return data_; }
  T* end() const { return data_ + size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) const { return data_[i]; }
  T* data() const { return data_; }
};

class Arena {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena() { ReleaseBlocks(); }

  void* Allocate(size_t bytes, size_t align) {
    uintptr_t p = (cur_ + align - 1) & ~(uintptr_t(align) - 1);
    if (p + bytes > end_) {
      NewBlock(bytes + align);
      p = (cur_ + align - 1) & ~(uintptr_t(align) - 1);
    }
    cur_ = p + bytes;
    return reinterpret_cast<void*>(p);
  }

  template <typename T, typename... Args>
  T* New(Args&&... args) {
    static_assert(std::is_trivially_destructible_v<T>, "arena objects are never destroyed");
    return new (Allocate(sizeof(T), alignof(T))) T{std::forward<Args>(args)...};
  }

  /// An uninitialised-then-value-initialised array of `n` T.
  template <typename T>
  Span<T> NewArray(size_t n) {
    static_assert(std::is_trivially_destructible_v<T>, "arena objects are never destroyed");
    if (n == 0) return Span<T>{};
    T* p = static_cast<T*>(Allocate(sizeof(T) * n, alignof(T)));
    for (size_t i = 0; i < n; ++i) new (p + i) T();
    return Span<T>(p, n);
  }

  template <typename T>
  Span<T> Copy(const T* src, size_t n) {
    static_assert(std::is_trivially_copyable_v<T>, "arena copies are bytewise");
    if (n == 0) return Span<T>{};
    T* p = static_cast<T*>(Allocate(sizeof(T) * n, alignof(T)));
    std::memcpy(static_cast<void*>(p), src, sizeof(T) * n);
    return Span<T>(p, n);
  }
  template <typename T>
  Span<T> Copy(const std::vector<T>& v) {
    return Copy(v.data(), v.size());
  }

  std::string_view CopyString(std::string_view s) {
    if (s.empty()) return {};
    char* p = static_cast<char*>(Allocate(s.size(), 1));
    std::memcpy(p, s.data(), s.size());
    return std::string_view(p, s.size());
  }

  size_t bytes_allocated() const { return total_; }

  /// Tells a new arena about how many bytes it will be asked for (the parser passes the text's
  /// size). From kExpectHugeFrom on, the first block is already big enough to be asked for as
  /// huge pages, so a big module does not fault its first 16 MiB in 4 KiB pages (thousands of
  /// faults at 10-14 us each on a VM). Below it, or once a block exists, nothing changes: a
  /// small module would pay a partly used 2 MiB page against its 4x memory budget.
  void ExpectBytes(size_t expected) {
    if (!blocks_.empty() || expected < kExpectHugeFrom) return;
    size_t first = expected < kMaxBlockBytes ? expected : kMaxBlockBytes;
    if (first < kHugeBlockFrom) first = kHugeBlockFrom;
    next_block_size_ = first;
  }
  static constexpr size_t kExpectHugeFrom = size_t(8) << 20;

  /// Frees the blocks dead arenas left in the process's pool (see NewBlock).
  static void DrainPool();
  /// Whether dead arenas' blocks are pooled at all (not under AddressSanitizer).
  static bool Pooling();

 private:
  // Blocks of 2 MiB and more are 2 MiB-aligned, and from 16 MiB on asked for as transparent huge
  // pages: a million-instruction module fills a few hundred MiB, and faulting it in 4 KiB pages
  // cost a tenth of the parse (more on VMs). Smaller blocks stay in small pages: the last huge
  // page is faulted whole however little of it is used, up to 2 MiB more memory, which only a
  // module of 16 MB and more can take within its 4x memory budget (docs/parser-performance.md).
  //
  // Blocks of 2 MiB and more come back to a process-wide pool when their arena dies, and the
  // next arena takes them from there (arena.cc): a process that parses module after module (the
  // corpus checker, --split-input-file, the benchmarks) then writes into pages it has faulted in
  // already, instead of paying a fault per 4 KiB again (10-14 us each on this project's VMs).
  void NewBlock(size_t min_bytes) {
    size_t size = next_block_size_;
    if (size < min_bytes) size = min_bytes;
    if (next_block_size_ < kMaxBlockBytes) next_block_size_ *= 2;
    char* block = nullptr;
    if (size >= kHugePageBytes) {
      block = TakePooledBlock(size);  // may give a bigger block than asked for: `size` says so
      if (!block) block = static_cast<char*>(AllocateHugeAligned(size, kHugeBlockFrom));
    } else {
      block = static_cast<char*>(std::malloc(size));
    }
    if (!block) throw std::bad_alloc();
    blocks_.push_back(Block{block, size});
    cur_ = reinterpret_cast<uintptr_t>(block);
    end_ = cur_ + size;
    total_ += size;
  }
  // From the pool, the smallest block of at least `size` bytes (sets `size` to its size), or null.
  static char* TakePooledBlock(size_t& size);
  // Pools this arena's blocks of 2 MiB and more while the pool holds less than its cap; frees
  // the others.
  void ReleaseBlocks();

  struct Block {
    char* data;
    size_t size;
  };
  static constexpr size_t kHugeBlockFrom = 8 * kHugePageBytes;
  static constexpr size_t kMaxBlockBytes = size_t(64) << 20;
  std::vector<Block> blocks_;
  uintptr_t cur_ = 0;
  uintptr_t end_ = 0;
  size_t next_block_size_ = 64 * 1024;
  size_t total_ = 0;
};

/// A std allocator over an Arena, for lists that live as long as their module and are built
/// one element at a time (a computation's instructions). Freeing does nothing: storage left
/// behind when a list grows is the geometric series' half, as a vector's own copies would be.
template <typename T>
struct ArenaAllocator {
  using value_type = T;
  Arena* arena;
  explicit ArenaAllocator(Arena& a) : arena(&a) {}
  template <typename U>
  ArenaAllocator(const ArenaAllocator<U>& other) : arena(other.arena) {}
  T* allocate(size_t n) {
    if (n > size_t(-1) / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(arena->Allocate(n * sizeof(T), alignof(T)));
  }
  void deallocate(T*, size_t) {}
  template <typename U>
  bool operator==(const ArenaAllocator<U>& other) const {
    return arena == other.arena;
  }
};

}  // namespace nhlo
