// SPDX-License-Identifier: Apache-2.0
// Tests of the fast elementwise and data-movement paths: the branch-free bf16/f16 codecs against
// float_cast.h, the both-NaN rule of + and *, and the strided-walk copies (transpose, slice, pad,
// reverse, broadcast) against per-element index arithmetic.
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "interp/float_blocks.h"
#include "interp/kernels.h"
#include "types/float_cast.h"
#include "types/hlo_attrs.h"

namespace nhlo {
namespace {

using P = PrimitiveType;

struct Tensor {
  std::unique_ptr<BufferRecord> rec = std::make_unique<BufferRecord>();
  std::vector<uint8_t> bytes;
  Tensor(P t, std::vector<int64_t> dims) {
    rec->type = t;
    rec->dims = std::move(dims);
    bytes.assign(static_cast<size_t>(rec->ElementCount()) * HostByteSize(t) + 1, 0);
  }
  Buf buf() { return Buf{rec.get(), bytes.data()}; }
  uint32_t At(int64_t i) const {
    uint32_t v;
    std::memcpy(&v, bytes.data() + i * 4, 4);
    return v;
  }
};

struct OneAttr {
  BundleRecord rec;
  Step step;
  explicit OneAttr(AttrRecord a) {
    rec.attrs = {std::move(a)};
    step = StepFor(rec);
  }
};

AttrRecord IntList(AttrId id, std::vector<int64_t> v) {
  AttrRecord a;
  a.id = id;
  a.kind = AttrKind::IntList;
  a.set_ints() = std::move(v);
  return a;
}

TEST_CASE("bf16 and f16 block codecs match float_cast") {
  for (uint32_t h = 0; h < 65536; ++h) {
    uint16_t code = static_cast<uint16_t>(h);
    CHECK(std::bit_cast<uint32_t>(Bf16ToF32(code)) == std::bit_cast<uint32_t>(DecodeToF32(P::kBF16, h)));
    CHECK(std::bit_cast<uint32_t>(F16ToF32(code)) == std::bit_cast<uint32_t>(DecodeToF32(P::kF16, h)));
  }
  // Every high half with the rounding-boundary low bits, and a stride over all f32 bit patterns.
  std::vector<uint32_t> patterns;
  for (uint32_t hi = 0; hi < 65536; ++hi)
    for (uint32_t lo : {0u, 1u, 0xfffu, 0x1000u, 0x1001u, 0x3000u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu})
      patterns.push_back(hi << 16 | lo);
  for (uint64_t x = 0; x < (uint64_t{1} << 32); x += 65521) patterns.push_back(static_cast<uint32_t>(x));
  int64_t bad = 0;
  for (uint32_t bits : patterns) {
    float f = std::bit_cast<float>(bits);
    // Against the general rounding (EncodeFromF32 itself now calls these codecs).
    bad += F32ToBf16(f) != EncodeFromF32Slow(P::kBF16, f);
    bad += F32ToF16(f) != EncodeFromF32Slow(P::kF16, f);
  }
  CHECK(bad == 0);
}

TEST_CASE("one-byte float encoding by table matches EncodeFromF32") {
  for (P t : {P::kF8E5M2, P::kF8E4M3FN, P::kF8E4M3, P::kF8E3M4, P::kF8E4M3FNUZ, P::kF8E5M2FNUZ, P::kF8E4M3B11FNUZ,
              P::kF4E2M1FN, P::kF6E2M3FN, P::kF6E3M2FN, P::kF8E8M0FNU}) {
    std::vector<float> values;
    for (uint32_t top = 0; top < 65536; ++top)
      for (uint32_t low : {0u, 1u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu})
        values.push_back(std::bit_cast<float>(top << 16 | low));
    std::vector<uint8_t> codes(values.size());
    // Twice: the first call counts towards the tables, the second uses them.
    for (int pass = 0; pass < 2; ++pass) {
      EncodeFloatBlock(t, values.data(), codes.data(), static_cast<int64_t>(values.size()));
      int64_t bad = 0;
      for (size_t i = 0; i < values.size(); ++i) bad += codes[i] != EncodeFromF32(t, values[i]);
      CHECK_MESSAGE(bad == 0, PrimitiveTypeName(t));
    }
  }
}

TEST_CASE("add and multiply keep the NaN the per-element kernels returned") {
  // Both operands NaN: f32 add returns the second (quieted), everything else the first.
  // The scalar tail, the vector loop (with a tail) and the streaming loop.
  for (int64_t n : {int64_t{3}, int64_t{1003}, int64_t{1} << 21}) {
    Tensor a(P::kF32, {n}), b(P::kF32, {n}), out(P::kF32, {n});
    for (int64_t i = 0; i < n; ++i) {
      uint32_t x = 0x7f800001u, y = 0xffc00002u;  // signaling +NaN, quiet -NaN
      std::memcpy(a.bytes.data() + i * 4, &x, 4);
      std::memcpy(b.bytes.data() + i * 4, &y, 4);
    }
    REQUIRE(KernelBinary(Opcode::kAdd, a.buf(), b.buf(), out.buf()).ok());
    CHECK(out.At(0) == 0xffc00002u);
    CHECK(out.At(n - 1) == 0xffc00002u);
    REQUIRE(KernelBinary(Opcode::kMultiply, a.buf(), b.buf(), out.buf()).ok());
    CHECK(out.At(0) == 0x7fc00001u);
    CHECK(out.At(n - 1) == 0x7fc00001u);
    // One NaN: that NaN, quieted, whichever side it is on.
    uint32_t one = 0x3f800000u;
    std::memcpy(a.bytes.data() + 4, &one, 4);
    REQUIRE(KernelBinary(Opcode::kAdd, a.buf(), b.buf(), out.buf()).ok());
    CHECK(out.At(1) == 0xffc00002u);
    REQUIRE(KernelBinary(Opcode::kMultiply, b.buf(), a.buf(), out.buf()).ok());
    CHECK(out.At(1) == 0xffc00002u);
  }
  for (int64_t n : {int64_t{3}, int64_t{1003}}) {  // f64: the first operand's NaN, for both ops
    Tensor a(P::kF64, {n}), b(P::kF64, {n}), out(P::kF64, {n});
    for (int64_t i = 0; i < n; ++i) {
      uint64_t x = 0x7ff0000000000001u, y = 0xfff8000000000002u;
      std::memcpy(a.bytes.data() + i * 8, &x, 8);
      std::memcpy(b.bytes.data() + i * 8, &y, 8);
    }
    for (Opcode op : {Opcode::kAdd, Opcode::kMultiply}) {
      REQUIRE(KernelBinary(op, a.buf(), b.buf(), out.buf()).ok());
      uint64_t first = 0, last = 0;
      std::memcpy(&first, out.bytes.data(), 8);
      std::memcpy(&last, out.bytes.data() + (n - 1) * 8, 8);
      CHECK(first == 0x7ff8000000000001u);
      CHECK(last == 0x7ff8000000000001u);
    }
  }
}

// Every element of `out` against expected(index), the value index arithmetic gives.
template <typename F>
void CheckAgainst(const Tensor& out, F&& expected) {
  int64_t bad = 0;
  ForEachIndex(out.rec->dims,
               [&](int64_t linear, const std::vector<int64_t>& idx) { bad += out.At(linear) != expected(idx); });
  CHECK(bad == 0);
}

int64_t Linear(const std::vector<int64_t>& dims, const std::vector<int64_t>& index) {
  int64_t l = 0;
  for (size_t d = 0; d < dims.size(); ++d) l = l * dims[d] + index[d];
  return l;
}

TEST_CASE("strided copies match index arithmetic") {
  std::vector<int64_t> dims = {5, 70, 3, 33};
  Tensor in(P::kF32, dims);
  for (int64_t i = 0; i < in.rec->ElementCount(); ++i) {
    uint32_t v = static_cast<uint32_t>(i) * 2654435761u;
    std::memcpy(in.bytes.data() + i * 4, &v, 4);
  }
  auto value = [&](const std::vector<int64_t>& index) { return in.At(Linear(dims, index)); };
  SUBCASE("transpose") {
    for (std::vector<int64_t> perm : {std::vector<int64_t>{3, 2, 1, 0}, {0, 1, 3, 2}, {1, 3, 0, 2}, {2, 0, 3, 1}}) {
      std::vector<int64_t> od;
      for (int64_t p : perm) od.push_back(dims[p]);
      Tensor out(P::kF32, od);
      OneAttr attr(IntList(AttrId::kDimensions, perm));
      REQUIRE(KernelTranspose(attr.step, in.buf(), out.buf()).ok());
      CheckAgainst(out, [&](const std::vector<int64_t>& idx) {
        std::vector<int64_t> src(4);
        for (int d = 0; d < 4; ++d) src[perm[d]] = idx[d];
        return value(src);
      });
    }
  }
  SUBCASE("reverse") {
    Tensor out(P::kF32, dims);
    OneAttr attr(IntList(AttrId::kDimensions, {1, 3}));
    REQUIRE(KernelReverse(attr.step, in.buf(), out.buf()).ok());
    CheckAgainst(out, [&](std::vector<int64_t> idx) {
      idx[1] = dims[1] - 1 - idx[1];
      idx[3] = dims[3] - 1 - idx[3];
      return value(idx);
    });
  }
  SUBCASE("slice") {
    AttrRecord a;
    a.id = AttrId::kSlice;
    a.kind = AttrKind::SliceRanges;
    a.set_slices() = {{1, 5, 2}, {3, 70, 5}, {0, 3, 1}, {4, 30, 1}};
    Tensor out(P::kF32, {2, 14, 3, 26});
    OneAttr attr(a);
    REQUIRE(KernelSlice(attr.step, in.buf(), out.buf()).ok());
    CheckAgainst(out, [&](std::vector<int64_t> idx) {
      for (int d = 0; d < 4; ++d) idx[d] = a.slices()[d].start + idx[d] * a.slices()[d].stride;
      return value(idx);
    });
  }
  SUBCASE("pad with negative edges and interior") {
    AttrRecord a;
    a.id = AttrId::kPadding;
    a.kind = AttrKind::PaddingConfig;
    a.set_padding() = {{-2, 1, 1}, {3, -4, 0}, {0, 0, 2}, {-1, -1, 0}};
    std::vector<int64_t> od(4);
    for (int d = 0; d < 4; ++d)
      od[d] = a.padding()[d].low + a.padding()[d].high + dims[d] + (dims[d] - 1) * a.padding()[d].interior;
    Tensor out(P::kF32, od), pad_value(P::kF32, {});
    uint32_t fill = 0xdeadbeefu;
    std::memcpy(pad_value.bytes.data(), &fill, 4);
    OneAttr attr(a);
    REQUIRE(KernelPad(attr.step, in.buf(), pad_value.buf(), out.buf()).ok());
    CheckAgainst(out, [&](const std::vector<int64_t>& idx) {
      std::vector<int64_t> src(4);
      for (int d = 0; d < 4; ++d) {
        int64_t pos = idx[d] - a.padding()[d].low, step = a.padding()[d].interior + 1;
        if (pos < 0 || pos % step != 0 || pos / step >= dims[d]) return fill;
        src[d] = pos / step;
      }
      return value(src);
    });
  }
  SUBCASE("broadcast") {
    Tensor out(P::kF32, {33, 5, 2, 3, 70});
    OneAttr attr(IntList(AttrId::kDimensions, {1, 4, 3, 0}));  // a transposing broadcast
    REQUIRE(KernelBroadcast(attr.step, in.buf(), out.buf()).ok());
    CheckAgainst(out, [&](const std::vector<int64_t>& idx) { return value({idx[1], idx[4], idx[3], idx[0]}); });
  }
}

}  // namespace
}  // namespace nhlo
