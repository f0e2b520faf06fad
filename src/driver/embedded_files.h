// SPDX-License-Identifier: Apache-2.0
// Text files compiled into the programs (tools/embed-files writes their table at build time).
#pragma once

#include <span>
#include <string_view>

namespace nhlo {

struct EmbeddedFile {
  std::string_view name;  ///< the file's base name without its extension
  std::string_view text;
};

/// custom-calls/*.hlo: the built-in custom-call expansions, named by their targets.
std::span<const EmbeddedFile> BuiltinExpansionFiles();

}  // namespace nhlo
