// SPDX-License-Identifier: Apache-2.0
#include "driver/check_passes.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <sstream>

#include "codegen/bundle_reader.h"
#include "driver/common.h"
#include "driver/driver.h"

namespace nhlo {

namespace {

// The values of one bound flag, split into the plain one (the last given) and those for named
// outputs, each checked: a number >= 0 (an integer for --ulp); a name `out` digits (`_` digits)*.
struct BoundValues {
  std::optional<std::string> all;
  std::vector<std::pair<std::string, std::string>> by_output;  // in order given; a later one wins
};

bool IsOutputName(std::string_view name) {
  if (!name.starts_with("out") || name.size() == 3) return false;
  bool digit_seen = false;
  for (char c : name.substr(3)) {
    if (c == '_') {
      if (!digit_seen) return false;
      digit_seen = false;
    } else if (c >= '0' && c <= '9') {
      digit_seen = true;
    } else {
      return false;
    }
  }
  return digit_seen;
}

Result<BoundValues> SplitBoundValues(const std::vector<std::string>& values, const char* flag, bool integer) {
  BoundValues split;
  for (const std::string& value : values) {
    size_t colon = value.find(':');
    std::string number = colon == std::string::npos ? value : value.substr(colon + 1);
    char* end = nullptr;
    double v = std::strtod(number.c_str(), &end);
    bool ok = !number.empty() && *end == '\0' && v >= 0 && !std::isinf(v) &&
              (!integer || (v == std::floor(v) && v < 0x1p64 && number.find_first_not_of("0123456789") == number.npos));
    if (!ok)
      return Status::Error(std::string(flag) + "=" + value + ": '" + number + "' is not " +
                           (integer ? "an integer >= 0" : "a number >= 0"));
    if (colon == std::string::npos) {
      split.all = number;
      continue;
    }
    std::string name = value.substr(0, colon);
    if (!IsOutputName(name))
      return Status::Error(std::string(flag) + "=" + value + ": '" + name +
                           "' is not an output name (out0, out1, ... as --output names them; out1_0 in a nested "
                           "tuple)");
    split.by_output.emplace_back(name, number);
  }
  return split;
}

// The bounds from the values that apply to one output (nullopt: a flag that does not apply).
Tolerance BoundsFrom(const std::optional<std::string>& rtol, const std::optional<std::string>& atol,
                     const std::optional<std::string>& ulp, const std::string& rule) {
  if (!rtol && !atol && !ulp) return DefaultTolerance();
  Tolerance t;
  t.allclose = rtol || atol;
  t.rtol = rtol ? std::strtod(rtol->c_str(), nullptr) : 0;
  t.atol = atol ? std::strtod(atol->c_str(), nullptr) : 0;
  if (ulp) t.ulp = std::strtoull(ulp->c_str(), nullptr, 10);
  t.xla_rule = rule == "xla";
  // XLA's Near compares integers and pred exactly (literal_comparison.cc, NearHelper).
  t.integers_use_atol = atol && !t.xla_rule;
  return t;
}

std::optional<std::string> ValueFor(const BoundValues& values, const std::string& name) {
  std::optional<std::string> found = values.all;
  for (const auto& [output, value] : values.by_output)
    if (output == name) found = value;
  return found;
}

}  // namespace

Result<Tolerance> CheckFlags::ToTolerance() const {
  if (compare_rule == "bitwise") {
    Tolerance t;
    t.bitwise = true;
    t.mismatches_shown = max_mismatches;
    return t;
  }
  NHLO_ASSIGN_OR_RETURN(BoundValues r, SplitBoundValues(rtol, "--rtol", false));
  NHLO_ASSIGN_OR_RETURN(BoundValues a, SplitBoundValues(atol, "--atol", false));
  NHLO_ASSIGN_OR_RETURN(BoundValues u, SplitBoundValues(ulp, "--ulp", true));
  Tolerance t = BoundsFrom(r.all, a.all, u.all, compare_rule);
  t.mismatches_shown = max_mismatches;
  std::vector<std::string> names;
  for (const BoundValues* v : {&r, &a, &u})
    for (const auto& [name, value] : v->by_output)
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  for (const std::string& name : names) {
    OutputTolerance o{name, BoundsFrom(ValueFor(r, name), ValueFor(a, name), ValueFor(u, name), compare_rule)};
    o.tolerance.mismatches_shown = max_mismatches;
    t.per_output.push_back(std::move(o));
  }
  return t;
}

void AddCheckFlags(CLI::App& app, CheckFlags& f) {
  app.add_option("--expected", f.expected,
                 "compare the results with @FILE (XLA literal text; a tuple literal for a tuple result) or "
                 "with the literal given; prints a report, exit 1 on a mismatch");
  app.add_flag("--check-passes", f.check_passes,
               "run HLO text with the pass pipeline and with --passes=none on the same arguments, compare, and "
               "on a mismatch name the first pass execution that changes the numbers");
  app.add_flag("--isolate", f.isolate,
               "run HLO text with the pass pipeline and with --passes=none on the same arguments, compare every "
               "instruction of the entry computation on the operands the run without passes gave it, and name those "
               "that differ");
  app.add_option("--rtol", f.rtol,
                 "relative bound: |actual - expected| <= atol + rtol * |expected|; NAME:X bounds only the output "
                 "NAME (out0, out1...; repeatable)")
      ->type_name("X|NAME:X");
  app.add_option("--atol", f.atol,
                 "absolute bound (see --rtol); also makes integers compare within it; NAME:X for one output")
      ->type_name("X|NAME:X");
  app.add_option("--ulp", f.ulp,
                 "pass elements within N units in the last place of the expected type; NAME:N for one output")
      ->type_name("N|NAME:N");
  app.add_option("--compare-rule", f.compare_rule,
                 "how elements compare: allclose (numpy's: |a - e| <= atol + rtol * |e|), xla (XLA's "
                 "LiteralTestUtil::Near: |a - e| <= atol, or |a - e| / |e| <= rtol) or bitwise (XLA's "
                 "LiteralTestUtil::Equal: identical encodings, so -0 differs from +0)")
      ->check(CLI::IsMember({"allclose", "xla", "bitwise"}));
  app.add_option("--max-mismatches", f.max_mismatches,
                 "list up to N elements over the bounds for each failing output (default 1: the first)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app.add_option("--report", f.report,
                 "which outputs the comparison report lists: all, or failures (then a passing "
                 "run prints only the verdict line)")
      ->check(CLI::IsMember({"all", "failures"}));
  app.add_option("--random-range", f.random_range,
                 "draw every --random-args element from LO,HI instead of its type's default; NAME:LO,HI for the "
                 "parameter NAME (or argN) only (repeatable)")
      ->type_name("LO,HI|NAME:LO,HI");
}

Result<Value> LoadExpected(const std::string& spec, std::istream& in, uint64_t max_bytes) {
  if (spec.empty() || spec[0] != '@') return ParseValue(spec, "--expected");
  std::string path = spec.substr(1);
  Result<std::string> text =
      ReadInput(path, in, std::min<uint64_t>(max_bytes, kMaxInputBytes), "nhlo-run's memory limit, --max-memory");
  if (!text.ok()) return Status::Error("--expected: " + text.status().message());
  Result<Value> value = ParseValue(*text, path == "-" ? "<stdin>" : path);
  // nhlo-run's own printed results name each output (`out0: f32[2] {...}`) and may be
  // summarised: not a literal. Say how to get a file that reads back.
  if (!value.ok() && (text->starts_with("out0: ") || text->find("\nout0: ") != std::string::npos)) {
    Status s = value.status();
    Diagnostic note;
    note.severity = Severity::kNote;
    note.message =
        "this is nhlo-run's printed result, not an XLA literal; write results that read back with "
        "--output=out.npz (then --expected=@out.npz), or give the tuple literal: (f32[2] {...}, ...)";
    s.diagnostics().push_back(std::move(note));
    return s;
  }
  return value;
}

int ResolveChecks(const CheckFlags& check, bool random, std::istream& in, RunChecks& checks, std::ostream& err,
                  uint64_t max_expected_bytes) {
  if (int(check.check_passes) + int(check.isolate) + int(!check.expected.empty()) > 1) {
    err << "nhlo-run: error: " << (check.isolate ? "--isolate" : "--check-passes") << " and "
        << (check.isolate && check.check_passes ? "--check-passes" : "--expected") << " cannot be combined\n";
    return kExitUsage;
  }
  if (!check.checking() && (check.bounds_given())) {
    err << "nhlo-run: error: --rtol, --atol and --ulp need --expected, --check-passes or --isolate\n";
    return kExitUsage;
  }
  if (!check.checking() && (check.compare_rule != "allclose" || check.report != "all")) {
    err << "nhlo-run: error: --compare-rule and --report need --expected, --check-passes or --isolate\n";
    return kExitUsage;
  }
  if (check.compare_rule == "bitwise" && (check.bounds_given())) {
    err << "nhlo-run: error: --compare-rule=bitwise takes no --rtol, --atol or --ulp\n";
    return kExitUsage;
  }
  checks.report_lines = check.report == "failures" ? ReportLines::kFailures : ReportLines::kAll;
  if (!check.random_range.empty()) {
    if (!random) {
      err << "nhlo-run: error: --random-range needs --random-args\n";
      return kExitUsage;
    }
    for (const std::string& value : check.random_range) {
      const size_t colon = value.find(':');
      Result<RandomRange> range = ParseRandomRange(colon == std::string::npos ? value : value.substr(colon + 1));
      if (!range.ok()) {
        err << "nhlo-run: error: " << range.status().message() << "\n";
        return kExitUsage;
      }
      if (colon == std::string::npos)
        checks.range = *range;
      else
        checks.parameter_ranges.emplace_back(value.substr(0, colon), *range);
    }
  }
  Result<Tolerance> tolerance = check.ToTolerance();
  if (!tolerance.ok()) {
    err << "nhlo-run: error: " << tolerance.status().message() << "\n";
    return kExitUsage;
  }
  if (check.isolate && !tolerance->per_output.empty()) {
    err << "nhlo-run: error: --isolate compares instructions, not the module's outputs: bounds for one output ('"
        << tolerance->per_output[0].name << ":...') do not apply\n";
    return kExitUsage;
  }
  checks.tolerance = std::move(*tolerance);
  if (check.expected.size() > 5 && check.expected[0] == '@' &&
      (check.expected.ends_with(".npy") || check.expected.ends_with(".npz"))) {
    checks.expected_tensor_file = check.expected.substr(1);
  } else if (!check.expected.empty()) {
    Result<Value> expected = LoadExpected(check.expected, in, max_expected_bytes);
    if (!expected.ok()) {
      PrintStatus(expected.status(), err, "nhlo-run");
      return kExitInputRejected;
    }
    checks.expected = std::move(*expected);
  }
  return -1;
}

namespace {

// `v` converted to the type of buffer `index` of `comp` where the element types differ.
void ConvertToBuffer(Value& v, const ComputationRecord& comp, uint32_t index) {
  const BufferRecord& b = comp.buffers[index];
  if (b.type == PrimitiveType::kTuple) {
    for (size_t i = 0; i < b.tuple.size() && i < v.tuple.size(); ++i) ConvertToBuffer(v.tuple[i], comp, b.tuple[i]);
    return;
  }
  if (v.dims == b.dims) ConvertElementsTo(v, b.type);
}

// The pipeline options without any output: bisection probes compile silently.
PipelineOptions Quiet(PipelineOptions o) {
  o.print_before_all = o.print_after_all = false;
  o.print_before_regex.clear();
  o.print_after_regex.clear();
  o.print_changed = PipelineOptions::PrintChanged::kOff;
  o.dump_dir.clear();
  o.time_passes = PipelineOptions::TimePasses::kOff;
  o.remarks_regex.clear();
  o.collected_remarks = nullptr;
  return o;
}

// Compiles `text` with `options`, runs it on each device's `args` (converted to its parameter
// types).
Result<Value> CompileAndRun(const std::string& name, const std::string& text, const PipelineOptions& options,
                            const CodegenOptions& codegen, const ProgramRunner& runner,
                            const std::vector<std::vector<Value>>& args, std::ostream& log) {
  NHLO_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, CompileText(name, text, options, log));
  NHLO_ASSIGN_OR_RETURN(std::string bundle, EmitBundleFile(*module, codegen));
  NHLO_ASSIGN_OR_RETURN(BundleProgram program, runner.load(std::move(bundle), 0));
  std::vector<std::vector<Value>> converted;
  for (const std::vector<Value>& device_args : args) converted.push_back(ArgumentsFor(program, device_args));
  return runner.run(program, std::move(converted), *module);
}

// The pass executions `options` makes on `text`, in order, as the --opt-bisect-limit log names
// them (only those it runs when the user gave a limit).
Result<std::vector<std::string>> PassExecutions(const std::string& name, const std::string& text,
                                                PipelineOptions options) {
  if (options.bisect_limit < 0) options.bisect_limit = INT64_MAX;
  std::ostringstream log;
  NHLO_TRY(CompileText(name, text, Quiet(options), log).status());
  std::vector<std::string> names;
  std::istringstream lines(log.str());
  const std::string running = "// BISECT: running pass (";
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(running, 0) != 0) continue;
    size_t close = line.find(") ", running.size());
    if (close != std::string::npos) names.push_back(line.substr(close + 2));
  }
  return names;
}

std::string FirstLine(const Status& status) {
  std::string text = status.ToString();
  return text.substr(0, text.find('\n'));
}

}  // namespace

std::vector<Value> ArgumentsFor(const BundleProgram& program, std::vector<Value> values) {
  const ComputationRecord& entry = program.computations[program.entry];
  for (size_t i = 0; i < values.size() && i < entry.params.size(); ++i)
    ConvertToBuffer(values[i], entry, entry.params[i]);
  return values;
}

Result<ReferenceProgram> CompileReference(const std::string& name, const std::string& text,
                                          const PipelineOptions& options, const CodegenOptions& codegen,
                                          const ProgramRunner& runner) {
  PipelineOptions none;
  none.passes = std::vector<std::string>{"none"};
  none.custom_calls = options.custom_calls;
  std::ostringstream discard;
  ReferenceProgram reference;
  NHLO_ASSIGN_OR_RETURN(reference.module, CompileText(name, text, none, discard));
  NHLO_ASSIGN_OR_RETURN(std::string bundle, EmitBundleFile(*reference.module, codegen));
  NHLO_ASSIGN_OR_RETURN(reference.program, runner.load(std::move(bundle), 0));
  NHLO_ASSIGN_OR_RETURN(reference.args, runner.make_arguments(reference.program));
  return reference;
}

int CheckPasses(const std::string& name, const std::string& text, const PipelineOptions& options,
                const CodegenOptions& codegen, Tolerance tolerance, ReportLines lines, const ProgramRunner& runner,
                std::ostream& out, std::ostream& err) {
  auto fail = [&err](const Status& s) {
    PrintStatus(s, err, "nhlo-run");
    return 1;
  };
  Result<ReferenceProgram> reference = CompileReference(name, text, options, codegen, runner);
  if (!reference.ok()) return fail(reference.status());
  const std::string module_name(reference->module->name);
  const std::vector<std::vector<Value>>& args = reference->args;
  Result<Value> expected = runner.run(reference->program, args, *reference->module);
  if (!expected.ok()) return fail(expected.status());

  // The pipeline as configured; its dumps and bisect lines go to `err` as in a plain run.
  Result<Value> actual = CompileAndRun(name, text, options, codegen, runner, args, err);
  if (!actual.ok()) return fail(actual.status());
  // A pass may widen the entry's results (upcast-all-to-fp32): compared on the expected grid.
  tolerance.allow_float_type_change = true;
  CompareReport report = CompareValues(*actual, *expected, tolerance);
  out << "check-passes: module '" << module_name << "': the pass pipeline against --passes=none\n"
      << FormatReport(report, tolerance, lines);
  // Only outputs that differ are bisected for: a bound naming no output fails the report, but no
  // pass is to blame for it.
  if (report.failed() == 0) return report.pass() ? 0 : 1;

  // Bisection over the number of pass executions: limit 0 is the run without passes (which
  // matched itself), the full count is the run that differs; each probe compiles with
  // --opt-bisect-limit=k and compares with the reference run.
  Result<std::vector<std::string>> executions = PassExecutions(name, text, options);
  if (!executions.ok()) return fail(executions.status());
  int64_t good = 0, bad = static_cast<int64_t>(executions->size());
  while (bad - good > 1) {
    int64_t mid = good + (bad - good) / 2;
    PipelineOptions probe = Quiet(options);
    probe.bisect_limit = mid;
    std::ostringstream log;
    Result<Value> result = CompileAndRun(name, text, probe, codegen, runner, args, log);
    bool differs;
    out << "bisect: --opt-bisect-limit=" << mid << ": ";
    if (!result.ok()) {
      differs = true;
      out << "fails: " << FirstLine(result.status()) << "\n";
    } else {
      differs = CompareValues(*result, *expected, tolerance).failed() != 0;
      out << (differs ? "differs" : "matches") << "\n";
    }
    (differs ? bad : good) = mid;
  }
  if (bad == 0) {
    out << "first changing pass execution: none (the run without passes differs from itself)\n";
  } else {
    out << "first changing pass execution: " << bad << " (" << (*executions)[static_cast<size_t>(bad - 1)]
        << " on module '" << module_name << "')\n";
  }
  return 1;
}

}  // namespace nhlo
