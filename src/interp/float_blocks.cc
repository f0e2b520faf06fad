// SPDX-License-Identifier: Apache-2.0
// Block codecs of float_blocks.h: bf16 and f16 through the inline branch-free converters, the
// one-byte types (f8/f6/f4/E8M0) decoded through a 256-entry table built from DecodeToF32 and
// encoded with EncodeFromF32, element by element or, once a type is used a lot, by table.
#include "interp/float_blocks.h"

#include <array>
#include <atomic>
#include <bit>
#include <cstring>
#include <memory>
#include <mutex>

#include "types/element.h"
#include "types/float_cast.h"

namespace nhlo {
namespace {

using ByteTable = std::array<float, 256>;

// Decoded value of every byte for every one-byte float type, indexed by type code.
const ByteTable& ByteDecodeTable(PrimitiveType t) {
  static const std::array<ByteTable, kMaxPrimitiveTypeCode + 1> tables = [] {
    std::array<ByteTable, kMaxPrimitiveTypeCode + 1> all{};
    for (int code = 0; code <= kMaxPrimitiveTypeCode; ++code) {
      PrimitiveType type = static_cast<PrimitiveType>(code);
      if (!IsCastableLowPrecisionFloat(type) || HostByteSize(type) != 1) continue;
      for (uint32_t b = 0; b < 256; ++b) all[code][b] = DecodeToF32(type, b);
    }
    return all;
  }();
  return tables[static_cast<int>(t)];
}

// Encoding of a one-byte type by table: every rounding boundary of these formats (a midpoint
// between neighbours, or the overflow threshold) has at most 6 significant bits, so its f32 bits
// end in 16 zeros. All f32 values with the same top 16 bits and nonzero low bits therefore lie
// strictly between two boundaries and encode alike: `exact` holds the code of top << 16 and
// `above` that of top << 16 | 1. Built from EncodeFromF32 itself, so the results are its own.
struct ByteEncodeTables {
  uint8_t exact[65536];
  uint8_t above[65536];
};

// The tables cost 2^17 encodes to build, so a type gets them once it has encoded this many
// elements one by one; either way the codes are the same.
constexpr int64_t kTableAfter = int64_t{1} << 18;

const ByteEncodeTables* ByteEncodeTablesFor(PrimitiveType t, int64_t n) {
  static std::atomic<int64_t> encoded[kMaxPrimitiveTypeCode + 1];
  static std::once_flag once[kMaxPrimitiveTypeCode + 1];
  static std::unique_ptr<ByteEncodeTables> tables[kMaxPrimitiveTypeCode + 1];
  int code = static_cast<int>(t);
  if (encoded[code].fetch_add(n, std::memory_order_relaxed) < kTableAfter) return nullptr;
  std::call_once(once[code], [&] {
    auto built = std::make_unique<ByteEncodeTables>();
    for (uint32_t top = 0; top < 65536; ++top) {
      built->exact[top] = static_cast<uint8_t>(EncodeFromF32(t, std::bit_cast<float>(top << 16)));
      built->above[top] = static_cast<uint8_t>(EncodeFromF32(t, std::bit_cast<float>(top << 16 | 1u)));
    }
    tables[code] = std::move(built);
  });
  return tables[code].get();
}

}  // namespace

void DecodeFloatBlock(PrimitiveType t, const uint8_t* src, float* dst, int64_t n) {
  if (t == PrimitiveType::kBF16) {
    const uint16_t* codes = reinterpret_cast<const uint16_t*>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = Bf16ToF32(codes[i]);
  } else if (t == PrimitiveType::kF16) {
    const uint16_t* codes = reinterpret_cast<const uint16_t*>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = F16ToF32(codes[i]);
  } else if (t == PrimitiveType::kF32) {
    std::memcpy(dst, src, static_cast<size_t>(n) * 4);
  } else {
    const ByteTable& table = ByteDecodeTable(t);
    for (int64_t i = 0; i < n; ++i) dst[i] = table[src[i]];
  }
}

void EncodeFloatBlock(PrimitiveType t, const float* src, uint8_t* dst, int64_t n) {
  if (t == PrimitiveType::kBF16) {
    uint16_t* codes = reinterpret_cast<uint16_t*>(dst);
    for (int64_t i = 0; i < n; ++i) codes[i] = F32ToBf16(src[i]);
  } else if (t == PrimitiveType::kF16) {
    uint16_t* codes = reinterpret_cast<uint16_t*>(dst);
    for (int64_t i = 0; i < n; ++i) codes[i] = F32ToF16(src[i]);
  } else if (t == PrimitiveType::kF32) {
    std::memcpy(dst, src, static_cast<size_t>(n) * 4);
  } else if (const ByteEncodeTables* tables = ByteEncodeTablesFor(t, n)) {
    for (int64_t i = 0; i < n; ++i) {
      uint32_t bits = std::bit_cast<uint32_t>(src[i]);
      dst[i] = (bits & 0xffffu) != 0 ? tables->above[bits >> 16] : tables->exact[bits >> 16];
    }
  } else {
    for (int64_t i = 0; i < n; ++i) StoreBits(t, dst + i, EncodeFromF32(t, src[i]));
  }
}

}  // namespace nhlo
