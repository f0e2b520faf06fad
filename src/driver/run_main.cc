// SPDX-License-Identifier: Apache-2.0
// nhlo-run: execute a bundle file (or HLO text, compiled in memory first) and print results.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "codegen/bundle_reader.h"
#include "codegen/codegen.h"
#include "driver/check_passes.h"
#include "driver/common.h"
#include "driver/custom_call_expansions.h"
#include "driver/driver.h"
#include "driver/expected_outputs.h"
#include "driver/isolate.h"
#include "driver/print_values.h"
#include "driver/run_devices.h"
#include "driver/shadow.h"
#include "driver/tensor_files.h"
#include "driver/values.h"
#include "interp/interp.h"
#include "ir/literal.h"
#include "parser/parser.h"
#include "support/parallel.h"

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
  for (uint32_t e : b.tuple) total = SaturatingAdd(total, LeafBytes(comp, e));
  return total;
}

// What a run of `program` allocates: the arena, the arguments and the constants unpacked to the
// host layout before its first bundle, and the results copied out of the arena after its last;
// and, once for all devices, the bundle file itself, which the decoded program points into
// while it runs (its constant section is most of a constant-heavy file).
struct MemoryNeed {
  uint64_t bundle = 0, arena = 0, arguments = 0, constants = 0, results = 0;
  uint64_t held = 0;  // values a checked run keeps from an earlier run (--isolate's reference values)
  uint64_t total() const {
    return SaturatingAdd(SaturatingAdd(bundle, held),
                         SaturatingAdd(SaturatingAdd(arena, arguments), SaturatingAdd(constants, results)));
  }
};

// Each simulated device has its own arena, arguments, constants and results.
// With --iterations, a copy of the arguments and the first iteration's results stay alive for
// the later iterations (which run on the same arguments and must give the same results).
MemoryNeed MemoryNeeded(const BundleProgram& program, uint64_t devices, int64_t iterations) {
  MemoryNeed need;
  need.arena = program.arena_size;
  const ComputationRecord& entry = program.computations[program.entry];
  for (uint32_t p : entry.params) need.arguments = SaturatingAdd(need.arguments, LeafBytes(entry, p));
  need.results = LeafBytes(entry, entry.root);
  if (iterations > 1) {
    need.arguments = SaturatingAdd(need.arguments, need.arguments);
    need.results = SaturatingAdd(need.results, need.results);
  }
  for (const ComputationRecord& comp : program.computations)
    for (const BufferRecord& b : comp.buffers)
      if (b.kind == BufferKind::kConstant && b.type != PrimitiveType::kTuple)
        need.constants = SaturatingAdd(need.constants, b.size);
  for (uint64_t* n : {&need.arena, &need.arguments, &need.constants, &need.results})
    if (MulOverflows(*n, devices, n)) *n = UINT64_MAX;
  need.bundle = program.bytes.size();
  return need;
}

std::string Bytes(uint64_t n) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 5) v /= 1024, ++u;
  char buf[64];
  if (u == 0)
    std::snprintf(buf, sizeof(buf), "%llu bytes", static_cast<unsigned long long>(n));
  else
    std::snprintf(buf, sizeof(buf), "%.1f %s (%llu bytes)", v, units[u], static_cast<unsigned long long>(n));
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

// What every run of one nhlo-run invocation shares.
struct RunSettings {
  std::vector<std::string> arg_texts;
  bool random = false;
  uint64_t seed = 0;
  uint64_t memory_limit = 0;
  bool limit_given = false;
  uint64_t max_steps = 0;
  PrintValues print_values = PrintValues::kAuto;
  // --progress: never; a live line on a terminal after 1 s; log lines every 10 s once a run has
  // taken 10 s (standard error not a terminal); `always`: at the first report (4096 bundles or
  // 256 loop iterations), then every second.
  enum class Progress : uint8_t { kNever, kLive, kLog, kAlways } progress = Progress::kNever;
  bool profile = false;                  // --profile: time per bundle on standard error
  TensorFileFlags files;                 // --args, --output, --save-args
  RunChecks checks;                      // --expected and its bounds, --random-range
  std::string devices;                   // --devices: N or RxP; empty: the module header's counts
  HostData host_data = HostData::kNone;  // --host-data
  int64_t iterations = 1;                // --iterations: runs of the program on the same arguments
  bool fusion = true;                    // --fusion: fused groups tile by tile, or every bundle alone
};

// `(f32[2,3], s32[])`: what the entry computation takes, for messages.
std::string SignatureText(const ComputationRecord& entry) {
  Module scratch;
  std::string out = "(";
  for (size_t i = 0; i < entry.params.size(); ++i) {
    if (i) out += ", ";
    AppendShape(out, BufferShape(entry, entry.params[i], scratch), /*print_layout=*/false);
  }
  return out + ")";
}

// --profile's table: bundles by time, the slowest first (at most 40 lines), with the share of
// the entry computation's time.
std::string FormatProfile(const ExecutionProfile& profile) {
  std::vector<const BundleProfile*> order;
  double total = 0;
  for (const BundleProfile& b : profile.bundles) {
    order.push_back(&b);
    if (b.computation == profile.bundles.front().computation) total += b.seconds;  // the entry's bundles
  }
  std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->seconds > b->seconds; });
  std::string out = "profile: " + std::to_string(profile.bundles.size()) + " bundles; a bundle that calls " +
                    "computations includes their time\n     seconds  of run      runs  opcode                bundle\n";
  char line[512];
  size_t shown = std::min<size_t>(order.size(), 40);
  for (size_t i = 0; i < shown; ++i) {
    const BundleProfile& b = *order[i];
    std::snprintf(line, sizeof(line), "%12.6f  %5.1f%%  %8llu  %-20s  %s/%s\n", b.seconds,
                  total > 0 ? 100.0 * b.seconds / total : 0.0, static_cast<unsigned long long>(b.runs),
                  std::string(OpcodeName(b.opcode)).c_str(), b.computation.c_str(), b.result.c_str());
    out += line;
  }
  if (order.size() > shown) out += "  ... " + std::to_string(order.size() - shown) + " more\n";
  std::snprintf(line, sizeof(line), "%12.6f  100.0%%  entry computation in all\n", total);
  return out + line;
}

// A line on standard error that tells how far a long run has come, redrawn in place; shown only
// after the first second, so short runs print nothing.
class ProgressLine {
 public:
  /// `live`: one line rewritten in place (a terminal); otherwise a new line each time, for logs.
  /// Shown once the run has taken `first`, then at most every `every`.
  ProgressLine(std::string name, std::ostream& err, bool live, std::chrono::milliseconds first,
               std::chrono::milliseconds every)
      : name_(std::move(name)), err_(err), live_(live), first_(first), every_(every) {}
  ~ProgressLine() {
    if (shown_ && live_) err_ << "\r\x1b[K" << std::flush;  // clear it before results or errors follow
  }
  void Update(const ExecutionProgress& p) {
    auto now = std::chrono::steady_clock::now();
    if (now - start_ < first_ || (shown_ && now - last_ < every_)) return;
    last_ = now;
    shown_ = true;
    double seconds = std::chrono::duration<double>(now - start_).count();
    char line[256];
    std::snprintf(line, sizeof(line), "%snhlo-run: %s: %llu bundles run, %llu loop iterations, %.0f s%s",
                  live_ ? "\r" : "", name_.c_str(), static_cast<unsigned long long>(p.steps),
                  static_cast<unsigned long long>(p.loop_iterations), seconds, live_ ? "\x1b[K" : "\n");
    err_ << line << std::flush;
  }

 private:
  std::string name_;
  std::ostream& err_;
  bool live_;
  std::chrono::milliseconds first_, every_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_{};
  bool shown_ = false;
};

// The failing instruction's line in the HLO the bundle was compiled from, when the run failed at
// a bundle whose result names an instruction written in that text.
std::optional<Diagnostic> SourceDiagnostic(const Module& module, const ExecutionErrorSite& site) {
  const Computation* comp = module.FindComputation(site.computation);
  if (!comp) return std::nullopt;
  for (const Instruction* inst : comp->instructions) {
    if (inst->name != site.result) continue;
    if (inst->source_offset == Instruction::kNoLocation || inst->source_id >= module.sources.size()) break;
    const SourceBuffer& source = *module.sources[inst->source_id];
    return source.At(inst->source_offset, site.message);
  }
  return std::nullopt;
}

// The interpreter's options of a run: its step, host-data and scratch limits; failures at a
// bundle are recorded in `site`.
ExecuteOptions RunOptions(const RunSettings& settings, uint64_t scratch_limit, ExecutionErrorSite* site) {
  ExecuteOptions options;
  options.max_steps = settings.max_steps;
  options.host_data = settings.host_data;
  options.scratch_limit = scratch_limit;
  options.fusion = settings.fusion;
  options.error_site = site;
  return options;
}

// One device's result, or the tuple of every device's (what --expected and --output take).
Value DevicesResult(std::vector<Value> results) {
  if (results.size() == 1) return std::move(results[0]);
  Value all;
  all.type = PrimitiveType::kTuple;
  all.tuple = std::move(results);
  return all;
}

// Decodes one bundle file, settles its devices and checks that the run fits in memory; `left`
// gets what the limit leaves to each device's kernels beyond that.
Result<BundleProgram> LoadProgram(const std::string& name, std::string bytes, const RunSettings& settings,
                                  DeviceGrid* grid = nullptr, std::ostream* err = nullptr, uint64_t* left = nullptr,
                                  uint64_t held = 0) {
  NHLO_ASSIGN_OR_RETURN(BundleProgram program, ReadBundleFile(std::move(bytes), name));
  std::string note;
  NHLO_ASSIGN_OR_RETURN(DeviceGrid devices, RunDevices(program, settings.devices, &note));
  if (err && !note.empty()) *err << "nhlo-run: note: " << note << "\n";
  if (grid) *grid = devices;
  MemoryNeed need = MemoryNeeded(program, devices.count(), settings.iterations);
  need.held = held;
  if (need.total() > settings.memory_limit) {
    Diagnostic d;
    d.file = name;
    d.message = "running this program" +
                (devices.count() > 1 ? " on " + std::to_string(devices.count()) + " devices" : std::string()) +
                " needs " + Bytes(need.total()) + " (bundle " + Bytes(need.bundle) + ", arena " + Bytes(need.arena) +
                ", arguments " + Bytes(need.arguments) + ", constants " + Bytes(need.constants) + ", results " +
                Bytes(need.results) +
                (settings.iterations > 1 ? "; arguments and results twice: --iterations keeps a copy of each" : "") +
                (held > 0 ? ", values the run keeps from an earlier one " + Bytes(held) : "") + "), but " +
                (settings.limit_given ? "--max-memory allows " : "this machine has ") + Bytes(settings.memory_limit) +
                (settings.limit_given ? "" : " available (--max-memory=SIZE sets another limit)");
    return Status::FromDiagnostic(std::move(d));
  }
  if (left) *left = (settings.memory_limit - need.total()) / devices.count();
  return program;
}

// The entry's arguments for each device: --random-args (within --random-range if given; every
// device its own, device 0's as a one-device run's; the random stream steps its state by the
// golden-ratio constant, so devices step theirs by another, or device d would get device 0's
// values shifted by d), --args=@in.npz, or --arg: one per
// parameter (every device gets the same) or one per parameter per device, device 0's first.
Result<std::vector<std::vector<Value>>> MakeDeviceArguments(const BundleProgram& program, const RunSettings& settings,
                                                            uint32_t devices) {
  const ComputationRecord& entry = program.computations[program.entry];
  std::vector<std::vector<Value>> per_device(devices);
  if (settings.random) {
    // --random-range=NAME:LO,HI: NAME is the parameter's name or argN (as --save-args names it).
    std::vector<std::optional<RandomRange>> ranges(entry.params.size(), settings.checks.range);
    for (const auto& [param, range] : settings.checks.parameter_ranges) {
      // A parameter's own name first; argN only when no parameter is called that.
      size_t found = entry.params.size();
      for (size_t i = 0; i < entry.params.size() && found == entry.params.size(); ++i)
        if (entry.buffers[entry.params[i]].name == param) found = i;
      for (size_t i = 0; i < entry.params.size() && found == entry.params.size(); ++i)
        if ("arg" + std::to_string(i) == param) found = i;
      if (found < entry.params.size()) {
        ranges[found] = range;
      } else {
        std::string names;
        for (size_t i = 0; i < entry.params.size(); ++i)
          names += (i ? ", " : "") + std::string(entry.buffers[entry.params[i]].name);
        return Status::Error("--random-range=" + param + ":...: the entry computation '" + std::string(entry.name) +
                             "' has no parameter '" + param + "' (parameters: " + (names.empty() ? "none" : names) +
                             "; argN names the Nth from 0)");
      }
    }
    Module scratch;
    for (uint32_t d = 0; d < devices; ++d)
      for (size_t i = 0; i < entry.params.size(); ++i)
        per_device[d].push_back(RandomValue(BufferShape(entry, entry.params[i], scratch),
                                            settings.seed * 1000003 + i + d * 0xD1B54A32D192ED03ull, ranges[i]));
    return per_device;
  }
  std::vector<TensorSpec> params = EntryParameters(program);
  const size_t want = params.size();
  size_t given = settings.files.args.empty() ? settings.arg_texts.size() : 0;
  bool each_device = devices > 1 && (!settings.files.args.empty() || (given == want * devices && given != want));
  if (each_device) {
    std::vector<TensorSpec> all;
    for (uint32_t d = 0; d < devices; ++d)
      for (const TensorSpec& p : params)  // named apart, so an archive's members match by position
        all.push_back({"device " + std::to_string(d) + " " + p.what,
                       "device" + std::to_string(d) + "." + std::string(p.name), p.type, p.dims, p.dim_kinds});
    params = std::move(all);
  }
  NHLO_ASSIGN_OR_RETURN(std::vector<Value> values, LoadArguments(settings.arg_texts, settings.files.args, params));
  size_t n = settings.files.args.empty() ? settings.arg_texts.size() : values.size();
  if (n != params.size()) {
    Status s = Status::Error("the entry computation '" + std::string(entry.name) + "' takes " + SignatureText(entry) +
                             " and got " + std::to_string(n) + (n == 1 ? " argument" : " arguments"));
    s.diagnostics().push_back({Severity::kNote,
                               {},
                               0,
                               0,
                               devices > 1 ? "give one --arg per parameter (the same for every device) or one per "
                                             "parameter per device (" +
                                                 std::to_string(want * devices) +
                                                 ", device 0's first), --args=@in.npz or --random-args=SEED"
                                           : "give one --arg per parameter, in order, --args=@in.npz, or "
                                             "--random-args=SEED",
                               {}});
    return s;
  }
  for (uint32_t d = 0; d < devices; ++d)
    for (size_t i = 0; i < want; ++i) per_device[d].push_back(values[each_device ? d * want + i : i]);
  return per_device;
}

bool SameValue(const Value& a, const Value& b) {
  if (a.type != b.type || a.dims != b.dims || a.bytes != b.bytes || a.tuple.size() != b.tuple.size()) return false;
  for (size_t i = 0; i < a.tuple.size(); ++i)
    if (!SameValue(a.tuple[i], b.tuple[i])) return false;
  return true;
}

// `nhlo-run: m.hlo: 5 iterations, identical results: first 15.21 ms; the others min 12.10 ms,
// median 12.40 ms, mean 12.52 ms, max 13.00 ms` (run_hlo_module's --iterations, with the figures a
// benchmark wants: the first run pays for cold caches and page faults).
std::string IterationTimes(const std::string& name, const std::vector<double>& seconds) {
  auto ms = [](double s) {
    char text[32];
    if (s < 1e-3)
      std::snprintf(text, sizeof(text), "%.1f us", s * 1e6);
    else if (s < 1)
      std::snprintf(text, sizeof(text), "%.2f ms", s * 1e3);
    else
      std::snprintf(text, sizeof(text), "%.3f s", s);
    return std::string(text);
  };
  std::vector<double> rest(seconds.begin() + 1, seconds.end());
  std::sort(rest.begin(), rest.end());
  double sum = 0;
  for (double s : rest) sum += s;
  const size_t n = rest.size();
  const double median = n % 2 ? rest[n / 2] : (rest[n / 2 - 1] + rest[n / 2]) / 2;
  return "nhlo-run: " + name + ": " + std::to_string(seconds.size()) + " iterations, identical results: first " +
         ms(seconds[0]) + "; the others min " + ms(rest.front()) + ", median " + ms(median) + ", mean " +
         ms(sum / static_cast<double>(n)) + ", max " + ms(rest.back()) + "\n";
}

// Runs one bundle file: decode, memory check, arguments, the entry computation; then prints
// the results, or with --expected the comparison report. `source` is the module the bundle was
// compiled from (HLO input), or null.
int RunOne(const std::string& name, std::string bytes, const RunSettings& settings, const Module* source,
           std::ostream& out, std::ostream& err) {
  DeviceGrid grid;
  uint64_t scratch_limit = 0;
  Result<BundleProgram> program = LoadProgram(name, std::move(bytes), settings, &grid, &err, &scratch_limit);
  if (!program.ok()) {
    PrintStatus(program.status(), err, "nhlo-run");
    return kExitInputRejected;
  }
  const uint32_t devices = static_cast<uint32_t>(grid.count());
  Result<std::vector<std::vector<Value>>> made = MakeDeviceArguments(*program, settings, devices);
  if (!made.ok()) {
    PrintStatus(made.status(), err, "nhlo-run");
    return kExitInputRejected;
  }
  std::vector<std::vector<Value>> values = std::move(*made);
  // Saved before the run, so the arguments of a run that fails can be passed again (device 0's
  // first, as --args reads them back).
  std::vector<Value> all_args;
  if (!settings.files.save_args.empty())
    for (const std::vector<Value>& device_args : values)
      all_args.insert(all_args.end(), device_args.begin(), device_args.end());
  if (Status saved = settings.files.save_args.empty() ? OkStatus() : SaveArguments(settings.files.save_args, all_args);
      !saved.ok()) {
    PrintStatus(saved, err, "nhlo-run");
    return kExitInputRejected;
  }
  ExecutionErrorSite site;
  ExecuteOptions run_options = RunOptions(settings, scratch_limit, &site);
  std::optional<ProgressLine> progress;
  if (settings.progress != RunSettings::Progress::kNever) {
    using std::chrono::milliseconds;
    const bool live = settings.progress == RunSettings::Progress::kLive ||
                      (settings.progress == RunSettings::Progress::kAlways && isatty(STDERR_FILENO));
    const bool log = settings.progress == RunSettings::Progress::kLog;
    const bool always = settings.progress == RunSettings::Progress::kAlways;
    progress.emplace(name, err, live,
                     milliseconds(log      ? 10000
                                  : always ? 0
                                           : 1000),
                     milliseconds(log    ? 10000
                                  : live ? 200
                                         : 1000));
    run_options.progress = [&progress](const ExecutionProgress& p) { progress->Update(p); };
  }
  ExecutionProfile profile;
  // --iterations: every run on the same arguments (a copy each but the last); the profile is the
  // last run's, and every run's result must be the first's, bit for bit.
  // One device and several runs: the program is loaded once (an Executable), and the times are
  // the runs' alone.
  std::vector<double> seconds;
  Result<Value> result = Status::Error("no run");
  std::optional<Value> first;
  std::unique_ptr<Executable> executable;
  if (grid.count() == 1 && settings.iterations > 1) {
    Result<std::unique_ptr<Executable>> loaded = Executable::Load(*program, run_options);
    if (loaded.ok())
      executable = std::move(*loaded);
    else
      result = loaded.status();
  }
  for (int64_t i = 0; i < settings.iterations && (executable || grid.count() > 1 || settings.iterations == 1); ++i) {
    const bool last = i + 1 == settings.iterations;
    if (settings.profile && last) run_options.profile = &profile;
    if (i > 0) result = Status::Error("no run");  // the previous run's result: compared already
    const auto start = std::chrono::steady_clock::now();
    if (executable) {
      executable->set_options(run_options);
      // Every run reads the same arguments in place and leaves its result there: no copy inside
      // the timed region (the result is copied out after the clock stops).
      Status ran = executable->RunInPlace(values[0]);
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      result = ran.ok() ? executable->ReadResult() : Result<Value>(ran);
    } else {
      Result<std::vector<Value>> ran = ExecuteOnDevices(
          *program, grid, last ? std::move(values) : std::vector<std::vector<Value>>(values), run_options);
      // Several devices: --expected and --output take the tuple of the devices' results.
      result = ran.ok() ? Result<Value>(DevicesResult(std::move(*ran))) : Result<Value>(ran.status());
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    if (!result.ok() || settings.iterations == 1) break;
    if (!first) {
      first = std::move(*result);  // a later run gives the result to print (N >= 2)
    } else if (!SameValue(*first, *result)) {
      progress.reset();
      err << "nhlo-run: error: " << name << ": iteration " << i + 1
          << " gave another result than iteration 1 on the same arguments (the interpreter should be deterministic; "
             "please report this module)\n";
      return kExitInputRejected;
    }
  }
  first.reset();
  progress.reset();
  if (settings.profile) err << FormatProfile(profile);
  if (result.ok() && settings.iterations > 1) err << IterationTimes(name, seconds);
  if (!result.ok()) {
    // HLO input: the error points at the instruction's line, as the parser's errors do.
    if (source && !site.computation.empty()) {
      if (std::optional<Diagnostic> at = SourceDiagnostic(*source, site)) {
        err << FormatDiagnostic(*at);
        return kExitInputRejected;
      }
    }
    PrintStatus(result.status(), err, "nhlo-run");
    return kExitInputRejected;
  }
  if (!settings.checks.expected_tensor_file.empty()) {
    Result<ExpectedOutputs> expected = LoadExpectedOutputs(settings.checks.expected_tensor_file, *result);
    if (!expected.ok()) {
      PrintStatus(expected.status(), err, "nhlo-run");
      return kExitInputRejected;
    }
    CompareReport report = CompareWithExpected(*result, *expected, settings.checks.tolerance);
    out << FormatReport(report, settings.checks.tolerance, settings.checks.report_lines);
    if (!report.pass()) return kExitInputRejected;
  } else if (settings.checks.expected) {
    CompareReport report = CompareValues(*result, *settings.checks.expected, settings.checks.tolerance);
    out << FormatReport(report, settings.checks.tolerance, settings.checks.report_lines);
    if (!report.pass()) return kExitInputRejected;
  } else if (devices == 1) {
    out << FormatResult(*result, settings.print_values);
  } else {
    for (uint32_t d = 0; d < devices; ++d) {
      std::string text = FormatResult(result->tuple[d], settings.print_values);  // empty with none
      if (!text.empty())
        out << "device " << d << " (replica " << grid.replica_of(d) << ", partition " << grid.partition_of(d)
            << "): " << text;
    }
  }
  if (Status saved = settings.files.output.empty() ? OkStatus() : SaveOutputs(settings.files.output, *result);
      !saved.ok()) {
    PrintStatus(saved, err, "nhlo-run");
    return kExitInputRejected;
  }
  return kExitOk;
}

}  // namespace

int RunMain(const std::vector<std::string>& args, std::istream& in, std::ostream& out, std::ostream& err) {
  CLI::App app("Run an nhlo bundle file (or HLO text) in the reference interpreter.", "nhlo-run");
  std::string input;
  RunSettings settings;
  app.add_option("input", input, "bundle file or HLO text file (detected by content), or - for standard input");
  app.add_option("--arg", settings.arg_texts,
                 "an argument as XLA literal text, e.g. 'f32[2] {1, 2}', or @FILE: a .npy file or a file of literal "
                 "text (repeat, in parameter order)");
  auto* random = app.add_option("--random-args", settings.seed, "use deterministic pseudo-random arguments from SEED")
                     ->check(
                         [](const std::string& text) -> std::string {
                           // CLI11 wraps "-1" into a u64 and takes a number past 2^64 - 1; a seed is
                           // written as the whole number it is.
                           uint64_t seed = 0;
                           bool ok = !text.empty() && text.size() <= 20;
                           for (char c : text) {
                             ok = ok && c >= '0' && c <= '9' && seed <= (UINT64_MAX - (c - '0')) / 10;
                             if (ok) seed = seed * 10 + static_cast<uint64_t>(c - '0');
                           }
                           return ok ? "" : "'" + text + "' is not a seed (a whole number from 0 to 2^64 - 1)";
                         },
                         "SEED");
  std::string max_memory, max_input, print_values = "auto";
  AddInputSizeFlag(app, max_input);
  app.add_option("--devices", settings.devices,
                 "run on N simulated devices, or RxP (replicas x partitions), instead of the module header's "
                 "replica_count x num_partitions; N alone sets the count the header gives, else partitions when a "
                 "collective names partitions, else replicas; auto: the header's counts, else as many devices as "
                 "the collectives' replica groups and shapes imply");
  std::string host_data = "none";
  app.add_option("--host-data", host_data,
                 "where send, recv, infeed and outfeed get their data: none (default: such a program is refused), "
                 "zeros (recv and infeed receive zeros; sent data is dropped)")
      ->check(CLI::IsMember({"none", "zeros"}));
  app.add_option("--max-steps", settings.max_steps,
                 "stop with an error after N bundles have run (loop bodies and reducers count each run); "
                 "0, the default, is no limit");
  app.add_option("--max-memory", max_memory,
                 "refuse, before any work, a run that needs more than SIZE bytes (K, M, G, T suffixes; "
                 "default: the machine's available memory)");
  app.add_option("--print-values", print_values,
                 "how results are printed: auto (default: in full up to 1000 elements, else summarised), all, "
                 "summary (shape, min, max, mean, NaN/Inf counts, first elements), none");
  app.add_option("--iterations", settings.iterations,
                 "run the program N times on the same arguments (run_hlo_module's flag): check that every run gives "
                 "the first's result bit for bit and print the times on standard error")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  app.add_flag("--profile", settings.profile,
               "after the run, print the time each bundle took on standard error, the slowest first");
  int threads = 0;
  app.add_option("--threads", threads,
                 "worker threads for large kernels (default 0: every core this process may use); results are "
                 "bit-identical for every N")
      ->check(CLI::Range(0, 4096));
  std::string fusion = "on";
  app.add_option("--fusion", fusion,
                 "on (default): run each chain of elementwise ops tile by tile, its intermediates kept in cache; "
                 "off: every bundle on its own. The results are the same bytes either way")
      ->check(CLI::IsMember({"on", "off"}));
  bool quiet = false;
  app.add_flag("-q,--quiet", quiet, "no progress line on standard error during long runs (--progress=never)");
  std::string progress = "auto";
  app.add_option("--progress", progress,
                 "never; auto: a live line on a terminal after 1 s, else a line every 10 s once a run has taken "
                 "10 s; always: from the start, every second")
      ->check(CLI::IsMember({"never", "auto", "always"}));
  PipelineFlags flags;
  AddPipelineFlags(app, flags);
  AddTensorFileFlags(app, settings.files);
  CheckFlags check;
  AddCheckFlags(app, check);
  std::string shadow, shadow_sort = "total";
  ShadowFlags shadow_flags;
  app.add_option("--shadow", shadow,
                 "run every instruction a second time in TYPE (f64, or f32 for bf16/f8 programs) on the shadow values "
                 "of its operands and report, per instruction, its error against that shadow (total), the error of "
                 "its own op on exact inputs (local) and the amplification (docs/numerics-debugging.md)")
      ->type_name("TYPE");
  app.add_option("--shadow-sort", shadow_sort, "the --shadow table's order: total (default), local, amplification")
      ->check(CLI::IsMember({"total", "local", "amplification"}));
  app.add_option("--shadow-top", shadow_flags.top, "rows of the --shadow table (default 20; 0: every instruction)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  app.add_option("--shadow-report", shadow_flags.report_file,
                 "also write the --shadow figures of every probed instruction to FILE as JSON (nhlo-compile "
                 "--emit=html --shadow-report colours the graph with it)")
      ->type_name("FILE");
  if (int code = ParseCommandLine(app, args, out, err); code >= 0) return code;
  if (!shadow.empty()) {
    Result<PrimitiveType> type = ParseShadowType(shadow);
    if (!type.ok()) {
      PrintStatus(type.status(), err, "nhlo-run");
      return kExitUsage;
    }
    shadow_flags.type = *type;
    shadow_flags.sort = *ParseShadowSort(shadow_sort);
    shadow_flags.with_and_without_passes = check.check_passes;
    if (check.isolate || !check.expected.empty()) {
      err << "nhlo-run: error: --shadow combines with --check-passes only, not with "
          << (check.isolate ? "--isolate" : "--expected") << "\n";
      return kExitUsage;
    }
  } else {
    for (const char* flag : {"--shadow-sort", "--shadow-top", "--shadow-report"})
      if (app.count(flag) > 0) err << "nhlo-run: warning: " << flag << " has no effect without --shadow\n";
  }
  flags.passes_given = app.count("--passes") > 0;
  if (flags.list_passes) {
    out << ListPassesText();
    return kExitOk;
  }
  if (input.empty()) {
    err << "nhlo-run: error: no input file (use - for standard input)\n";
    return kExitUsage;
  }
  if (!settings.devices.empty()) {
    // The syntax is checked once, here; the split of N needs the program (RunDevices).
    BundleProgram none;
    if (Result<DeviceGrid> grid = RunDevices(none, settings.devices, nullptr); !grid.ok()) {
      PrintStatus(grid.status(), err, "nhlo-run");
      return kExitUsage;
    }
  }
  settings.host_data = host_data == "zeros" ? HostData::kZeros : HostData::kNone;
  settings.fusion = fusion == "on";
  settings.random = random->count() > 0;
  if (settings.random && !settings.arg_texts.empty()) {
    err << "nhlo-run: error: --arg and --random-args cannot be combined\n";
    return kExitUsage;
  }
  if (std::string misuse =
          TensorFileFlagMisuse(settings.files, settings.random || !settings.arg_texts.empty(), flags.split_input_file);
      !misuse.empty()) {
    err << "nhlo-run: error: " << misuse << "\n";
    return kExitUsage;
  }
  {  // No output replaces an input or another output (docs/reliability.md), checked before any work.
    std::vector<std::string> inputs = {input};
    auto file_of = [](const std::string& value) { return value.size() > 1 && value[0] == '@' ? value.substr(1) : ""; };
    for (const std::string& a : settings.arg_texts) inputs.push_back(file_of(a));
    inputs.push_back(file_of(settings.files.args));
    inputs.push_back(file_of(check.expected));
    for (const std::string& c : flags.custom_calls)
      if (std::optional<CustomCallFlag> flag = SplitCustomCallFlag(c)) inputs.push_back(flag->file);
    std::error_code ec;
    const std::string& out = settings.files.output;
    bool out_dir = !out.empty() && (out.back() == '/' || std::filesystem::is_directory(out, ec));
    std::vector<OutputPath> outputs = {{"--output", out, out_dir ? "out[0-9_]*\\.npy" : ""},
                                       {"--save-args", settings.files.save_args, ""},
                                       {"--remarks-file", flags.remarks_file, ""},
                                       {"--shadow-report", shadow.empty() ? "" : shadow_flags.report_file, ""}};
    if (std::string conflict = OutputConflict(inputs, outputs); !conflict.empty()) {
      err << "nhlo-run: error: " << conflict << "\n";
      return kExitUsage;
    }
    for (const OutputPath& o : outputs)
      if (Status place = CheckOutputPlace(o); !place.ok()) {
        PrintStatus(place, err, "nhlo-run");
        return kExitInputRejected;
      }
  }
  Result<PrintValues> print_mode = ParsePrintValues(print_values);
  if (!print_mode.ok()) {
    PrintStatus(print_mode.status(), err, "nhlo-run");
    return kExitUsage;
  }
  settings.print_values = *print_mode;
  if (int got = SetParallelThreads(threads); threads > 0 && got < threads)
    err << "nhlo-run: warning: --threads=" << threads << ": the system gave " << got << " thread"
        << (got == 1 ? "" : "s") << "; running on those\n";
  const char* checked_by = check.check_passes ? "--check-passes" : check.isolate ? "--isolate" : "--expected";
  if (app.count("--print-values") > 0 && check.checking())
    err << "nhlo-run: warning: --print-values has no effect with " << checked_by
        << " (the comparison report is printed instead of the results)\n";
  if (settings.iterations > 1 && (check.check_passes || check.isolate))
    err << "nhlo-run: warning: --iterations has no effect with " << checked_by << " (each side runs once)\n";
  // Progress goes to the process's standard error only (never to a caller's stream, as
  // nhlo-golden's). It is the one part of the output that depends on time: a log of a run that
  // took under 10 s, or one with --progress=never, is byte-for-byte the same every time.
  using Progress = RunSettings::Progress;
  if (quiet || progress == "never" || &err != &std::cerr)
    settings.progress = Progress::kNever;
  else if (progress == "always")
    settings.progress = Progress::kAlways;
  else
    settings.progress = isatty(STDERR_FILENO) ? Progress::kLive : Progress::kLog;
  for (const std::string& w : PipelineFlagWarnings(flags, /*prints_module=*/false))
    err << "nhlo-run: warning: " << w << "\n";
  Result<PipelineOptions> options = flags.ToOptions();
  if (!options.ok()) {
    PrintStatus(options.status(), err, "nhlo-run");
    return kExitUsage;
  }
  std::vector<Remark> remarks;  // --remarks-file: every pass's remarks, written at the end
  if (!flags.remarks_file.empty()) options->collected_remarks = &remarks;
  settings.memory_limit = MachineMemory();
  if (!max_memory.empty()) {
    Result<uint64_t> limit = ParseSize(max_memory, "--max-memory");
    if (!limit.ok()) {
      PrintStatus(limit.status(), err, "nhlo-run");
      return kExitUsage;
    }
    settings.memory_limit = *limit;
    settings.limit_given = true;
  }
  // --expected's literal text is read within the memory limit (a file of /dev/zero stops there).
  if (int code = ResolveChecks(check, settings.random, in, settings.checks, err, settings.memory_limit); code >= 0)
    return code;
  uint64_t input_limit = kMaxInputBytes;
  if (!max_input.empty()) {
    Result<uint64_t> limit = ParseSize(max_input, "--max-input-size");
    if (!limit.ok()) {
      PrintStatus(limit.status(), err, "nhlo-run");
      return kExitUsage;
    }
    input_limit = *limit;
  }
  std::string name = input == "-" ? "<stdin>" : input;
  Result<std::string> bytes = ReadInput(input, in, input_limit);
  if (!bytes.ok()) {
    PrintStatus(bytes.status(), err, "nhlo-run");
    return kExitInputRejected;
  }
  if (LooksLikeBundle(*bytes) && !shadow.empty()) {
    err << "nhlo-run: error: --shadow needs HLO text (it adds a shadow of every instruction before compiling); '"
        << name << "' is a bundle file\n";
    return kExitUsage;
  }
  if (LooksLikeBundle(*bytes) && (check.check_passes || check.isolate)) {
    err << "nhlo-run: error: " << checked_by << " needs HLO text (it compiles the module with and without passes); '"
        << name << "' is a bundle file\n";
    return kExitUsage;
  }
  if (LooksLikeBundle(*bytes)) {
    for (const std::string& flag : GivenPipelineFlags(app))
      err << "nhlo-run: warning: " << flag << " has no effect: " << name << " is a bundle file, compiled already\n";
    return RunOne(name, std::move(*bytes), settings, nullptr, out, err);
  }
  // HLO text: compile in memory with the same pipeline options nhlo-compile takes; with
  // --split-input-file each module runs on its own, results separated by `// -----`.
  std::vector<InputPiece> pieces;
  int modules = flags.split_input_file ? 0 : CountHloModules(*bytes);
  const std::string several = modules > 1 ? SeveralModulesHint(*bytes, modules, "run") : "";
  if (flags.split_input_file)
    pieces = SplitOwnedInput(std::move(*bytes));
  else
    pieces.push_back({std::move(*bytes), 1});
  int exit_code = kExitOk;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0) out << "// -----\n";
    if (check.check_passes || check.isolate || !shadow.empty()) {
      // As a plain run: the devices --devices or the header give, the memory limit, the step
      // limit and host data (issue 30: a two-replica module failed here).
      ProgramRunner runner;
      uint64_t scratch_limit = 0;  // what the limit leaves the last loaded program's kernels
      // Each side runs once: --iterations (which only warns here) must not double the memory check.
      RunSettings once = settings;
      once.iterations = 1;
      runner.load = [&, once](std::string bundle, uint64_t held) {
        return LoadProgram(name, std::move(bundle), once, nullptr, nullptr, &scratch_limit, held);
      };
      runner.make_arguments = [&](const BundleProgram& p) -> Result<std::vector<std::vector<Value>>> {
        NHLO_ASSIGN_OR_RETURN(DeviceGrid grid, RunDevices(p, settings.devices, nullptr));
        return MakeDeviceArguments(p, settings, static_cast<uint32_t>(grid.count()));
      };
      runner.run = [&](const BundleProgram& p, std::vector<std::vector<Value>> args,
                       const Module& source) -> Result<Value> {
        NHLO_ASSIGN_OR_RETURN(DeviceGrid grid, RunDevices(p, settings.devices, nullptr));
        ExecutionErrorSite site;
        ExecuteOptions run_options = RunOptions(settings, scratch_limit, &site);
        run_options.probe = *runner.probe;
        Result<std::vector<Value>> ran = ExecuteOnDevices(p, grid, std::move(args), run_options);
        if (!ran.ok() && !site.computation.empty())
          if (std::optional<Diagnostic> at = SourceDiagnostic(source, site))
            return Status::FromDiagnostic(std::move(*at));  // at the HLO line, as a plain run says it
        NHLO_ASSIGN_OR_RETURN(std::vector<Value> results, std::move(ran));
        return DevicesResult(std::move(results));
      };
      if (!shadow.empty()) {
        int code = RunShadow(name, pieces[i].text, *options, *flags.ToCodegenOptions(), shadow_flags, runner, out, err);
        if (code != kExitOk) exit_code = code;
        continue;
      }
      int code = check.isolate ? Isolate(name, pieces[i].text, *options, *flags.ToCodegenOptions(),
                                         settings.checks.tolerance, runner, out, err)
                               : CheckPasses(name, pieces[i].text, *options, *flags.ToCodegenOptions(),
                                             settings.checks.tolerance, settings.checks.report_lines, runner, out, err);
      if (code != kExitOk) exit_code = code;
      continue;
    }
    Result<std::unique_ptr<Module>> module = CompileText(name, std::move(pieces[i].text), *options, err);
    if (!module.ok()) {
      PrintStatus(module.status(), err, "nhlo-run");
      if (!several.empty()) err << "nhlo-run: note: " << name << " " << several << "\n";
      exit_code = kExitInputRejected;
      continue;
    }
    ReportElidedConstants(**module, err);
    CodegenOptions codegen = *flags.ToCodegenOptions();
    codegen.max_constant_bytes = settings.memory_limit;
    Result<std::string> emitted = EmitBundleFile(**module, codegen);
    if (!emitted.ok()) {
      PrintStatus(emitted.status(), err, "nhlo-run");
      exit_code = kExitInputRejected;
      continue;
    }
    if (int code = RunOne(name, std::move(*emitted), settings, module->get(), out, err); code != kExitOk)
      exit_code = code;
  }
  if (Status written = WriteRemarksFile(flags, remarks); !written.ok()) {
    PrintStatus(written, err, "nhlo-run");
    return kExitInputRejected;
  }
  return exit_code;
}

}  // namespace nhlo