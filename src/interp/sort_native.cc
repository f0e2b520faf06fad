// SPDX-License-Identifier: Apache-2.0
// sort with a recognised comparator (compare(key(p[2k]), key(p[2k+1])) LT or GT): each line
// along the sort dimension is ordered by an unsigned image of operand k's keys whose order is
// the comparator's, with a stable LSD radix sort (a stable std::sort for short lines), and
// every operand is permuted by that order. A stable sort by a strict weak order has one result,
// so this is the comparator's stable sort exactly. A plain (non-total) float compare is not a
// strict weak order once NaNs are in the line: such a line is sorted by std::stable_sort with
// the comparator's own booleans over the same index array the executor sorts, which gives the
// executor's result as it stands.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "interp/native_callees.h"
#include "support/parallel.h"
#include "types/element.h"
#include "types/float_cast.h"

namespace nhlo {
namespace {

enum class KeyKind : uint8_t { kFloatTotal, kFloatPlain, kSigned, kUnsigned };

struct KeySpec {
  PrimitiveType type;
  int size;
  KeyKind kind;
  bool canonical, descending;
  uint64_t nan_bits, zero_bits;
  double zero_value;  // the canonicalisation's Z, decoded
};

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
// plain float compare (no such key).
bool SortKey(const KeySpec& k, const uint8_t* p, uint64_t* key) {
  constexpr uint64_t kTop = uint64_t{1} << 63;
  switch (k.kind) {
    case KeyKind::kFloatTotal: {  // KernelCompare's sign-magnitude image, as an unsigned
      uint64_t bits = KeyBits(k, p);
      uint64_t sign = uint64_t{1} << (BitWidth(k.type) - 1);
      int64_t mag = static_cast<int64_t>(bits & (sign - 1));
      *key = static_cast<uint64_t>((bits & sign) ? -mag - 1 : mag) ^ kTop;
      return true;
    }
    case KeyKind::kFloatPlain: {
      double v = PlainValue(k, p);
      if (std::isnan(v)) return false;
      if (v == 0) v = 0;  // -0 and +0 compare equal
      uint64_t bits;
      std::memcpy(&bits, &v, 8);
      *key = (bits & kTop) ? ~bits : bits ^ kTop;
      return true;
    }
    case KeyKind::kSigned: *key = static_cast<uint64_t>(LoadAsInt(k.type, p)) ^ kTop; return true;
    case KeyKind::kUnsigned: *key = LoadAsUint(k.type, p); return true;
  }
  return false;
}

// Stable LSD radix sort of (keys, order) by keys, 8 bits a pass, skipping bytes all keys share.
void RadixSort(std::vector<uint64_t>& keys, std::vector<uint32_t>& order, std::vector<uint64_t>& keys2,
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

}  // namespace

Status KernelSortNative(const CalleePattern& pattern, const std::vector<Buf>& in, const std::vector<Buf>& out,
                        int64_t dim) {
  if (pattern.key_operand >= in.size() || in.size() != out.size())
    return Status::Error("sort comparator names an operand the sort does not have");
  const Buf& key_buf = in[pattern.key_operand];
  KeySpec k{};
  k.type = key_buf.type();
  k.size = HostByteSize(k.type);
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
  const std::vector<int64_t>& shape = Dims(key_buf);
  int64_t len = shape[static_cast<size_t>(dim)];
  int64_t stride = RowMajorStrides(shape)[static_cast<size_t>(dim)];
  int64_t total = key_buf.count();
  if (total == 0) return OkStatus();
  if (len > static_cast<int64_t>(std::numeric_limits<uint32_t>::max()))
    return Status::Error("sort dimension of " + std::to_string(len) + " elements is beyond the native sort");
  int64_t lines = total / len;
  std::vector<int> sizes;
  for (const Buf& b : in) sizes.push_back(HostByteSize(b.type()));
  ParallelFor(lines, ChunkFor(len * 8), [&](int64_t begin, int64_t end) {
    std::vector<uint64_t> keys(static_cast<size_t>(len)), keys2;
    std::vector<uint32_t> order(static_cast<size_t>(len)), order2;
    std::vector<int64_t> exact;  // the executor's index array, for lines a plain compare cannot key
    for (int64_t line = begin; line < end; ++line) {
      int64_t base = (line / stride) * len * stride + line % stride;
      const uint8_t* kd = key_buf.data + base * k.size;
      bool keyed = true;
      for (int64_t j = 0; j < len && keyed; ++j) {
        keyed = SortKey(k, kd + j * stride * k.size, &keys[j]);
        if (k.descending) keys[j] = ~keys[j];
        order[j] = static_cast<uint32_t>(j);
      }
      if (!keyed) {
        exact.resize(static_cast<size_t>(len));
        for (int64_t j = 0; j < len; ++j) exact[j] = j;
        std::stable_sort(exact.begin(), exact.end(), [&](int64_t x, int64_t y) {
          double vx = PlainValue(k, kd + x * stride * k.size), vy = PlainValue(k, kd + y * stride * k.size);
          return k.descending ? vx > vy : vx < vy;
        });
        for (int64_t j = 0; j < len; ++j) order[j] = static_cast<uint32_t>(exact[j]);
      } else if (len <= 256) {
        std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return keys[x] < keys[y]; });
      } else {
        RadixSort(keys, order, keys2, order2);
      }
      for (size_t op = 0; op < in.size(); ++op) {
        int size = sizes[op];
        const uint8_t* src = in[op].data + base * size;
        uint8_t* dst = out[op].data + base * size;
        int64_t step = stride * size;
        if (size == 2 && stride == 1) {
          for (int64_t j = 0; j < len; ++j) std::memcpy(dst + 2 * j, src + 2 * int64_t{order[j]}, 2);
        } else if (size == 4 && stride == 1) {
          for (int64_t j = 0; j < len; ++j) std::memcpy(dst + 4 * j, src + 4 * int64_t{order[j]}, 4);
        } else {
          for (int64_t j = 0; j < len; ++j) std::memcpy(dst + j * step, src + int64_t{order[j]} * step, size);
        }
      }
    }
  });
  return OkStatus();
}

}  // namespace nhlo
