// SPDX-License-Identifier: Apache-2.0
// `--version` of the programs: the version from meson.build plus the git commit when built from
// a checkout (`-dirty` when the tree had changes).
#pragma once

#include <string>
#include <string_view>

namespace nhlo {

/// `nhlo-run 0.1.0 (git 1a2b3c4d5e6f)`, or without the parenthesis outside a git checkout.
std::string VersionText(std::string_view program);

}  // namespace nhlo
