// SPDX-License-Identifier: Apache-2.0
// XLA's PrimitiveType enum with XLA's numeric codes, generated from primitive_types.def.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace nhlo {

enum class PrimKind : uint8_t { Pred, Signed, Unsigned, Float, Complex, Tuple, Opaque, Token, Buffer };

enum class PrimitiveType : uint8_t {
  kInvalid = 0,
#define NHLO_PRIMITIVE_TYPE(Enum, text, code, bits, kind, numpy, ml_dtypes) k##Enum = code,
#include "types/primitive_types.def"
#undef NHLO_PRIMITIVE_TYPE
};

/// Largest proto code in the table (array sizes indexed by code use this + 1).
inline constexpr int kMaxPrimitiveTypeCode = 36;

/// The HLO text spelling ("f32"); "invalid" for kInvalid.
std::string_view PrimitiveTypeName(PrimitiveType t);
/// primitive_types.def's numpy column: numpy's own .npy descr (`<f4`), nullptr for the types
/// only ml_dtypes has and for the non-array types.
const char* NumpyDescr(PrimitiveType t);
/// primitive_types.def's ml_dtypes column: the ml_dtypes name (`bfloat16`), nullptr else.
const char* MlDtypesName(PrimitiveType t);
/// Looks up a text spelling; also accepts "opaque_type" as XLA's parser does.
std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name);
/// Looks up a proto code; nullopt for codes that name no type.
std::optional<PrimitiveType> PrimitiveTypeFromCode(int code);

namespace primitive_type_internal {
struct KindAndBits {
  PrimKind kind = PrimKind::Opaque;
  uint8_t bits = 0;
};
// Indexed by the enum's value (XLA's code), so the parser and the verifier, which ask for every
// shape they see, get an inline table load instead of a call.
inline constexpr auto kKindAndBits = [] {
  std::array<KindAndBits, 256> table{};
#define NHLO_PRIMITIVE_TYPE(Enum, text, code, bits, kind, numpy, ml_dtypes) \
  table[code] = KindAndBits{PrimKind::kind, bits};
#include "types/primitive_types.def"
#undef NHLO_PRIMITIVE_TYPE
  return table;
}();
}  // namespace primitive_type_internal

inline PrimKind KindOf(PrimitiveType t) { return primitive_type_internal::kKindAndBits[static_cast<uint8_t>(t)].kind; }
/// Logical bit width of one element (pred is 8, s4 is 4, c64 is 64); 0 for tuple/token/opaque.
inline int BitWidth(PrimitiveType t) { return primitive_type_internal::kKindAndBits[static_cast<uint8_t>(t)].bits; }
/// Bytes one element takes in the interpreter's unpacked host layout: sub-byte types take one byte.
int HostByteSize(PrimitiveType t);

inline bool IsFloat(PrimitiveType t) { return KindOf(t) == PrimKind::Float; }
inline bool IsComplex(PrimitiveType t) { return KindOf(t) == PrimKind::Complex; }
inline bool IsSignedInt(PrimitiveType t) { return KindOf(t) == PrimKind::Signed; }
inline bool IsUnsignedInt(PrimitiveType t) { return KindOf(t) == PrimKind::Unsigned; }
inline bool IsInteger(PrimitiveType t) { return IsSignedInt(t) || IsUnsignedInt(t); }
/// True for types whose values are arrays of numbers (everything but tuple/token/opaque/buffer).
inline bool IsArrayType(PrimitiveType t) {
  static_assert(PrimKind::Pred < PrimKind::Complex && PrimKind::Complex < PrimKind::Tuple &&
                    PrimKind::Tuple < PrimKind::Opaque && PrimKind::Opaque < PrimKind::Token &&
                    PrimKind::Token < PrimKind::Buffer,
                "the number kinds come first in PrimKind");
  return KindOf(t) <= PrimKind::Complex;
}
/// f16, bf16, all f8/f6/f4 types: floats narrower than 32 bits that XLA computes in f32.
inline bool IsLowPrecisionFloat(PrimitiveType t) { return IsFloat(t) && BitWidth(t) < 32; }

}  // namespace nhlo
