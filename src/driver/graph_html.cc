// SPDX-License-Identifier: Apache-2.0
#include "driver/graph_html.h"

#include <cstdio>
#include <unordered_map>
#include <unordered_set>

#include "driver/graphviz.h"
#include "ir/graph_dot.h"
#include "support/escape.h"
#include "types/opcode.h"

namespace nhlo {
namespace {

// An HLO name as part of an HTML id and URL fragment: letters, digits, `_`, `.` and `-` as they
// are, any other byte as `~xx`, so that different names never give the same id.
std::string AnchorPart(std::string_view name) {
  std::string out;
  for (unsigned char c : name) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
        c == '-') {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "~%02x", c);
      out += hex;
    }
  }
  return out;
}

std::string ComputationAnchor(const Computation& comp) { return "comp-" + AnchorPart(comp.name); }
std::string InstructionAnchor(const Computation& comp, const Instruction& inst) {
  return "inst-" + AnchorPart(comp.name) + "/" + AnchorPart(inst.name);
}

std::string ShapeText(const Shape& shape) {
  std::string text;
  AppendShape(text, shape, /*print_layout=*/false);
  return text;
}

// Three significant digits: enough to compare errors, short enough for a tooltip.
std::string Figure(std::optional<double> value) {
  if (!value) return "n/a";
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", *value);
  return text;
}

std::string FiguresText(const ShadowFigures& f) {
  return "max rel " + Figure(f.max_rel) + ", mean rel " + Figure(f.mean_rel) + ", max " + Figure(f.max_ulps) + " ulps";
}

// The hover text of an instruction the report measured.
std::string ShadowTooltip(const Instruction& inst, const ShadowInstruction& s) {
  std::string text = std::string(inst.name) + " (" + std::string(OpcodeName(inst.opcode));
  if (!s.type.empty()) text += ", " + s.type;
  text += ")\ntotal: " + FiguresText(s.total);
  if (s.local) text += "\nlocal: " + FiguresText(*s.local);
  if (s.amplification) text += "\namplification " + Figure(s.amplification);
  text += "\nexecutions " + std::to_string(s.executions) + ", wrong elements " + std::to_string(s.wrong_elements);
  if (s.line > 0) text += "\nline " + std::to_string(s.line) + ":" + std::to_string(s.column);
  return text;
}

// What the page knows about one computation before it is written.
struct Section {
  const Computation* comp = nullptr;
  std::string anchor;
  struct Caller {
    const Computation* comp;
    const Instruction* inst;
    std::string_view attr;
  };
  std::vector<Caller> callers;
  bool open = false;  // the entry, or called as control flow (while, conditional, call)
  int svg = -1;       // index of its SVG in Graphviz's output; -1: listed as a table
};

// Up to this many nodes, edge labels take part in the layout (placed neatly, and fast enough).
constexpr size_t kEdgeLabelsInLayoutLimit = 200;

// Callees of control flow are read like the entry (open); callees of everything else (fusion
// bodies, reducers, comparators, async wrappers) are details of their caller (collapsed).
bool CallsAsControlFlow(const Instruction& inst) {
  return inst.opcode == Opcode::kWhile || inst.opcode == Opcode::kConditional || inst.opcode == Opcode::kCall;
}

// Graphviz writes each node as `<g id="ID" class="node...">` then `<title>NAME</title>`; the
// title of a measured node becomes its figures, which browsers show on hover.
std::string ReplaceNodeTitles(std::string_view svg, const std::unordered_map<std::string, std::string>& titles) {
  std::string out;
  out.reserve(svg.size());
  size_t at = 0;
  constexpr std::string_view kGroup = "<g id=\"", kTitle = "<title>", kTitleEnd = "</title>";
  while (true) {
    size_t group = svg.find(kGroup, at);
    if (group == std::string_view::npos) break;
    size_t id_start = group + kGroup.size();
    size_t id_end = svg.find('"', id_start);
    if (id_end == std::string_view::npos) break;
    // Graphviz writes `-` in ids as `&#45;`; the anchors hold no other character it escapes.
    std::string id;
    for (size_t i = id_start; i < id_end; ++i) {
      if (svg.compare(i, 5, "&#45;") == 0) {
        id += '-';
        i += 4;
      } else {
        id += svg[i];
      }
    }
    auto it = titles.find(id);
    size_t title = svg.find(kTitle, id_end);
    size_t title_end = title == std::string_view::npos ? title : svg.find(kTitleEnd, title);
    if (it == titles.end() || title_end == std::string_view::npos) {
      out.append(svg.substr(at, id_end - at));
      at = id_end;
      continue;
    }
    out.append(svg.substr(at, title + kTitle.size() - at));
    AppendXmlEscaped(out, it->second);
    at = title_end;
  }
  out.append(svg.substr(at));
  return out;
}

void AppendLegend(std::string& out, const HtmlViewOptions& options) {
  out += "<div class=\"legend\"><span>Shadow report <code>";
  AppendXmlEscaped(out, options.report_file);
  out += "</code>";
  if (!options.report->shadow_type.empty()) {
    out += " (shadow type ";
    AppendXmlEscaped(out, options.report->shadow_type);
    out += ")";
  }
  out += ": node colour is the total max relative error</span>";
  struct Stop {
    double value;
    const char* text;
  };
  for (Stop stop : {Stop{0x1p-24, "&le;2<sup>-24</sup>"}, Stop{0x1p-20, "2<sup>-20</sup>"},
                    Stop{0x1p-16, "2<sup>-16</sup>"}, Stop{0x1p-12, "2<sup>-12</sup>"}, Stop{0x1p-8, "2<sup>-8</sup>"},
                    Stop{0x1p-6, "2<sup>-6</sup>"}, Stop{1e-1, "&ge;0.1"}}) {
    out += "<span class=\"swatch\" style=\"background:" + ShadowErrorColor(stop.value) + "\">";
    out += stop.text;
    out += "</span>";
  }
  out += "<span class=\"swatch unmeasured\">not in the report</span></div>\n";
}

}  // namespace

Result<HtmlView> ModuleToHtml(const Module& module, const HtmlViewOptions& options) {
  HtmlView view;
  std::vector<Section> sections;
  std::unordered_map<const Computation*, size_t> section_of;
  size_t instruction_count = 0;
  for (const ComputationPtr& comp : module.computations) {
    if (comp->implied) continue;
    section_of[comp.get()] = sections.size();
    sections.push_back({comp.get(), ComputationAnchor(*comp), {}, comp->is_entry, -1});
    instruction_count += comp->instructions.size();
  }
  for (size_t caller = 0; caller < sections.size(); ++caller)
    for (const Instruction* inst : sections[caller].comp->instructions)
      ForEachCallee(*inst, [&](const Attribute& a, const Computation& callee) {
        auto it = section_of.find(&callee);
        if (it == section_of.end()) return;
        Section& s = sections[it->second];
        s.callers.push_back({sections[caller].comp, inst, AttrName(a.id)});
        if (CallsAsControlFlow(*inst)) s.open = true;
      });

  // The report's entries by computation and name; each used one is counted off.
  std::unordered_map<std::string, const ShadowInstruction*> measured;
  if (options.report)
    for (const ShadowInstruction& s : options.report->instructions) measured.emplace(s.computation + "\n" + s.name, &s);
  auto find_measured = [&](const Computation& comp, const Instruction& inst) -> const ShadowInstruction* {
    if (measured.empty()) return nullptr;
    auto it = measured.find(std::string(comp.name) + "\n" + std::string(inst.name));
    return it == measured.end() ? nullptr : it->second;
  };
  const char* unmeasured_fill = "#f2f2f2";

  // Every drawn computation as one digraph of one Graphviz input.
  std::string dot_input;
  std::unordered_map<std::string, std::string> titles;  // node id -> shadow figures
  int graphs = 0;
  for (Section& section : sections) {
    const Computation& comp = *section.comp;
    if (comp.instructions.size() > options.graph_node_limit) continue;
    section.svg = graphs++;
    auto decorate = [&](const Instruction& inst) {
      DotNodeDecoration d;
      d.id = InstructionAnchor(comp, inst);
      d.css_class = "op-" + std::string(OpcodeName(inst.opcode));
      if (options.report) {
        const ShadowInstruction* s = find_measured(comp, inst);
        d.fill = s ? ShadowErrorColor(s->total.max_rel) : unmeasured_fill;
        if (s) titles.emplace(d.id, ShadowTooltip(inst, *s));
      }
      ForEachCallee(inst, [&](const Attribute& a, const Computation& callee) {
        d.links.emplace_back(std::string(AttrName(a.id)) + ": " + std::string(callee.name),
                             "#" + ComputationAnchor(callee));
      });
      return d;
    };
    // nslimit/nslimit1 cap Graphviz's network-simplex passes at one per node: 500 nodes of
    // mixtral's entry take 0.6 s instead of 74 s, and small graphs converge before the limit.
    dot_input += ComputationToDot(
        comp, decorate, "svg-" + section.anchor, "nslimit=1, nslimit1=1",
        comp.instructions.size() > kEdgeLabelsInLayoutLimit ? EdgeLabels::kAfterLayout : EdgeLabels::kInLayout);
  }
  std::string svg_output;
  std::vector<std::string_view> svgs;
  if (graphs > 0) {
    Result<std::string> ran = RunGraphviz(dot_input, options.graphviz);
    if (!ran.ok()) return ran.status();
    svg_output = std::move(*ran);
    Result<std::vector<std::string_view>> split = SplitSvgDocuments(svg_output, static_cast<size_t>(graphs));
    if (!split.ok()) return split.status();
    svgs = std::move(*split);
  }

  std::string& out = view.html;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>";
  AppendXmlEscaped(out, module.name);
  out += " - nhlo graph view</title>\n<style>\n";
  out += kGraphPageStyle;
  out += "</style>\n</head>\n<body data-instructions=\"" + std::to_string(instruction_count) + "\">\n<header>\n";
  out += "<h1>HloModule <code>";
  AppendXmlEscaped(out, module.name);
  size_t tables = sections.size() - static_cast<size_t>(graphs);
  out += "</code></h1>\n<p class=\"counts\">" + std::to_string(sections.size()) + " computations, " +
         std::to_string(instruction_count) + " instructions; " + std::to_string(graphs) + " drawn, " +
         std::to_string(tables) + " listed as tables (more than " + std::to_string(options.graph_node_limit) +
         " instructions)</p>\n";
  out +=
      "<div class=\"search\"><input id=\"search\" type=\"search\" placeholder=\"Search instruction name or opcode\" "
      "autocomplete=\"off\" spellcheck=\"false\"> <span id=\"match-count\"></span> <span class=\"hint\">Enter: next "
      "match, Shift+Enter: previous</span></div>\n";
  if (options.report) AppendLegend(out, options);
  out += "</header>\n<main>\n";

  // The entry first, then callers before their callees (module order is callees first).
  std::vector<const Section*> order;
  for (const Section& s : sections)
    if (s.comp->is_entry) order.push_back(&s);
  for (auto it = sections.rbegin(); it != sections.rend(); ++it)
    if (!it->comp->is_entry) order.push_back(&*it);
  for (const Section* section : order) {
    const Computation& comp = *section->comp;
    out += "<details class=\"computation";
    out += comp.is_entry ? " entry" : section->open ? " control-flow" : " callee";
    out += "\" id=\"" + section->anchor + "\"" + (section->open ? " open" : "") + ">\n<summary>";
    if (comp.is_entry) out += "<span class=\"kind\">ENTRY</span> ";
    out += "<span class=\"name\">";
    AppendXmlEscaped(out, comp.name);
    out += "</span> <span class=\"meta\">" + std::to_string(comp.instructions.size()) + " instruction" +
           (comp.instructions.size() == 1 ? "" : "s") + "</span><span class=\"found\"></span></summary>\n";
    if (!section->callers.empty()) {
      // A reducer of a big module can have hundreds of callers; the first few are enough to go back.
      constexpr size_t kCallersShown = 8;
      out += "<p class=\"callers\">called by ";
      for (size_t i = 0; i < section->callers.size() && i < kCallersShown; ++i) {
        const Section::Caller& c = section->callers[i];
        if (i > 0) out += ", ";
        out += "<a href=\"#" + InstructionAnchor(*c.comp, *c.inst) + "\">";
        AppendXmlEscaped(out, c.inst->name);
        out += "</a> (";
        AppendXmlEscaped(out, c.attr);
        out += ")";
      }
      if (section->callers.size() > kCallersShown)
        out += " and " + std::to_string(section->callers.size() - kCallersShown) + " more";
      out += "</p>\n";
    } else if (!comp.is_entry) {
      out += "<p class=\"callers\">not called</p>\n";
    }
    if (section->svg >= 0) {
      out += "<div class=\"graph\">\n";
      std::string_view svg = svgs[static_cast<size_t>(section->svg)];
      if (titles.empty())
        out += svg;
      else
        out += ReplaceNodeTitles(svg, titles);
      out += "\n</div>\n</details>\n";
      continue;
    }
    out += "<p class=\"note\">Listed, not drawn: " + std::to_string(comp.instructions.size()) +
           " instructions is more than the graph limit of " + std::to_string(options.graph_node_limit) +
           " (Graphviz's layout time grows faster than the graph; --graph-node-limit=N changes the limit).</p>\n";
    out +=
        "<table class=\"listing\"><thead><tr><th>instruction</th><th>opcode</th><th>shape</th><th>operands</th>"
        "<th>calls</th></tr></thead>\n<tbody>\n";
    for (const Instruction* inst : comp.instructions) {
      out += "<tr class=\"inst\" id=\"" + InstructionAnchor(comp, *inst) + "\" data-op=\"";
      out += OpcodeName(inst->opcode);
      out += "\"";
      if (options.report) {
        const ShadowInstruction* s = find_measured(comp, *inst);
        out += " style=\"background:" + (s ? ShadowErrorColor(s->total.max_rel) : std::string(unmeasured_fill)) + "\"";
        if (s) {
          out += " title=\"";
          AppendXmlEscaped(out, ShadowTooltip(*inst, *s));
          out += "\"";
        }
      } else {
        out += " style=\"background:";
        out += InstructionFillColor(*inst);
        out += "\"";
      }
      out += "><td>";
      AppendXmlEscaped(out, inst->name);
      if (inst == comp.root) out += " <b>ROOT</b>";
      out += "</td><td>";
      out += OpcodeName(inst->opcode);
      out += "</td><td>";
      AppendXmlEscaped(out, ShapeText(inst->shape));
      out += "</td><td>";
      for (size_t i = 0; i < inst->operands.size(); ++i) {
        if (i > 0) out += ' ';
        out += "<a href=\"#" + InstructionAnchor(comp, *inst->operands[i]) + "\">";
        AppendXmlEscaped(out, inst->operands[i]->name);
        out += "</a>";
      }
      out += "</td><td>";
      bool first = true;
      ForEachCallee(*inst, [&](const Attribute& a, const Computation& callee) {
        if (!first) out += ' ';
        first = false;
        AppendXmlEscaped(out, AttrName(a.id));
        out += ": <a href=\"#" + ComputationAnchor(callee) + "\">";
        AppendXmlEscaped(out, callee.name);
        out += "</a>";
      });
      out += "</td></tr>\n";
    }
    out += "</tbody></table>\n</details>\n";
  }
  out += "</main>\n<script>\n";
  out += kGraphPageScript;
  out += "</script>\n</body>\n</html>\n";

  if (options.report) {
    std::unordered_set<const ShadowInstruction*> used;
    for (const Section& section : sections)
      for (const Instruction* inst : section.comp->instructions)
        if (const ShadowInstruction* s = find_measured(*section.comp, *inst)) used.insert(s);
    size_t unmatched = options.report->instructions.size() - used.size();
    if (unmatched > 0) {
      std::string first;
      for (const ShadowInstruction& s : options.report->instructions)
        if (!used.count(&s)) {
          first = s.computation + "/" + s.name;
          break;
        }
      view.warnings.push_back(options.report_file + ": " + std::to_string(unmatched) + " of " +
                              std::to_string(options.report->instructions.size()) +
                              " instructions of the report are not in the module (first: " + first +
                              "); was it made from the same module and passes?");
    }
    if (!options.report->module.empty() && options.report->module != module.name)
      view.warnings.push_back(options.report_file + ": the report is for module '" + options.report->module +
                              "', not '" + std::string(module.name) + "'");
  }
  return view;
}

}  // namespace nhlo
