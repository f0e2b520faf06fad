// SPDX-License-Identifier: Apache-2.0
// Tests of the backend dtype catalog: every byte of the three LUTs against seed 004, names,
// ordinal validation, x4 predicates, the ×4 K-extent gate, XLA type mapping and the
// promotion/merge lattice including both error texts.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "types/backend_dtype.h"

namespace nhlo {
namespace {

using B = BackendDtype;
using P = PrimitiveType;

BackendDtype At(int ordinal) { return BackendDtypeFromOrdinal(ordinal).value(); }

TEST_CASE("backend_dtype: LUT bytes are the seed's") {
  // seed 004: xxd of byte_1DFBAD0, byte_1DF5760 and qword_1DFC040.
  const uint8_t wire_v4[kNumBackendDtypes] = {0x03, 0x02, 0x10, 0x0d, 0x0e, 0x0e, 0x03, 0x0f, 0x0e, 0x0f,
                                              0x05, 0x04, 0x06, 0x07, 0x09, 0x08, 0x0a, 0x0b, 0x01, 0x0c};
  const uint8_t wire_v3[kNumBackendDtypes] = {0x03, 0x02, 0x05, 0x0d, 0x0e, 0x0e, 0x03, 0x0f, 0x0e, 0x0f,
                                              0x05, 0x04, 0x06, 0x07, 0x09, 0x08, 0x0a, 0x0b, 0x01, 0x0c};
  const int stride[kNumBackendDtypes] = {1, 1, 2, 1, 1, 1, 1, 1, 4, 4, 2, 2, 2, 2, 4, 4, 4, 4, 8, 8};
  int v3_v4_differences = 0;
  for (int i = 0; i < kNumBackendDtypes; ++i) {
    CAPTURE(i);
    BackendDtype dt = At(i);
    CHECK(Ordinal(dt) == i);
    CHECK(WireTag(dt, Arch::kV4) == wire_v4[i]);
    CHECK(WireTag(dt, Arch::kV3) == wire_v3[i]);
    CHECK(StrideBytes(dt) == stride[i]);
    if (WireTag(dt, Arch::kV4) != WireTag(dt, Arch::kV3)) ++v3_v4_differences;
  }
  CHECK(v3_v4_differences == 1);
  CHECK(WireTag(B::kFloat4E2m1fnX4, Arch::kV4) == 0x10);
  CHECK(WireTag(B::kFloat4E2m1fnX4, Arch::kV3) == 0x05);
}

TEST_CASE("backend_dtype: names and ordinals") {
  const char* names[kNumBackendDtypes] = {
      "uint8",         "int8",           "float4_e2m1fn_x4", "float8_e3m4",      "float8e4",
      "float8_e4m3fn", "float8_e8m0fnu", "float8_e5m2",      "float8_e4m3fn_x4", "float8_e5m2_x4",
      "uint16",        "int16",          "bfloat16",         "float16",          "uint32",
      "int32",         "float32",        "float32r",         "uint64",           "int64"};
  for (int i = 0; i < kNumBackendDtypes; ++i) {
    CAPTURE(i);
    CHECK(BackendDtypeName(At(i)) == names[i]);
    CHECK(BackendDtypeFromName(names[i]) == At(i));
    bool inferred = i == 3 || i == 7 || i == 18 || i == 19;
    CHECK(IsInferredBackendDtype(At(i)) == inferred);
  }
  CHECK_FALSE(BackendDtypeFromName("float64").has_value());

  Result<BackendDtype> twenty = BackendDtypeFromOrdinal(20);
  REQUIRE_FALSE(twenty.ok());
  CHECK(twenty.status().message().find("20") != std::string::npos);
  CHECK_FALSE(BackendDtypeFromOrdinal(-1).ok());
  CHECK_FALSE(BackendDtypeFromOrdinal(255).ok());
  CHECK(BackendDtypeFromOrdinal(19).ok());
}

TEST_CASE("backend_dtype: x4 predicates and K-extent") {
  for (int i = 0; i < kNumBackendDtypes; ++i) {
    CAPTURE(i);
    bool x4 = i == 2 || i == 8 || i == 9;
    CHECK(IsX4(At(i)) == x4);
    CHECK(LogicalKExtent(At(i), 7) == (x4 ? 28 : 7));
    if (!x4) CHECK(LaunderX4(At(i)) == At(i));
  }
  CHECK(X1OfX4(B::kFloat8E4m3fnX4) == B::kFloat8E4m3fn);
  CHECK(X1OfX4(B::kFloat8E5m2X4) == B::kFloat8E5m2);
  CHECK_FALSE(X1OfX4(B::kFloat4E2m1fnX4).has_value());
  CHECK_FALSE(X1OfX4(B::kFloat32).has_value());
  CHECK(LaunderX4(B::kFloat8E4m3fnX4) == B::kFloat8E4m3fn);
  CHECK(LaunderX4(B::kFloat8E5m2X4) == B::kFloat8E5m2);
  CHECK(LaunderX4(B::kFloat4E2m1fnX4) == B::kFloat4E2m1fnX4);
  CHECK(LanePrimitiveType(B::kFloat4E2m1fnX4) == P::kF4E2M1FN);
  CHECK(X4ContainerFor(P::kF8E4M3FN) == B::kFloat8E4m3fnX4);
  CHECK(X4ContainerFor(P::kF8E5M2) == B::kFloat8E5m2X4);
  CHECK(X4ContainerFor(P::kF4E2M1FN) == B::kFloat4E2m1fnX4);
  CHECK_FALSE(X4ContainerFor(P::kF8E4M3).has_value());
  CHECK(LogicalKExtent(B::kFloat8E5m2X4, 0) == 0);
  CHECK(LogicalKExtent(B::kFloat4E2m1fnX4, 1024) == 4096);
}

TEST_CASE("backend_dtype: XLA type mapping") {
  CHECK(PrimitiveTypeFor(B::kFloat32r) == P::kF32);
  CHECK(PrimitiveTypeFor(B::kFloat8e4) == P::kF8E4M3);
  CHECK(PrimitiveTypeFor(B::kFloat8E8m0fnu) == P::kF8E8M0FNU);
  CHECK(PrimitiveTypeFor(B::kInt64) == P::kS64);
  CHECK(BackendDtypeFor(P::kF32) == B::kFloat32);
  CHECK(BackendDtypeFor(P::kF8E4M3FN) == B::kFloat8E4m3fn);
  CHECK(BackendDtypeFor(P::kF8E5M2) == B::kFloat8E5m2);
  CHECK(BackendDtypeFor(P::kU64) == B::kUint64);
  CHECK(BackendDtypeFor(P::kBF16) == B::kBfloat16);
  const P host_only[] = {P::kPred,
                         P::kF64,
                         P::kC64,
                         P::kC128,
                         P::kS4,
                         P::kU4,
                         P::kS2,
                         P::kU2,
                         P::kS1,
                         P::kU1,
                         P::kF8E4M3FNUZ,
                         P::kF8E5M2FNUZ,
                         P::kF8E4M3B11FNUZ,
                         P::kF6E2M3FN,
                         P::kF6E3M2FN,
                         P::kF4E2M1FN,
                         P::kTuple,
                         P::kToken};
  for (P t : host_only) {
    CAPTURE(PrimitiveTypeName(t));
    CHECK_FALSE(BackendDtypeFor(t).has_value());
  }
  // Round trip for every dtype that is a plain scalar.
  for (int i = 0; i < kNumBackendDtypes; ++i) {
    BackendDtype dt = At(i);
    if (IsX4(dt) || dt == B::kFloat32r) continue;
    CAPTURE(i);
    CHECK(BackendDtypeFor(PrimitiveTypeFor(dt)) == dt);
  }
}

BackendDtype Promote(BackendDtype a, BackendDtype b) {
  Result<BackendDtype> r = PromoteType(a, b);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  // Promotion is symmetric.
  Result<BackendDtype> s = PromoteType(b, a);
  REQUIRE(s.ok());
  CHECK(*s == *r);
  return *r;
}

TEST_CASE("backend_dtype: promotion lattice") {
  // Floats: wider wins; equal width walks the ladder.
  CHECK(Promote(B::kFloat32, B::kBfloat16) == B::kFloat32);
  CHECK(Promote(B::kFloat16, B::kFloat8E4m3fn) == B::kFloat16);
  CHECK(Promote(B::kFloat32r, B::kFloat32) == B::kFloat32r);
  CHECK(Promote(B::kBfloat16, B::kFloat16) == B::kBfloat16);
  CHECK(Promote(B::kFloat8e4, B::kFloat8E4m3fn) == B::kFloat8e4);
  CHECK(Promote(B::kFloat8E4m3fn, B::kFloat8E5m2) == B::kFloat8E4m3fn);
  CHECK(Promote(B::kFloat8E3m4, B::kFloat8E5m2) == B::kFloat8E5m2);
  CHECK(Promote(B::kFloat8E3m4, B::kBfloat16) == B::kBfloat16);
  CHECK(Promote(B::kFloat32, B::kFloat32) == B::kFloat32);
  // Ints.
  CHECK(Promote(B::kUint8, B::kUint32) == B::kUint32);
  CHECK(Promote(B::kInt8, B::kInt64) == B::kInt64);
  CHECK(Promote(B::kUint8, B::kInt8) == B::kInt16);
  CHECK(Promote(B::kUint16, B::kInt16) == B::kInt32);
  CHECK(Promote(B::kUint32, B::kInt8) == B::kInt64);
  CHECK(Promote(B::kUint8, B::kInt32) == B::kInt32);
  CHECK(Promote(B::kUint64, B::kInt8) == B::kFloat32);
  CHECK(Promote(B::kUint64, B::kInt64) == B::kFloat32);
  CHECK(Promote(B::kUint64, B::kUint8) == B::kUint64);
  // Mixed: the float side wins unwidened.
  CHECK(Promote(B::kInt64, B::kFloat8E4m3fn) == B::kFloat8E4m3fn);
  CHECK(Promote(B::kInt32, B::kBfloat16) == B::kBfloat16);
  CHECK(Promote(B::kUint8, B::kFloat8E8m0fnu) == B::kFloat8E8m0fnu);
  // x4: laundered for the decision, tag restored on the element result.
  CHECK(Promote(B::kFloat8E4m3fnX4, B::kFloat8E5m2) == B::kFloat8E4m3fnX4);
  CHECK(Promote(B::kFloat8E4m3fnX4, B::kFloat8E5m2X4) == B::kFloat8E4m3fnX4);
  CHECK(Promote(B::kFloat8E5m2X4, B::kFloat32) == B::kFloat32);
  CHECK(Promote(B::kFloat8E5m2X4, B::kFloat8E5m2X4) == B::kFloat8E5m2X4);
  CHECK(Promote(B::kFloat4E2m1fnX4, B::kFloat8E4m3fn) == B::kFloat8E4m3fn);
  CHECK(Promote(B::kFloat4E2m1fnX4, B::kInt32) == B::kFloat4E2m1fnX4);
  CHECK(Promote(B::kFloat4E2m1fnX4, B::kFloat4E2m1fnX4) == B::kFloat4E2m1fnX4);

  // Errors carry the seed's text verbatim with the (un-laundered) names.
  Result<BackendDtype> e8m0 = PromoteType(B::kFloat8E8m0fnu, B::kFloat32);
  REQUIRE_FALSE(e8m0.ok());
  CHECK(e8m0.status().message() ==
        "No available implicit dtype promotion path for input dtypes float8_e8m0fnu and "
        "float32. Use .astype(dtype) explicitly.");
  Result<BackendDtype> off_ladder = PromoteType(B::kFloat8E3m4, B::kFloat4E2m1fnX4);
  REQUIRE_FALSE(off_ladder.ok());
  CHECK(off_ladder.status().message() ==
        "No available implicit dtype promotion path for input dtypes float8_e3m4 and "
        "float4_e2m1fn_x4. Use .astype(dtype) explicitly.");
}

TEST_CASE("backend_dtype: merge lattice") {
  auto merge = [](BackendDtype a, BackendDtype b) {
    Result<BackendDtype> r = MergeType(a, b);
    Result<BackendDtype> s = MergeType(b, a);
    REQUIRE(r.ok() == s.ok());
    if (r.ok()) CHECK(*r == *s);
    return r;
  };
  CHECK(*merge(B::kInt8, B::kInt32) == B::kInt32);
  CHECK(*merge(B::kUint8, B::kInt16) == B::kInt16);
  CHECK(*merge(B::kFloat32, B::kFloat32r) == B::kFloat32);
  CHECK(*merge(B::kBfloat16, B::kFloat16) == B::kFloat32);
  CHECK(*merge(B::kFloat8E4m3fn, B::kBfloat16) == B::kBfloat16);
  CHECK(*merge(B::kFloat8E4m3fnX4, B::kFloat8E4m3fn) == B::kFloat8E4m3fnX4);
  CHECK(*merge(B::kFloat8E8m0fnu, B::kFloat8E8m0fnu) == B::kFloat8E8m0fnu);
  const BackendDtype bad[][2] = {{B::kUint8, B::kInt8},
                                 {B::kUint32, B::kInt32},
                                 {B::kInt32, B::kFloat32},
                                 {B::kFloat8E8m0fnu, B::kFloat32},
                                 {B::kFloat8E4m3fn, B::kFloat8E5m2},
                                 {B::kUint64, B::kInt64}};
  for (const auto& pair : bad) {
    CAPTURE(BackendDtypeName(pair[0]));
    CAPTURE(BackendDtypeName(pair[1]));
    Result<BackendDtype> r = merge(pair[0], pair[1]);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() == "Cannot merge type!");
  }
}

}  // namespace
}  // namespace nhlo
