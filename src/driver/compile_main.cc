// SPDX-License-Identifier: Apache-2.0
// nhlo-compile: HLO text -> verified module -> pass pipeline -> bundle file (or HLO text).
#include <iostream>
#include <optional>
#include <sstream>

#include "codegen/codegen.h"
#include "driver/common.h"
#include "driver/custom_call_expansions.h"
#include "driver/driver.h"
#include "driver/graph_html.h"
#include "driver/shadow_report.h"
#include "ir/graph_dot.h"
#include "ir/printer.h"
#include "parser/parser.h"

namespace nhlo {

int CompileMain(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err) {
  CLI::App app("Compile XLA HLO text to an nhlo bundle file.", "nhlo-compile");
  std::string input, output, emit = "bundle";
  app.add_option("input", input, "HLO text file, or - for standard input");
  app.add_option("-o,--output", output, "output file (the bundle; '-' writes it to standard output)");
  std::string max_input;
  AddInputSizeFlag(app, max_input);
  app.add_option("--emit", emit,
                 "what to produce: bundle (default), hlo (the module after the pipeline, to stdout or -o FILE), dot "
                 "(its graph for Graphviz), html (a page of its graphs drawn by Graphviz, with search), none")
      ->check(CLI::IsMember({"bundle", "hlo", "dot", "html", "none"}));
  std::string shadow_report;
  app.add_option("--shadow-report", shadow_report,
                 "with --emit=html: colour each node by its error in this report of nhlo-run --shadow-report");
  size_t graph_node_limit = kDefaultGraphNodeLimit;
  app.add_option("--graph-node-limit", graph_node_limit,
                 "with --emit=html: list a computation of more instructions as a table instead of drawing it")
      ->check(CLI::PositiveNumber);
  PipelineFlags flags;
  AddPipelineFlags(app, flags);
  if (int code = ParseCommandLine(app, args, out, err); code >= 0) return code;
  flags.passes_given = app.count("--passes") > 0;
  if (flags.list_passes) {
    out << ListPassesText();
    return kExitOk;
  }
  if (input.empty()) {
    err << "nhlo-compile: error: no input file (use - for standard input)\n";
    return kExitUsage;
  }
  if (emit == "bundle" && output.empty()) {
    err << "nhlo-compile: error: --emit=bundle needs -o FILE\n";
    return kExitUsage;
  }
  if (emit != "none" && input != "-" && !output.empty() && output != "-" && SameFile(input, output)) {
    err << "nhlo-compile: error: -o " << output << " names the input file; the "
        << (emit == "hlo"    ? "printed module"
            : emit == "dot"  ? "graph"
            : emit == "html" ? "page"
                             : "bundle")
        << " would replace the HLO it comes from\n";
    return kExitUsage;
  }
  {  // No output replaces an input or another output (docs/reliability.md), before any work.
    std::vector<std::string> inputs = {input};
    if (!shadow_report.empty()) inputs.push_back(shadow_report);
    for (const std::string& c : flags.custom_calls)
      if (std::optional<CustomCallFlag> flag = SplitCustomCallFlag(c)) inputs.push_back(flag->file);
    std::vector<OutputPath> outputs = {{"-o", emit == "none" ? "" : output, ""},
                                       {"--dump-dir", flags.dump_dir, ".*\\.[0-9]{3}-.*\\.hlo|.*\\.time-passes\\..*"},
                                       {"--remarks-file", flags.remarks_file, ""}};
    if (std::string conflict = OutputConflict(inputs, outputs); !conflict.empty()) {
      err << "nhlo-compile: error: " << conflict << "\n";
      return kExitUsage;
    }
    for (const OutputPath& o : outputs)
      if (Status place = CheckOutputPlace(o); !place.ok()) {
        PrintStatus(place, err, "nhlo-compile");
        return kExitInputRejected;
      }
  }
  if ((emit == "bundle" || emit == "html") && flags.split_input_file) {
    err << "nhlo-compile: error: --split-input-file produces several modules; use --emit=hlo, --emit=dot or "
           "--emit=none\n";
    return kExitUsage;
  }
  for (const char* flag : {"--shadow-report", "--graph-node-limit"})
    if (emit != "html" && app.count(flag) > 0)
      err << "nhlo-compile: warning: " << flag << " has no effect with --emit=" << emit << " (it is for --emit=html)\n";
  // The report is read before any work: a bad one should not cost a pipeline run first.
  std::optional<ShadowReport> report;
  if (emit == "html" && !shadow_report.empty()) {
    Result<std::string> report_text = ReadInput(shadow_report, in);
    if (!report_text.ok()) {
      PrintStatus(report_text.status(), err, "nhlo-compile");
      return kExitInputRejected;
    }
    Result<ShadowReport> parsed = ParseShadowReport(*report_text, shadow_report);
    if (!parsed.ok()) {
      PrintStatus(parsed.status(), err, "nhlo-compile");
      return kExitInputRejected;
    }
    report = std::move(*parsed);
  }
  for (const char* flag : {"--arch", "--device-only"})
    if (emit != "bundle" && app.count(flag) > 0)
      err << "nhlo-compile: warning: " << flag << " has no effect with --emit=" << emit << " (it shapes the bundle)\n";
  if (emit == "none" && !output.empty())
    err << "nhlo-compile: warning: -o has no effect with --emit=none (nothing is written)\n";
  // --emit=hlo -o FILE: the printed modules go to FILE (written once, at the end, atomically).
  const bool hlo_to_file = (emit == "hlo" || emit == "dot" || emit == "html") && !output.empty() && output != "-";
  std::ostringstream hlo_text;
  std::ostream& hlo_out = hlo_to_file ? hlo_text : out;
  for (const std::string& w : PipelineFlagWarnings(flags, emit == "hlo")) err << "nhlo-compile: warning: " << w << "\n";
  Result<PipelineOptions> options = flags.ToOptions();
  if (!options.ok()) {
    PrintStatus(options.status(), err, "nhlo-compile");
    return kExitUsage;
  }
  std::vector<Remark> remarks;  // --remarks-file: every pass's remarks, written at the end
  if (!flags.remarks_file.empty()) options->collected_remarks = &remarks;
  Result<CodegenOptions> codegen = flags.ToCodegenOptions();
  uint64_t input_limit = kMaxInputBytes;
  if (!max_input.empty()) {
    Result<uint64_t> limit = ParseSize(max_input, "--max-input-size");
    if (!limit.ok()) {
      err << "nhlo-compile: error: " << limit.status().message() << "\n";
      return kExitUsage;
    }
    input_limit = *limit;
  }
  Result<std::string> text = ReadInput(input, in, input_limit);
  if (!text.ok()) {
    PrintStatus(text.status(), err, "nhlo-compile");
    return kExitInputRejected;
  }
  std::string name = input == "-" ? "<stdin>" : input;
  std::vector<InputPiece> pieces;
  int modules = flags.split_input_file ? 0 : CountHloModules(*text);
  const std::string several = modules > 1 ? SeveralModulesHint(*text, modules, "compile") : "";
  if (flags.split_input_file)
    pieces = SplitOwnedInput(std::move(*text));
  else
    pieces.push_back({std::move(*text), 1});

  int exit_code = kExitOk;
  for (size_t i = 0; i < pieces.size(); ++i) {
    Result<std::unique_ptr<Module>> module = CompileText(name, std::move(pieces[i].text), *options, err);
    if (i > 0 && (emit == "hlo" || emit == "dot")) hlo_out << "// -----\n";  // a comment in DOT too
    if (!module.ok()) {
      PrintStatus(module.status(), err, "nhlo-compile");
      if (!several.empty()) err << "nhlo-compile: note: " << name << " " << several << "\n";
      exit_code = kExitInputRejected;
      continue;
    }
    if (emit == "hlo") hlo_out << PrintModule(**module);
    if (emit == "dot") hlo_out << ModuleToDot(**module);
    if (emit == "html") {
      HtmlViewOptions view_options;
      view_options.graph_node_limit = graph_node_limit;
      view_options.report = report ? &*report : nullptr;
      view_options.report_file = shadow_report;
      Result<HtmlView> view = ModuleToHtml(**module, view_options);
      if (!view.ok()) {
        PrintStatus(view.status(), err, "nhlo-compile");
        return kExitInputRejected;
      }
      for (const std::string& w : view->warnings) err << "nhlo-compile: warning: " << w << "\n";
      hlo_out << view->html;
    }
    if (emit == "bundle") {
      Result<std::string> bytes = EmitBundleFile(**module, *codegen);
      if (!bytes.ok()) {
        PrintStatus(bytes.status(), err, "nhlo-compile");
        return kExitInputRejected;
      }
      if (output == "-") {
        out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
      } else if (Status s = WriteFileAtomically(output, *bytes); !s.ok()) {
        PrintStatus(s, err, "nhlo-compile");
        return kExitInputRejected;
      }
    }
  }
  if (hlo_to_file && exit_code == kExitOk) {
    if (Status s = WriteFileAtomically(output, hlo_text.str()); !s.ok()) {
      PrintStatus(s, err, "nhlo-compile");
      return kExitInputRejected;
    }
  }
  if (Status written = WriteRemarksFile(flags, remarks); !written.ok()) {
    PrintStatus(written, err, "nhlo-compile");
    return kExitInputRejected;
  }
  return exit_code;
}

}  // namespace nhlo
