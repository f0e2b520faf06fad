// SPDX-License-Identifier: Apache-2.0
// Where the shared numerics tables are: $NHLO_SHARED_DIR/numerics/tables, else
// shared/numerics/tables beside the checkout seen from a few likely working directories.
// Table tests are decorated `* doctest::skip(nhlo::testing::SharedTablesMissing())`, so on a
// machine without the tables they are counted as skipped (tools/check's closing line shows it)
// instead of passing silently. A NHLO_SHARED_DIR that names no tables is never skipped: the
// test runs and fails, since the user asked for the comparison.
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

inline bool SharedTablesMissing() {
  const char* env = std::getenv("NHLO_SHARED_DIR");
  return (env == nullptr || *env == '\0') && SharedTablesDir().empty();
}

}  // namespace nhlo::testing
