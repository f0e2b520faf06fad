// SPDX-License-Identifier: Apache-2.0
// Element access for the host layout: how each element type is stored in bytes (little-endian,
// HostByteSize bytes; sub-byte types one per byte, sign-extended for s4) and how XLA writes one
// value as text. The literal printer, the interpreter and nhlo-run all use it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "types/primitive_type.h"

namespace nhlo {

/// Element value as double (complex: real part; pred: 0/1; f8 etc. decoded exactly).
double LoadAsDouble(PrimitiveType t, const uint8_t* p);
/// Element value of an integer/pred type, sign- or zero-extended.
int64_t LoadAsInt(PrimitiveType t, const uint8_t* p);
uint64_t LoadAsUint(PrimitiveType t, const uint8_t* p);
/// Stores `v` with XLA convert semantics into a float type (plain cast), an integer type
/// (truncate, saturate, NaN -> 0) or pred (v != 0).
void StoreFromDouble(PrimitiveType t, uint8_t* p, double v);
/// Stores an integer, wrapping to the type's width (two's complement) for integer types and
/// converting for float types.
void StoreFromInt(PrimitiveType t, uint8_t* p, int64_t v);
/// XLA's convert of one element between any two non-complex array types: float -> float by
/// the plain cast, float -> int truncating and saturating (NaN -> 0), int -> float through one
/// native conversion, anything -> pred as != 0, int -> int wrapping.
void ConvertElement(PrimitiveType from, const uint8_t* src, PrimitiveType to, uint8_t* dst);

/// Raw bits of the element (zero-extended), and the inverse; for bitcast-convert and hashing.
uint64_t LoadBits(PrimitiveType t, const uint8_t* p);
void StoreBits(PrimitiveType t, uint8_t* p, uint64_t bits);

/// Where a NaN keeps its payload in the types whose text shows one (`nan(0x..)`: f64, f32, bf16,
/// f16, as XLA's printer and parser): the payload's mask, the quiet bit and the bits of +inf.
/// nullopt for the other types.
struct NanPayloadBits {
  uint64_t payload_mask;
  uint64_t quiet;
  uint64_t infinity;
  uint64_t sign;
};
std::optional<NanPayloadBits> NanPayloadBitsOf(PrimitiveType t);

/// Appends one element as XLA literal text: integers in decimal, pred as true/false (or 0/1 in
/// arrays), floats in the shortest text that reads back to the same value in that type,
/// `inf`, `-inf`, `nan`, `-nan`, `nan(0x..)` for NaNs with a payload.
void AppendElement(std::string& out, PrimitiveType t, const uint8_t* p, bool in_array);
/// The same with floats as XLA's printer writes them (RoundTripFpToString): f32 `%.6g`, or `%.9g`
/// when that does not read back; f64 `%.15g` or `%.17g`; the narrower types `%.<max_digits10>g`
/// of the value (bf16 4 digits, f16 5, f8e4m3 3, f8e5m2 2...).
void AppendElementXla(std::string& out, PrimitiveType t, const uint8_t* p, bool in_array);

}  // namespace nhlo
