// SPDX-License-Identifier: Apache-2.0
// The shadow-execution report `nhlo-run --shadow-report=FILE` writes (JSON; issue 31), read back
// for `nhlo-compile --emit=html --shadow-report=FILE`, which colours each instruction's node by
// its error. Only the fields the view shows are read; a field of the wrong type, or text that is
// not JSON, is an error naming the file and the place.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace nhlo {

/// One error summary of an instruction: relative error (max and mean over its elements) and
/// ulps in the instruction's own type. A figure the run could not compute (NaN, infinity) is
/// written as null and read as nullopt.
struct ShadowFigures {
  std::optional<double> max_rel, mean_rel, max_ulps;
};

struct ShadowInstruction {
  std::string computation, name, opcode, type;
  int64_t line = 0, column = 0;
  int64_t executions = 0;
  ShadowFigures total;                 ///< the value against its shadow
  std::optional<ShadowFigures> local;  ///< the op alone, on exact inputs (absent: not measured)
  std::optional<double> amplification;
  int64_t wrong_elements = 0;
};

struct ShadowReport {
  std::string module, shadow_type;
  std::vector<ShadowInstruction> instructions;
};

/// Parses the report text; `file` names it in errors.
Result<ShadowReport> ParseShadowReport(std::string_view text, std::string_view file);

/// The fill colour for an instruction whose total max relative error is `max_rel`, on a log
/// scale: green up to 2^-24 (f32's rounding), through yellow, to red from 1e-1 on. nullopt (the
/// error was NaN or infinite) is red. A `#rrggbb` colour.
std::string ShadowErrorColor(std::optional<double> max_rel);

}  // namespace nhlo
