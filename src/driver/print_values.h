// SPDX-License-Identifier: Apache-2.0
// How nhlo-run prints a result: the whole value as XLA literal text (a tuple result as one tuple
// literal, so it reads back as an --arg), or a one-line summary per array for results too large
// to read (shape, min, max, mean, NaN/Inf counts, first elements).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "interp/value.h"
#include "support/status.h"

namespace nhlo {

enum class PrintValues { kAuto, kAll, kSummary, kNone };

/// The largest result (elements over all arrays) `--print-values=auto` prints in full.
inline constexpr int64_t kAutoPrintLimit = 1000;
/// How many leading elements a summary shows.
inline constexpr int64_t kSummaryFirstElements = 8;

/// `auto`, `all`, `summary`, `none`.
Result<PrintValues> ParsePrintValues(std::string_view text);

/// The text nhlo-run prints for `result` (ending in a newline; empty for kNone).
std::string FormatResult(const Value& result, PrintValues mode);

/// One array as `f32[1024,1024] {...}  // 1048576 elements: min -1 max 0.99 mean 0.0002; nan 0,
/// inf 0; first {0.5, -0.25, ...}`: the literal elided as XLA elides large constants, the
/// figures in a line comment (so the text pastes into HLO and into block comments).
std::string SummarizeArray(const Value& array);

}  // namespace nhlo
