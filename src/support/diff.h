// SPDX-License-Identifier: Apache-2.0
// Line-based unified diff (Myers' algorithm), for --print-changed=diff and golden test failures.
#pragma once

#include <string>
#include <string_view>

namespace nhlo {

/// A unified diff of `before` -> `after` with `context` lines around each change and
/// `--- a_name` / `+++ b_name` headers; empty if the texts are equal.
std::string UnifiedDiff(std::string_view before, std::string_view after, std::string_view a_name,
                        std::string_view b_name, int context = 3);

}  // namespace nhlo
