// SPDX-License-Identifier: Apache-2.0
#include "types/custom_call_targets.h"


namespace nhlo {
namespace {

constexpr bool kExact = false, kPrefix = true;

constexpr CustomCallTargetRow kRows[] = {
#define NHLO_CUSTOM_CALL(Kind, target, match, meaning) {CustomCallKind::k##Kind, target, k##match, meaning},
#include "types/custom_call_targets.def"
#undef NHLO_CUSTOM_CALL
};

}  // namespace

std::span<const CustomCallTargetRow> KnownCustomCallTargets() { return kRows; }

const CustomCallTargetRow* FindCustomCallTarget(std::string_view target) {
  for (const CustomCallTargetRow& row : kRows)
    if (!row.prefix && row.target == target) return &row;
  for (const CustomCallTargetRow& row : kRows)
    if (row.prefix && target.starts_with(row.target)) return &row;
  return nullptr;
}

CustomCallKind CustomCallKindOf(std::string_view target, bool calls_computation) {
  if (const CustomCallTargetRow* row = FindCustomCallTarget(target)) return row->kind;
  return calls_computation ? CustomCallKind::kCallComputation : CustomCallKind::kUnknown;
}

}  // namespace nhlo
