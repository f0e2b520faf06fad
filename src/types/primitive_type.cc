// SPDX-License-Identifier: Apache-2.0
#include "types/primitive_type.h"

#include <array>

#include "support/name_table.h"

namespace nhlo {
namespace {

struct PrimInfo {
  std::string_view text;
  int code;
  int bits;
  PrimKind kind;
  const char* numpy;
  const char* ml_dtypes;
};

constexpr PrimInfo kPrimInfos[] = {
#define NHLO_PRIMITIVE_TYPE(Enum, text, code, bits, kind, numpy, ml_dtypes) \
  {text, code, bits, PrimKind::kind, numpy, ml_dtypes},
#include "types/primitive_types.def"
#undef NHLO_PRIMITIVE_TYPE
};

constexpr auto kByCode = [] {
  std::array<const PrimInfo*, kMaxPrimitiveTypeCode + 1> table{};
  for (const PrimInfo& info : kPrimInfos) table[info.code] = &info;
  return table;
}();

static_assert(
    [] {
      for (const PrimInfo& info : kPrimInfos)
        if (info.code <= 0 || info.code > kMaxPrimitiveTypeCode) return false;
      return true;
    }(),
    "primitive_types.def: code out of range");

const PrimInfo* Info(PrimitiveType t) {
  int code = static_cast<int>(t);
  return code <= kMaxPrimitiveTypeCode ? kByCode[code] : nullptr;
}

}  // namespace

std::string_view PrimitiveTypeName(PrimitiveType t) {
  const PrimInfo* info = Info(t);
  return info ? info->text : std::string_view("invalid");
}

std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name) {
  // Called for every shape the parser reads: compare only rows of the same length.
  for (const PrimInfo& info : kPrimInfos)
    if (info.text.size() == name.size() && info.text[0] == name[0] && SameName(info.text, name))
      return static_cast<PrimitiveType>(info.code);
  if (name == "opaque_type") return PrimitiveType::kOpaque;
  return std::nullopt;
}

std::optional<PrimitiveType> PrimitiveTypeFromCode(int code) {
  if (code <= 0 || code > kMaxPrimitiveTypeCode || !kByCode[code]) return std::nullopt;
  return static_cast<PrimitiveType>(code);
}

int HostByteSize(PrimitiveType t) {
  int bits = BitWidth(t);
  if (bits == 0) return 0;
  return bits < 8 ? 1 : bits / 8;
}

const char* NumpyDescr(PrimitiveType t) {
  const PrimInfo* info = Info(t);
  return info ? info->numpy : nullptr;
}

const char* MlDtypesName(PrimitiveType t) {
  const PrimInfo* info = Info(t);
  return info ? info->ml_dtypes : nullptr;
}

}  // namespace nhlo
