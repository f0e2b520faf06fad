// SPDX-License-Identifier: Apache-2.0
#include "ir/graph_dot.h"

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

// How a node is filled: what kind of work the instruction is, at a glance.
const char* FillColor(const Instruction& inst) {
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

}  // namespace

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
      std::string label = std::string(inst->name) + "\n" + std::string(OpcodeName(inst->opcode));
      if (inst->opcode == Opcode::kParameter) label += "(" + std::to_string(inst->parameter_number) + ")";
      label += "\n";
      AppendShape(label, inst->shape, /*print_layout=*/false);
      out += "    ";
      AppendNodeId(out, comp, *inst);
      out += " [label=";
      AppendQuoted(out, label);
      out += ", fillcolor=\"";
      out += FillColor(*inst);
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
      for (const Attribute& a : inst->attrs) {
        if (a.kind != AttrKind::Computation && a.kind != AttrKind::ComputationList) continue;
        for (const Computation* callee : a.computations) {
          if (!callee || callee->implied || !callee->root) continue;
          out += "  ";
          AppendNodeId(out, *callee, *callee->root);
          out += " -> ";
          AppendNodeId(out, comp, *inst);
          out += " [style=dashed, color=\"#b08800\", ltail=";
          AppendQuoted(out, "cluster_" + std::string(callee->name));
          out += ", label=";
          AppendQuoted(out, AttrName(a.id));
          out += "];\n";
        }
      }
    }
  }
  out += "}\n";
  return out;
}

}  // namespace nhlo
