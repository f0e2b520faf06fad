// SPDX-License-Identifier: Apache-2.0
// Backend dtype tables (from backend_dtypes.def), the x4 predicates and the promotion/merge
// lattice of seed 004. The seed gives the lattice's structure and error texts; the rules it
// leaves open are marked `// inferred:` where they are decided.
#include "types/backend_dtype.h"

#include <array>
#include <string>

namespace nhlo {
namespace {

struct BackendDtypeInfo {
  BackendDtype dtype;
  std::string_view name;
  int stride;
  uint8_t wire_v4;
  uint8_t wire_v3;
  PrimitiveType xla;
  bool x4;
  bool inferred;
};

constexpr BackendDtypeInfo kInfos[kNumBackendDtypes] = {
#define NHLO_BACKEND_DTYPE(Enum, ordinal, name, stride, wire_v4, wire_v3, xla, x4, inferred) \
  {BackendDtype::k##Enum, name, stride, wire_v4, wire_v3, PrimitiveType::k##xla, x4 != 0, inferred != 0},
#include "types/backend_dtypes.def"
#undef NHLO_BACKEND_DTYPE
};

// The table must be dense and in ordinal order, since kInfos is indexed by ordinal.
static_assert(
    [] {
      int expected = 0;
#define NHLO_BACKEND_DTYPE(Enum, ordinal, name, stride, wire_v4, wire_v3, xla, x4, inferred) \
  if (ordinal != expected++) return false;
#include "types/backend_dtypes.def"
#undef NHLO_BACKEND_DTYPE
      return expected == kNumBackendDtypes;
    }(),
    "backend_dtypes.def: rows must be ordinals 0..19 in order");

const BackendDtypeInfo& Info(BackendDtype dt) {
  int ordinal = Ordinal(dt);
  NHLO_CHECK(ordinal >= 0 && ordinal < kNumBackendDtypes, "BackendDtype out of range");
  return kInfos[ordinal];
}

bool IsUnsignedBackend(BackendDtype dt) { return IsUnsignedInt(Info(dt).xla); }

// Element byte size as promotion sees it (numpy itemsize of the element): the container stride
// for scalars; 1 for float4_e2m1fn_x4, which LaunderX4 leaves in place of its FP4 element
// (ml_dtypes stores one float4_e2m1fn per byte).
int ElementItemsize(BackendDtype dt) { return dt == BackendDtype::kFloat4E2m1fnX4 ? 1 : Info(dt).stride; }

Status NoPromotionPath(BackendDtype a, BackendDtype b) {
  std::string message = "No available implicit dtype promotion path for input dtypes ";
  message += BackendDtypeName(a);
  message += " and ";
  message += BackendDtypeName(b);
  message += ". Use .astype(dtype) explicitly.";
  return Status::Error(std::move(message));
}

Status CannotMerge() { return Status::Error("Cannot merge type!"); }

// The equal-itemsize precedence ladder of _promote_floats, highest first. The seed's ladder
// starts with float64, but the 20-member enum has no 8-byte float: that rung can never match
// and is left out (an f64 operand has no backend dtype and never reaches this code).
// float8e4 (ordinal 4) stands for the ladder's float8_e4m3 and ordinal 7 for float8_e5m2.
constexpr BackendDtype kFloatLadder[] = {
    BackendDtype::kFloat32r, BackendDtype::kFloat32,      BackendDtype::kBfloat16,   BackendDtype::kFloat16,
    BackendDtype::kFloat8e4, BackendDtype::kFloat8E4m3fn, BackendDtype::kFloat8E5m2,
};

// _promote_floats on laundered, distinct operands; nullopt = no path.
std::optional<BackendDtype> PromoteFloats(BackendDtype a, BackendDtype b) {
  // The scale format is never the numeric result of a float-float promotion.
  if (a == BackendDtype::kFloat8E8m0fnu || b == BackendDtype::kFloat8E8m0fnu) return std::nullopt;
  int size_a = ElementItemsize(a);
  int size_b = ElementItemsize(b);
  if (size_a != size_b) return size_a > size_b ? a : b;
  for (BackendDtype rung : kFloatLadder)
    if (rung == a || rung == b) return rung;
  // inferred: two equal-width floats off the ladder (float8_e3m4, the FP4 element) have no
  // implicit path.
  return std::nullopt;
}

// _promote_ints on distinct integer operands.
BackendDtype PromoteInts(BackendDtype a, BackendDtype b) {
  bool unsigned_a = IsUnsignedBackend(a);
  bool unsigned_b = IsUnsignedBackend(b);
  if (unsigned_a == unsigned_b) return Info(a).stride >= Info(b).stride ? a : b;
  BackendDtype u = unsigned_a ? a : b;
  BackendDtype s = unsigned_a ? b : a;
  // uint64 mixed with any signed type fits no integer type.
  if (u == BackendDtype::kUint64) return BackendDtype::kFloat32;
  if (Info(s).stride > Info(u).stride) return s;
  // inferred: otherwise the signed type twice as wide as the unsigned one (numpy's ladder):
  // uint8 -> int16, uint16 -> int32, uint32 -> int64.
  for (const BackendDtypeInfo& info : kInfos)
    if (IsSignedInt(info.xla) && info.stride == 2 * Info(u).stride) return info.dtype;
  return BackendDtype::kInt64;
}

// inferred: the x4 tag goes back on the result when the result is the element type of an x4
// operand (the only case where an x4 container of the result exists). float4_e2m1fn_x4 stays
// itself through laundering, so it needs no re-tagging.
BackendDtype RestoreX4(BackendDtype result, BackendDtype a, BackendDtype b) {
  for (BackendDtype in : {a, b}) {
    if (IsX4(in) && X1OfX4(in) == result) return in;
  }
  return result;
}

}  // namespace

Result<BackendDtype> BackendDtypeFromOrdinal(int ordinal) {
  if (ordinal < 0 || ordinal >= kNumBackendDtypes) {
    return Status::Error("backend dtype ordinal " + std::to_string(ordinal) +
                         " is out of range (valid ordinals are 0..19)");
  }
  return static_cast<BackendDtype>(ordinal);
}

std::string_view BackendDtypeName(BackendDtype dt) { return Info(dt).name; }

std::optional<BackendDtype> BackendDtypeFromName(std::string_view name) {
  for (int i = 0; i < kNumBackendDtypes; ++i)
    if (kInfos[i].name == name) return static_cast<BackendDtype>(i);
  return std::nullopt;
}

int StrideBytes(BackendDtype dt) { return Info(dt).stride; }

uint8_t WireTag(BackendDtype dt, Arch arch) { return arch == Arch::kV4 ? Info(dt).wire_v4 : Info(dt).wire_v3; }

bool IsInferredBackendDtype(BackendDtype dt) { return Info(dt).inferred; }

bool IsX4(BackendDtype dt) { return Info(dt).x4; }

// The table's rows: an x4 container and its one-lane dtype share the lane's XLA type
// (float4_e2m1fn_x4 has no one-lane row).
std::optional<BackendDtype> X1OfX4(BackendDtype dt) {
  if (!Info(dt).x4) return std::nullopt;
  for (const BackendDtypeInfo& info : kInfos)
    if (!info.x4 && info.xla == Info(dt).xla) return info.dtype;
  return std::nullopt;
}

PrimitiveType LanePrimitiveType(BackendDtype dt) { return Info(dt).xla; }

std::optional<BackendDtype> X4ContainerFor(PrimitiveType lane) {
  for (const BackendDtypeInfo& info : kInfos)
    if (info.x4 && info.xla == lane) return info.dtype;
  return std::nullopt;
}

BackendDtype LaunderX4(BackendDtype dt) { return X1OfX4(dt).value_or(dt); }

int64_t LogicalKExtent(BackendDtype dt, int64_t packed_count) {
  // The seed's gate, kept in its arithmetic form: it is what the three binaries test.
  unsigned ordinal = static_cast<unsigned>(Ordinal(dt));
  if (ordinal == 2 || ordinal - 8u <= 1u) return packed_count * 4;
  return packed_count;
}

PrimitiveType PrimitiveTypeFor(BackendDtype dt) { return Info(dt).xla; }

std::optional<BackendDtype> BackendDtypeFor(PrimitiveType t) {
  for (int i = 0; i < kNumBackendDtypes; ++i) {
    const BackendDtypeInfo& info = kInfos[i];
    // float32r shares F32 with float32; the first row (float32) is the one F32 stores as.
    if (info.xla == t && !info.x4 && static_cast<BackendDtype>(i) != BackendDtype::kFloat32r)
      return static_cast<BackendDtype>(i);
  }
  return std::nullopt;
}

bool IsIntegerBackendDtype(BackendDtype dt) { return IsInteger(Info(dt).xla); }

Result<BackendDtype> PromoteType(BackendDtype a, BackendDtype b) {
  BackendDtype la = LaunderX4(a);
  BackendDtype lb = LaunderX4(b);
  // inferred: identical (laundered) dtypes promote to themselves, before any other rule; this
  // is also what lets E8M0 with E8M0 and float8_e3m4 with float8_e3m4 through.
  if (la == lb) return RestoreX4(la, a, b);
  bool int_a = IsIntegerBackendDtype(la);
  bool int_b = IsIntegerBackendDtype(lb);
  if (int_a && int_b) return RestoreX4(PromoteInts(la, lb), a, b);
  if (!int_a && !int_b) {
    std::optional<BackendDtype> r = PromoteFloats(la, lb);
    if (!r) return NoPromotionPath(a, b);
    return RestoreX4(*r, a, b);
  }
  // _promote_float_int: the float side wins as is, without widening it to the integer's range
  // (the E8M0 guard lives in _promote_floats only, so E8M0 wins over an integer too).
  return RestoreX4(int_a ? lb : la, a, b);
}

Result<BackendDtype> MergeType(BackendDtype a, BackendDtype b) {
  BackendDtype la = LaunderX4(a);
  BackendDtype lb = LaunderX4(b);
  if (la == lb) return RestoreX4(la, a, b);
  // inferred: E8M0 merges with nothing but itself (it is a scale, not a number).
  if (la == BackendDtype::kFloat8E8m0fnu || lb == BackendDtype::kFloat8E8m0fnu) return CannotMerge();
  bool int_a = IsIntegerBackendDtype(la);
  bool int_b = IsIntegerBackendDtype(lb);
  // inferred: merging never crosses between integers and floats.
  if (int_a != int_b) return CannotMerge();
  if (int_a) {
    // inferred: widen by itemsize within one signedness; across signedness only the signed
    // operand, when strictly wider, holds both.
    bool unsigned_a = IsUnsignedBackend(la);
    bool unsigned_b = IsUnsignedBackend(lb);
    if (unsigned_a == unsigned_b) return Info(la).stride >= Info(lb).stride ? la : lb;
    BackendDtype u = unsigned_a ? la : lb;
    BackendDtype s = unsigned_a ? lb : la;
    if (Info(s).stride > Info(u).stride) return s;
    return CannotMerge();
  }
  auto is_pair = [&](BackendDtype x, BackendDtype y) { return (la == x && lb == y) || (la == y && lb == x); };
  // inferred: float32r is float32 storage on a coarser grid, so merging it with float32 gives
  // float32; bfloat16 and float16 hold neither each other, so they merge to float32.
  if (is_pair(BackendDtype::kFloat32, BackendDtype::kFloat32r)) return BackendDtype::kFloat32;
  if (is_pair(BackendDtype::kBfloat16, BackendDtype::kFloat16)) return BackendDtype::kFloat32;
  int size_a = ElementItemsize(la);
  int size_b = ElementItemsize(lb);
  // inferred: otherwise the strictly wider float wins; two distinct floats of one width fail.
  if (size_a == size_b) return CannotMerge();
  return RestoreX4(size_a > size_b ? la : lb, a, b);
}

}  // namespace nhlo
