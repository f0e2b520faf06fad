// SPDX-License-Identifier: Apache-2.0
// A module as Graphviz graphs. ModuleToDot is `nhlo-compile --emit=dot` (XLA's
// --xla_dump_hlo_as_dot): one cluster per computation, a node per instruction (name, opcode,
// shape; filled by kind), an edge per operand labelled with its shape, and a dashed edge from each
// instruction that calls a computation to that computation's root, labelled with the attribute
// that names it (to_apply, body, condition, calls, branch_computations...). ComputationToDot is
// one computation as its own digraph, with the same node and edge text, for the HTML view
// (driver/graph_html.h), which lays out every computation separately and links callers to
// callees instead of drawing edges between graphs. Both are linear in the size of what they draw.
// Render with `dot -Tsvg m.dot -o m.svg`.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace nhlo {

/// The module as one `digraph`; deterministic (computations and instructions in module order).
std::string ModuleToDot(const Module& module);

/// A node's text, one item a line: name, opcode (with the parameter number), shape without layout.
std::string InstructionNodeLabel(const Instruction& inst);
/// How a node is filled, by what kind of work the instruction does: parameter blue, constant grey,
/// side effects orange, dot/convolution green, custom calls pink, other callers yellow,
/// elementwise white, everything else light grey. A `#rrggbb` colour.
const char* InstructionFillColor(const Instruction& inst);
/// Calls `visit(attribute, callee)` for each computation `inst` calls (fusion `calls`, `to_apply`,
/// while `body` and `condition`, `branch_computations`...), in attribute order; the parser's
/// implied computations are skipped, as the views never draw them.
void ForEachCallee(const Instruction& inst, const std::function<void(const Attribute&, const Computation&)>& visit);

/// What the caller of ComputationToDot adds to one node; an empty field adds nothing.
struct DotNodeDecoration {
  std::string id;         ///< the SVG element id Graphviz gives the node
  std::string css_class;  ///< SVG class, after Graphviz's own `node`
  std::string fill;       ///< replaces InstructionFillColor
  /// One link a line under the label, each `(text, url)` (the callees of a calling instruction).
  std::vector<std::pair<std::string, std::string>> links;
};
using DotNodeDecorator = std::function<DotNodeDecoration(const Instruction&)>;

/// Where Graphviz puts an edge's shape. As a `label` it is a node of the layout, which places it
/// well but makes `dot` slow on big graphs (500 nodes of a JAX entry: 74 s); as an `xlabel` it is
/// placed after the layout (the same graph: under a second with layout limits).
enum class EdgeLabels : uint8_t { kInLayout, kAfterLayout };

/// One computation as a `digraph` named after it: the nodes and operand edges of ModuleToDot,
/// each node decorated by `decorate`. The graph's SVG id is `graph_id` and `graph_attrs` is added
/// to its `graph [...]` (layout limits); edges get ids `<graph id>/e<N>` so several graphs can
/// share one HTML page. Deterministic (instructions in program order).
std::string ComputationToDot(const Computation& comp, const DotNodeDecorator& decorate, std::string_view graph_id,
                             std::string_view graph_attrs, EdgeLabels edge_labels);

}  // namespace nhlo
