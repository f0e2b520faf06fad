// SPDX-License-Identifier: Apache-2.0
#include "ir/graph_dot.h"

#include "support/escape.h"
#include "types/opcode.h"

namespace nhlo {
namespace {

// A DOT double-quoted string: backslash and quote escaped; `\n` stays a line break in labels.
void AppendQuoted(std::string& out, std::string_view text) {
  out += '"';
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  out += '"';
}

void AppendNodeId(std::string& out, const Computation& comp, const Instruction& inst) {
  AppendQuoted(out, std::string(comp.name) + "/" + std::string(inst.name));
}

// A label with links: a borderless table, one row per line of InstructionNodeLabel and one
// linked row per callee (Graphviz links table cells, not parts of a plain label).
void AppendLinkedLabel(std::string& out, const Instruction& inst, const DotNodeDecoration& decoration) {
  out += "<<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"1\">";
  std::string label = InstructionNodeLabel(inst);
  size_t start = 0;
  while (start <= label.size()) {
    size_t end = label.find('\n', start);
    if (end == std::string::npos) end = label.size();
    out += "<TR><TD>";
    AppendXmlEscaped(out, std::string_view(label).substr(start, end - start));
    out += "</TD></TR>";
    start = end + 1;
  }
  for (const auto& [text, url] : decoration.links) {
    out += "<TR><TD HREF=\"";
    AppendXmlEscaped(out, url);
    out += "\" TOOLTIP=\"";
    AppendXmlEscaped(out, "go to " + text);
    out += "\"><FONT COLOR=\"#1a4fa0\"><U>";
    AppendXmlEscaped(out, text);
    out += "</U></FONT></TD></TR>";
  }
  out += "</TABLE>>";
}

}  // namespace

std::string InstructionNodeLabel(const Instruction& inst) {
  std::string label = std::string(inst.name) + "\n" + std::string(OpcodeName(inst.opcode));
  if (inst.opcode == Opcode::kParameter) label += "(" + std::to_string(inst.parameter_number) + ")";
  label += "\n";
  AppendShape(label, inst.shape, /*print_layout=*/false);
  return label;
}

const char* InstructionFillColor(const Instruction& inst) {
  if (inst.opcode == Opcode::kParameter) return "#dbe9f6";
  if (inst.opcode == Opcode::kConstant) return "#eeeeee";
  if (OpcodeSideEffect(inst.opcode) != SideEffect::kNone) return "#fde2c8";  // I/O, collectives, rng
  if (inst.opcode == Opcode::kDot || inst.opcode == Opcode::kConvolution || inst.opcode == Opcode::kScaledDot)
    return "#d5efd5";
  if (inst.opcode == Opcode::kCustomCall) return "#f6d5e8";
  if (OpcodeElementwise(inst.opcode) != Elementwise::kNo) return "#ffffff";
  for (const Attribute& a : inst.attrs)
    if (a.kind == AttrKind::Computation || a.kind == AttrKind::ComputationList) return "#fff3c4";  // calls
  return "#f7f7f7";
}

void ForEachCallee(const Instruction& inst, const std::function<void(const Attribute&, const Computation&)>& visit) {
  for (const Attribute& a : inst.attrs) {
    if (a.kind != AttrKind::Computation && a.kind != AttrKind::ComputationList) continue;
    for (const Computation* callee : a.computations)
      if (callee && !callee->implied) visit(a, *callee);
  }
}

std::string ModuleToDot(const Module& module) {
  std::string out = "digraph ";
  AppendQuoted(out, module.name);
  out +=
      " {\n  graph [rankdir=TB, compound=true, fontname=\"Helvetica\", fontsize=11];\n"
      "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n"
      "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n";
  for (const ComputationPtr& comp_ptr : module.computations) {
    const Computation& comp = *comp_ptr;
    if (comp.implied) continue;
    out += "  subgraph ";
    AppendQuoted(out, "cluster_" + std::string(comp.name));
    out += " {\n    label=";
    AppendQuoted(out, (comp.is_entry ? "ENTRY " : "") + std::string(comp.name));
    out += comp.is_entry ? ";\n    style=\"rounded,bold\";\n" : ";\n    style=rounded;\n";
    for (const Instruction* inst : comp.instructions) {
      out += "    ";
      AppendNodeId(out, comp, *inst);
      out += " [label=";
      AppendQuoted(out, InstructionNodeLabel(*inst));
      out += ", fillcolor=\"";
      out += InstructionFillColor(*inst);
      out += inst == comp.root ? "\", penwidth=2];\n" : "\"];\n";
    }
    out += "  }\n";
  }
  // Edges after every node, so each names nodes that exist.
  for (const ComputationPtr& comp_ptr : module.computations) {
    const Computation& comp = *comp_ptr;
    if (comp.implied) continue;
    for (const Instruction* inst : comp.instructions) {
      for (const Instruction* operand : inst->operands) {
        out += "  ";
        AppendNodeId(out, comp, *operand);
        out += " -> ";
        AppendNodeId(out, comp, *inst);
        std::string shape;
        AppendShape(shape, operand->shape, /*print_layout=*/false);
        out += " [label=";
        AppendQuoted(out, shape);
        out += "];\n";
      }
      ForEachCallee(*inst, [&](const Attribute& a, const Computation& callee) {
        if (!callee.root) return;
        out += "  ";
        AppendNodeId(out, callee, *callee.root);
        out += " -> ";
        AppendNodeId(out, comp, *inst);
        out += " [style=dashed, color=\"#b08800\", ltail=";
        AppendQuoted(out, "cluster_" + std::string(callee.name));
        out += ", label=";
        AppendQuoted(out, AttrName(a.id));
        out += "];\n";
      });
    }
  }
  out += "}\n";
  return out;
}

std::string ComputationToDot(const Computation& comp, const DotNodeDecorator& decorate, std::string_view graph_id,
                             std::string_view graph_attrs, EdgeLabels edge_labels) {
  std::string out = "digraph ";
  AppendQuoted(out, comp.name);
  out += " {\n  graph [id=";
  AppendQuoted(out, graph_id);
  out += ", rankdir=TB, fontname=\"Helvetica\"";
  if (!graph_attrs.empty()) {
    out += ", ";
    out += graph_attrs;
  }
  out +=
      "];\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n"
      "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n";
  // Node names are the instructions' own: unique within a computation, and what Graphviz puts in
  // each node's SVG <title> (the tooltip).
  for (const Instruction* inst : comp.instructions) {
    DotNodeDecoration decoration = decorate ? decorate(*inst) : DotNodeDecoration{};
    out += "  ";
    AppendQuoted(out, inst->name);
    out += " [";
    if (!decoration.id.empty()) {
      out += "id=";
      AppendQuoted(out, decoration.id);
      out += ", ";
    }
    if (!decoration.css_class.empty()) {
      out += "class=";
      AppendQuoted(out, decoration.css_class);
      out += ", ";
    }
    out += "label=";
    if (decoration.links.empty())
      AppendQuoted(out, InstructionNodeLabel(*inst));
    else
      AppendLinkedLabel(out, *inst, decoration);
    out += ", fillcolor=\"";
    out += decoration.fill.empty() ? InstructionFillColor(*inst) : decoration.fill;
    out += inst == comp.root ? "\", penwidth=2];\n" : "\"];\n";
  }
  size_t edge_number = 0;
  for (const Instruction* inst : comp.instructions) {
    for (const Instruction* operand : inst->operands) {
      out += "  ";
      AppendQuoted(out, operand->name);
      out += " -> ";
      AppendQuoted(out, inst->name);
      std::string shape;
      AppendShape(shape, operand->shape, /*print_layout=*/false);
      out += " [id=";
      AppendQuoted(out, std::string(graph_id) + "/e" + std::to_string(++edge_number));
      out += edge_labels == EdgeLabels::kInLayout ? ", label=" : ", xlabel=";
      AppendQuoted(out, shape);
      out += "];\n";
    }
  }
  out += "}\n";
  return out;
}

}  // namespace nhlo
