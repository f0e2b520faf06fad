// SPDX-License-Identifier: Apache-2.0
// The backend (Neuron bir::Dtype) dtype alphabet of seed 004: 20 ordinals with their container
// strides and wire tags, the x4 lane-container predicates, the ×4 K-extent rule and the
// implicit promotion/merge lattice. Generated from backend_dtypes.def.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "support/status.h"
#include "types/primitive_type.h"

namespace nhlo {

/// One member of the backend dtype enum; the value is the bir::Dtype ordinal.
enum class BackendDtype : uint8_t {
#define NHLO_BACKEND_DTYPE(Enum, ordinal, name, stride, wire_v4, wire_v3, xla, x4, inferred) k##Enum = ordinal,
#include "types/backend_dtypes.def"
#undef NHLO_BACKEND_DTYPE
};

/// Number of members; there is no ordinal >= this.
inline constexpr int kNumBackendDtypes = 20;

/// Which wire-tag LUT applies: kV3 is the pre-CoreV4 (CoreV2/V3) LUT, kV4 the CoreV4 one.
enum class Arch : uint8_t { kV3, kV4 };

/// The ordinal of `dt` (0..19).
inline int Ordinal(BackendDtype dt) { return static_cast<int>(dt); }

/// Validates an ordinal read from outside (a file, a flag): 0..19 or an error naming it.
Result<BackendDtype> BackendDtypeFromOrdinal(int ordinal);

/// The verbatim Dtype2string name ("float8_e4m3fn", "float8e4", "float32r", ...).
std::string_view BackendDtypeName(BackendDtype dt);
/// Looks up a name as printed by BackendDtypeName.
std::optional<BackendDtype> BackendDtypeFromName(std::string_view name);

/// Container size in bytes (the address-arithmetic stride): 2 for FP4-x4, 4 for the FP8-x4.
int StrideBytes(BackendDtype dt);

/// The byte stamped into a bundle's dtype field on `arch`. Many-to-one, so never invert it.
uint8_t WireTag(BackendDtype dt, Arch arch);

/// True for ordinals the seeds do not name (3, 7, 18, 19): their names are inferred.
bool IsInferredBackendDtype(BackendDtype dt);

/// True for the x4 lane containers float4_e2m1fn_x4, float8_e4m3fn_x4, float8_e5m2_x4.
bool IsX4(BackendDtype dt);

/// The element (x1) dtype of an x4 container: float8_e4m3fn_x4 -> float8_e4m3fn,
/// float8_e5m2_x4 -> float8_e5m2. float4_e2m1fn_x4 has no x1 member in the 20-member enum
/// (its element is XLA's F4E2M1FN only), so it gives nullopt, as does any non-x4 dtype.
std::optional<BackendDtype> X1OfX4(BackendDtype dt);

/// The element's XLA type for an x4 container (F4E2M1FN / F8E4M3FN / F8E5M2); for any other
/// dtype, PrimitiveTypeFor(dt).
PrimitiveType LanePrimitiveType(BackendDtype dt);

/// The x4 container holding four lanes of XLA type `lane` (F4E2M1FN, F8E4M3FN, F8E5M2), if any.
std::optional<BackendDtype> X4ContainerFor(PrimitiveType lane);

/// seed 004 launder_x4_dtype: x4 containers become their x1 element, everything else is
/// unchanged. float4_e2m1fn_x4 has no x1 member, so it is returned unchanged; the promotion
/// code below reasons about its element through its own lane description instead.
BackendDtype LaunderX4(BackendDtype dt);

/// The logical contraction extent of an MX matmul operand: `packed_count` containers times 4
/// for dtype ordinals 2, 8, 9 (the seed's gate dtype == 2 || (unsigned)(dtype - 8) <= 1),
/// unchanged otherwise. Addressing uses the packed count; the K-extent field the logical one.
int64_t LogicalKExtent(BackendDtype dt, int64_t packed_count);

/// The XLA element type of a backend dtype (lane type for x4 containers, F32 for float32r).
PrimitiveType PrimitiveTypeFor(BackendDtype dt);

/// The backend dtype that stores XLA type `t` as a scalar, or nullopt for host-only ("golden")
/// types: PRED, S1/S2/S4, U1/U2/U4, F64, C64, C128, the fnuz f8 types, F6*, and F4E2M1FN (which
/// exists on the device only inside float4_e2m1fn_x4; see X4ContainerFor). Never returns an x4
/// container nor float32r.
std::optional<BackendDtype> BackendDtypeFor(PrimitiveType t);

/// Whether the dtype's numbers are integers (signed or unsigned).
bool IsIntegerBackendDtype(BackendDtype dt);

/// seed 004 promote_type(t0, t1): the implicit result dtype of a binary op. Errors carry the
/// seed's text "No available implicit dtype promotion path for input dtypes {t0} and {t1}. Use
/// .astype(dtype) explicitly." with the two names substituted.
Result<BackendDtype> PromoteType(BackendDtype a, BackendDtype b);

/// seed 004 merge_type(t0, t1): the stricter sibling used by type inference and fusion; it only
/// merges to a type that holds both operands and fails with "Cannot merge type!".
Result<BackendDtype> MergeType(BackendDtype a, BackendDtype b);

}  // namespace nhlo
