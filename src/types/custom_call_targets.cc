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

constexpr BuilderMathRow kBuilderMath[] = {
#define NHLO_BUILDER_MATH(Name, operands, complex, meaning) {BuilderMathFn::k##Name, #Name, operands, complex, meaning},
#include "types/builder_math.def"
#undef NHLO_BUILDER_MATH
};

constexpr std::string_view kBuilderMathPrefix = "xla_builder.math.";

}  // namespace

std::span<const CustomCallTargetRow> KnownCustomCallTargets() { return kRows; }

std::span<const BuilderMathRow> BuilderMathFunctions() { return kBuilderMath; }

const BuilderMathRow* FindBuilderMath(std::string_view target) {
  if (!target.starts_with(kBuilderMathPrefix)) return nullptr;
  target.remove_prefix(kBuilderMathPrefix.size());
  for (const BuilderMathRow& row : kBuilderMath)
    if (row.name == target) return &row;
  return nullptr;
}

const CustomCallTargetRow* FindCustomCallTarget(std::string_view target) {
  for (const CustomCallTargetRow& row : kRows)
    if (!row.prefix && row.target == target) return &row;
  for (const CustomCallTargetRow& row : kRows)
    if (row.prefix && target.starts_with(row.target)) return &row;
  return nullptr;
}

CustomCallKind CustomCallKindOf(std::string_view target, bool calls_computation) {
  if (const CustomCallTargetRow* row = FindCustomCallTarget(target)) {
    // A builder-library call that names its expansion runs it; without one, natively.
    if (calls_computation && row->target.starts_with("xla_builder.")) return CustomCallKind::kCallComputation;
    if (row->kind != CustomCallKind::kBuilderMath) return row->kind;
    return FindBuilderMath(target) ? CustomCallKind::kBuilderMath : CustomCallKind::kUnknown;
  }
  return calls_computation ? CustomCallKind::kCallComputation : CustomCallKind::kUnknown;
}

}  // namespace nhlo
