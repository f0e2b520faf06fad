// SPDX-License-Identifier: Apache-2.0
// `nhlo-compile --emit=html`: one self-contained HTML page per module (no external resources).
// A header with the module's name and counts and a search box, then a section per computation
// with its graph as inline SVG, laid out by Graphviz's `dot` (one process for the whole module).
// Nodes and edges carry graph_dot's text and colours; an instruction that calls computations
// links to each callee's section. Callees reached only as fusion bodies, reducers and other
// `to_apply`s are collapsed (a closed <details>); the entry, while bodies and conditions,
// conditional branches and `call` targets are open. A computation with more instructions than
// the node limit is listed as a table instead of drawn (docs/graph-views.md has the figures).
// With a shadow report, nodes are coloured by their measured error. Deterministic: the same
// module and report give byte-identical pages.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "driver/shadow_report.h"
#include "ir/ir.h"
#include "support/status.h"

namespace nhlo {

/// Graphviz lays out a computation of this many instructions (with its edge labels) in about a
/// second on the project's 2-core CI machine; a larger one is a table (docs/graph-views.md).
inline constexpr size_t kDefaultGraphNodeLimit = 500;

struct HtmlViewOptions {
  size_t graph_node_limit = kDefaultGraphNodeLimit;
  const ShadowReport* report = nullptr;  ///< colours nodes by error when set
  std::string report_file;               ///< names the report in warnings
  std::string graphviz = "dot";          ///< the program run (found on PATH)
};

struct HtmlView {
  std::string html;
  std::vector<std::string> warnings;  ///< e.g. report entries that name no instruction
};

Result<HtmlView> ModuleToHtml(const Module& module, const HtmlViewOptions& options);

/// The page's style sheet and script (graph_html_assets.cc), inlined into every page.
extern const char* const kGraphPageStyle;
extern const char* const kGraphPageScript;

}  // namespace nhlo
