// SPDX-License-Identifier: Apache-2.0
// The comparison library behind --expected and --check-passes (driver/compare.h), and the
// random argument distributions (driver/values.h RandomValue, --random-range).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "driver/compare.h"
#include "driver/values.h"
#include "types/element.h"

namespace {

using nhlo::CompareValues;
using nhlo::PrimitiveType;
using nhlo::Tolerance;
using nhlo::Value;

Value V(const char* text) {
  auto v = nhlo::ParseValue(text, "test");
  REQUIRE(v.ok());
  return *v;
}

Value Bits(PrimitiveType t, std::initializer_list<uint64_t> codes) {
  Value v;
  v.type = t;
  v.dims = {static_cast<int64_t>(codes.size())};
  int size = nhlo::HostByteSize(t);
  v.bytes.assign(codes.size() * size, '\0');
  size_t i = 0;
  for (uint64_t c : codes) nhlo::StoreBits(t, reinterpret_cast<uint8_t*>(v.bytes.data()) + size * i++, c);
  return v;
}

Tolerance Ulp(uint64_t n) {
  Tolerance t;
  t.ulp = n;
  return t;
}

}  // namespace

// The ulp distance CompareValues reports between two codes of type `t`.
uint64_t Ulps(PrimitiveType t, uint64_t actual, uint64_t expected) {
  auto r = CompareValues(Bits(t, {actual}), Bits(t, {expected}), Ulp(0));
  REQUIRE(r.outputs[0].max_ulps.has_value());
  return *r.outputs[0].max_ulps;
}

TEST_CASE("compare: ulps are counted on the expected type's own encoding") {
  // f32 1.0 and the next float up: one ulp, 1.19e-7 relative; within --ulp=1, not --ulp=0.
  CHECK(Ulps(PrimitiveType::kF32, 0x3f800001, 0x3f800000) == 1);
  Value one = Bits(PrimitiveType::kF32, {0x3f800000}), next = Bits(PrimitiveType::kF32, {0x3f800001});
  CHECK(CompareValues(next, one, Ulp(1)).pass());
  CHECK(!CompareValues(next, one, Ulp(0)).pass());
  // bf16: codes 0x3f80 (1.0) and 0x3f82 are two bf16 ulps apart.
  CHECK(Ulps(PrimitiveType::kBF16, 0x3f82, 0x3f80) == 2);
  CHECK(!CompareValues(Bits(PrimitiveType::kBF16, {0x3f82}), Bits(PrimitiveType::kBF16, {0x3f80}), Ulp(1)).pass());
  // +0 and -0 are one point; the smallest subnormals of both signs are two ulps apart.
  CHECK(CompareValues(Bits(PrimitiveType::kF32, {0x80000000}), Bits(PrimitiveType::kF32, {0}), Ulp(0)).pass());
  CHECK(Ulps(PrimitiveType::kF16, 0x8001, 0x0001) == 2);
  // f64 extremes of opposite sign do not overflow the count.
  CHECK(Ulps(PrimitiveType::kF64, 0xffefffffffffffffULL, 0x7fefffffffffffffULL) == 2 * 0x7fefffffffffffffULL);
  // f8e8m0fnu has no sign bit: 2^0 and 2^1 are one ulp apart. f4e2m1fn: -1.0 (0xa) and 1.5
  // (0x3) are 2 + 3 ulps apart through zero.
  CHECK(Ulps(PrimitiveType::kF8E8M0FNU, 128, 127) == 1);
  CHECK(Ulps(PrimitiveType::kF4E2M1FN, 0xa, 0x3) == 5);
}

TEST_CASE("compare: allclose is numpy's rule, measured against the expected value") {
  Tolerance t;
  t.allclose = true;
  t.rtol = 0.1;
  t.atol = 0;
  CHECK(CompareValues(V("f32[1] {1.05}"), V("f32[1] {1}"), t).pass());  // 0.05 <= 0.1 * 1
  CHECK(CompareValues(V("f32[1] {1}"), V("f32[1] {1.1}"), t).pass());   // 0.1 <= 0.1 * 1.1
  CHECK(!CompareValues(V("f32[1] {1.2}"), V("f32[1] {1}"), t).pass());
  t.atol = 0.5;
  CHECK(CompareValues(V("f32[1] {1.2}"), V("f32[1] {1}"), t).pass());
  // Either bound given passes an element.
  t.atol = 0;
  t.ulp = 1;
  CHECK(CompareValues(V("f32[1] {0}"), V("f32[1] {1e-45}"), t).pass());
  auto r = CompareValues(V("f32[1] {0.5}"), V("f32[1] {0}"), t);
  CHECK(std::isinf(r.outputs[0].max_rel));
}

TEST_CASE("compare: NaN and infinities are matched by position, not measured") {
  Tolerance t = nhlo::DefaultTolerance();
  CHECK(CompareValues(V("f32[3] {nan, inf, -inf}"), V("f32[3] {-nan, inf, -inf}"), t).pass());
  auto r = CompareValues(V("f32[3] {nan, 1, inf}"), V("f32[3] {1, nan, -inf}"), t);
  CHECK(r.outputs[0].over == 3);
  CHECK(r.outputs[0].max_abs == 0);
  CHECK(!CompareValues(V("f32[1] {3.4e38}"), V("f32[1] {inf}"), t).pass());
  t.nan_equal = false;
  CHECK(!CompareValues(V("f32[1] {nan}"), V("f32[1] {nan}"), t).pass());
}

TEST_CASE("compare: integers are exact unless atol is given, also beyond 2^53") {
  Tolerance t = nhlo::DefaultTolerance();
  t.rtol = 0.5;
  CHECK(!CompareValues(V("s32[1] {3}"), V("s32[1] {4}"), t).pass());
  CHECK(!CompareValues(V("s64[1] {9007199254740993}"), V("s64[1] {9007199254740992}"), t).pass());
  CHECK(!CompareValues(V("u64[1] {18446744073709551615}"), V("u64[1] {18446744073709551614}"), t).pass());
  CHECK(!CompareValues(V("pred[2] {1, 0}"), V("pred[2] {1, 1}"), t).pass());
  t.integers_use_atol = true;
  t.atol = 1;
  t.rtol = 0;
  CHECK(CompareValues(V("s32[1] {3}"), V("s32[1] {4}"), t).pass());
  CHECK(!CompareValues(V("s32[1] {2}"), V("s32[1] {4}"), t).pass());
}

TEST_CASE("compare: --max-mismatches lists that many elements, then how many more") {
  Tolerance t = nhlo::DefaultTolerance();
  t.mismatches_shown = 2;
  auto r = CompareValues(V("s32[5] {1, 9, 3, 9, 9}"), V("s32[5] {1, 2, 3, 4, 5}"), t);
  CHECK(nhlo::FormatReport(r, t) ==
        "output 1: s32[5]: FAIL: 5 elements, 3 over bounds, max abs error 7, max rel error 3.5; first mismatch at "
        "[1]: actual 9, expected 2\n    mismatch at [3]: actual 9, expected 4\n    (1 more)\n"
        "FAIL: 1 of 1 output differs (rtol=1e-05, atol=1e-06; integers exact)\n");
  t.mismatches_shown = 3;
  r = CompareValues(V("s32[5] {1, 9, 3, 9, 9}"), V("s32[5] {1, 2, 3, 4, 5}"), t);
  CHECK(r.outputs[0].mismatches.size() == 3);
  CHECK(nhlo::FormatReport(r, t).find("more") == std::string::npos);
}

TEST_CASE("compare: structure, first mismatch index and the report text") {
  Tolerance t = nhlo::DefaultTolerance();
  auto r = CompareValues(V("f32[2,3] {{1, 2, 3}, {4, 5, 7}}"), V("f32[2,3] {{1, 2, 3}, {4, 5, 6}}"), t);
  REQUIRE(r.outputs.size() == 1);
  REQUIRE(r.outputs[0].mismatches.size() == 1);
  CHECK(r.outputs[0].mismatches[0].index == std::vector<int64_t>{1, 2});
  CHECK(nhlo::FormatReport(r, t) ==
        "output 1: f32[2,3]: FAIL: 6 elements, 1 over bounds, max abs error 1, max rel error 0.166667, "
        "max ulps 2097152; first mismatch at [1,2]: actual 7, expected 6\n"
        "FAIL: 1 of 1 output differs (rtol=1e-05, atol=1e-06; integers exact)\n");
  r = CompareValues(V("(f32[2], (s32[], f32[3,2])) ({1, 2}, (3, {{1, 2}, {3, 4}, {5, 6}}))"),
                    V("(f32[2], (s32[], f32[2,3])) ({1, 2}, (4, {{1, 2, 3}, {4, 5, 6}}))"), t);
  REQUIRE(r.outputs.size() == 3);
  CHECK(r.outputs[0].pass());
  CHECK(r.outputs[1].label == "output 2.1");
  REQUIRE(r.outputs[1].mismatches.size() == 1);  // a scalar: its index is []
  CHECK(r.outputs[1].mismatches[0].index.empty());
  CHECK(r.outputs[2].error == "shape mismatch: actual f32[3,2], expected f32[2,3]");
  CHECK(r.failed() == 2);
  r = CompareValues(V("(f32[2], s32[]) ({1, 2}, 3)"), V("f32[2] {1, 2}"), t);
  CHECK(r.outputs[0].error == "tuple mismatch: actual (f32[2], s32[]), expected f32[2]");
  CHECK(CompareValues(V("s32[2] {1, 2}"), V("f32[2] {1, 2}"), t).outputs[0].error ==
        "element type mismatch: actual s32[2], expected f32[2]");
}

TEST_CASE("compare: a widened float result is compared on the expected type's grid") {
  Tolerance t = Ulp(0);
  CHECK(!CompareValues(V("f32[1] {1.001}"), V("bf16[1] {1}"), t).pass());  // another type: refused
  t.allow_float_type_change = true;
  auto r = CompareValues(V("f32[1] {1.001}"), V("bf16[1] {1}"), t);  // rounds to bf16 1.0
  CHECK(r.pass());
  r = CompareValues(V("f32[1] {1.01}"), V("bf16[1] {1}"), t);  // bf16 1.0078125: one ulp
  CHECK(*r.outputs[0].max_ulps == 1);
}

TEST_CASE("random arguments: scales are finite powers of two, integers small, ranges honoured") {
  nhlo::Module scratch;
  auto shape = [&](PrimitiveType t, int64_t n) { return scratch.MakeArrayShape(t, std::vector<int64_t>{n}); };
  Value s = nhlo::RandomValue(shape(PrimitiveType::kF8E8M0FNU, 1000), 3);
  for (unsigned char c : s.bytes) CHECK((c >= 123 && c <= 131));
  auto range = nhlo::ParseRandomRange("0.25,4");
  REQUIRE(range.ok());
  s = nhlo::RandomValue(shape(PrimitiveType::kF8E8M0FNU, 1000), 3, *range);
  bool seen_low = false, seen_high = false;
  for (unsigned char c : s.bytes) {
    CHECK((c >= 125 && c <= 129));
    seen_low |= c == 125;
    seen_high |= c == 129;
  }
  CHECK((seen_low && seen_high));
  Value i = nhlo::RandomValue(shape(PrimitiveType::kS8, 1000), 3, *range);
  for (char c : i.bytes) CHECK((c >= 1 && c <= 4));
  Value f = nhlo::RandomValue(shape(PrimitiveType::kF32, 1000), 3, *range);
  for (size_t k = 0; k < 1000; ++k) {
    float v;
    std::memcpy(&v, f.bytes.data() + 4 * k, 4);
    CHECK((v >= 0.25f && v < 4.0f));
  }
  // A range without an integer gives the integer nearest its middle (clamped: u8 gives 0).
  Value m = nhlo::RandomValue(shape(PrimitiveType::kU8, 10), 3, *nhlo::ParseRandomRange("-5.5,-5.2"));
  for (char c : m.bytes) CHECK(c == 0);
  CHECK(!nhlo::ParseRandomRange("1,0").ok());
  CHECK(!nhlo::ParseRandomRange("1").ok());
  CHECK(!nhlo::ParseRandomRange("a,2").ok());
  CHECK(!nhlo::ParseRandomRange("0,inf").ok());
}
