// SPDX-License-Identifier: Apache-2.0
// Custom-call expansions: HLO text that says what a custom-call target computes, so that nhlo can
// run targets it has no kernel for (docs/custom-calls.md). The built-in ones are the files of
// custom-calls/ (compiled in); users add theirs with --custom-call=TARGET=@FILE.
//
// An expansion's entry computation is either
//   - elementwise: it takes scalars and returns a scalar; it runs on every element of operands
//     of one shape (map), operands converted to its parameters' element types and the result to
//     the custom call's; or
//   - whole: it takes exactly the custom call's operand shapes and returns its result shape.
// Binding adds the expansion's computations to the module as implied ones (never printed) and
// names the one to run in the custom call's called_computations, which the interpreter runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/custom_calls.h"
#include "ir/ir.h"
#include "support/status.h"

namespace nhlo {

/// The two halves of a --custom-call value `TARGET=@FILE`; nullopt when it has not that form.
struct CustomCallFlag {
  std::string target, file;
};
std::optional<CustomCallFlag> SplitCustomCallFlag(const std::string& value);

/// `TARGET=@FILE` (the value of --custom-call) read into an expansion; errors name the flag.
Result<CustomCallExpansion> ReadCustomCallFlag(const std::string& value);

/// Binds the expansions to every custom call of their targets that names no computation yet:
/// `user` ones first (a target nhlo runs natively cannot take one), then the built-in ones.
/// Errors (an expansion that does not parse, or does not fit a call's operands) point at the
/// custom call.
Status BindCustomCallExpansions(Module& module, const std::vector<CustomCallExpansion>& user);

}  // namespace nhlo
