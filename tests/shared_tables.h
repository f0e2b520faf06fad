// SPDX-License-Identifier: Apache-2.0
// Where the shared numerics tables are: $NHLO_SHARED_DIR/numerics/tables, else
// shared/numerics/tables beside the checkout seen from a few likely working directories.
// Empty when not found, so table tests skip instead of failing on a machine without them.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace nhlo::testing {

inline std::string SharedTablesDir() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("NHLO_SHARED_DIR"); env != nullptr && *env != '\0')
    candidates.push_back(env);
  else
    candidates = {"../shared", "../../shared", "../../../shared"};
  for (const std::string& dir : candidates) {
    std::string tables = dir + "/numerics/tables";
    std::error_code ec;
    if (std::filesystem::is_directory(tables, ec)) return tables;
  }
  return {};
}

}  // namespace nhlo::testing
