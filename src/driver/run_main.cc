// SPDX-License-Identifier: Apache-2.0
// nhlo-run: execute a bundle file (or HLO text, compiled in memory first) and print results.
#include <iostream>

#include "codegen/bundle_reader.h"
#include "codegen/codegen.h"
#include "driver/common.h"
#include "driver/driver.h"
#include "driver/values.h"
#include "interp/interp.h"
#include "parser/parser.h"

namespace nhlo {

namespace {

// The shape of buffer `index` of `comp` (tuples included), allocated in `scratch`.
Shape BufferShape(const ComputationRecord& comp, uint32_t index, Module& scratch) {
  const BufferRecord& b = comp.buffers[index];
  if (b.type == PrimitiveType::kTuple) {
    std::vector<Shape> elements;
    for (uint32_t e : b.tuple) elements.push_back(BufferShape(comp, e, scratch));
    return scratch.MakeTupleShape(elements);
  }
  return scratch.MakeArrayShape(b.type, b.dims);
}

// Decodes one bundle file, builds the arguments and runs the entry computation.
int RunOne(const std::string& name, std::string bytes, const std::vector<std::string>& arg_texts, bool random, uint64_t seed,
           std::ostream& out, std::ostream& err) {
  Result<BundleProgram> program = ReadBundleFile(std::move(bytes), name);
  if (!program.ok()) {
    PrintStatus(program.status(), err);
    return kExitInputRejected;
  }
  const ComputationRecord& entry = program->computations[program->entry];
  std::vector<Value> values;
  if (random) {
    Module scratch;
    for (size_t i = 0; i < entry.params.size(); ++i)
      values.push_back(RandomValue(BufferShape(entry, entry.params[i], scratch), seed * 1000003 + i));
  } else {
    for (size_t i = 0; i < arg_texts.size(); ++i) {
      Result<Value> v = ParseValue(arg_texts[i], "--arg " + std::to_string(i + 1));
      if (!v.ok()) {
        PrintStatus(v.status(), err);
        return kExitInputRejected;
      }
      values.push_back(std::move(*v));
    }
  }
  Result<Value> result = Execute(*program, values);
  if (!result.ok()) {
    PrintStatus(result.status(), err);
    return kExitInputRejected;
  }
  // A tuple result is the computation's outputs: one per line.
  if (result->IsTuple()) {
    for (const Value& v : result->tuple) out << PrintValue(v) << "\n";
  } else {
    out << PrintValue(*result) << "\n";
  }
  return kExitOk;
}

}  // namespace

int RunMain(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err) {
  CLI::App app("Run an nhlo bundle file (or HLO text) in the reference interpreter.", "nhlo-run");
  std::string input;
  std::vector<std::string> arg_texts;
  uint64_t seed = 0;
  app.add_option("input", input, "bundle file or HLO text file (detected by content), or - for standard input");
  app.add_option("--arg", arg_texts, "an argument as XLA literal text, e.g. 'f32[2] {1, 2}' (repeat, in parameter order)");
  auto* random = app.add_option("--random-args", seed, "use deterministic pseudo-random arguments from SEED");
  PipelineFlags flags;
  AddPipelineFlags(app, flags);
  if (int code = ParseCommandLine(app, args, out, err); code >= 0) return code;
  flags.passes_given = app.count("--passes") > 0;
  if (flags.list_passes) {
    out << ListPassesText();
    return kExitOk;
  }
  if (input.empty()) {
    err << "nhlo-run: error: no input file (use - for standard input)\n";
    return kExitUsage;
  }
  if (random->count() > 0 && !arg_texts.empty()) {
    err << "nhlo-run: error: --arg and --random-args cannot be combined\n";
    return kExitUsage;
  }
  Result<PipelineOptions> options = flags.ToOptions();
  if (!options.ok()) {
    err << "nhlo-run: ";
    PrintStatus(options.status(), err);
    return kExitUsage;
  }
  std::string name = input == "-" ? "<stdin>" : input;
  Result<std::string> bytes = ReadInput(input, in);
  if (!bytes.ok()) {
    PrintStatus(bytes.status(), err);
    return kExitInputRejected;
  }
  if (LooksLikeBundle(*bytes)) return RunOne(name, std::move(*bytes), arg_texts, random->count() > 0, seed, out, err);
  // HLO text: compile in memory with the same pipeline options nhlo-compile takes; with
  // --split-input-file each module runs on its own, results separated by `// -----`.
  std::vector<InputPiece> pieces;
  if (flags.split_input_file) pieces = SplitInputFile(*bytes);
  else pieces.push_back({std::move(*bytes), 1});
  int exit_code = kExitOk;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0) out << "// -----\n";
    Result<std::unique_ptr<Module>> module = CompileText(name, std::move(pieces[i].text), *options, err);
    if (!module.ok()) {
      PrintStatus(module.status(), err);
      exit_code = kExitInputRejected;
      continue;
    }
    Result<std::string> emitted = EmitBundleFile(**module, *flags.ToCodegenOptions());
    if (!emitted.ok()) {
      PrintStatus(emitted.status(), err);
      exit_code = kExitInputRejected;
      continue;
    }
    if (int code = RunOne(name, std::move(*emitted), arg_texts, random->count() > 0, seed, out, err); code != kExitOk)
      exit_code = code;
  }
  return exit_code;
}

}  // namespace nhlo