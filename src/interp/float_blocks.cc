// SPDX-License-Identifier: Apache-2.0
// Block codecs of float_blocks.h: bf16 and f16 through the inline branch-free converters, the
// one-byte types (f8/f6/f4/E8M0) decoded through a 256-entry table built from DecodeToF32 and
// encoded element by element with EncodeFromF32.
#include "interp/float_blocks.h"

#include <array>
#include <cstring>

#include "types/float_cast.h"
#include "types/element.h"

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
  } else {
    for (int64_t i = 0; i < n; ++i) StoreBits(t, dst + i, EncodeFromF32(t, src[i]));
  }
}

}  // namespace nhlo
