// SPDX-License-Identifier: Apache-2.0
// sort with a recognised comparator (compare(key(p[2k]), key(p[2k+1])) LT or GT): each line
// along the sort dimension is ordered by an unsigned image of operand k's keys whose order is
// the comparator's, with a stable LSD radix sort (a stable std::sort for short lines), and
// every operand is permuted by that order. A stable sort by a strict weak order has one result,
// so this is the comparator's stable sort exactly. A plain (non-total) float compare is not a
// strict weak order once NaNs are in the line: such a line is sorted by the executor's merge
// sort (support/merge_sort.h) with the comparator's own booleans over the same index array, which
// gives the executor's result.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "interp/native_callees.h"
#include "support/merge_sort.h"
#include "support/parallel.h"
#include "types/element.h"
#include "types/float_cast.h"

namespace nhlo {
namespace {

using KeyKind = SortKeyKind;
using KeySpec = SortKeySpec;

double Decode(PrimitiveType t, uint64_t bits) {
  if (t == PrimitiveType::kF64) {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  if (t == PrimitiveType::kF32) {
    uint32_t b = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  }
  return DecodeToF32(t, static_cast<uint32_t>(bits));
}

// The bits the comparator compares for the element at p (after the canonicalisation).
uint64_t KeyBits(const KeySpec& k, const uint8_t* p) {
  uint64_t bits = LoadBits(k.type, p);
  if (k.canonical) {
    double v = Decode(k.type, bits);
    if (std::isnan(v)) return k.nan_bits;
    if (v == k.zero_value) return k.zero_bits;
  }
  return bits;
}

// The value a plain float compare sees (f64, or the f32 every narrower float decodes to).
double PlainValue(const KeySpec& k, const uint8_t* p) { return Decode(k.type, KeyBits(k, p)); }

// An unsigned key whose order is the comparator's ascending order; false for a NaN under a
// plain float compare (no such key). Keys of types up to 32 bits fit in the low 32 bits.
bool SortKey(const KeySpec& k, const uint8_t* p, uint64_t* key) {
  constexpr uint64_t kTop = uint64_t{1} << 63;
  switch (k.kind) {
    case KeyKind::kFloatTotal: {  // KernelCompare's sign-magnitude image, as an unsigned
      uint64_t bits = KeyBits(k, p);
      int width = BitWidth(k.type);
      uint64_t sign = uint64_t{1} << (width - 1);
      int64_t mag = static_cast<int64_t>(bits & (sign - 1));
      int64_t image = (bits & sign) ? -mag - 1 : mag;
      *key = width <= 32 ? static_cast<uint32_t>(static_cast<int32_t>(image)) ^ 0x80000000u
                         : static_cast<uint64_t>(image) ^ kTop;
      return true;
    }
    case KeyKind::kFloatPlain: {
      double v = PlainValue(k, p);
      if (std::isnan(v)) return false;
      if (v == 0) v = 0;                    // -0 and +0 compare equal
      if (k.type != PrimitiveType::kF64) {  // every narrower float decodes exactly to f32
        float f = static_cast<float>(v);
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        *key = (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
        return true;
      }
      uint64_t bits;
      std::memcpy(&bits, &v, 8);
      *key = (bits & kTop) ? ~bits : bits ^ kTop;
      return true;
    }
    case KeyKind::kSigned: {
      int64_t v = LoadAsInt(k.type, p);
      *key = BitWidth(k.type) <= 32 ? static_cast<uint32_t>(static_cast<int32_t>(v)) ^ 0x80000000u
                                    : static_cast<uint64_t>(v) ^ kTop;
      return true;
    }
    case KeyKind::kUnsigned: *key = LoadAsUint(k.type, p); return true;
  }
  return false;
}

// The same for the two types sorts mostly key on, without the per-element type dispatch.
inline bool SortKey32Fast(const KeySpec& k, const uint8_t* p, uint32_t* key) {
  uint32_t bits;
  if (k.type == PrimitiveType::kF32) {
    std::memcpy(&bits, p, 4);
  } else {
    uint16_t h;
    std::memcpy(&h, p, 2);
    bits = uint32_t{h} << 16;  // bf16 decodes exactly to these f32 bits
  }
  float v;
  std::memcpy(&v, &bits, 4);
  if (k.canonical) {
    if (std::isnan(v)) {
      bits = static_cast<uint32_t>(k.nan_bits) << (k.type == PrimitiveType::kF32 ? 0 : 16);
    } else if (v == k.zero_value) {
      bits = static_cast<uint32_t>(k.zero_bits) << (k.type == PrimitiveType::kF32 ? 0 : 16);
    }
    std::memcpy(&v, &bits, 4);
  }
  if (k.kind == KeyKind::kFloatTotal) {  // sign-magnitude; bf16's image is f32's shifted by 16
    int32_t image = (bits & 0x80000000u) ? -static_cast<int32_t>(bits & 0x7fffffffu) - 1 : static_cast<int32_t>(bits);
    *key = static_cast<uint32_t>(image) ^ 0x80000000u;
    return true;
  }
  if (std::isnan(v)) return false;
  if (v == 0) bits = 0;
  *key = (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;
  return true;
}

// An element of 1, 2 or 4 bytes as the low bytes of a word, and back (fixed-size copies, so
// they compile to one load or store; hosts are little-endian).
inline uint32_t LoadBytes(const uint8_t* p, int size) {
  switch (size) {
    case 1: return *p;
    case 2: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    default: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
  }
}
inline void StoreBytes(uint8_t* p, uint32_t v, int size) {
  switch (size) {
    case 1: *p = static_cast<uint8_t>(v); return;
    case 2: {
      uint16_t h = static_cast<uint16_t>(v);
      std::memcpy(p, &h, 2);
      return;
    }
    default: std::memcpy(p, &v, 4); return;
  }
}

// Stable LSD radix sort of (keys, order) by 64-bit keys, 8 bits a pass, skipping bytes all
// keys share.
void RadixSort64(std::vector<uint64_t>& keys, std::vector<uint32_t>& order, std::vector<uint64_t>& keys2,
                 std::vector<uint32_t>& order2) {
  size_t n = keys.size();
  uint64_t differ = 0;
  for (size_t i = 1; i < n; ++i) differ |= keys[i] ^ keys[0];
  keys2.resize(n);
  order2.resize(n);
  for (int shift = 0; shift < 64; shift += 8) {
    if (((differ >> shift) & 0xff) == 0) continue;
    size_t count[257] = {};
    for (size_t i = 0; i < n; ++i) ++count[((keys[i] >> shift) & 0xff) + 1];
    for (int b = 0; b < 256; ++b) count[b + 1] += count[b];
    for (size_t i = 0; i < n; ++i) {
      size_t at = count[(keys[i] >> shift) & 0xff]++;
      keys2[at] = keys[i];
      order2[at] = order[i];
    }
    keys.swap(keys2);
    order.swap(order2);
  }
}

// Stable LSD radix sort of the n values at `a` (key << 32 | index) by their bits [lo, hi) in
// digits of kBits bits, with `tmp` as scratch; one pass counts every digit, and digits all
// values share are skipped. The result is left in `a`.
template <int kBits>
void RadixDigits(uint64_t* a, uint64_t* tmp, size_t n, int lo, int hi) {
  constexpr int kDigits = (32 + kBits - 1) / kBits;
  constexpr uint64_t kMask = (uint64_t{1} << kBits) - 1;
  static thread_local size_t count[kDigits][size_t{1} << kBits];
  int digits = (hi - lo + kBits - 1) / kBits;
  for (int d = 0; d < digits; ++d) std::memset(count[d], 0, sizeof(count[d]));
  for (size_t i = 0; i < n; ++i)
    for (int d = 0; d < digits; ++d) ++count[d][(a[i] >> (lo + kBits * d)) & kMask];
  uint64_t* from = a;
  uint64_t* to = tmp;
  for (int d = 0; d < digits; ++d) {
    int shift = lo + kBits * d;
    if (count[d][(from[0] >> shift) & kMask] == n) continue;
    size_t sum = 0;
    for (size_t& c : count[d]) {
      size_t here = c;
      c = sum;
      sum += here;
    }
    size_t* offset = count[d];
    for (size_t i = 0; i < n; ++i) to[offset[(from[i] >> shift) & kMask]++] = from[i];
    std::swap(from, to);
  }
  if (from != a) std::memcpy(a, from, n * sizeof(uint64_t));
}

// Sorts (key << 32 | index) values by key, stably. A long line is first split by its top 10 key
// bits (one pass over memory), then each part, small enough for the cache, by the lower bits.
void RadixSort32(std::vector<uint64_t>& a, std::vector<uint64_t>& tmp) {
  size_t n = a.size();
  tmp.resize(n);
  if (n < (size_t{1} << 16)) return RadixDigits<11>(a.data(), tmp.data(), n, 32, 64);
  static thread_local size_t bucket[1025];
  std::memset(bucket, 0, sizeof(bucket));
  for (uint64_t v : a) ++bucket[(v >> 54) + 1];
  for (int b = 0; b < 1024; ++b) bucket[b + 1] += bucket[b];
  size_t start[1025];
  std::memcpy(start, bucket, sizeof(start));
  for (uint64_t v : a) tmp[bucket[v >> 54]++] = v;
  for (int b = 0; b < 1024; ++b) {
    size_t lo = start[b], hi = start[b + 1];
    if (hi - lo > 1) RadixDigits<8>(tmp.data() + lo, a.data() + lo, hi - lo, 32, 54);
  }
  a.swap(tmp);
}

}  // namespace

SortKeySpec PlanSortKey(const CalleePattern& pattern, PrimitiveType key_type, size_t operands, int64_t len) {
  KeySpec k{};
  k.type = key_type;
  k.size = HostByteSize(k.type);
  k.operand = pattern.key_operand;
  k.canonical = pattern.canonical;
  k.descending = pattern.descending;
  k.nan_bits = pattern.nan_bits;
  k.zero_bits = pattern.zero_bits;
  if (IsFloat(k.type)) {
    k.kind = pattern.total_order ? KeyKind::kFloatTotal : KeyKind::kFloatPlain;
    if (k.canonical) k.zero_value = Decode(k.type, k.zero_bits);
  } else {
    k.kind = IsSignedInt(k.type) ? KeyKind::kSigned : KeyKind::kUnsigned;
    k.canonical = false;
  }
  k.narrow = k.type != PrimitiveType::kF64 && BitWidth(k.type) <= 32;  // keys fit in 32 bits
  k.fast = k.type == PrimitiveType::kF32 || k.type == PrimitiveType::kBF16;
  // Little-endian hosts: an element's bytes are the low bytes of the word they are copied into.
  k.carry_value = k.narrow && operands == 1 && len > 256 && (k.size == 1 || k.size == 2 || k.size == 4);
  return k;
}

Status KernelSortNative(const SortPlan& plan, const std::vector<Buf>& in, const std::vector<Buf>& out) {
  const KeySpec& k = plan.key;
  const Buf& key_buf = in[k.operand];
  const int64_t len = plan.len, stride = plan.stride, total = plan.total;
  if (total == 0) return OkStatus();
  const int64_t lines = total / len;
  const std::vector<int>& sizes = plan.sizes;
  const bool narrow = k.narrow, fast = k.fast, carry_value = k.carry_value;
  ParallelFor(lines, ChunkFor(len * 8), [&](int64_t begin, int64_t end) {
    // Scratch kept per thread between sorts (a sort in a loop does not fault its pages in again),
    // unless it grew past 64 MiB.
    thread_local std::vector<uint64_t> kept_keys, kept_keys2;
    thread_local std::vector<uint32_t> kept_order, kept_order2;
    std::vector<uint64_t>& keys = kept_keys;  // bound once: a thread_local is a call to reach
    std::vector<uint64_t>& keys2 = kept_keys2;
    std::vector<uint32_t>& order = kept_order;
    std::vector<uint32_t>& order2 = kept_order2;
    std::vector<int64_t> exact;  // the executor's index array, for lines a plain compare cannot key
    keys.resize(static_cast<size_t>(len));
    order.resize(static_cast<size_t>(len));
    struct Release {
      std::vector<uint64_t>&keys, &keys2;
      std::vector<uint32_t>&order, &order2;
      ~Release() {
        if (keys.capacity() + keys2.capacity() > (size_t{8} << 20)) {
          keys = {};
          keys2 = {};
          order = {};
          order2 = {};
        }
      }
    } release{keys, keys2, order, order2};
    for (int64_t line = begin; line < end; ++line) {
      int64_t base = (line / stride) * len * stride + line % stride;
      const uint8_t* kd = key_buf.data + base * k.size;
      int64_t step = stride * k.size;
      bool keyed = true;
      for (int64_t j = 0; j < len && keyed; ++j) {
        uint64_t key = 0;
        if (fast) {
          uint32_t key32 = 0;
          keyed = SortKey32Fast(k, kd + j * step, &key32);
          key = key32;
        } else {
          keyed = SortKey(k, kd + j * step, &key);
        }
        if (k.descending) key = narrow ? uint64_t{~static_cast<uint32_t>(key)} : ~key;
        // Narrow keys travel with their index in one word: (key << 32) | j; or, when the line is
        // its only operand and the radix sort (stable, reading only the key half) orders it,
        // with the element's own bytes, so the result needs no gather.
        uint64_t low = static_cast<uint64_t>(j);
        if (carry_value) low = LoadBytes(kd + j * step, k.size);
        keys[j] = narrow ? key << 32 | low : key;
        if (!narrow) order[j] = static_cast<uint32_t>(j);
      }
      if (!keyed) {
        exact.resize(static_cast<size_t>(len));
        for (int64_t j = 0; j < len; ++j) exact[j] = j;
        StableMergeSort(exact, [&](int64_t x, int64_t y) {
          double vx = PlainValue(k, kd + x * step), vy = PlainValue(k, kd + y * step);
          return k.descending ? vx > vy : vx < vy;
        });
        for (int64_t j = 0; j < len; ++j) order[j] = static_cast<uint32_t>(exact[j]);
      } else if (carry_value) {
        RadixSort32(keys, keys2);
        uint8_t* dst = out[0].data + base * k.size;
        for (int64_t j = 0; j < len; ++j) StoreBytes(dst + j * step, static_cast<uint32_t>(keys[j]), k.size);
        continue;
      } else if (narrow) {
        // (key, index) words are distinct, so any sort of them is the stable sort by key.
        if (len <= 256)
          std::sort(keys.begin(), keys.end());
        else
          RadixSort32(keys, keys2);
        for (int64_t j = 0; j < len; ++j) order[j] = static_cast<uint32_t>(keys[j]);
      } else if (len <= 256) {
        std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return keys[x] < keys[y]; });
      } else {
        RadixSort64(keys, order, keys2, order2);
      }
      for (size_t op = 0; op < in.size(); ++op) {
        int size = sizes[op];
        const uint8_t* src = in[op].data + base * size;
        uint8_t* dst = out[op].data + base * size;
        int64_t step = stride * size;
        if (size == 2 && stride == 1) {
          for (int64_t j = 0; j < len; ++j) std::memcpy(dst + 2 * j, src + 2 * int64_t{order[j]}, 2);
        } else if (size == 4 && stride == 1) {
          constexpr int64_t kAhead = 16;  // the reads are scattered: ask for them early
          int64_t j = 0;
          for (; j + kAhead < len; ++j) {
            __builtin_prefetch(src + 4 * int64_t{order[j + kAhead]});
            std::memcpy(dst + 4 * j, src + 4 * int64_t{order[j]}, 4);
          }
          for (; j < len; ++j) std::memcpy(dst + 4 * j, src + 4 * int64_t{order[j]}, 4);
        } else if (size == 1 || size == 2 || size == 4) {
          for (int64_t j = 0; j < len; ++j)
            StoreBytes(dst + j * step, LoadBytes(src + int64_t{order[j]} * step, size), size);
        } else {
          for (int64_t j = 0; j < len; ++j) std::memcpy(dst + j * step, src + int64_t{order[j]} * step, size);
        }
      }
    }
  });
  return OkStatus();
}

}  // namespace nhlo
