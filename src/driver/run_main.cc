// SPDX-License-Identifier: Apache-2.0
// nhlo-run: execute a bundle file (or HLO text, compiled in memory first) and print results.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>

#include "codegen/bundle_reader.h"
#include "codegen/codegen.h"
#include "driver/check_passes.h"
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

// Bytes the leaves of buffer `index` of `comp` hold (tuples: all their leaves).
uint64_t LeafBytes(const ComputationRecord& comp, uint32_t index) {
  const BufferRecord& b = comp.buffers[index];
  if (b.type != PrimitiveType::kTuple) return b.size;
  uint64_t total = 0;
  for (uint32_t e : b.tuple) total += LeafBytes(comp, e);
  return total;
}

// What a run of `program` allocates before its first bundle: the arena, the arguments and the
// constants unpacked to the host layout.
struct MemoryNeed {
  uint64_t arena = 0, arguments = 0, constants = 0;
  uint64_t total() const { return arena + arguments + constants; }
};

MemoryNeed MemoryNeeded(const BundleProgram& program) {
  MemoryNeed need;
  need.arena = program.arena_size;
  const ComputationRecord& entry = program.computations[program.entry];
  for (uint32_t p : entry.params) need.arguments += LeafBytes(entry, p);
  for (const ComputationRecord& comp : program.computations)
    for (const BufferRecord& b : comp.buffers)
      if (b.kind == BufferKind::kConstant && b.type != PrimitiveType::kTuple) need.constants += b.size;
  return need;
}

std::string Bytes(uint64_t n) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 5) v /= 1024, ++u;
  char buf[64];
  if (u == 0) std::snprintf(buf, sizeof(buf), "%llu bytes", static_cast<unsigned long long>(n));
  else std::snprintf(buf, sizeof(buf), "%.1f %s (%llu bytes)", v, units[u], static_cast<unsigned long long>(n));
  return buf;
}

// The memory this machine can give a run: MemAvailable from /proc/meminfo, else the physical
// memory.
uint64_t MachineMemory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : UINT64_MAX;
}

// Decodes one bundle file and checks that its run fits in memory.
Result<BundleProgram> LoadProgram(const std::string& name, std::string bytes, uint64_t memory_limit, bool limit_given) {
  NHLO_ASSIGN_OR_RETURN(BundleProgram program, ReadBundleFile(std::move(bytes), name));
  MemoryNeed need = MemoryNeeded(program);
  if (need.total() > memory_limit) {
    Diagnostic d;
    d.file = name;
    d.message = "running this program needs " + Bytes(need.total()) + " (arena " + Bytes(need.arena) + ", arguments " +
                Bytes(need.arguments) + ", constants " + Bytes(need.constants) + "), but " +
                (limit_given ? "--max-memory allows " : "this machine has ") + Bytes(memory_limit) +
                (limit_given ? "" : " available (--max-memory=SIZE sets another limit)");
    return Status::FromDiagnostic(std::move(d));
  }
  return program;
}

// The entry's arguments: from --arg texts, or --random-args (within --random-range if given).
Result<std::vector<Value>> MakeArguments(const BundleProgram& program, const std::vector<std::string>& arg_texts,
                                         bool random, uint64_t seed, const std::optional<RandomRange>& range) {
  const ComputationRecord& entry = program.computations[program.entry];
  std::vector<Value> values;
  if (random) {
    Module scratch;
    for (size_t i = 0; i < entry.params.size(); ++i)
      values.push_back(RandomValue(BufferShape(entry, entry.params[i], scratch), seed * 1000003 + i, range));
  } else {
    for (size_t i = 0; i < arg_texts.size(); ++i) {
      NHLO_ASSIGN_OR_RETURN(Value v, ParseValue(arg_texts[i], "--arg " + std::to_string(i + 1)));
      values.push_back(std::move(v));
    }
  }
  return values;
}

// Runs one bundle file: decode, memory check, arguments, the entry computation; then prints
// the results, or with --expected the comparison report.
int RunOne(const std::string& name, std::string bytes, const std::vector<std::string>& arg_texts, bool random, uint64_t seed,
           uint64_t memory_limit, bool limit_given, uint64_t max_steps, const RunChecks& checks, std::ostream& out,
           std::ostream& err) {
  Result<BundleProgram> program = LoadProgram(name, std::move(bytes), memory_limit, limit_given);
  if (!program.ok()) {
    PrintStatus(program.status(), err);
    return kExitInputRejected;
  }
  Result<std::vector<Value>> values = MakeArguments(*program, arg_texts, random, seed, checks.range);
  if (!values.ok()) {
    PrintStatus(values.status(), err);
    return kExitInputRejected;
  }
  ExecuteOptions run_options;
  run_options.max_steps = max_steps;
  Result<Value> result = Execute(*program, std::move(*values), run_options);
  if (!result.ok()) {
    PrintStatus(result.status(), err);
    return kExitInputRejected;
  }
  if (checks.expected) {
    CompareReport report = CompareValues(*result, *checks.expected, checks.tolerance);
    out << FormatReport(report, checks.tolerance);
    return report.pass() ? kExitOk : kExitInputRejected;
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
  std::string max_memory, max_input;
  AddInputSizeFlag(app, max_input);
  uint64_t max_steps = 0;
  app.add_option("--max-steps", max_steps,
                 "stop with an error after N bundles have run (loop bodies and reducers count each run); "
                 "0, the default, is no limit");
  app.add_option("--max-memory", max_memory,
                 "refuse, before any work, a run that needs more than SIZE bytes (K, M, G, T suffixes; "
                 "default: the machine's available memory)");
  PipelineFlags flags;
  AddPipelineFlags(app, flags);
  CheckFlags check;
  AddCheckFlags(app, check);
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
  RunChecks checks;
  if (int code = ResolveChecks(check, random->count() > 0, in, checks, err); code >= 0) return code;
  uint64_t memory_limit = MachineMemory();
  if (!max_memory.empty()) {
    Result<uint64_t> limit = ParseSize(max_memory, "--max-memory");
    if (!limit.ok()) {
      err << "nhlo-run: error: " << limit.status().message() << "\n";
      return kExitUsage;
    }
    memory_limit = *limit;
  }
  uint64_t input_limit = kMaxInputBytes;
  if (!max_input.empty()) {
    Result<uint64_t> limit = ParseSize(max_input, "--max-input-size");
    if (!limit.ok()) {
      err << "nhlo-run: error: " << limit.status().message() << "\n";
      return kExitUsage;
    }
    input_limit = *limit;
  }
  std::string name = input == "-" ? "<stdin>" : input;
  Result<std::string> bytes = ReadInput(input, in, input_limit);
  if (!bytes.ok()) {
    PrintStatus(bytes.status(), err);
    return kExitInputRejected;
  }
  if (LooksLikeBundle(*bytes) && check.check_passes) {
    err << "nhlo-run: error: --check-passes needs HLO text (it compiles the module with and without passes); '"
        << name << "' is a bundle file\n";
    return kExitUsage;
  }
  if (LooksLikeBundle(*bytes)) return RunOne(name, std::move(*bytes), arg_texts, random->count() > 0, seed, memory_limit, !max_memory.empty(), max_steps, checks, out, err);
  // HLO text: compile in memory with the same pipeline options nhlo-compile takes; with
  // --split-input-file each module runs on its own, results separated by `// -----`.
  std::vector<InputPiece> pieces;
  if (flags.split_input_file) pieces = SplitInputFile(*bytes);
  else pieces.push_back({std::move(*bytes), 1});
  int exit_code = kExitOk;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0) out << "// -----\n";
    if (check.check_passes) {
      ProgramRunner runner;
      runner.load = [&](std::string bundle) {
        return LoadProgram(name, std::move(bundle), memory_limit, !max_memory.empty());
      };
      runner.make_arguments = [&](const BundleProgram& p) {
        return MakeArguments(p, arg_texts, random->count() > 0, seed, checks.range);
      };
      runner.execute.max_steps = max_steps;
      int code = CheckPasses(name, pieces[i].text, *options, *flags.ToCodegenOptions(), checks.tolerance, runner, out, err);
      if (code != kExitOk) exit_code = code;
      continue;
    }
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
    if (int code = RunOne(name, std::move(*emitted), arg_texts, random->count() > 0, seed, memory_limit, !max_memory.empty(), max_steps, checks, out, err); code != kExitOk)
      exit_code = code;
  }
  return exit_code;
}

}  // namespace nhlo