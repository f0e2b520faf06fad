// SPDX-License-Identifier: Apache-2.0
// A hash table from names to the IR nodes that carry them, without copying the names: every
// name lookup of the parser and the module goes through one, so none grows with the input.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "support/large_alloc.h"

namespace nhlo {

// Fixed-size unaligned loads (a variable-length memcpy is a library call); names shorter than a
// load are read as two overlapping halves.
inline uint64_t Load8(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
inline uint64_t Load4(const char* p) {
  uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}

/// `a == b` without a library call for names up to 16 bytes (nearly all). Name tables call it
/// once their full hashes matched, so it almost always confirms; memcmp's call cost 4% of a parse.
inline bool SameName(std::string_view a, std::string_view b) {
  size_t n = a.size();
  if (n != b.size()) return false;
  const char* p = a.data();
  const char* q = b.data();
  if (n > 16) return std::memcmp(p, q, n) == 0;
  if (n >= 8) return Load8(p) == Load8(q) && Load8(p + n - 8) == Load8(q + n - 8);
  if (n >= 4) return Load4(p) == Load4(q) && Load4(p + n - 4) == Load4(q + n - 4);
  for (size_t i = 0; i < n; ++i)
    if (p[i] != q[i]) return false;
  return true;
}

// Names to IR nodes (instructions of the computation being parsed, computations of a module):
// open addressing over the nodes themselves, keyed by their `name` member (a view into the
// source or the arena). A slot holds the node and its name's full hash, side by side in one
// 16-byte entry: a probe compares names only when the hashes are equal, growing never re-reads
// names, and a new name's insert touches one cache line. No allocation per name.
template <typename T>
class NameTable {
 public:
  void clear() {
    slots_.assign(16, Slot{});  // most computations of a post-fusion dump hold a few names
    size_ = 0;
  }
  size_t size() const { return size_; }
  T* find(std::string_view name) const {
    if (slots_.empty()) return nullptr;
    uint64_t h = Hash(name);
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& slot = slots_[i];
      if (!slot.node) return nullptr;
      if (slot.hash == h && SameName(slot.node->name, name)) return slot.node;
    }
  }
  /// Where the lookup of `name` starts (null while empty). A new name's slot is a random place
  /// in a table that outgrows the caches on big modules, so the parser prefetches it when it
  /// reads the name and uses it once the instruction is parsed. (The prefetch is at the call
  /// site: GCC deems a function that only prefetches free of effects and drops the call.)
  const void* SlotFor(std::string_view name) const {
    return slots_.empty() ? nullptr : &slots_[Hash(name) & (slots_.size() - 1)];
  }
  /// Adds `value` unless a node of the same name is there; returns that one, or null.
  T* InsertUnique(T* value) {
    if (slots_.empty()) clear();
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    uint64_t h = Hash(value->name);
    size_t mask = slots_.size() - 1;
    size_t i = h & mask;
    for (; slots_[i].node; i = (i + 1) & mask)
      if (slots_[i].hash == h && SameName(slots_[i].node->name, value->name)) return slots_[i].node;
    slots_[i] = Slot{value, h};
    ++size_;
    return nullptr;
  }

 private:
  struct Slot {
    T* node = nullptr;
    uint64_t hash = 0;
  };

 public:
  // Eight bytes a step (names are looked up once per operand), then murmur3's finalizer so the
  // slot index (low bits) depends on every byte. Public for other tables of names.
  static uint64_t Hash(std::string_view s) {
    const char* p = s.data();
    size_t n = s.size();
    constexpr uint64_t kMul = 0xFF51AFD7ED558CCDULL;
    uint64_t h = n * 0x9E3779B97F4A7C15ULL;
    if (n >= 8) {
      for (size_t i = 0; i + 8 <= n; i += 8) {
        h = (h ^ Load8(p + i)) * kMul;
        h ^= h >> 32;
      }
      h = (h ^ Load8(p + n - 8)) * kMul;
    } else if (n >= 4) {
      h = (h ^ (Load4(p) | (Load4(p + n - 4) << 32))) * kMul;
    } else if (n > 0) {
      h = (h ^ (uint64_t(uint8_t(p[0])) | uint64_t(uint8_t(p[n / 2])) << 8 | uint64_t(uint8_t(p[n - 1])) << 16)) * kMul;
    }
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ULL;
    h ^= h >> 33;
    return h;
  }

 private:
  void Grow() {
    Slots old = std::move(slots_);
    slots_.assign(old.size() * 2, Slot{});
    size_t mask = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (!slot.node) continue;
      size_t i = slot.hash & mask;
      while (slots_[i].node) i = (i + 1) & mask;
      slots_[i] = slot;
    }
  }
  // A module's tables reach megabytes (16 bytes a name, at most half full): huge pages.
  using Slots = std::vector<Slot, LargeAllocator<Slot>>;
  Slots slots_;
  size_t size_ = 0;
};

}  // namespace nhlo
