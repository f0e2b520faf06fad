// SPDX-License-Identifier: Apache-2.0
// HLO text -> Module. Recursive descent over the grammar of XLA's own parser; the first error
// stops parsing and comes back as a Diagnostic with file:line:col.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "support/escape.h"
#include "support/status.h"

namespace nhlo {

struct ParseOptions {
  /// Deepest nesting of tuple shapes, tuple literals and literal braces; deeper input is an
  /// error rather than a stack overflow.
  int max_nesting = 256;
  /// Largest array a single value may fill (`f32[N] constant(0)`), in bytes. Written-out
  /// elements are bounded by the text's length; a fill is not, and XLA materialises it, so an
  /// absurd shape would otherwise ask for petabytes.
  int64_t max_fill_literal_bytes = int64_t(1) << 30;
};

/// Parses a whole module. `file` names the source in diagnostics; `text` is moved into the
/// module (names and raw attribute text point into it).
Result<std::unique_ptr<Module>> ParseModule(std::string file, std::string text, const ParseOptions& options = {});

/// Parses literal text with its shape, `f32[2] {1, 2}`, into `module`'s arena (`name` names
/// the text in diagnostics).
Result<const Literal*> ParseStandaloneLiteral(Module& module, std::string name, std::string text,
                                              const ParseOptions& options = {});

/// One piece of a `--split-input-file` input. `text` is padded with the newlines that precede
/// it in the whole file, so line numbers in diagnostics match the original file.
struct InputPiece {
  std::string text;
  int first_line = 1;
};

/// Splits at lines that consist of `// -----` (MLIR/XLA lit convention).
std::vector<InputPiece> SplitInputFile(std::string_view text);
/// The same for a text the caller gives up: without a separator it becomes the one piece as it
/// is, with no copy (a big dump is read once, not twice).
std::vector<InputPiece> SplitOwnedInput(std::string&& text);

}  // namespace nhlo
