// SPDX-License-Identifier: Apache-2.0
// nhlo-compile: HLO text -> verified module -> pass pipeline -> bundle file (or HLO text).
#include <iostream>
#include <sstream>

#include "codegen/codegen.h"
#include "driver/common.h"
#include "driver/custom_call_expansions.h"
#include "driver/driver.h"
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
                 "(its graph for Graphviz), none")
      ->check(CLI::IsMember({"bundle", "hlo", "dot", "none"}));
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
        << (emit == "hlo"   ? "printed module"
            : emit == "dot" ? "graph"
                            : "bundle")
        << " would replace the HLO it comes from\n";
    return kExitUsage;
  }
  {  // No output replaces an input or another output (docs/reliability.md), before any work.
    std::vector<std::string> inputs = {input};
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
  if (emit == "bundle" && flags.split_input_file) {
    err << "nhlo-compile: error: --split-input-file produces several modules; use --emit=hlo or --emit=none\n";
    return kExitUsage;
  }
  for (const char* flag : {"--arch", "--device-only"})
    if (emit != "bundle" && app.count(flag) > 0)
      err << "nhlo-compile: warning: " << flag << " has no effect with --emit=" << emit << " (it shapes the bundle)\n";
  if (emit == "none" && !output.empty())
    err << "nhlo-compile: warning: -o has no effect with --emit=none (nothing is written)\n";
  // --emit=hlo -o FILE: the printed modules go to FILE (written once, at the end, atomically).
  const bool hlo_to_file = (emit == "hlo" || emit == "dot") && !output.empty() && output != "-";
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
