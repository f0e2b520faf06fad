// SPDX-License-Identifier: Apache-2.0
#include "types/custom_call_targets.h"

namespace nhlo {
namespace {

constexpr CustomCallTargetRow kRows[] = {
#define NHLO_CUSTOM_CALL(Kind, target, match, meaning) \
  {CustomCallKind::k##Kind, target, TargetMatch::k##match, meaning},
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

// `target` is `pattern` with its `?` as one of LAPACK's precision letters.
bool MatchesPrecisions(std::string_view pattern, std::string_view target) {
  size_t q = pattern.find('?');
  if (q == std::string_view::npos || target.size() != pattern.size()) return false;
  char letter = target[q];
  return (letter == 's' || letter == 'd' || letter == 'c' || letter == 'z') &&
         target.substr(0, q) == pattern.substr(0, q) && target.substr(q + 1) == pattern.substr(q + 1);
}

const CustomCallTargetRow* FindCustomCallTarget(std::string_view target) {
  for (const CustomCallTargetRow& row : kRows)
    if ((row.match == TargetMatch::kExact && row.target == target) ||
        (row.match == TargetMatch::kPrecisions && MatchesPrecisions(row.target, target)))
      return &row;
  for (const CustomCallTargetRow& row : kRows)
    if (row.match == TargetMatch::kPrefix && target.starts_with(row.target)) return &row;
  return nullptr;
}

CustomCallKind CustomCallKindOf(std::string_view target, bool calls_computation) {
  if (const CustomCallTargetRow* row = FindCustomCallTarget(target)) {
    // A builder-library call that names its expansion runs it; without one, natively. A call the
    // compiler expands runs its expansion once bound.
    if (calls_computation && (row->target.starts_with("xla_builder.") || ExpandsBeforeRun(row->kind)))
      return CustomCallKind::kCallComputation;
    if (row->kind != CustomCallKind::kBuilderMath) return row->kind;
    return FindBuilderMath(target) ? CustomCallKind::kBuilderMath : CustomCallKind::kUnknown;
  }
  return calls_computation ? CustomCallKind::kCallComputation : CustomCallKind::kUnknown;
}

}  // namespace nhlo
