// SPDX-License-Identifier: Apache-2.0
// Running Graphviz's `dot` as a child process, for the HTML graph view: the whole input goes in
// one file and one process lays out every graph in it (a process per computation cost more than
// the layouts for a module of thousands of small reducers), and the SVG documents it prints one
// after another are split apart again.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace nhlo {

/// Runs `program -Tsvg FILE` (found on PATH) on `dot_text` written to a temporary file, and
/// returns what it printed. A missing program or a failed run (non-zero exit, a signal) is an
/// error naming it, with the first lines of what it wrote to standard error.
Result<std::string> RunGraphviz(std::string_view dot_text, const std::string& program = "dot");

/// The `<svg ...>...</svg>` elements of `dot -Tsvg` output for several graphs, in order, without
/// the XML prologue and comments Graphviz writes before each. An error unless there are exactly
/// `expected` of them.
Result<std::vector<std::string_view>> SplitSvgDocuments(std::string_view output, size_t expected);

}  // namespace nhlo
